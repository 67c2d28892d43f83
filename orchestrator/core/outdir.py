"""Output folders that appear whole: build beside the target, then swap it in.

A report or a site is many files. Written in place, a re-run leaves the
previous run's charts beside the new ones, and a crash leaves half a folder.
`building(out, owned)` yields a fresh folder beside `out`; when the block
ends without an exception the new folder takes `out`'s place in one
rename(2) (RENAME_EXCHANGE, where the kernel and file system have it) and the
old one is removed. On an exception the new folder is removed and `out` is
untouched.

Only a folder that is new, empty or holds nothing but what `owned` names is
replaced, so `--out ~` can never delete a user's files.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
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


@contextmanager
def building(out: Path, owned: Collection[str], what: str) -> Iterator[Path]:
    """A fresh folder beside `out` to write into; swapped into `out`'s place at the end.
    A symlink `out` stays a link: the folder it points to is the one replaced."""
    out = out.resolve() if out.is_symlink() else out
    check_replaceable(out, owned, what)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as e:
        raise UserError(
            f"cannot create {out} ({e.strerror}): give a folder you can write"
        ) from None
    try:
        yield tmp
        check_replaceable(out, owned, what)  # nothing foreign appeared meanwhile
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
