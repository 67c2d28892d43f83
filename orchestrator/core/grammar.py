"""The grammars of values that reach a file we generate, checked where they enter.

A value written into a generated file (a GitHub Actions workflow, an HTML page) is
first checked against the grammar of what it names (a bucket URL, a repository), then
quoted by the target's own rules (`yaml_string`, `script_safe`). A value that fails
its grammar is one line naming the option and the form it must take; it never
reaches the file.
"""

from __future__ import annotations

import json
import re

from orchestrator.core.errors import UserError

# S3: 3-63 of [a-z0-9.-], a letter or digit at each end. GCS adds '_' (and up to 222
# with dots; 63 is what a name without dots may have). One grammar for both is the
# stricter of each: what either cloud refuses is refused here too.
_BUCKET = {
    "s3": re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"),
    "gs": re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]"),
}
# a key prefix: segments of letters, digits and . _ - = + @ (no '..', no empty segment):
# nothing a shell, YAML or a GitHub expression reads as syntax
_SEGMENT = re.compile(r"[A-Za-z0-9._=+@-]+")
# GitHub: an owner is 1-39 letters, digits and single inner hyphens; a repository name
# 1-100 letters, digits, '.', '_' and '-', never '.' or '..'
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")
_REPO_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")


def bucket_url(text: str, flag: str) -> str:
    """`text` when it is s3://BUCKET[/PREFIX] or gs://BUCKET[/PREFIX] by each cloud's
    bucket-name rules, with a plain prefix; the URL without a trailing '/'. Else a
    one-line UserError naming `flag`."""
    scheme, sep, rest = text.partition("://")
    form = f"{flag} {text!r}: write s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"
    if not sep or scheme not in _BUCKET:
        raise UserError(f"{form} (s3 or gs, then '://')")
    bucket, _, prefix = rest.partition("/")
    if not _BUCKET[scheme].fullmatch(bucket) or ".." in bucket:
        raise UserError(
            f"{form}: {bucket!r} is not a bucket name (3-63 lowercase letters, digits, "
            f"'.'{', _' if scheme == 'gs' else ''} or '-', a letter or digit at each end)"
        )
    prefix = prefix.rstrip("/")
    segments = prefix.split("/") if prefix else []
    for segment in segments:
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise UserError(
                f"{form}: the prefix {prefix!r} may hold only letters, digits and "
                "'.', '_', '-', '=', '+', '@' between single '/'"
            )
    return f"{scheme}://{bucket}" + (f"/{prefix}" if prefix else "")


def github_repo(text: str, flag: str = "--repo") -> str:
    """`text` when it is OWNER/NAME by GitHub's rules, else a one-line UserError."""
    owner, sep, name = text.partition("/")
    if (
        not sep
        or not _OWNER.fullmatch(owner)
        or not _REPO_NAME.fullmatch(name)
        or name in (".", "..")
    ):
        raise UserError(
            f"{flag} {text!r}: write it as OWNER/NAME (letters, digits and '-' in the owner; "
            "letters, digits, '.', '_' and '-' in the name), e.g. acme/interregion"
        )
    return text


def plain_text(text: str, flag: str, limit: int = 1024) -> str:
    """`text` when it holds no control character, no GitHub expression (`${{`) and at most
    `limit` characters: a value safe inside a quoted scalar of a generated file."""
    bad = next((c for c in text if ord(c) < 32 or 0x7F <= ord(c) < 0xA0), None)
    if bad is not None:
        raise UserError(f"{flag} {text!r}: holds the control character {bad!r}: remove it")
    if "${{" in text:
        raise UserError(f"{flag} {text!r}: '${{{{' starts a GitHub expression: remove it")
    if len(text) > limit:
        raise UserError(f"{flag}: {len(text)} characters, at most {limit}")
    return text


def yaml_string(text: str) -> str:
    """`text` as one YAML double-quoted scalar (JSON's string syntax is a subset of it)."""
    return json.dumps(text)


_SCRIPT_UNSAFE = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def script_safe(json_text: str) -> str:
    """JSON text made safe inside an HTML <script> element: '<', '>' and '&' as \\u
    escapes (no '</script>', '<!--' or '<script' can end or change the element) and
    U+2028/U+2029 too (line ends to older JavaScript). These occur only inside JSON
    strings, where the escapes read back as the same characters. One str.replace each:
    a year's pair pages are tens of MB of JSON."""
    for char, escaped in _SCRIPT_UNSAFE:
        if char in json_text:
            json_text = json_text.replace(char, escaped)
    return json_text


# No count an option takes comes near this (a year of six-hourly runs is 1,460; a full
# catalog 240 regions): an integer option without an upper bound of its own gets this
# one, so a typo or `--pings 10^20` is one line, never a plan, an allocation or a loop of
# that size. A seed takes 32 bits, a size in bytes up to a TiB.
INT_CEILING = 1_000_000
_CEILING_BY_NAME = {"seed": 2**32 - 1, "bytes": 2**40}


def ceiling(name: str) -> int:
    """The largest value an integer option or profile key `name` takes when it sets no
    bound of its own: by the last word of its name (a seed, a size in bytes), else
    INT_CEILING."""
    return _CEILING_BY_NAME.get(name.rsplit("_", 1)[-1], INT_CEILING)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def control_character_problem(text: str) -> str | None:
    """Why a path cannot be used (it holds a control character, e.g. a newline), or None."""
    found = _CONTROL.search(text)
    if found is None:
        return None
    return f"holds the control character {found.group()!r}: rename it without one"
