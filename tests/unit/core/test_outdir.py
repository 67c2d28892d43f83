"""core.outdir's reuse of a previous build's files, and the folders a killed build left."""

import os
import subprocess

import pytest

from orchestrator.core import outdir
from orchestrator.core.errors import UserError


def _build(out, pages, reuse=True):
    """A build of `pages` (name -> text) into `out`, written as the site writes."""
    with outdir.building(out, {"p"}, "site", manifest=True, reuse=reuse) as tmp:
        (tmp / "p").mkdir()
        for name, text in pages.items():
            with outdir.open_new(tmp / "p" / name) as f:
                f.write(text)


def _inodes(folder):
    return {p.stat().st_ino for p in folder.rglob("*") if p.is_file()}


def test_the_next_build_takes_the_previous_builds_files(tmp_path):
    out = tmp_path / "my site"
    _build(out, {f"{i}.html": f"first {i}" for i in range(50)})
    assert not outdir.previous_path(out).exists()  # nothing was there before
    _build(out, {f"{i}.html": f"second {i}" for i in range(50)})
    kept = _inodes(outdir.previous_path(out))
    assert (outdir.previous_path(out) / "p" / "7.html").read_text() == "first 7"
    # fewer pages, one longer and new names: each is what was written, whatever it took
    _build(out, {f"new-{i}.html": "third " * (i + 1) for i in range(40)})
    assert sorted(p.name for p in (out / "p").iterdir()) == sorted(
        f"new-{i}.html" for i in range(40)
    )
    assert all((out / "p" / f"new-{i}.html").read_text() == "third " * (i + 1) for i in range(40))
    assert _inodes(out) - {(out / outdir.MANIFEST).stat().st_ino} <= kept  # none created
    assert outdir.read_manifest(out) == set(outdir.files_under(out))
    # the files no page took are gone; the second build is the one kept now
    assert (outdir.previous_path(out) / "p" / "7.html").read_text() == "second 7"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".my site.previous", "my site"]


def test_a_file_with_another_link_is_never_taken(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "a"})
    _build(out, {"a.html": "b"})
    previous = outdir.previous_path(out)
    for f in (previous / "p").iterdir():
        f.unlink()
    kept = tmp_path / "measurements.csv"  # as a site links the rows it keeps
    kept.write_text("rows")
    os.link(kept, previous / "p" / "linked.csv")
    _build(out, {f"{i}.html": "new" for i in range(5)})
    assert kept.read_text() == "rows"
    assert kept.stat().st_ino not in _inodes(out)


def test_a_failed_build_leaves_out_and_no_spare(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "one"})
    _build(out, {"a.html": "two"})
    failing = outdir.building(out, {"p"}, "site", manifest=True, reuse=True)
    with pytest.raises(RuntimeError), failing as tmp:
        (tmp / "p").mkdir()
        with outdir.open_new(tmp / "p" / "a.html") as f:
            f.write("three")
        raise RuntimeError("the build failed")
    assert (out / "p" / "a.html").read_text() == "two"
    # its spare (the previous build) went with it: the next build creates its files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    _build(out, {"a.html": "four"})
    assert (out / "p" / "a.html").read_text() == "four"


def test_the_folders_a_killed_build_left_are_removed_by_the_next(tmp_path):
    out = tmp_path / "site"
    dead = subprocess.Popen(["true"])  # a process that has ended: its PID
    dead.wait()
    left = [tmp_path / f".site.{kind}-{dead.pid}-x1y2" for kind in ("building", "spare", "old")]
    running = tmp_path / f".site.building-{os.getpid()}-a1b2"  # a build still going
    other = tmp_path / ".site.notes-123-x"  # not a name a build makes
    for folder in [*left, running, other]:
        (folder / "p").mkdir(parents=True)
    _build(out, {"a.html": "a"})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["site", running.name, other.name])


def test_reuse_keeps_the_refusal_of_foreign_files(tmp_path):
    out = tmp_path / "site"
    _build(out, {"a.html": "a"})
    (out / "mine.txt").write_text("a user's file")
    with pytest.raises(UserError, match="did not write"):
        _build(out, {"a.html": "b"})
    assert (out / "mine.txt").read_text() == "a user's file"
