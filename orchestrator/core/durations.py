"""One grammar for every duration a user writes: ISO 8601 or short units.

- ISO 8601: `PT6H`, `PT30M`, `PT1H30M`, `P1D`, `P1W`, `P1DT12H`, `PT0S`.
- Short units: `6h`, `90m`, `30s`, `1d`, `1w`, `1.5d`, `1h30m`.

Units are s, m (minutes), h, d (24 h: the project runs in UTC) and w (7 d), in either
case. Months and years are refused: their length depends on the date. A bare number
is refused too; a caller whose option always took a bare number in one unit (`--ttl
90`, minutes) says so with `bare_unit`. `parse_seconds` is the one parser: the
profiles' `every` and `slip`, `--ttl`, `--older-than` all go through it.
"""

from __future__ import annotations

import math
import re

__all__ = ["UNIT_S", "DurationError", "parse_seconds"]

UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_NUMBER = r"\d+(?:\.\d+)?"
_ISO = re.compile(
    rf"P(?:(?P<w>{_NUMBER})W)?(?:(?P<d>{_NUMBER})D)?"
    rf"(?:T(?:(?P<h>{_NUMBER})H)?(?:(?P<m>{_NUMBER})M)?(?:(?P<s>{_NUMBER})S)?)?",
    re.IGNORECASE,
)
_SHORT_PART = re.compile(rf"({_NUMBER})([smhdw])", re.IGNORECASE)
EXAMPLES = "6h, 90m, 1d, PT6H or P1W"


class DurationError(ValueError):
    """Not a duration; the message says what is accepted. Callers turn it into their
    own one-line UserError naming the option or key."""


def _iso(text: str) -> float | None:
    match = _ISO.fullmatch(text)
    if not match or text.upper() in ("P", "PT") or text.upper().endswith("T"):
        return None
    parts = match.groupdict()
    if not any(parts.values()):
        return None
    return sum(float(v) * UNIT_S[k] for k, v in parts.items() if v)


def _short(text: str) -> float | None:
    pos, total, seen = 0, 0.0, ""
    for match in _SHORT_PART.finditer(text):
        if match.start() != pos:
            return None
        unit = match.group(2).lower()
        if unit in seen or (seen and UNIT_S[unit] >= UNIT_S[seen[-1]]):
            return None  # each unit once, largest first: 1h30m, not 30m1h or 1h1h
        seen += unit
        total += float(match.group(1)) * UNIT_S[unit]
        pos = match.end()
    return total if seen and pos == len(text) else None


def parse_seconds(text: object, bare_unit: str | None = None) -> float:
    """The duration `text` in seconds (a float: `1.5m` is 90.0).

    `bare_unit` ('m' for --ttl) is the unit of a bare number; without it a bare number
    is refused, as '6' alone says nothing."""
    raw = str(text).strip()
    if bare_unit is not None and re.fullmatch(_NUMBER, raw):
        return float(raw) * UNIT_S[bare_unit]
    if raw.startswith("-"):
        raise DurationError(f"'{text}' is negative: give a duration like {EXAMPLES}")
    if raw[:1] not in ("P", "p") and re.search(r"\dM", raw):
        raise DurationError(
            f"'{text}' is ambiguous: write {raw.replace('M', 'm')} for minutes "
            "(months are refused: their length depends on the date)"
        )
    seconds = _iso(raw) if raw[:1] in ("P", "p") else _short(raw)
    if seconds is None or not math.isfinite(seconds):
        hint = ""
        if re.fullmatch(rf"P?(?:{_NUMBER}[YM])+", raw.upper().split("T")[0] or "x"):
            hint = " (months and years are refused: their length depends on the date)"
        raise DurationError(f"'{text}' is not a duration: write e.g. {EXAMPLES}{hint}")
    return seconds
