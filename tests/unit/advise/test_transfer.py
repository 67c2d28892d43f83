"""advise.transfer: `interregion advise`'s use case, called without the CLI: the options as
given in, the advice and its document out; bad input one line naming its option."""

from __future__ import annotations

import pytest

from orchestrator.advise.transfer import AdviseRequest, advise_transfer
from orchestrator.core.errors import UserError


def test_with_no_results_the_network_model_answers_and_the_document_says_so(tmp_path):
    request = AdviseRequest("aws:us-east-1", "gcp:asia-northeast1", "100GB", files="10",
                            streams="8", results=tmp_path)  # fmt: skip
    found = advise_transfer(request)
    assert found.evidence.kind == "model" and found.doc["source"]["kind"] == "model"
    assert found.advice.size_bytes == 100 * 10**9 == found.doc["size_bytes"]
    names = [o["name"] for o in found.doc["options"]]
    assert names == ["default", "tuned", "streams"]
    streams = next(o for o in found.doc["options"] if o["name"] == "streams")
    assert streams["streams"] == 8 and found.doc["files"]["count"] == 10
    # every option's time lies within its range
    for o in found.doc["options"]:
        span = found.doc["range"]["options"][o["name"]]
        assert span["low_s"] <= o["time_s"] <= span["high_s"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"src": "aws:nowhere-1"}, "--from: "),
        ({"dst": "aws:nowhere-1"}, "--to: "),
        ({"dst": "aws:us-east-1"}, "both aws:us-east-1"),
        ({"tier": "gold"}, "--tier: "),
        ({"streams": "0"}, "--streams"),
        ({"size": "100Gb"}, "bits"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(tmp_path, change, said):
    values = {"src": "aws:us-east-1", "dst": "gcp:europe-west1", "size": "1GB"} | change
    with pytest.raises(UserError) as e:
        advise_transfer(AdviseRequest(**values, results=tmp_path))
    assert said in str(e.value) and "\n" not in str(e.value)


def test_measured_only_refuses_the_model(tmp_path):
    request = AdviseRequest("aws:us-east-1", "gcp:europe-west1", "1GB", measured_only=True,
                            results=tmp_path)  # fmt: skip
    with pytest.raises(UserError):
        advise_transfer(request)
