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
"""

from __future__ import annotations

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
from pathlib import Path

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
    for path in Path(folder).rglob("*"):
        if path.is_symlink() or not path.is_dir():
            rel = path.relative_to(folder).as_posix()
            if rel != MANIFEST:
                found.append(rel)
    return sorted(found)


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


def _mode_for(out: Path) -> int:
    """The mode the new folder gets: the old folder's, else the umask's default."""
    try:
        return stat.S_IMODE(out.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o777 & ~mask


@contextmanager
def building(
    out: Path, owned: Collection[str], what: str, *, manifest: bool = False, flag: str = "--out"
) -> Iterator[Path]:
    """A fresh folder beside `out` to write into; swapped into `out`'s place at the end,
    with the old folder's mode. A symlink `out` stays a link: the folder it points to is
    the one replaced. `manifest`: refuse any file not listed in `out`'s manifest, and
    write one listing what was built."""

    def check() -> None:
        if manifest:
            check_only_ours(out, what, flag)
        else:
            check_replaceable(out, owned, what)

    out = out.resolve() if out.is_symlink() else out
    check()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as e:
        raise UserError(
            f"cannot create {out} ({e.strerror}): give a folder you can write"
        ) from None
    try:
        yield tmp
        if manifest:
            write_manifest(tmp, files_under(tmp))
        check()  # nothing foreign appeared meanwhile
        tmp.chmod(_mode_for(out))  # mkdtemp made it 0700
        swap_into_place(tmp, out)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"cannot write the {what} to {out} ({e}): {out} is unchanged") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def swap_into_place(new: Path, out: Path) -> None:
    """Put folder `new` at `out`, removing what was there; readers see one or the other."""
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        shutil.rmtree(new)  # now the old contents
        return
    # No RENAME_EXCHANGE: two renames, with a moment where `out` is missing.
    old = out.with_name(f".{out.name}.old-{secrets.token_hex(4)}")
    os.rename(out, old)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old)


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
