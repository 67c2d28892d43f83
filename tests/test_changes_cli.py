"""`interregion changes` on a real store: exit 3 while open, configuration changes named by
field, and --notify against a local HTTP server (loopback)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, sweep_id_at

from orchestrator.cli import main
from orchestrator.history import store as h

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B = "aws:us-east-1", "gcp:europe-west1"


def _sweeps(results, levels, start=0, kernels=None):
    """One sweep per 6 h; A -> B pings at levels[i] ms (20 samples), B -> A stays 80 ms."""
    for i, level in enumerate(levels, start):
        t = T0 + timedelta(hours=6 * i)
        samples = {(A, B): [level + 0.1 * (k % 3) for k in range(20)], (B, A): [80.0] * 20}
        kernel = (kernels or {}).get(i, "6.1.0-28-amd64")
        make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t, kernel=kernel)
    h.ingest_all(results)


def _changes(results, *args):
    return CliRunner().invoke(main, ["changes", "--results", str(results), *args])


def test_open_episode_exits_3_and_closes(tmp_path):
    _sweeps(tmp_path, [150.0] * 10 + [160.0, 160.0])
    result = _changes(tmp_path, "--json")
    assert result.exit_code == 3, result.output
    doc = json.loads(result.output)
    (e,) = doc["episodes"]
    assert (e["src"], e["dst"], e["metric"], e["status"]) == (A, B, "rtt", "open")
    assert e["old_level"] == pytest.approx(150.1) and e["new_level"] == pytest.approx(160.1)
    assert e["started_utc"].startswith("2026-11-03T12:00")  # run 10
    assert doc["open"] == 1 and doc["hosts"] == [] and doc["configuration_changes"] == []
    _sweeps(tmp_path, [150.0, 150.0], start=12)
    result = _changes(tmp_path)
    assert result.exit_code == 0, result.output
    assert "PAIR REVERTED" in result.output and "0 open" in result.output
    # --since after it closed: nothing to say
    assert "no changes" in _changes(tmp_path, "--since", "2026-11-05").output


def test_a_kernel_change_is_a_configuration_change_not_a_network_change(tmp_path):
    kernels = {i: "6.1.0-29-amd64" for i in range(10, 13)}
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3, kernels=kernels)
    result = _changes(tmp_path)
    assert result.exit_code == 0, result.output
    assert "PAIR" not in result.output
    lines = [x for x in result.output.splitlines() if x.startswith("CONFIGURATION")]
    assert len(lines) == 1 and "2 pairs" in lines[0]
    assert "src_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64" in lines[0]
    assert "dst_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64" in lines[0]


def test_notify_posts_once_per_new_and_once_per_closed_episode(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = httpserver.url_for("/hook")
    assert url.startswith("http://localhost:") or url.startswith("http://127.0.0.1:")
    _sweeps(tmp_path, [150.0] * 10 + [160.0, 160.0])
    assert _changes(tmp_path, "--notify", url).exit_code == 3
    assert _changes(tmp_path, "--notify", url).exit_code == 3  # nothing new: nothing sent
    _sweeps(tmp_path, [150.0, 150.0], start=12)
    assert _changes(tmp_path, "--notify", url).exit_code == 0
    posted = [json.loads(request.get_data()) for request, _response in httpserver.log]
    assert [(d["event"], d["status"]) for d in posted] == [
        ("opened", "open"),
        ("closed", "reverted"),
    ]
    assert posted[0]["id"] == posted[1]["id"] and posted[0]["type"] == "interregion.change"
    assert (posted[0]["src"], posted[0]["dst"], posted[0]["kind"]) == (A, B, "pair")


def test_notify_failure_is_retried_next_time(tmp_path, httpserver):
    httpserver.expect_oneshot_request("/hook", method="POST").respond_with_data("no", status=503)
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = httpserver.url_for("/hook")
    _sweeps(tmp_path, [150.0] * 10 + [160.0, 160.0])
    first = _changes(tmp_path, "--notify", url)
    assert first.exit_code == 3 and "HTTP 503" in first.output
    assert _changes(tmp_path, "--notify", url).exit_code == 3
    assert [r.get_json()["event"] for r, _ in httpserver.log] == ["opened", "opened"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--notify", "ftp://x"), "http:// or https://"),
        (("--since", "soon"), "--since 'soon'"),
        (("--source", "nope"), "--source nope"),
    ],
)
def test_changes_errors_are_one_line(tmp_path, args, message):
    _sweeps(tmp_path, [150.0] * 3)
    result = _changes(tmp_path, *args)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert message in result.output
