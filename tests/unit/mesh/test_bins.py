"""The mesh's records -> samples -> 5-minute bins, with known answers: the percentiles
by the sample rule, loss and its Wilson interval, and the agent's real records."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

import pytest

from orchestrator.core import paths
from orchestrator.core.stats import wilson
from orchestrator.history import store
from orchestrator.mesh import bins

T0 = 1_800_000_000  # a bin start (divisible by 300)


def test_parse_pulled_tracks_the_position_and_skips_a_damaged_line():
    text = (
        "#file 3 100\n"
        '{"t":1800000000,"d":"gcp:europe-west1","s":5,"r":[10.0,11.0]}\n'
        "not json\n"
        "#file 4 0\n"
        '{"t":1800000060,"d":"gcp:europe-west1","s":5,"r":[]}\n'
    )
    samples, at, bad = bins.parse_pulled("aws:us-east-1", text, bins.Position(3, 100))
    assert bad == 1
    assert [s.t for s in samples] == [T0, T0 + 60]
    assert samples[0] == bins.Sample("aws:us-east-1", "gcp:europe-west1", T0, 5, (10.0, 11.0))
    line = '{"t":1800000060,"d":"gcp:europe-west1","s":5,"r":[]}\n'
    assert at == bins.Position(4, len(line))


@pytest.fixture
def con(tmp_path):
    c = store.connect(tmp_path / "h.duckdb", create=True)
    yield c
    c.close()


def _bin(con, t):
    return con.execute(
        "SELECT sent, received, rtt_p50_ms, rtt_p90_ms, rtt_p99_ms, loss_ratio, loss_lo, "
        "loss_hi, len(rtt_samples_ms) FROM mesh_bins WHERE t = ?",
        [datetime.utcfromtimestamp(t)],
    ).fetchone()


def test_bins_roll_up_minutes_across_pulls_with_the_sample_rule(con):
    # five 1-minute cycles of 5 echoes, one with 2 lost, arriving in two pulls
    minute = [bins.Sample("a:x", "b:y", T0 + 60 * i, 5, tuple(10.0 + i + j / 10 for j in
              range(3 if i == 2 else 5))) for i in range(5)]  # fmt: skip
    with store.transaction(con):
        assert bins.add_samples(con, "mesh-emulated", "m", minute[:2]) == 1
    with store.transaction(con):
        assert bins.add_samples(con, "mesh-emulated", "m", minute[2:]) == 1
    sent, received, p50, p90, p99, loss, lo, hi, n = _bin(con, T0)
    assert (sent, received, n) == (25, 23, 23)
    values = sorted(x for s in minute for x in s.rtt_ms)
    assert p50 == pytest.approx(values[11])  # 23 samples: the 12th, exactly (HF7)
    assert p90 is None and p99 is None  # 100 and 1,000 samples needed
    assert loss == pytest.approx(2 / 25)
    assert (lo, hi) == pytest.approx(wilson(2, 25))


def test_p90_appears_at_100_samples(con):
    samples = [bins.Sample("a:x", "b:y", T0 + 10 * i, 10, tuple(float(k) for k in range(10)))
               for i in range(10)]  # fmt: skip
    with store.transaction(con):
        bins.add_samples(con, "mesh-emulated", "m", samples)
    row = _bin(con, T0)
    assert row[1] == 100
    assert row[3] == pytest.approx(8.1)  # HF7 over ten copies of 0..9: rank 89.1
    assert row[4] is None


def test_a_pair_with_no_reply_has_loss_one_and_no_rtt(con):
    with store.transaction(con):
        bins.add_samples(con, "mesh-emulated", "m", [bins.Sample("a:x", "b:y", T0, 5, ())])
    sent, received, p50, _p90, _p99, loss, _lo, _hi, _n = _bin(con, T0)
    assert (sent, received, p50, loss) == (5, 0, None, 1.0)


def test_agent_records_rotate_and_read_back(tmp_path):
    """The real agent's record files: rotated by size, the oldest removed, and
    --mesh-read giving whole lines from a position on."""
    agent = paths.PLAYBOOKS / "files" / "ir_agent.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('a', {str(agent)!r})\n"
        "a = importlib.util.module_from_spec(spec); spec.loader.exec_module(a)\n"
        f"log = a.MeshLog({str(tmp_path)!r}, 120, 2)\n"
        "for i in range(10):\n"
        '    log.write([\'{"t": %d, "d": "p", "s": 1, "r": [1.5]}\\n\' % i])\n'
        "log.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    files = sorted(p.name for p in tmp_path.glob("records-*.jsonl"))
    assert len(files) == 2  # kept: the newest two
    first = int(files[0][8:14])
    out = subprocess.run(
        [sys.executable, str(agent), "--mesh-read", str(tmp_path), str(first), "0"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    samples, at, bad = bins.parse_pulled("h", out, bins.Position(first, 0))
    assert bad == 0 and samples
    assert [s.t for s in samples] == sorted(s.t for s in samples)
    assert samples[-1].t == 9
    assert at.number == first + 1
    again = subprocess.run(
        [sys.executable, str(agent), "--mesh-read", str(tmp_path), str(at.number), str(at.offset)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert bins.parse_pulled("h", again, at)[0] == []
    assert json.loads(out.splitlines()[1])["d"] == "p"


def test_pulled_text_and_parsed_samples_give_the_same_bins(tmp_path):
    """The collector's path (the agent's text read by DuckDB as it is) and the parsed
    samples' path store the same rows and bins; a damaged line is skipped by both."""
    text = "#file 1 0\n" + "".join(
        json.dumps({"t": T0 + 60 * i, "d": "gcp:b", "s": 5, "r": [10.0 + i, 10.5 + i]},
                   separators=(",", ":")) + "\n"
        for i in range(7)
    ) + "garbage\n"  # fmt: skip
    samples, _at, bad = bins.parse_pulled("aws:a", text, bins.Position())
    assert bad == 1
    got = []
    for name, add in (("a", "text"), ("b", "samples")):
        c = store.connect(tmp_path / f"{name}.duckdb", create=True)
        with store.transaction(c):
            if add == "text":
                assert bins.add_pulled(c, "mesh", "m", {"aws:a": text}) == 2
            else:
                assert bins.add_samples(c, "mesh", "m", samples) == 2
        got.append(c.execute("SELECT * EXCLUDE (rtt_samples_ms), list_sort(rtt_samples_ms) "
                             "FROM mesh_bins ORDER BY t").fetchall())  # fmt: skip
        c.close()
    assert got[0] == got[1] and len(got[0]) == 2
    assert got[0][0][2:4] == ("aws:a", "gcp:b")
