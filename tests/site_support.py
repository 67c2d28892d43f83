"""A planted study and the references a page makes, for the site tests."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from orchestrator.study.findings import PAGE_FILE, REPORT_FILE, STUDIES_DIR, page_html
from testkit.synthetic import sweep_record


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value is not None:
                self.refs.append(value)


def _refs(text):
    parser = _Links()
    parser.feed(text)
    return parser.refs


def write_study(results, study_id):
    """A finished TCP study, where `study tcp` leaves it (results/studies/<id>/): its
    text, its page and a record that says it is a study."""
    folder = results / STUDIES_DIR / study_id
    folder.mkdir(parents=True)
    text = STUDY_TEXT.format(study_id=study_id)
    (folder / REPORT_FILE).write_text(text)
    (folder / PAGE_FILE).write_text(page_html(text, study_id))
    study = {"kind": "tcp", "variants": ["default"], "repeats": 1, "seed": 1}
    (folder / "sweep.json").write_text(json.dumps(sweep_record(study_id, study=study)))


# The shapes orchestrator.study.findings.report_text writes: headings, bullets, a table, code.
STUDY_TEXT = """# TCP study {study_id}

Emulated cloud: the emulator is built from the same model.

## aws:a -> <gcp:b>

- idle RTT 80.1 ms, loaded RTT 95.0 ms; BDP at 50 Mbit/s: 500 kB
- window ceilings: default 13.1 (131 kB), tuned 50.0 (buffers 1000 kB)

| variant | runs | median | min-max | spread % | gain |
| --- | --- | --- | --- | --- | --- |
| default | 3 | 13.0 | 12.9-13.2 | 2 | - |
| tuned | 3 | 49.0 | 48.0-49.5 | 3 | 3.77x |

Recommendation:

    sysctl -w net.core.rmem_max=16777216 net.ipv4.tcp_rmem='4096 131072 16777216' and more

"""


PLANTED = {
    "operator_cidr": "203.0.113.77/32",
    "gcp_project": "planted-project-4821",
    "aws_profile": "planted-profile-9133",
    "owner": "planted.owner@example.org",
    "error": "planted error: ssh to 203.0.113.99 refused",
}
