"""docs/benchmarks.md is what bench/docs.py makes of the benches' figures (bench/figures/),
and every bench speaks --json in the shape the generator reads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from orchestrator.core import paths

ROOT = paths.ROOT
BENCH = ROOT / "bench"


def _docs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "docs.py"), *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def test_the_benchmarks_page_is_what_the_figures_make():
    done = _docs("--check")
    assert done.returncode == 0, done.stderr


def test_the_check_fails_on_a_page_edited_by_hand(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text((ROOT / "docs" / "benchmarks.md").read_text() + "\nan edit by hand\n")
    done = _docs("--check", "--out", str(page))
    assert done.returncode == 1
    assert "make bench-docs" in done.stderr and done.stderr.count("\n") == 1


def test_every_figures_file_says_when_where_and_at_what_load(tmp_path):
    docs = [json.loads(p.read_text()) for p in sorted((BENCH / "figures").glob("*.json"))]
    assert docs
    for doc in docs:
        assert doc["format"] == "interregion-bench/v1" and doc["date_utc"][:4] == "2026"
        assert doc["load"] and doc["machine"]["cpus"] >= 1
        if doc["source"] == "run":
            assert doc["machine"]["kernel"] and {"start", "end"} <= set(doc["load"])
            assert doc["date_utc"].endswith("Z")


def test_a_figures_file_of_no_known_bench_is_one_line(tmp_path):
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "CHANGELOG.md").write_text("## How the figures moved\n")
    doc = json.loads((BENCH / "figures" / "schedule.json").read_text())
    (figures / "x.json").write_text(json.dumps({**doc, "bench": "nowhere"}))
    done = _docs("--figures", str(figures), "--out", str(tmp_path / "b.md"))
    assert done.returncode == 1
    assert done.stderr.startswith("error: x.json: bench 'nowhere'") and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "bench", sorted(p.stem for p in BENCH.glob("[!_]*.py") if p.stem != "docs")
)
def test_every_bench_takes_json(bench):
    """Each bench's --json is what `make bench-json` keeps: its source says so."""
    text = (BENCH / f"{bench}.py").read_text()
    assert '"--json"' in text and "Figures(" in text, bench


@pytest.mark.slow
def test_a_bench_run_with_json_makes_the_section_the_page_shows(tmp_path):
    """A real run of the quickest bench, through the generator."""
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "CHANGELOG.md").write_text("## How the figures moved\n\n- today: a test\n")
    done = subprocess.run(
        [sys.executable, str(BENCH / "schedule.py"), "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["source"] == "run" and doc["tables"][0]["rows"][0][0] == "full catalog"
    (figures / "schedule.json").write_text(done.stdout)
    out = tmp_path / "b.md"
    assert _docs("--figures", str(figures), "--out", str(out)).returncode == 0
    page = out.read_text()
    assert "## Scheduler" in page and "| full catalog | 77 | 2926 | 76 | 77 |" in page
    assert f"load {doc['load']['start']:g}" in page.replace(",", "")
