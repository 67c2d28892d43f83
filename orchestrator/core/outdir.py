"""Output folders that appear whole: build beside the target, then swap it in.

A report or a site is many files. Written in place, a re-run leaves the
previous run's charts beside the new ones, and a crash leaves half a folder.
`building(out, owned)` yields a fresh folder beside `out`; when the block
ends without an exception the new folder takes `out`'s place in one
rename(2) (RENAME_EXCHANGE, where the kernel and file system have it) and the
old one is removed. On an exception the new folder is removed and `out` is
untouched.

Only a folder that is new, empty or holds nothing but what `owned` names is
replaced, so `--out ~` can never delete a user's files. With `manifest=True` (the
site) the rule is stricter: the folder keeps a manifest of every file written to it
(MANIFEST), and one holding any file the manifest does not list is refused, even one
named like ours (a hand-written index.html). The folder keeps its mode either way.

With `reuse=True` (the site: thousands of pages) the old folder is not removed but
kept beside `out` as `.NAME.previous`, and the next build's new files take its files'
places (open_new: renamed, then emptied and written) instead of being created: on ext4
creating a file costs many times what renaming one does, and a year's site has thousands
of pages (bench/site.py times their writing). A file with another link
(a site links the measurements.csv it keeps from the folder before) is never taken.

A folder a build was writing when it was killed (`.NAME.building-PID-*`, and the
others named with a PID) is removed by the next build of the same `out` once that
process is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TextIO

from orchestrator.core.errors import UserError

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h


def check_replaceable(out: Path, owned: Collection[str], what: str) -> None:
    """UserError unless `out` is missing, an empty folder, or a folder of only `owned` names."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a folder: give a folder for the {what}")
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in owned)
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(
            f"{out} holds files that are not part of a {what} ({shown}): "
            f"give a new or empty folder, or one an earlier {what} was written to"
        )


def within(root: Path, path: Path) -> bool:
    """Whether `path` lies under `root` with no symlink from `root` down to it (`path`
    itself included; `root` may be one): what a writer owning `root` may replace or
    delete. A link inside a folder the tool owns leads to what is not its own."""
    root, path = Path(root), Path(path)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    at = root
    for part in parts:
        if part in (".", ".."):
            return False
        at = at / part
        if at.is_symlink():
            return False
    return True


def remove_within(root: Path, path: Path) -> bool:
    """Delete the file or folder `path` under `root`, never through a symlink: a link on
    the way (or at `path`) is left as it is, with what it leads to, and False returned.
    A missing `path` is False too. Every writer that deletes in a folder it owns (a
    sweep's raw/ and state/, the results' caches) deletes through this."""
    path = Path(path)
    if not within(root, path) or not os.path.lexists(path):
        return False
    if path.is_dir():
        shutil.rmtree(path)  # rmtree itself never follows a link inside the folder
    else:
        path.unlink()
    return True


MANIFEST = ".interregion-manifest"  # JSON: the files interregion wrote into a folder


def read_manifest(folder: Path) -> set[str]:
    """The relative paths the folder's manifest lists; none when it has no readable one."""
    try:
        doc = json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return set()
    files = doc.get("files") if isinstance(doc, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def files_under(folder: Path) -> list[str]:
    """Relative paths (posix) of everything but folders under `folder`, the manifest aside."""
    found = []
    # os.walk: the kind of each entry from the folder's listing, no stat of each (a
    # year's site is 3,000 files, listed three times a build)
    for at, dirs, files in os.walk(folder):
        rel = Path(at).relative_to(folder)
        links = [d for d in dirs if os.path.islink(os.path.join(at, d))]  # not followed
        found += [(rel / name).as_posix() for name in [*files, *links]]
    return sorted(f for f in found if f != MANIFEST)


def write_manifest(folder: Path, files: Collection[str]) -> None:
    doc = {"written_by": "interregion", "files": sorted(files)}
    (Path(folder) / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n")


def check_only_ours(out: Path, what: str, flag: str) -> None:
    """UserError unless every file under `out` is one its manifest lists (a missing or
    empty folder passes): the files interregion wrote there, nothing of anyone else's."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a folder: give a folder for the {what}")
    if not out.is_dir():
        return
    listed = read_manifest(out)
    foreign = [f for f in files_under(out) if f not in listed]
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(
            f"{flag} {out} holds files interregion did not write there ({shown}; its list is "
            f"{MANIFEST}): give a new or empty folder, or one only a {what} was written to"
        )


def mode_for(out: Path) -> int:
    """The mode the new folder gets: the old folder's, else the umask's default."""
    try:
        return stat.S_IMODE(out.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o777 & ~mask


@contextmanager
def building(
    out: Path,
    owned: Collection[str],
    what: str,
    *,
    manifest: bool = False,
    flag: str = "--out",
    reuse: bool = False,
) -> Iterator[Path]:
    """A fresh folder beside `out` to write into; swapped into `out`'s place at the end,
    with the old folder's mode. A symlink `out` stays a link: the folder it points to is
    the one replaced. `manifest`: refuse any file not listed in `out`'s manifest, and
    write one listing what was built. `reuse`: keep the old folder as `.NAME.previous`,
    whose files the next build's open_new takes."""

    def check() -> None:
        if manifest:
            check_only_ours(out, what, flag)
        else:
            check_replaceable(out, owned, what)

    out = out.resolve() if out.is_symlink() else out
    check()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_orphans(out)
        tmp = Path(tempfile.mkdtemp(prefix=_ours(out, "building"), dir=out.parent))
    except OSError as e:
        raise UserError(
            f"cannot create {out} ({e.strerror}): give a folder you can write"
        ) from None
    spare = _Spare.take(out, tmp) if reuse else None
    token = _SPARE.set(spare)
    try:
        yield tmp
        if manifest:
            write_manifest(tmp, files_under(tmp))
        check()  # nothing foreign appeared meanwhile
        tmp.chmod(mode_for(out))  # mkdtemp made it 0700
        swap_into_place(tmp, out, keep=previous_path(out) if reuse else None)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"cannot write the {what} to {out} ({e}): {out} is unchanged") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        _SPARE.reset(token)
        if spare is not None:
            shutil.rmtree(spare.folder, ignore_errors=True)  # the files no page took


def swap_into_place(new: Path, out: Path, keep: Path | None = None) -> None:
    """Put folder `new` at `out`, removing what was there (moved to `keep` instead, when
    given and free); readers see one or the other."""
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        _retire(new, keep)  # now the old contents
        return
    # No RENAME_EXCHANGE: two renames, with a moment where `out` is missing.
    old = out.with_name(f"{_ours(out, 'old')}{secrets.token_hex(4)}")
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    _retire(old, keep)


def _retire(old: Path, keep: Path | None) -> None:
    if keep is not None:
        try:
            os.rename(old, keep)  # refused when another build kept its own meanwhile
            return
        except OSError:
            pass
    shutil.rmtree(old)


# ---- the previous build's files, taken by the next ---------------------------------------


def previous_path(out: Path) -> Path:
    """Where building(reuse=True) keeps `out`'s previous build."""
    return out.with_name(f".{out.name}.previous")


def _ours(out: Path, kind: str) -> str:
    """The start of the name of a folder this process makes beside `out`."""
    return f".{out.name}.{kind}-{os.getpid()}-"


def _remove_orphans(out: Path) -> None:
    """Remove the folders beside `out` that a build of it made and left when it was
    killed: named with a PID that is no longer running."""
    prefix = f".{out.name}."
    for path in out.parent.iterdir():
        if not path.name.startswith(prefix):
            continue
        kind, _, rest = path.name[len(prefix) :].partition("-")
        pid = rest.partition("-")[0]
        if kind not in ("building", "spare", "old") or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass  # running, as another user


class _Spare:
    """The files of `out`'s previous build, moved aside for one build to take."""

    def __init__(self, folder: Path, files: list[Path]) -> None:
        self.folder = folder
        self.files = files
        self.into: Path | None = None  # the folder being built

    @classmethod
    def take(cls, out: Path, into: Path) -> _Spare | None:
        """The previous build's files, or None without one (or another build took it)."""
        folder = Path(tempfile.mkdtemp(prefix=_ours(out, "spare"), dir=out.parent))
        try:
            os.rename(previous_path(out), folder)  # an empty folder is replaced
        except OSError:
            folder.rmdir()
            return None
        files = []
        for path in folder.rglob("*"):
            st = path.lstat()
            mine = st.st_uid == os.getuid() and st.st_mode & stat.S_IWUSR
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and mine:
                files.append(path)
        spare = cls(folder, files)
        spare.into = into
        return spare


_SPARE: ContextVar[_Spare | None] = ContextVar("outdir_spare", default=None)


def open_new(path: Path) -> TextIO:
    """`path` in a folder being built, opened to write text: a file of the previous build
    (building(reuse=True)) renamed there and emptied while one is left, else a new one.
    Its folder must exist."""
    spare = _SPARE.get()
    if spare is not None and reusing(path):
        with contextlib.suppress(OSError):  # (a folder of that name): a new file
            os.rename(spare.files.pop(), path)
    return open(path, "w", encoding="utf-8")


def reusing(path: Path) -> bool:
    """Whether `path` is in a folder being built with a previous build's files to take."""
    spare = _SPARE.get()
    return spare is not None and bool(spare.files) and spare.into in path.parents


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with renameat2(RENAME_EXCHANGE); False if unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))
