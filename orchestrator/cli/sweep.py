"""CLI commands: sweep and its stages run alone on a sweep id (provision, prepare, measure,
collect, teardown); the continuous mesh (mesh up, status, down, matrix) and metrics."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from orchestrator import mesh, text
from orchestrator import sweep as sw
from orchestrator.cli import options as opt
from orchestrator.core import UserError, counted, info, say
from orchestrator.core import warning as log_warning
from orchestrator.mesh import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
from orchestrator.plan import BIG_HOSTS, PREPARE_FORKS, SELECTION_OPTIONS, TEST_PARAMS_OPTIONS

if TYPE_CHECKING:
    from orchestrator.plan import Plan
    from orchestrator.sweep import Question

_sweep_id_option = click.option("--sweep", "sweep_id", required=True, metavar="ID",
                                help="Sweep id.")  # fmt: skip


def _on_terminal() -> bool:
    """Whether a question can be asked (stdin is a terminal)."""
    return sys.stdin.isatty()


def _ask(questions: list[Question], yes: bool) -> None:
    """The questions asked on a terminal, refused off one; --yes answers them all."""
    sw.answer([] if yes else questions, click.confirm if _on_terminal() else None)


def announce(plan: Plan, tests: int, shape: str, budget_usd: float, yes: bool) -> None:
    """Say a new sweep's (or study's) announcement (`tests` tests, measured as `shape`
    says), then ask its questions."""
    said = text.announcement(plan, tests, shape, budget_usd)
    if said.warning:
        log_warning(said.warning)
    info(said.line)
    _ask(said.questions, yes)


# with --profile: an INTERREGION_* variable is a default of this shell, not a clash
_PROFILE_OWN = {"profile", "schedules", "results", "yes"}
_PROFILE_CLASH = (ParameterSource.COMMANDLINE, ParameterSource.PROMPT,
                  ParameterSource.DEFAULT_MAP)  # fmt: skip
_RESUMED = (*SELECTION_OPTIONS, "spread", *TEST_PARAMS_OPTIONS)


@opt.examples(
    "interregion sweep --backend local --yes --max-regions 8",
    "interregion sweep --backend aws --clouds aws --ttl 2h --yes",
    "interregion sweep --backend cloud --pin-from 20261122T0130Z-3fa2 --yes",
    "interregion sweep --resume 20261122T0130Z-3fa2 --yes",
    "interregion sweep --profile latency",
    "interregion sweep --tests ping --yes --perturb aws:us-east-1/gcp:europe-west1,delay_ms=10",
)
@click.command()
@opt.selection_options
@opt.test_params_options
@opt.run_options
@opt.cloud_options
@opt.ask_options
@click.option("--price-emulated", is_flag=True,
              help="Local: count what the emulated sweep moves at the clouds' list prices, so "
              "that --budget-usd stops it as it would a cloud sweep (a rehearsal of the hard "
              "stop).")  # fmt: skip
@click.option("--resume", "resume_id", metavar="ID", help="Continue a sweep: keep its ok tests.")
@click.option("--plan-only", is_flag=True,
              help="Create the sweep folder and stop (run stages alone).")  # fmt: skip
@opt.no_report_option
@click.option("--profile", default=None, metavar="NAME",
              help="Run a profile of the profiles file once by hand (its options, budgets, "
              "ledger).")  # fmt: skip
@opt.file_option
@opt.emulation_options
@opt.results_option
def sweep(**kwargs: Any) -> None:
    """Measure latency and throughput between the selected regions, keeping every result.

    Teardown always runs, also on errors, Ctrl-C and SIGTERM. The stages, each also a
    command of its own: docs/sweeps.md.
    """
    results: Path = kwargs["results"]
    if kwargs["profile"]:
        from orchestrator.cli.schedule import run_profile

        opt.refuse_given(kwargs, [n for n in kwargs if n not in _PROFILE_OWN],
                         "{flag} with --profile: the profile sets the sweep; edit it or drop "
                         "{flag}", _PROFILE_CLASH)  # fmt: skip
        run_profile(kwargs["schedules"], kwargs["profile"], results, "hand")
        return
    given = opt.given_flag(kwargs, ["budget_usd"]) is not None
    how = sw.SweepRun(results, kwargs["budget_usd"], given, kwargs["price_emulated"],
                      build_report=not kwargs["no_report"])  # fmt: skip
    yes, resumed = kwargs["yes"], kwargs["resume_id"]
    if resumed:
        opt.refuse_given(kwargs, _RESUMED, "{flag} with --resume: a resumed sweep measures what "
                         "it planned; drop {flag}, or start a new sweep",
                         (ParameterSource.COMMANDLINE,))  # fmt: skip
        done = sw.resume(resumed, how, opt.cloud_flags_given(kwargs), opt.emulation_from(kwargs),
                         note=info, say=say, ask=lambda asked: _ask(asked, yes))  # fmt: skip
    else:

        def announced(plan: Plan) -> None:  # each pair of the plan, measured as it says
            announce(plan, len(plan.selection.pairs), plan.shape(), how.budget_usd, yes)

        done = sw.run_new(opt.request_from(kwargs, opt.emulation_from(kwargs)), how, note=info,
                          say=say, announce=announced, plan_only=kwargs["plan_only"])  # fmt: skip
    if kwargs["plan_only"] and not resumed:
        click.echo(done.sweep.id)
    else:
        for line in text.done_lines(done):
            info(line)


@opt.examples(
    "interregion provision --sweep 20261122T0130Z-3fa2",
    "interregion provision --sweep 20261123T0900Z-77aa --pin-from 20261122T0130Z-3fa2",
)
@click.command()
@_sweep_id_option
@opt.cloud_options
@opt.results_option
def provision(sweep_id: str, results: Path, **kwargs: Any) -> None:
    """Provision the hosts of a planned sweep (Terraform) and record them in hosts.json.

    The hosts stay up until 'interregion teardown --sweep ID'. Cloud flags default
    to the ones the sweep was planned with; any given here replace them all.
    """
    hosts = sw.provision_sweep(sweep_id, results, opt.cloud_flags_given(kwargs))
    click.echo(f"{counted(len(hosts), 'host')} up")


@opt.examples(
    "interregion prepare --sweep 20261122T0130Z-3fa2",
    "interregion prepare --sweep 20261122T0130Z-3fa2 --forks 77",
)
@click.command()
@_sweep_id_option
@click.option("--forks", type=click.IntRange(1, 500), default=PREPARE_FORKS,
              show_default=True, help="Hosts Ansible prepares at once.")  # fmt: skip
@opt.results_option
def prepare(sweep_id: str, forks: int, results: Path) -> None:
    """Prepare a provisioned sweep's hosts: SSH, tools, agent, facts (Ansible)."""
    facts = sw.prepare_sweep(sweep_id, results, forks)
    click.echo(f"{counted(len(facts), 'host')} ready")


@opt.examples("interregion measure --sweep 20261122T0130Z-3fa2")
@click.command()
@_sweep_id_option
@click.option("--no-retry", is_flag=True, help="Do not retry failed tests at the end.")
@opt.results_option
def measure(sweep_id: str, no_retry: bool, results: Path) -> None:
    """Measure the tests of a prepared sweep that have no ok result yet."""
    click.echo(str(sw.measure_sweep(sweep_id, results, retry=not no_retry)))


@opt.examples("interregion collect --sweep 20261122T0130Z-3fa2")
@click.command()
@_sweep_id_option
@click.option("--force", is_flag=True,
              help="Replace measurements.csv even if ok rows would be lost.")  # fmt: skip
@opt.results_option
def collect(sweep_id: str, force: bool, results: Path) -> None:
    """Rebuild a sweep's measurements.csv from its raw tool outputs."""
    rows = sw.collect_sweep(sweep_id, results, force=force)
    click.echo(counted(len(rows), "row"))


@opt.examples("interregion teardown --sweep 20261122T0130Z-3fa2")
@click.command()
@_sweep_id_option
@opt.results_option
def teardown(sweep_id: str, results: Path) -> None:
    """Destroy a sweep's hosts and close its connections; safe to run any number of times."""
    sw.teardown_sweep(sweep_id, results)
    click.echo("torn down")


# ---- the continuous mesh (issue 32): mesh up|status|down|matrix, metrics ----------------

_MESH_ID = click.option("--mesh", "mesh_id", default=None, metavar="ID",
                        help="Which mesh (default: the running one, else the latest).")  # fmt: skip
_WINDOW = click.option("--window", default="1H", show_default=True,
                       help="1H, 6H, 1D or 1W, ending at the newest bin.")  # fmt: skip


@opt.examples("interregion mesh up --max-regions 8 --yes")
@click.group("mesh")
def mesh_group() -> None:
    """A continuous mesh: every directed pair probed every interval, kept in the store."""


@opt.examples(
    "interregion mesh up --regions aws:us-east-1,gcp:europe-west1,aws:ap-northeast-1",
    "interregion mesh up --max-regions 8 --interval 30 --yes",
)
@mesh_group.command("up")
@opt.selection_options
@opt.run_options
@opt.cloud_options
@click.option("--interval", type=click.IntRange(1, 3600), default=DEFAULT_INTERVAL_S,
              show_default=True,
              help="Seconds between two probes of the same peer (each a few echoes).")  # fmt: skip
@click.option("--echoes", type=click.IntRange(1, 100), default=DEFAULT_ECHOES, show_default=True,
              help="ICMP echoes to each peer per interval, spread over it.")  # fmt: skip
@click.option("--collect-every", type=click.IntRange(5, 3600), default=60, show_default=True,
              help="Seconds between two pulls of the hosts' records into the store.")  # fmt: skip
@click.option("--bin-seconds", type=click.IntRange(1, 3600), default=300, show_default=True,
              help="The store's bins (a multiple of --interval); shorter only to test "
              "detection.")  # fmt: skip
@click.option("--yes", is_flag=True,
              help=f"Do not ask before starting more than {BIG_HOSTS} hosts.")  # fmt: skip
@opt.emulation_options
@opt.results_option
def up_command(**kwargs: Any) -> None:
    """Start a mesh and collect from it until stopped (mesh down, Ctrl-C, SIGTERM)."""
    request = mesh.MeshRequest(kwargs["interval"], kwargs["echoes"], kwargs["collect_every"],
                               bin_s=kwargs["bin_seconds"]).check()  # fmt: skip
    wanted = opt.request_from(kwargs, opt.emulation_from(kwargs))
    mesh.run_mesh(wanted, request, kwargs["results"], yes=kwargs["yes"], note=info, say=say,
                  started=lambda sweep: click.echo(sweep.id))  # fmt: skip


@opt.examples("interregion mesh status", "interregion mesh status --json")
@mesh_group.command("status")
@_MESH_ID
@opt.json_flag("Print the status as JSON.")
@opt.results_option
def status_command(mesh_id: str | None, as_json: bool, results: Path) -> None:
    """Each host of a mesh: its newest record, the collection's lag, its probe rate."""
    found = mesh.mesh_status(results, mesh_id, say)
    if found.emulation_id and not as_json:
        info(f"emulation {found.emulation_id} (interregion emulator perturb --id ...)")
    opt.echo_result(found, as_json, text.mesh_status_lines, indent=2)


@opt.examples("interregion mesh down")
@mesh_group.command("down")
@_MESH_ID
@opt.results_option
def down_command(mesh_id: str | None, results: Path) -> None:
    """Stop a mesh: its controller pulls the last records and tears everything down.

    A mesh whose controller died is torn down here.
    """
    sweep = mesh.mesh_down(results, mesh_id, say)
    say(f"mesh {sweep.id}: down ({sweep.record.status})")


@opt.examples("interregion mesh matrix --window 1H")
@mesh_group.command("matrix")
@click.option("--source", default=None, help="The mesh source (default: the only one).")
@_WINDOW
@opt.json_flag("Print the matrix as JSON.")
@opt.results_option
def matrix_command(source: str | None, window: str, as_json: bool, results: Path) -> None:
    """The From x To matrix of a mesh source over a window."""
    found = mesh.matrix_of(results, source, window)
    opt.echo_result(found, as_json, text.mesh_matrix_lines, indent=2)


@opt.examples(
    "interregion metrics --out textfile/interregion.prom --format prometheus",
    "interregion metrics --window 6H",
    "interregion metrics --serve 127.0.0.1:9109",
)
@click.command("metrics")
@click.option("--out", type=opt.UserPath(dir_okay=False), default=None,
              help="Write here (atomically, for node_exporter's textfile collector); default: "
              "stdout.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["openmetrics", "prometheus"]),
              default="openmetrics", show_default=True,
              help="OpenMetrics 1.0, or the Prometheus text format (textfile collector, "
              "promtool).")  # fmt: skip
@_WINDOW
@click.option("--serve", "bind", default=None, metavar="HOST:PORT",
              help="Serve /metrics over HTTP instead (PORT alone: 127.0.0.1; 0.0.0.0 only when "
              "given); the format follows the scraper's Accept header. Runs until Ctrl-C or "
              "SIGTERM.")  # fmt: skip
@opt.results_option
def metrics_command(out: Path | None, fmt: str, window: str, bind: str | None,
                    results: Path) -> None:  # fmt: skip
    """The mesh's RTT, loss and probe counts per directed pair as OpenMetrics text."""
    if bind is not None and out is not None:
        raise UserError("--out and --serve both given: pick one")
    if bind is not None:
        mesh.serve_metrics(bind, window, results, say=say, warn=log_warning)
        return
    written = mesh.metrics(results, window, fmt, out)
    if out is None:
        click.echo(written, nl=False)
    else:
        info(f"metrics: {out}")


COMMANDS: list[click.Command] = [sweep, provision, prepare, measure, collect, teardown,
                                 mesh_group, metrics_command]  # fmt: skip
