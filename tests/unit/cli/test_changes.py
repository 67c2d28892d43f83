"""`interregion changes` on a real store: exit 3 while open, configuration changes named by
field, and --notify against a local HTTP server (loopback)."""

from __future__ import annotations

import base64
import json
import re

import pytest
from click.testing import CliRunner
from history_support import STEP_A as A
from history_support import STEP_B as B
from history_support import step_sweeps as _sweeps

from orchestrator.cli import main
from orchestrator.history import changes, notify
from orchestrator.history.changes import Params


def _changes(results, *args):
    return CliRunner().invoke(main, ["changes", "--results", str(results), *args])


@pytest.mark.slow
def test_open_episode_exits_3_and_closes(tmp_path):
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3)
    result = _changes(tmp_path, "--json")
    assert result.exit_code == 3, result.output
    doc = json.loads(result.output)
    (e,) = doc["episodes"]
    assert (e["src"], e["dst"], e["metric"], e["status"]) == (A, B, "rtt", "open")
    assert e["old_level"] == pytest.approx(150.1) and e["new_level"] == pytest.approx(160.1)
    assert e["started_utc"].startswith("2026-11-03T12:00")  # run 10
    # one path event: A -> B moved, B -> A (steady at 150 ms) did not
    assert e["one_direction"] and [(x["src"], x["moved"]) for x in e["directions"]] == [
        (A, True),
        (B, False),
    ]
    assert (e["k1"], e["k2"]) == (Params.k1, Params.k2) and e["directions"][0][
        "confirm_threshold"
    ] == 2.0
    assert doc["open"] == 1 and doc["hosts"] == [] and doc["configuration_changes"] == []
    _sweeps(tmp_path, [150.0, 150.0], start=13)
    result = _changes(tmp_path)
    assert result.exit_code == 0, result.output
    assert "PATH REVERTED" in result.output and "0 open" in result.output
    # --since after it closed: nothing to say
    assert "no changes" in _changes(tmp_path, "--since", "2026-11-05").output


def test_after_one_sweep_changes_says_what_is_not_judged_yet(tmp_path):
    _sweeps(tmp_path, [150.0])
    result = _changes(tmp_path)
    assert result.exit_code == 0, result.output
    # two directed pairs, RTT and throughput: 1 of the 8 runs each
    assert "not judged: 2 pairs have 1 of the 8 runs needed (rtt, emulated)" in result.output
    assert "no pair judged yet" in result.output
    doc = json.loads(_changes(tmp_path, "--json").output)
    assert doc["judged_pairs"] == 0
    waiting = [(u["metric"], u["pairs"], u["runs"], u["runs_needed"]) for u in doc["not_judged"]]
    assert waiting == [("rtt", 2, 1, 8), ("throughput", 2, 1, 8)]
    _sweeps(tmp_path, [150.0] * 8, start=1)  # 9 runs: judged, nothing left waiting
    result = _changes(tmp_path)
    assert "not judged" not in result.output and "no pair judged" not in result.output
    assert "no changes" in result.output


@pytest.mark.slow
def test_a_change_prints_its_delta_and_percent(tmp_path):
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3)
    lines = _changes(tmp_path).output.splitlines()
    # A -> B: 150.1 ms (its baseline) to 160.1 ms: +10.0 ms, 10 / 150.1 = +6.7 %
    (moved,) = [x for x in lines if x.startswith(f"  {A} -> {B}")]
    assert "150.1 ms -> 160.1 ms (+10.0 ms, +6.7 %)" in moved, moved


def test_a_kernel_change_is_a_configuration_change_not_a_network_change(tmp_path):
    kernels = {i: "6.1.0-29-amd64" for i in range(10, 13)}
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3, kernels=kernels)
    result = _changes(tmp_path)
    assert result.exit_code == 0, result.output
    assert "PATH" not in result.output
    lines = [x for x in result.output.splitlines() if x.startswith("CONFIGURATION")]
    assert len(lines) == 1 and "2 pairs" in lines[0]
    assert "src_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64" in lines[0]
    assert "dst_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64" in lines[0]


@pytest.mark.slow
def test_notify_posts_once_per_new_and_once_per_closed_episode(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = httpserver.url_for("/hook")
    assert url.startswith("http://localhost:") or url.startswith("http://127.0.0.1:")
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3)
    assert _changes(tmp_path, "--notify", url).exit_code == 3
    assert _changes(tmp_path, "--notify", url).exit_code == 3  # nothing new: nothing sent
    _sweeps(tmp_path, [150.0, 150.0], start=13)
    assert _changes(tmp_path, "--notify", url).exit_code == 0
    posted = [json.loads(request.get_data()) for request, _response in httpserver.log]
    assert [(d["event"], d["status"]) for d in posted] == [
        ("opened", "open"),
        ("closed", "reverted"),
    ]
    assert posted[0]["id"] == posted[1]["id"] and posted[0]["type"] == "interregion.change"
    assert (posted[0]["src"], posted[0]["dst"], posted[0]["kind"]) == (A, B, "path")


@pytest.mark.slow
def test_notify_failure_is_retried_next_time(tmp_path, httpserver):
    httpserver.expect_oneshot_request("/hook", method="POST").respond_with_data("no", status=503)
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = httpserver.url_for("/hook")
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3)
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


def test_notify_credentials_go_as_basic_auth_and_are_never_printed(tmp_path, httpserver):
    token = base64.b64encode(b"hook-user:s3cr%t pw").decode()
    httpserver.expect_request(
        "/hook", method="POST", headers={"Authorization": f"Basic {token}"}
    ).respond_with_data("no", status=503)
    bare = httpserver.url_for("/hook")
    url = bare.replace("http://", "http://hook-user:s3cr%25t%20pw@")
    _sweeps(tmp_path, [150.0] * 10 + [160.0] * 3)
    result = _changes(tmp_path, "--notify", url)
    assert result.exit_code == 3 and "HTTP 503" in result.output
    (request, _response), *_ = httpserver.log
    assert request.headers["Authorization"] == f"Basic {token}"  # sent, decoded once
    assert "s3cr" not in result.output and "hook-user:***@" in result.output
    # the same from the environment and from a file, the URL never on the command line
    env = CliRunner(env={"INTERREGION_NOTIFY_URL": url}).invoke(
        main, ["changes", "--results", str(tmp_path)]
    )
    assert env.exit_code == 3 and "s3cr" not in env.output and "hook-user:***@" in env.output
    url_file = tmp_path / "notify url.txt"
    url_file.write_text(f"\n{url}\n")
    from_file = _changes(tmp_path, "--notify-file", str(url_file))
    assert from_file.exit_code == 3 and "s3cr" not in from_file.output
    assert len(httpserver.log) == 3


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:pw@example.test/x?q=1", "https://u:***@example.test/x?q=1"),
        ("https://u:pw@[2001:db8::1]:8443/x", "https://u:***@[2001:db8::1]:8443/x"),
        ("https://example.test/x", "https://example.test/x"),
    ],
)
def test_printed_urls_are_redacted(url, shown):
    assert notify.redacted(url) == shown
    bare, headers = notify.split_credentials(url)
    assert "pw" not in bare and ("Authorization" in headers) == ("pw" in url)


def test_a_notify_file_that_is_empty_or_missing_is_one_line(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    result = _changes(tmp_path, "--notify-file", str(empty))
    assert result.exit_code == 2 and "empty: write the URL on its first line" in result.output
    result = _changes(tmp_path, "--notify-file", str(tmp_path / "nope.txt"))
    assert result.exit_code == 2 and "no such file" in result.output


@pytest.mark.slow
def test_a_flagged_run_not_yet_confirmed_is_suspected_never_notified(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    _sweeps(tmp_path, [150.0] * 10 + [160.0])
    result = _changes(tmp_path, "--json", "--notify", httpserver.url_for("/hook"))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["open"] == 0 and doc["episodes"] == []
    (s,) = doc["suspected"]
    assert (s["src"], s["dst"], s["kind"]) == (A, B, "suspected")
    ab = next(x for x in s["directions"] if x["src"] == A)
    assert ab["change"] == pytest.approx(10.0, abs=0.2) and ab["flag_threshold"] == 2.0
    assert httpserver.log == []
    assert "SUSPECTED" in _changes(tmp_path).output


@pytest.mark.slow
def test_each_pairs_smallest_detectable_change_in_history_and_matrix(tmp_path):
    # A -> B: 150, 150.1, 150.2 ms a run (MAD 0.1: scale floored at 0.3 ms, where the 2 ms
    # minimum sets the smallest change); B -> A: 150 ms flat, the same
    _sweeps(tmp_path, [150.0 + 0.1 * (i % 3) for i in range(10)])
    expected = round(changes.smallest_change(0.3), 2)
    assert 2.0 < expected < 3.0
    doc = json.loads(
        CliRunner()
        .invoke(main, ["history", "--pairs", f"{A}/{B}", "--json", "--results", str(tmp_path)])
        .output
    )
    (src,) = doc["sources"]
    assert (src["scale"], src["smallest_detectable_change"]) == (0.3, expected)
    result = CliRunner().invoke(
        main, ["matrix", "--metric", "detectable", "--json", "--results", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    mx = json.loads(result.output)
    assert mx["metric"] == "detectable" and mx["unit"] == "ms"
    cells = {(c["src"], c["dst"]): c["value"] for c in mx["matrices"][0]["cells"]}
    assert cells == {(A, B): expected, (B, A): expected}
    # every output format: the terminal table and CSV too
    text = CliRunner().invoke(
        main, ["matrix", "--metric", "detectable", "--results", str(tmp_path)]
    )
    assert text.exit_code == 0, text.output
    assert f" {expected:.1f} " in text.stdout and "From \\ To" in text.stdout
    csv = CliRunner().invoke(
        main, ["matrix", "--metric", "detectable", "--csv", "--results", str(tmp_path)]
    )
    assert (
        csv.exit_code == 0 and f"{A},{B},detectable,p95 within 3 runs,ms,{expected}" in csv.stdout
    )
    # too few runs: none yet
    few = tmp_path / "few"
    _sweeps(few, [150.0] * 3)
    doc = json.loads(
        CliRunner()
        .invoke(main, ["history", "--pairs", f"{A}/{B}", "--json", "--results", str(few)])
        .output
    )
    assert doc["sources"][0]["smallest_detectable_change"] is None


@pytest.mark.slow
def test_calibrate_reports_the_rate_and_records_the_thresholds_it_sets(tmp_path):
    # steady but for one +10 ms run in the last week: heavier tails than normal noise
    levels = [150.0] * 30 + [160.0] + [150.0] * 5 + [170.0] * 3
    _sweeps(tmp_path, levels)
    result = _changes(tmp_path, "--calibrate", "--json")
    assert result.exit_code == 3, result.output
    # the rule is the store's: calibrating judges every run again, and says so
    assert "the rule changed" in result.stderr and "every run" in result.stderr
    doc = json.loads(result.stdout)
    assert doc["rule"]["calibrate"] is True
    cal = doc["calibration"]
    assert cal["beyond_4_5_scales"] >= 1 and cal["rate"] > cal["normal_rate"]
    (e,) = doc["episodes"]
    assert (e["k1"], e["k2"]) == (cal["k1"], cal["k2"]) and cal["k1"] > Params.k1
    again = _changes(tmp_path, "--calibrate")
    assert "CALIBRATION" in again.stdout and "the rule changed" not in again.stderr
    # kept: the next call judges nothing again and still calibrates
    assert json.loads(_changes(tmp_path, "--json").stdout)["rule"]["calibrate"] is True


@pytest.mark.slow
def test_the_pair_page_shows_the_smallest_change_under_the_calibrated_rule(tmp_path):
    # noisy enough that k sets the smallest change (not the 2 ms floor), with one +10 ms
    # run: calibrating raises k1 above the fixed 3
    noise = [150.0 + (0.8 if i % 2 else -0.8) for i in range(36)]
    _sweeps(tmp_path, [*noise[:30], 160.0, *noise[30:]])
    doc = json.loads(_changes(tmp_path, "--calibrate", "--json").stdout)
    assert doc["calibration"]["k1"] > Params.k1
    query = ["history", "--pairs", f"{A}/{B}", "--json", "--results", str(tmp_path)]
    (shown,) = json.loads(CliRunner().invoke(main, query).output)["sources"]
    site = tmp_path / "site"
    built = CliRunner().invoke(main, ["site", "--results", str(tmp_path), "--out", str(site)])
    assert built.exit_code == 0, built.output
    page = next((site / "history" / "pairs").glob("*.html")).read_text()
    data = re.search(r"<script type='application/json' id='pair-data'>(.*?)</script>", page)
    (entry,) = json.loads(data.group(1))["sources"]
    on_page = {
        (d["src"], d["dst"]): d["smallest_detectable_change_ms"] for d in entry["directions"]
    }
    # the same number as `history --pairs`, the calibrated k's, not the fixed k's
    fixed = round(changes.smallest_change(shown["scale"]), 2)
    assert on_page[A, B] == shown["smallest_detectable_change"] != fixed
