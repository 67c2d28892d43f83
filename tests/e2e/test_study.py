"""End to end: `interregion study tcp` on the emulated cloud (issue 13 parts 1-4).

Five regions, 10 pairs from ~3 ms to ~215 ms RTT, one with 1 % loss set each way (a
perturbation). The five relations of the emulator check (orchestrator.study.check)
must hold on the measured study; every host's settings are restored; nothing is left.
Then an interrupted study: the restore play still runs over every host. Real
Terraform, namespaces, sshd, Ansible, iperf3, ping, delayd and tc. Short tests (-t 3
after -O 3, which the lossy stream needs to settle from slow start) keep it within
minutes; bench/study.py prints the same table with the model's values.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

import pytest
from e2e_support import nothing_left, only_sweep, record, run_cli, start_cli, wait_for

from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.study.check import check
from orchestrator.study.findings import default_window, pair_results
from orchestrator.study.run import read_table

pytestmark = [pytest.mark.root, pytest.mark.slow]

REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:us-east-2", "aws:eu-west-1", "aws:ap-northeast-1")
LOSSY = ("aws:us-east-2", "aws:eu-west-1")
VARIANTS = ("default", "tuned", "p4")
ARGS = [
    "study", "tcp", "--backend", "local", "--regions", ",".join(REGIONS),
    "--variants", ",".join(VARIANTS), "--repeats", "3", "--pings", "10", "--duration", "3",
    "--omit", "3", "--seed", "13", "--emulation-seed", "5",
    "--perturb", f"{LOSSY[0]}/{LOSSY[1]},loss_pct=1", "--yes",
]  # fmt: skip


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    out = run_cli([*ARGS, "--results", str(results)], timeout_s=1800)
    study = only_sweep(results / "studies")  # --results is the sweeps' folder, as everywhere
    yield out, study
    if not nothing_left(study):
        run_cli(["teardown", "--sweep", study.name, "--results", str(results)])


def test_every_pair_runs_every_variant_three_times_in_its_recorded_order(studied):
    out, study = studied
    assert out.returncode == 0, out.stderr[-3000:]
    meta = record(study)["study"]
    assert len(meta["pairs"]) == 10
    rows = read_table(study / "study.csv")
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["error"]]
    assert len(rows) == 10 * len(VARIANTS) * 3
    for name, info in meta["pairs"].items():
        mine = sorted(
            (r for r in rows if f"{r['src_cloud']}:{r['src_region']}" == info["src"]
             and f"{r['dst_cloud']}:{r['dst_region']}" == info["dst"]),
            key=lambda r: int(r["round"]),
        )  # fmt: skip
        assert [[r["variant"], int(r["repeat"])] for r in mine] == info["order"], name
        assert Counter(r["variant"] for r in mine) == {v: 3 for v in VARIANTS}
        assert info["idle_rtt_source"] == "ping phase"
        for r in mine:  # the tuned test ran with the buffers sized from the idle RTT
            if r["variant"] == "tuned":
                assert int(r["host_tcp_rmem_max_bytes"]) == info["tuned_buffer_bytes"]
    orders = [tuple(map(tuple, p["order"])) for p in meta["pairs"].values()]
    assert len(set(orders)) > 1  # shuffled per pair
    # no host in two tests at once: each round's slots have distinct hosts
    for entry in record(study)["rounds"]:
        hosts = [h for s in entry["slots"] for h in (s["client"], s["server"])]
        assert len(hosts) == len(set(hosts))


def test_the_five_relations_of_the_emulator_check_hold(studied):
    _, study = studied
    meta = record(study)
    facts = json.loads((study / "hosts.json").read_text()).get("facts", {})
    window = default_window(meta["backend"], facts)
    results = pair_results(read_table(study / "study.csv"), meta["study"]["pairs"], window)
    lossy = {n for n in meta["study"]["pairs"] if set(n.split("->")) == set(LOSSY)}
    assert len(lossy) == 1
    rtts = sorted(p.idle_rtt_ms for p in results)
    assert rtts[0] < 5 and rtts[-1] >= 130
    relations = check(results, DEFAULT_MODEL, lossy)
    assert [r.number for r in relations] == [1, 2, 3, 4, 5]
    failed = [f"{r.number}. {r.text}: {r.detail}" for r in relations if not r.ok]
    assert not failed, failed
    (loss_pair,) = [p for p in results if f"{p.src}->{p.dst}" in lossy]
    assert loss_pair.limit == "loss"
    assert loss_pair.recommendation()[0].startswith("loss, not the window, limits this path")


def test_the_report_and_restore_and_nothing_left(studied):
    _, study = studied
    text = (study / "study.md").read_text()
    assert "net.ipv4.tcp_rmem = 4096 131072" in text and "loss, not the window" in text
    assert "<table>" in (study / "study.html").read_text()
    summary = read_table(study / "study_summary.csv")
    assert {r["variant"] for r in summary} == set(VARIANTS)
    restore = record(study)["study"]["restore"]
    assert set(restore) == set(REGIONS)
    for host, done in restore.items():
        assert "error" not in done, (host, done)
        # the emulated default: 262 kB, whatever the last tuned test set
        assert done["net.ipv4.tcp_rmem"].split()[-1] == str(DEFAULT_MODEL.tcp_buffer_bytes)
        assert f"window {round(DEFAULT_MODEL.window_bytes)}" in done["routes"][0]
    assert nothing_left(study)


def test_an_interrupted_study_still_restores_every_host(tmp_path):
    results = tmp_path / "results"
    studies = results / "studies"
    args = [
        "study", "tcp", "--backend", "local", "--regions", "aws:us-east-1,aws:eu-west-1",
        "--variants", "default,tuned", "--repeats", "3", "--pings", "5", "--duration", "5",
        "--omit", "1", "--seed", "1", "--yes", "--results", str(results),
    ]  # fmt: skip
    proc = start_cli(args)
    try:
        # wait for a tuned test to be running: its saved originals are on disk
        wait_for(
            lambda: studies.exists() and any(studies.glob("*/state/agent/tuned-*.json")),
            timeout_s=300,
            what="a tuned test",
            proc=proc,
        )
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    study = only_sweep(studies)
    meta = record(study)
    assert meta["status"] == "interrupted"
    restore = meta["study"]["restore"]
    assert set(restore) == {"aws:us-east-1", "aws:eu-west-1"}
    # interrupted in a tuned test: the agent restores on its way out (its ssh session
    # ends), or the restore play does what it left; either way the play reads back the
    # hosts' own settings
    for done in restore.values():
        assert "error" not in done
        assert done["net.ipv4.tcp_rmem"].split()[-1] == str(DEFAULT_MODEL.tcp_buffer_bytes)
        assert done["net.ipv4.tcp_wmem"].split()[-1] == str(DEFAULT_MODEL.tcp_buffer_bytes)
        assert f"window {round(DEFAULT_MODEL.window_bytes)}" in done["routes"][0]
    assert nothing_left(study)
