"""A new sweep's options as one typed request (sweep.launch.SweepRequest), built at the
edge: the same request from `sweep`'s flags and from a profile's keys, and a misspelt
option or key refused in one line wherever it is written."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner
from fixture_regions import fixture_catalog

from orchestrator.cli import main
from orchestrator.cli.options import given_flag, request_from
from orchestrator.clouds.cloud_flags import CloudFlags
from orchestrator.core.errors import UserError
from orchestrator.plan.options import RunOptions, params_spec, selection_spec
from orchestrator.schedule.profiles import PIN_PREVIOUS, parse_profile
from orchestrator.sweep.launch import Emulation, SweepRequest

CADENCE = {"every": "PT6H", "budget_usd": 1, "budget_usd_month": 10}


def _from_flags(args: list[str]) -> SweepRequest:
    """The request `interregion sweep ARGS` builds, without running it."""
    command = main.commands["sweep"]
    with command.make_context("sweep", list(args)) as ctx:
        return request_from(ctx.params, None)


def _from_profile(settings: dict) -> SweepRequest:
    return parse_profile("p", {**CADENCE, **settings}, fixture_catalog(), "s.yaml").request


def test_a_profile_and_the_same_flags_make_the_same_request():
    flags = _from_flags(
        [
            "--regions", "aws:us-east-1,gcp:us-east4,aws:eu-west-1",
            "--cloud-pair", "aws:gcp",
            "--max-km", "9000.5",
            "--tests", "ping,throughput",
            "--measures", "single_stream,capacity",
            "--streams", "6",
            "--pings", "30",
            "--ping-interval", "0.5",
            "--duration", "7",
            "--omit", "2",
            "--window", "4M",
            "--max-concurrent", "3",
            "--controller", "aws:us-east-1",
        ]
    )  # fmt: skip
    profile = _from_profile(
        {
            "regions": ["aws:us-east-1", "gcp:us-east4", "aws:eu-west-1"],
            "cloud_pair": ["aws:gcp"],
            "max_km": 9000.5,
            "tests": ["ping", "throughput"],
            "measures": "single_stream,capacity",
            "streams": 6,
            "pings": "30",  # YAML text where a number is meant: read as the flag reads it
            "ping_interval": 0.5,
            "duration": 7,
            "omit": 2,
            "window": "4M",
            "max_concurrent": 3,
            "controller": "aws:us-east-1",
        }
    )
    assert profile == flags
    assert flags.params.streams == 6 and flags.params.measures == ("single_stream", "capacity")
    assert flags.selection.cloud_pairs == (("aws", "gcp"),)
    assert flags.run == RunOptions(max_concurrent=3, controller="aws:us-east-1")
    assert flags.cloud is None and flags.emulation is None


def test_cloud_flags_given_are_in_the_request_and_a_cloud_profile_pins_its_previous_sweep():
    flags = _from_flags(["--backend", "aws", "--clouds", "aws", "--ttl", "2h", "--strict"])
    assert flags.cloud == CloudFlags(ttl="2h", strict=True)
    assert _from_flags(["--backend", "aws", "--clouds", "aws"]).cloud is None  # defaults alone
    profile = _from_profile({"backend": "aws", "clouds": "aws", "ttl": "2h", "strict": "yes"})
    assert profile.cloud == CloudFlags(ttl="2h", strict=True, pin_from=PIN_PREVIOUS)


@pytest.mark.parametrize(
    ("settings", "key", "words"),
    [
        ({"duraton": 5}, "duraton", "unknown key (known: "),
        ({"max_region": 8}, "max_region", "unknown key"),
        ({"pings": 2.5}, "pings", "is not a valid integer"),
        ({"ping_interval": "nan"}, "ping_interval", "is not a finite number"),
        ({"sequential": "maybe"}, "sequential", "is not a valid boolean"),
        ({"regions": {"a": 1}}, "regions", "expected a single value"),
        ({"ttl": "2h"}, "ttl", "applies to a cloud backend"),
        ({"backend": "cloud", "ttl": "soon"}, "ttl", "--ttl"),
        ({"max_concurrent": 0}, "max_concurrent", "--max-concurrent 0"),
        ({"window": "huge"}, "window", "--window"),
    ],
)
def test_a_misspelt_or_wrong_profile_key_is_one_line_naming_it(settings, key, words):
    with pytest.raises(UserError) as caught:
        _from_profile(settings)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"s.yaml: profile 'p', key '{key}': ")
    assert words in message


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--duraton", "5"], "No such option '--duraton'. Did you mean '--duration'?"),
        (["--max-region", "8"], "No such option '--max-region'"),
        (["--ttl", "2h", "--yes"], "cloud flags apply to --backend aws, gcp or cloud, not local"),
        (["--backend", "aws", "--emulation-seed", "3", "--yes"], "apply to --backend local only"),
    ],
)
def test_a_misspelt_flag_or_a_flag_of_another_backend_is_one_line(tmp_path, args, words):
    out = CliRunner().invoke(main, ["sweep", "--results", str(tmp_path / "r"), *args])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: ") and out.output.count("\n") == 1, out.output
    assert words in out.output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_the_request_refuses_what_no_backend_runs():
    with pytest.raises(UserError, match="cloud flags apply to"):
        SweepRequest(cloud=CloudFlags(ttl="2h"))
    with pytest.raises(UserError, match="--emulation-seed apply to --backend local only"):
        SweepRequest(run=RunOptions(backend="gcp"), emulation=Emulation(seed=1))
    with pytest.raises(UserError, match="--backend 'azure': expected one of"):
        RunOptions(backend="azure")
    with pytest.raises(dataclasses.FrozenInstanceError):
        SweepRequest().run = RunOptions(backend="aws")  # type: ignore[misc]


def test_a_misspelt_option_name_in_code_fails_where_it_is_written():
    with pytest.raises(TypeError, match="duraton"):
        params_spec(duraton=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="max_region"):
        selection_spec(max_region=8)  # type: ignore[call-arg]
    assert params_spec(duration=7).duration_s == 7


@pytest.mark.parametrize(
    ("args", "env", "flag"),
    [
        ([], {}, None),
        (["--streams", "4", "--window", "4M"], {}, "--streams"),
        (["--window", "4M"], {}, "--window"),
        ([], {"INTERREGION_BACKEND": "aws"}, "--backend"),  # the environment gives it too
    ],
)
def test_given_flag_names_the_first_option_given_anywhere_but_its_default(
    monkeypatch, args, env, flag
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    command = main.commands["sweep"]
    with command.make_context("sweep", list(args)) as ctx:
        names = ["streams", "window", "backend", "not_an_option"]
        assert given_flag(ctx.params, names) == flag


def test_study_tcp_refuses_what_it_sets_per_variant_before_anything_is_made(tmp_path):
    args = ["study", "tcp", "--regions", "aws:us-east-1,aws:eu-west-1", "--congestion", "bbr",
            "--results", str(tmp_path / "r")]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2
    assert "--congestion with study tcp: the study sets it per variant" in done.output
    assert not (tmp_path / "r").exists()
