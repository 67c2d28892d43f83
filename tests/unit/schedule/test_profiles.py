"""schedules.yaml profiles and their cadence: validation, due times, cron lines."""

from __future__ import annotations

import itertools
import re
import shlex
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from click.testing import CliRunner
from croniter import CroniterBadDateError, croniter
from fixture_regions import fixture_catalog
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.cli import main
from orchestrator.core import iso, paths
from orchestrator.core.errors import UserError
from orchestrator.schedule import ledger
from orchestrator.schedule.cadence import (
    Cadence,
    cron_line,
    cron_ticks,
    on_calendar,
    parse_cron,
    parse_duration,
)
from orchestrator.schedule.profiles import load_profiles, parse_profile

GOOD = {
    "every": "PT6H",
    "regions": "aws:us-east-1,gcp:us-east4",
    "budget_usd": 1,
    "budget_usd_month": 10,
}


def _error(settings_: dict, catalog=True) -> str:
    with pytest.raises(UserError) as caught:
        parse_profile("lat", settings_, fixture_catalog() if catalog else None, "s.yaml")
    message = str(caught.value)
    assert "\n" not in message and "profile 'lat'" in message
    return message


def test_the_repositorys_profiles_load_against_the_real_catalog():
    from orchestrator.model.catalog import load_catalog

    profiles = load_profiles(paths.ROOT / "schedules.yaml", load_catalog())
    assert set(profiles) == {"latency", "throughput"}
    assert profiles["latency"].request.params.tests == ("ping",)
    assert profiles["latency"].cadence.every_s == 6 * 3600
    # a throughput profile's slip is as long as its interval (docs/scheduled-sweeps.md: hour of day)
    assert profiles["throughput"].slip_s == profiles["throughput"].cadence.interval_s()


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"evry": "PT6H"}, "evry", "unknown key"),
        ({"every": "6 hours"}, "every", "not a duration: write e.g. 6h, 90m, 1d, PT6H or P1W"),
        ({"every": "P1M"}, "every", "months and years are refused"),
        ({"every": None, "cron": "0 0 * * FUN"}, "cron", "'FUN' is not a name cron knows"),
        ({"every": None, "cron": "0 0 L * *"}, "cron", "'L' is not a name cron knows"),
        ({"every": None, "cron": "@fortnightly"}, "cron", "unknown macro"),
        ({"every": "PT7H"}, "every", "grid interval"),
        ({"every": None, "cron": "0 */6 * *"}, "cron", "5 fields"),
        ({"every": None, "cron": "61 * * * *"}, "cron", "outside 0-59"),
        ({"budget_usd": 0}, "budget_usd", "above 0"),
        ({"budget_usd_month": -5}, "budget_usd_month", "above 0"),
        ({"budget_usd": "lots"}, "budget_usd", "not a number"),
        ({"slip": "PT7H"}, "slip", "longer than the interval"),
        ({"regions": None, "min_km": 50000}, "min_km", "no pair"),
        ({"regions": "aws:nowhere-1"}, "selection", "nowhere"),
        ({"pings": 0}, "pings", "--pings"),
        ({"tests": "ping,bandwidth"}, "tests", "--tests"),
        ({"tests": []}, "tests", "has no value"),
        ({"tests": ""}, "tests", "has no value"),
        ({"measures": "bulk"}, "measures", "--measures 'bulk'"),
        ({"streams": 4}, "streams", "sets the capacity measure's streams"),
        ({"pings": "twenty"}, "pings", "is not a valid integer"),
        ({"no_opt_in": "maybe"}, "no_opt_in", "is not a valid boolean"),
        ({"backend": "cloud", "network_tier": "gold"}, "network_tier", "is not one of"),
        ({"ping_interval": -1}, "ping_interval", "--ping-interval"),
        ({"keep_raw_days": 0}, "keep_raw_days", "above 0"),
        ({"backend": "azure"}, "backend", "expected one of"),
        ({"every": "P0D"}, "every", ""),
        ({"publish": "s3://b/p"}, "site", "publish needs a site"),
    ],
)
def test_bad_profiles_are_one_line_errors_naming_profile_and_key(change, key, words):
    settings_ = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    message = _error(settings_)
    assert words in message
    if key:
        assert f"key '{key}'" in message


@pytest.mark.parametrize("name", ["a/b", "has space", "../x", "lat.daily", "-x", ""])
def test_a_profile_name_that_cannot_name_a_unit_or_cron_file_is_refused(name):
    with pytest.raises(UserError) as caught:
        parse_profile(name, GOOD, None, "s.yaml")
    assert f"profile '{name}': a name is letters, digits" in str(caught.value)


def test_cli_install_refuses_a_name_with_a_slash(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"profiles": {"a/b": GOOD}}))
    units = tmp_path / "units"
    out = CliRunner().invoke(
        main, ["schedule", "install", "a/b", "--file", str(path), "--unit-dir", str(units),
               "--no-enable"],
    )  # fmt: skip
    assert out.exit_code == 2 and out.stderr.count("\n") == 1, out.output
    assert not units.exists()


def test_a_missing_budget_is_an_error():
    assert "budget_usd_month" in _error({k: v for k, v in GOOD.items() if k != "budget_usd_month"})


def test_cli_prints_profile_errors_as_one_line(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "profiles:\n  lat:\n    every: PT6H\n    budget_usd: 0\n    budget_usd_month: 1\n"
    )
    out = CliRunner().invoke(
        main, ["schedule", "list", "--file", str(path), "--results", str(tmp_path)]
    )
    assert out.exit_code == 2
    assert out.output.strip().count("\n") == 0
    assert "profile 'lat', key 'budget_usd'" in out.output


def test_profile_options_become_sweep_options():
    profile = parse_profile(
        "x",
        {**GOOD, "clouds": ["aws", "gcp"], "cloud_pair": ["aws:gcp"], "tests": ["ping"]},
        fixture_catalog(),
    )
    assert profile.request.selection.clouds == ("aws", "gcp")
    assert profile.request.selection.cloud_pairs == (("aws", "gcp"),)
    assert profile.request.params.tests == ("ping",)


def test_a_profile_chooses_its_measures():
    profile = parse_profile(
        "x", {**GOOD, "measures": ["single_stream", "capacity"], "streams": 6}, fixture_catalog()
    )
    params = profile.request.params
    assert params.measures == ("single_stream", "capacity") and params.streams == 6


def test_durations():
    assert parse_duration("PT6H") == parse_duration("6h") == 21600
    assert parse_duration("P1D") == parse_duration("1d") == 86400
    assert parse_duration("P1W") == parse_duration("1w") == 7 * 86400
    assert parse_duration("PT1H30M") == parse_duration("90m") == 5400
    assert parse_duration("PT0S") == 0
    for bad in ("P", "PT", "6", "PT6", "P1DT", "0.5s"):
        with pytest.raises(UserError):
            parse_duration(bad)


def test_every_is_a_utc_grid():
    cadence = Cadence(every_s=6 * 3600)
    start = datetime(2026, 11, 23, 5, 59, tzinfo=UTC)
    ticks = cadence.ticks(start, start + timedelta(days=1))
    assert [t.hour for t in ticks] == [6, 12, 18, 0]
    assert cadence.last_tick(datetime(2026, 11, 23, 6, 0, tzinfo=UTC)) == datetime(
        2026, 11, 23, 6, tzinfo=UTC
    )
    week = Cadence(every_s=7 * 86400).ticks(start, start + timedelta(days=8))
    assert [t.strftime("%a %H:%M") for t in week] == ["Mon 00:00"]


_CRON = st.tuples(
    st.sampled_from(["*", "0", "*/15", "5,35", "10-20/5", "59"]),
    st.sampled_from(["*", "0", "*/6", "1-5", "23", "3,15"]),
    st.sampled_from(["*", "1", "15", "1-7", "*/10", "31"]),
    st.sampled_from(["*", "1", "2", "*/3", "11-12"]),
    st.sampled_from(["*", "0", "1-5", "6,7", "*/2"]),
).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(line=_CRON, minutes=st.integers(0, 60 * 24 * 400))
def test_the_exported_fields_agree_with_croniter(line, minutes):
    """The ticks come from croniter at run time; the field sets systemd's OnCalendar is
    written from must say the same: every tick matches, and the minutes between two
    ticks do not."""
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
    try:
        theirs = croniter(line, start).get_next(datetime)
    except CroniterBadDateError:  # a line that never fires, e.g. "* * 31 2 *": refused
        with pytest.raises(UserError, match="would never run"):
            parse_cron(line)
        return
    cron = parse_cron(line)
    assert Cadence(cron=cron).next_tick(start) == theirs
    assert cron.matches(theirs)
    t = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(min(2000, int((theirs - t).total_seconds() // 60))):
        assert not cron.matches(t), t
        t += timedelta(minutes=1)


@pytest.mark.parametrize(
    ("line", "numbers"),
    [
        ("0 6 * * MON-FRI", "0 6 * * 1-5"),
        ("30 2 1 jan,Jul *", "30 2 1 1,7 *"),
        ("0 0 * * sun,SAT", "0 0 * * 0,6"),
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@YEARLY", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
    ],
)
def test_cron_names_and_macros_are_written_out_as_numbers(line, numbers):
    named, plain = Cadence(cron=parse_cron(line)), Cadence(cron=parse_cron(numbers))
    assert named.cron is not None and named.cron.text == numbers
    assert cron_line(named) == numbers  # what cron.d and GitHub Actions get
    start = datetime(2026, 3, 2, 1, 7, tzinfo=UTC)
    theirs = croniter(line, start)  # croniter reads the names and macros itself
    end = start + timedelta(days=6 * 366)

    def first5(cadence):
        return list(itertools.islice(cron_ticks(cadence.cron, start, end), 5))

    ticks = first5(named)
    assert ticks == [theirs.get_next(datetime) for _ in range(5)] == first5(plain)
    assert named.last_tick(ticks[1]) == ticks[1]
    assert named.last_tick(ticks[1] + timedelta(seconds=59)) == ticks[1]
    assert named.last_tick(ticks[1] - timedelta(seconds=1)) == ticks[0]


@pytest.mark.parametrize("line", ["0 0 31 2 *", "0 0 30,31 2 *", "0 0 31 4,6,9,11 *"])
def test_a_cron_line_that_never_fires_is_refused(line):
    with pytest.raises(UserError, match="would never run"):
        parse_cron(line)
    # Feb 29 does fire (in leap years), and a weekday makes any day line fire
    assert parse_cron("0 0 29 2 *") and parse_cron("0 0 31 2 1")


@pytest.mark.parametrize("every", ["PT15M", "PT1H", "PT6H", "P1D", "P7D"])
def test_cron_line_of_a_grid_has_the_same_ticks(every):
    cadence = Cadence(every_s=parse_duration(every))
    line = cron_line(cadence)
    start = datetime(2026, 3, 2, 1, 7, tzinfo=UTC)
    it = croniter(line, start)
    assert [it.get_next(datetime) for _ in range(3)] == cadence.ticks(
        start, start + timedelta(days=30)
    )[:3]
    shifted = croniter(cron_line(cadence, minute=17), start).get_next(datetime)
    assert shifted.minute == 17 or every == "PT15M"


def test_systemd_calendar_expressions():
    assert on_calendar(Cadence(every_s=6 * 3600)) == "*-*-* 00/6:00:00 UTC"
    assert (
        on_calendar(Cadence(cron=parse_cron("30 2 * * 1-5")))
        == "Mon,Tue,Wed,Thu,Fri *-*-* 02:30:00 UTC"
    )
    with pytest.raises(UserError, match="restrict only one"):
        on_calendar(Cadence(cron=parse_cron("0 0 1 * 1")))
    assert on_calendar(Cadence(cron=parse_cron("30 2 * * MON-FRI"))) == (
        "Mon,Tue,Wed,Thu,Fri *-*-* 02:30:00 UTC"
    )
    assert on_calendar(Cadence(cron=parse_cron("@weekly"))) == "Sun *-*-* 00:00:00 UTC"


def test_missed_ticks_are_due_times_without_a_record():
    cadence = Cadence(every_s=6 * 3600)
    records = [
        {"profile": "lat", "scheduled_utc": "2026-11-22T00:00:00Z", "outcome": "ok"},
        {"profile": "lat", "scheduled_utc": "2026-11-22T12:00:00Z", "outcome": "skipped-locked"},
        {"profile": "other", "scheduled_utc": "2026-11-22T06:00:00Z", "outcome": "ok"},
    ]
    now = datetime(2026, 11, 22, 18, 30, tzinfo=UTC)
    six = datetime(2026, 11, 22, 6, tzinfo=UTC)
    assert ledger.missed_ticks(records, "lat", cadence, 0, now) == [six]
    # 18:00 is still within its slip window (+ an hour): not missed yet
    later = datetime(2026, 11, 22, 19, 30, tzinfo=UTC)
    assert ledger.missed_ticks(records, "lat", cadence, 3600, later) == [six]
    latest = datetime(2026, 11, 22, 20, 30, tzinfo=UTC)
    assert ledger.missed_ticks(records, "lat", cadence, 3600, latest) == [
        six,
        six + timedelta(hours=12),
    ]
    assert iso(now) == "2026-11-22T18:30:00Z"


def test_a_profiles_selection_and_test_keys_are_the_sweep_commands_own_options():
    from orchestrator.cli import main
    from orchestrator.plan.option_names import SELECTION_OPTIONS, TEST_PARAMS_OPTIONS

    sweep = main.commands["sweep"]
    names = {p.name for p in sweep.params}
    assert set(SELECTION_OPTIONS + TEST_PARAMS_OPTIONS) <= names
    from orchestrator.schedule import profiles as profiles_module

    assert set(profiles_module.SELECTION_KEYS) == set(SELECTION_OPTIONS)


def test_schedule_init_writes_the_sample_and_keeps_a_file_already_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTERREGION_SCHEDULES", raising=False)
    target = tmp_path / "mine.yaml"
    missing = CliRunner().invoke(main, ["schedule", "list", "--file", str(target)])
    assert missing.exit_code == 2
    assert f"'interregion schedule init --file {target}' writes a sample" in missing.output
    # the hint, run as printed (a path with a space comes back quoted)
    spaced = tmp_path / "my profiles.yaml"
    said = CliRunner().invoke(main, ["schedule", "list", "--file", str(spaced)]).output
    (hint,) = re.findall(r"'(interregion schedule init [^']*)'", said)
    ran = CliRunner().invoke(main, shlex.split(hint)[1:])
    assert ran.exit_code == 0 and spaced.is_file(), ran.output
    made = CliRunner().invoke(main, ["schedule", "init", "--file", str(target)])
    assert made.exit_code == 0, made.output
    assert target.read_text() == paths.SAMPLE_SCHEDULES.read_text()
    assert set(load_profiles(target)) == {"latency", "throughput"}
    target.write_text("profiles: {}\n# mine\n")
    kept = CliRunner().invoke(main, ["schedule", "init", "--file", str(target)])
    assert kept.exit_code == 2 and "pass --force" in kept.output, kept.output
    assert target.read_text().endswith("# mine\n")
    forced = CliRunner().invoke(main, ["schedule", "init", "--file", str(target), "--force"])
    assert forced.exit_code == 0 and target.read_text() == paths.SAMPLE_SCHEDULES.read_text()
    # a symlink there is neither followed nor replaced, --force or not
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("x: 1\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(elsewhere)
    for extra in ([], ["--force"]):
        out = CliRunner().invoke(main, ["schedule", "init", "--file", str(link), *extra])
        assert out.exit_code == 2, out.output
    assert elsewhere.read_text() == "x: 1\n" and link.is_symlink()
