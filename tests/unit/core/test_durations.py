"""The one duration grammar (core.durations): ISO 8601 and short units, the same
everywhere a user writes a duration."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core.durations import DurationError, parse_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("PT6H", 21_600),
        ("6h", 21_600),
        ("6H", 21_600),
        ("P1W", 604_800),
        ("1w", 604_800),
        ("P1D", 86_400),
        ("1d", 86_400),
        ("90m", 5_400),
        ("PT1H30M", 5_400),
        ("1h30m", 5_400),
        ("P1DT12H", 129_600),
        ("1.5d", 129_600),
        ("PT0.5S", 0.5),
        ("30s", 30),
        ("PT0S", 0),
        (" pt6h ", 21_600),
    ],
)
def test_both_forms_give_seconds(text, seconds):
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("6", "not a duration"),  # a bare number says nothing
        ("", "not a duration"),
        ("P", "not a duration"),
        ("PT", "not a duration"),
        ("P1DT", "not a duration"),
        ("PT6", "not a duration"),
        ("6 hours", "not a duration"),
        ("30m1h", "not a duration"),  # largest unit first, each once
        ("1h1h", "not a duration"),
        ("inf", "not a duration"),
        ("nan", "not a duration"),
        ("1e3h", "not a duration"),
        ("-2h", "negative"),
        ("P1M", "months and years are refused"),
        ("P1Y", "months and years are refused"),
        ("1M", "ambiguous: write 1m for minutes"),
    ],
)
def test_what_is_not_a_duration_says_what_is(text, words):
    with pytest.raises(DurationError) as caught:
        parse_seconds(text)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_bare_number_takes_the_callers_unit():
    assert parse_seconds("90", bare_unit="m") == 5_400
    assert parse_seconds("2h", bare_unit="m") == 7_200
    with pytest.raises(DurationError):
        parse_seconds("-90", bare_unit="m")


@given(
    w=st.integers(0, 9), d=st.integers(0, 9), h=st.integers(0, 99), m=st.integers(0, 99),
    s=st.integers(0, 99),
)  # fmt: skip
def test_the_iso_and_short_forms_agree(w, d, h, m, s):
    parts = {"w": w, "d": d, "h": h, "m": m, "s": s}
    if not any(parts.values()):
        return
    date = "".join(f"{parts[u]}{u.upper()}" for u in "wd" if parts[u])
    time = "".join(f"{parts[u]}{u.upper()}" for u in "hms" if parts[u])
    iso = "P" + date + ("T" + time if time else "")
    short = "".join(f"{v}{u}" for u, v in parts.items() if v)
    expected = w * 604_800 + d * 86_400 + h * 3_600 + m * 60 + s
    assert parse_seconds(iso) == parse_seconds(short) == expected
