"""core.times: the one place times are parsed and formatted, with known answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from orchestrator.core.times import iso, iso_of_epoch, parse_utc, stamp, utc_now


def test_a_record_stamp_is_utc_to_the_millisecond():
    moment = datetime(2026, 11, 22, 1, 30, 5, 123999, tzinfo=UTC)
    assert stamp(moment) == "2026-11-22T01:30:05.123Z"  # truncated, not rounded
    plus_two = moment.astimezone(timezone(timedelta(hours=2)))
    assert stamp(plus_two) == "2026-11-22T01:30:05.123Z"
    assert parse_utc(utc_now()) is not None


def test_iso_is_to_the_second_and_an_unset_epoch_is_none():
    assert iso(datetime(2026, 11, 22, 1, 30, 59, 999999, tzinfo=UTC)) == "2026-11-22T01:30:59Z"
    assert iso_of_epoch(1_795_306_200) == "2026-11-22T00:10:00Z"
    assert iso_of_epoch(0) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T01:30:05.123Z", datetime(2026, 11, 22, 1, 30, 5, 123000, tzinfo=UTC)),
        ("2026-11-22T03:30:05+02:00", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),
        ("2026-11-22T01:30:05", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),  # taken as UTC
        (" 2026-11-22T01:30:05Z ", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
        ("2026-13-01T00:00:00Z", None),
        (None, None),
        (1_795_397_400, None),
    ],
)
def test_a_time_read_back_is_an_aware_utc_datetime_or_none(text, expected):
    got = parse_utc(text)
    assert got == expected
    if got is not None:
        assert got.utcoffset() == timedelta(0)
