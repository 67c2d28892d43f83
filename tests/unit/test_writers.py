"""Writers write only what is theirs: a file is replaced only when it is a regular file
(never a FIFO, a device, a symlink or a folder), and the site and a published folder
only when every file in them is one interregion wrote there (their manifest)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.core import outdir
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.publish import upload
from orchestrator.results import files as store
from orchestrator.site import static_site as site
from testkit import synthetic

CATALOG = load_catalog()


def _specials(tmp_path: Path) -> dict[str, Path]:
    """A FIFO, a symlink (to a file that must stay as it is), a folder, and a device
    node (root only: a copy of /dev/null made here, never a real one touched)."""
    found = {}
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    found["a FIFO"] = fifo
    kept = tmp_path / "kept.txt"
    kept.write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(kept)
    found["a symlink"] = link
    folder = tmp_path / "folder"
    folder.mkdir()
    found["a folder"] = folder
    if os.geteuid() == 0:
        device = tmp_path / "device"
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        found["a device"] = device
    return found


def _kind(path: Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


def test_write_atomic_replaces_a_regular_file_and_refuses_anything_else(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("old")
    store.write_atomic(plain, "new")
    assert plain.read_text() == "new"
    for kind, path in _specials(tmp_path).items():
        before = _kind(path)
        with pytest.raises(UserError, match=f"is {kind}: give the path of a regular file"):
            store.write_atomic(path, "x")
        assert _kind(path) == before, kind
    assert (tmp_path / "kept.txt").read_text() == "mine"  # the link's target untouched


@pytest.fixture
def results(tmp_path):
    results = tmp_path / "results"
    sweep_id = "20261120T0000Z-a0"
    rows = synthetic.synthetic_rows(CATALOG.regions[:4], 12, sweep_id=sweep_id, seed=1)
    synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
    (results / sweep_id / "sweep.json").write_text(json.dumps(synthetic.sweep_record(sweep_id)))
    return results


def test_schedule_and_history_exports_refuse_what_is_not_a_regular_file(tmp_path, results):
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        "profiles:\n  lat:\n    every: PT6H\n    tests: ping\n    regions: aws:us-east-1,"
        "aws:eu-west-1\n    backend: aws\n    budget_usd: 2\n    budget_usd_month: 100\n"
    )
    runner = CliRunner()
    ingest = runner.invoke(main, ["history", "ingest", "--all", "--results", str(results)])
    assert ingest.exit_code == 0, ingest.output
    for kind, path in _specials(tmp_path).items():
        before = _kind(path)
        workflow = [
            "schedule", "export", "lat", "--file", str(schedules), "--repo", "acme/ir",
            "--state-bucket", "s3://acme/ir", "--github-actions", str(path),
        ]  # fmt: skip
        history = ["history", "export", "--format", "csv", "--out", str(path)]
        for args in (workflow, [*history, "--results", str(results)]):
            out = runner.invoke(main, args)
            assert out.exit_code == 2 and out.output.count("\n") == 1, (kind, out.output)
            # a folder is already refused by the option's type (click: "is a directory")
            said = ("is a folder", "is a directory") if kind == "a folder" else (f"is {kind}",)
            assert any(s in out.output for s in said), out.output
            assert _kind(path) == before, kind


def test_site_refuses_a_folder_with_files_it_did_not_write_and_keeps_its_mode(tmp_path, results):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    (out / "data").mkdir()
    (out / "data" / "mine.csv").write_text("a,b\n")
    out.chmod(0o751)
    with pytest.raises(UserError, match="holds files interregion did not write there"):
        site.build_site(out, results, catalog=CATALOG)
    assert (out / "index.html").read_text() == "my own page"
    assert stat.S_IMODE(out.stat().st_mode) == 0o751
    (out / "index.html").unlink()
    (out / "data" / "mine.csv").unlink()
    site.build_site(out, results, catalog=CATALOG)  # empty: it may
    assert stat.S_IMODE(out.stat().st_mode) == 0o751  # not mkdtemp's 0700
    written = outdir.read_manifest(out)
    assert "index.html" in written and written == set(outdir.files_under(out))
    site.build_site(out, results, catalog=CATALOG)  # its own earlier site: replaced
    (out / "sweeps" / "notes.txt").write_text("added by hand")
    with pytest.raises(UserError, match=r"sweeps/notes\.txt"):
        site.build_site(out, results, catalog=CATALOG)
    assert (out / "sweeps" / "notes.txt").read_text() == "added by hand"


def test_a_new_site_folder_gets_the_umask_mode(tmp_path, results):
    mask = os.umask(0o022)
    try:
        site.build_site(tmp_path / "fresh", results, catalog=CATALOG)
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o755


def test_publish_refuses_a_foreign_index_and_republishes_its_own(tmp_path, results):
    built = tmp_path / "site"
    site.build_site(built, results, catalog=CATALOG)
    dest = tmp_path / "www"
    dest.mkdir()
    (dest / "index.html").write_text("someone else's page")
    with pytest.raises(UserError, match=r"--to .* holds files interregion did not write there"):
        upload.publish_site(built, str(dest))
    assert (dest / "index.html").read_text() == "someone else's page"
    (dest / "index.html").unlink()
    first = upload.publish_site(built, str(dest))
    assert outdir.MANIFEST not in first.order  # the site's own list is not published
    assert outdir.read_manifest(dest) == set(first.order)
    upload.publish_site(built, str(dest))  # its own folder: published again
    assert (dest / "index.html").read_text() == (built / "index.html").read_text()


# ---- deletes never follow a link out of the folder the tool owns ------------------------


def test_within_and_remove_within_never_pass_a_link(tmp_path):
    owned, other = tmp_path / "owned", tmp_path / "other"
    (owned / "a").mkdir(parents=True)
    (other / "raw").mkdir(parents=True)
    (other / "raw" / "keep.txt").write_text("theirs")
    (owned / "linked").symlink_to(other)
    (owned / "a" / "raw").symlink_to(other / "raw")
    (owned / "a" / "mine").mkdir()
    cases = [
        (owned / "linked" / "raw", False),  # through a linked folder
        (owned / "a" / "raw", False),  # a link itself
        (owned / "a" / ".." / "linked", False),
        (other / "raw", False),  # outside
        (owned / "a" / "mine", True),
    ]
    for path, inside in cases:
        assert outdir.within(owned, path) is inside, path
        assert outdir.remove_within(owned, path) is inside, path
    assert (other / "raw" / "keep.txt").read_text() == "theirs"
    assert (owned / "a" / "raw").is_symlink() and not (owned / "a" / "mine").exists()
    assert outdir.remove_within(owned, owned / "a" / "gone") is False  # missing: nothing


def test_retention_never_follows_a_sweep_folder_that_is_a_link(tmp_path):
    from datetime import UTC, datetime

    from orchestrator.schedule.retention import apply_retention

    results, elsewhere = tmp_path / "results", tmp_path / "elsewhere"
    other = elsewhere / "20261020T0000Z-0001"
    for name in ("raw", "state"):
        (other / name).mkdir(parents=True)
    (other / "state" / "terraform.tfstate").write_text("{}")
    (other / "sweep.json").write_text(
        json.dumps({"status": "done", "created_utc": "2026-10-20T00:00:00.000Z"})
    )
    results.mkdir()
    (results / other.name).symlink_to(other)
    said: list[str] = []
    assert apply_retention(results, 1, datetime(2026, 11, 23, tzinfo=UTC), said.append) == []
    assert (other / "state" / "terraform.tfstate").read_text() == "{}"
    assert (other / "raw").is_dir()
    assert said and "it is a symlink" in said[0] and "Traceback" not in said[0]


def test_site_and_report_caches_never_delete_through_a_linked_cache(tmp_path, results):
    from orchestrator.report import cache

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "site").mkdir(parents=True)
    (elsewhere / "site" / "precious.txt").write_text("keep")
    (elsewhere / "report").mkdir()
    (elsewhere / "report" / "someone.json").write_text("{}")
    (results / ".cache").symlink_to(elsewhere)
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    cache.prune(results, keep=set())
    assert (elsewhere / "site" / "precious.txt").read_text() == "keep"
    assert (elsewhere / "report" / "someone.json").read_text() == "{}"
    assert sorted(p.name for p in (elsewhere / "report").iterdir()) == ["someone.json"]


# ---- history export writes over nothing it did not write -------------------------------


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("results/history.duckdb", "is the history store itself"),
        ("results/20261120T0000Z-a0/sweep.json", "is a sweep's sweep.json"),
        ("results/20261120T0000Z-a0/measurements.csv", "is a sweep's measurements.csv"),
        ("notes.txt", "is not an earlier 'history export --format csv'"),
        ("earlier.parquet", "is not an earlier 'history export --format csv'"),
    ],
)
def test_history_export_refuses_a_file_it_did_not_write(tmp_path, results, target, said):
    runner = CliRunner()
    assert (
        runner.invoke(main, ["history", "ingest", "--all", "--results", str(results)]).exit_code
        == 0
    )
    base = ["history", "export", "--results", str(results)]
    made = runner.invoke(
        main, [*base, "--format", "parquet", "--out", str(tmp_path / "earlier.parquet")]
    )
    assert made.exit_code == 0, made.output
    (tmp_path / "notes.txt").write_text("my notes\n")
    path = tmp_path / target
    before = path.read_bytes()
    out = runner.invoke(main, [*base, "--format", "csv", "--out", str(path)])
    assert out.exit_code == 2 and said in out.output and out.output.count("\n") == 1, out.output
    assert path.read_bytes() == before
    # its own earlier export is replaced
    again = runner.invoke(
        main, [*base, "--format", "parquet", "--out", str(tmp_path / "earlier.parquet")]
    )
    assert again.exit_code == 0, again.output
