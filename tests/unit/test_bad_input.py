"""Bad input from a user, as a user gives it (issue 17, parts 5, 6 and 8): one line
naming the file and the problem, nothing measured lost, nothing replaced silently."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from history_support import make_sweep

from orchestrator.cli import main
from orchestrator.core.errors import RunFailure, UserError
from orchestrator.core.textfile import load_yaml, parse_yaml, read_text
from orchestrator.exchange import importer
from orchestrator.history import store as h
from orchestrator.model.catalog import CatalogError, load_catalog
from orchestrator.plan.pricing import PricingError, load_pricing
from orchestrator.results import files as store
from orchestrator.schedule import ledger
from orchestrator.schedule.profiles import ProfileError, load_profiles

PAIRS = {("aws:us-east-1", "gcp:europe-west1"): [80.0] * 5}
GOOD_PROFILE = "profiles:\n  lat:\n    every: PT6H\n    budget_usd: 1\n    budget_usd_month: 5\n"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


# ---- readers: folders, binary files, other encodings -----------------------------------


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\xff\xfe\x00\x01binary", "binary data"),
        ("lat: caf\u00e9\n".encode("latin-1"), "not UTF-8 text"),
    ],
)
def test_every_yaml_reader_refuses_binary_and_other_encodings(tmp_path, data, said):
    path = tmp_path / "odd file.yaml"
    path.write_bytes(data)
    for load, error in (
        (load_catalog, CatalogError),
        (load_pricing, PricingError),
        (load_profiles, ProfileError),
    ):
        with pytest.raises(error, match=said) as caught:
            load(path)
        assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_folder_where_a_file_is_expected_is_one_line(tmp_path):
    with pytest.raises(UserError, match=r"is a folder, expected a profiles file"):
        load_profiles(tmp_path)
    with pytest.raises(UserError, match=r"is a folder, expected a measurements CSV"):
        store.read_rows(tmp_path)
    (tmp_path / ledger.LEDGER_FILE).mkdir()
    with pytest.raises(UserError, match="is a folder, expected the schedule ledger"):
        ledger.read(tmp_path)
    with pytest.raises(UserError, match="is a folder"):
        ledger.append(tmp_path, {"profile": "p", "outcome": "ok"})


def test_read_text_keeps_utf8_and_drops_a_bom(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes("\ufeffz\u00fcrich\n".encode())
    assert read_text(path) == "z\u00fcrich\n"
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing.txt")


# ---- configuration: duplicates, empty values, infinities --------------------------------


def test_a_key_given_twice_is_refused_with_both_lines():
    with pytest.raises(
        UserError, match=r"line 3: not valid YAML \(duplicate key 'b', also on line 2"
    ):
        parse_yaml("a: 1\nb: 2\nb: 3\n", "x.yaml")


@pytest.mark.parametrize("text", ["x: .inf\n", "x: -.inf\n", "x: .nan\n", "x: [1, .NaN]\n"])
def test_infinite_and_nan_numbers_are_refused(text):
    with pytest.raises(UserError, match="is not a finite number"):
        parse_yaml(text, "x.yaml")


def test_ordinary_yaml_still_loads(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("a: 1.5\nb: [x, y]\nbase: &b {k: 1}\nmerged:\n  <<: *b\n  j: 2\n")
    assert load_yaml(path) == {
        "a": 1.5,
        "b": ["x", "y"],
        "base": {"k": 1},
        "merged": {"k": 1, "j": 2},
    }


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # a per-run budget that rises 500x because the second line wins
        (GOOD_PROFILE + "    budget_usd: 500\n", "duplicate key 'budget_usd', also on line 4"),
        (GOOD_PROFILE + "  lat:\n    every: PT1H\n", "duplicate key 'lat', also on line 2"),
        (GOOD_PROFILE.replace("5\n", ".inf\n"), "'.inf' is not a finite number"),
        (GOOD_PROFILE + "    regions:\n", "profile 'lat', key 'regions': has no value"),
        (GOOD_PROFILE + "    clouds: []\n", "profile 'lat', key 'clouds': has no value"),
        (GOOD_PROFILE + "    exclude: ''\n", "profile 'lat', key 'exclude': has no value"),
    ],
)
def test_profiles_that_would_be_misread_are_refused(tmp_path, text, said):
    path = tmp_path / "schedules.yaml"
    path.write_text(text)
    code, output = cli("schedule", "list", "--file", str(path), "--results", str(tmp_path))
    assert code == 2 and said in one_line(output)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "NaN", "1e999"])
@pytest.mark.parametrize(
    "command",
    [
        ["plan", "--max-regions", "3", "--max-km"],
        ["plan", "--max-regions", "3", "--ping-interval"],
        ["sweep", "--max-regions", "2", "--budget-usd"],
    ],
)
def test_infinite_numbers_on_the_command_line_are_refused(command, value):
    code, output = cli(*command, value)
    assert code == 2 and "is not a finite number" in one_line(output)


# ---- the ledger: whole lines only, and what cannot be read is said ----------------------


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path):
    path = ledger.ledger_path(tmp_path)
    first = {"profile": "p", "outcome": "ok", "started_utc": "2026-11-25T06:00:00Z"}
    ledger.append(tmp_path, first)
    with path.open("a") as f:
        f.write('{"profile": "p", "outc')  # a crash mid-write, no newline
    second = {"profile": "p", "outcome": "failed", "started_utc": "2026-11-25T12:00:00Z"}
    ledger.append(tmp_path, second)
    records, bad = ledger.read_checked(tmp_path)
    assert records == [first, second] and bad == [2]
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == 3


def test_schedule_list_warns_about_lines_it_cannot_read(tmp_path):
    (tmp_path / "schedules.yaml").write_text(GOOD_PROFILE)
    ledger.ledger_path(tmp_path).write_text(
        json.dumps({"profile": "lat", "outcome": "ok", "started_utc": "2026-11-25T06:00:00Z"})
        + "\nnot json\n"
        + json.dumps({"profile": "lat", "outcome": "ok", "started_utc": "yesterday"})
        + "\n"
    )
    result = CliRunner().invoke(
        main,
        [
            "schedule",
            "list",
            "--file",
            str(tmp_path / "schedules.yaml"),
            "--results",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "line 2, 3 is not a ledger record" in result.output
    assert "last ok at 2026-11-25T06:00:00Z" in result.output


# ---- measurements and history: nothing measured is lost --------------------------------


def test_a_truncated_csv_row_is_refused_with_its_line(tmp_path):
    folder = make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    path = folder / store.MEASUREMENTS_FILE
    text = path.read_text()
    path.write_text(text[: text.rindex(",")] + "\n")  # the last row loses its last cell
    with pytest.raises(UserError, match=r"line 2 has \d+ of \d+ cells") as caught:
        store.read_rows(path)
    assert str(path) in str(caught.value)


def test_ingest_never_replaces_stored_rows_with_fewer(tmp_path):
    sweep_id = "20261122T0000Z-aaaa"
    folder = make_sweep(tmp_path, sweep_id, PAIRS)
    assert h.ingest_sweep(tmp_path, sweep_id) == 1
    (folder / store.MEASUREMENTS_FILE).unlink()  # gone, as after a bad copy
    code, output = cli("history", "ingest", "--sweep", sweep_id, "--results", str(tmp_path))
    assert code == 2
    assert "its files give 0 rows, the store holds 1: not replacing them" in one_line(output)
    with duckdb.connect(str(h.store_path(tmp_path)), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM measurements").fetchone() == (1,)
    # --all leaves it out with a warning and keeps the rows
    code, output = cli("history", "ingest", "--all", "--results", str(tmp_path))
    assert code == 0 and "left out" in output and "0 sweeps" in output
    code, _ = cli("history", "ingest", "--sweep", sweep_id, "--replace", "--results", str(tmp_path))
    assert code == 0
    with duckdb.connect(str(h.store_path(tmp_path)), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM measurements").fetchone() == (0,)


def test_a_second_import_of_the_same_source_and_date_needs_replace(tmp_path):
    first, second = tmp_path / "first.csv", tmp_path / "second file.csv"
    first.write_text("src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\naws,a,gcp,b,10\n")
    second.write_text("src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\naws,a,gcp,b,20\n")
    base = ["history", "import", "--source", "theirs", "--date", "2024-01", "--results"]
    assert cli(*base, str(tmp_path), str(first))[0] == 0
    code, output = cli(*base, str(tmp_path), str(second))
    assert code == 2 and "imported before (from first.csv)" in one_line(output)
    kept = tmp_path / h.IMPORTS_DIR / "theirs" / "2024-01.csv"
    assert kept.read_text() == first.read_text()  # the first import is untouched
    code, output = cli(*base, str(tmp_path), "--replace", str(second))
    assert code == 0 and "replaced the import of theirs 2024-01 from first.csv" in output
    assert kept.read_text() == second.read_text()


def test_rebuild_leaves_out_an_import_copy_that_became_unreadable(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\naws,a,gcp,b,10\n")
    make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(tmp_path)
    importer.import_file(tmp_path, f, "theirs", "2024-01")
    (tmp_path / h.IMPORTS_DIR / "theirs" / "2024-01.csv").write_bytes(b"\xff\xfe\x00")
    code, output = cli("history", "rebuild", "--results", str(tmp_path))
    assert code == 0 and "2024-01.csv left out" in output and "1 sweep," in output


def test_history_convert_refuses_a_binary_file(tmp_path):
    path = Path(tmp_path) / "data.csv"
    path.write_bytes(b"\x00\x01\x02")
    code, output = cli(
        "history", "convert", "--from", "skyplane", str(path), "--out", str(tmp_path / "o.csv")
    )
    assert code == 2 and "binary data" in one_line(output)


# ---- generated files: a user's string is data in every page ------------------------------

HOSTILE_REGIONS = ("<!--<script>", "b\"'&x</script><img src=x onerror=alert(1)>\u2028z")


@pytest.mark.slow  # a whole store and site
def test_hostile_region_names_in_imported_data_are_data_in_every_page(tmp_path):
    import html as htmllib
    import re

    from orchestrator.site import static_site as site

    evil = tmp_path / "evil.csv"
    with evil.open("w", newline="") as f:
        import csv

        w = csv.writer(f)
        w.writerow(["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_avg_ms"])
        w.writerow(["aws", HOSTILE_REGIONS[0], "gcp", HOSTILE_REGIONS[1], "10"])
    make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(tmp_path)
    importer.import_file(tmp_path, evil, "theirs", "2024-01", label="<b onmouseover=x>label</b>")
    out = tmp_path / "site"
    site.build_site(out, tmp_path)
    pages = list(out.rglob("*.html"))
    for page in pages:
        text = page.read_text()
        for name in (*HOSTILE_REGIONS, "<b onmouseover"):
            assert name not in text, page  # neither raw in the HTML nor in inline JSON
        assert "<!--" not in text and text.count("<script") == text.count("</script>"), page
    (pair,) = [p for p in pages if "script" in p.name]
    (data,) = re.findall(
        r"<script type='application/json' id='pair-data'>(.*?)</script>", pair.read_text(), re.S
    )
    doc = json.loads(data)  # the page's data reads back whole, with the names as they were
    assert {doc["a"], doc["b"]} == {f"aws:{HOSTILE_REGIONS[0]}", f"gcp:{HOSTILE_REGIONS[1]}"}
    shown = htmllib.unescape(pair.read_text())
    assert HOSTILE_REGIONS[0] in shown  # the page names the pair, escaped
    assert any("<b onmouseover=x>label</b>" in htmllib.unescape(p.read_text()) for p in pages)


# ---- a failed replacement loses nothing; a busy store is never a smaller result ----------

IMPORT_HEADER = "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\n"


@pytest.fixture
def hold_store():
    """The store of a results folder held open for writing by another process (DuckDB's
    file lock), until the test ends."""
    import subprocess
    import sys

    held = []

    def hold(results: Path) -> None:
        code = (
            "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "sys.stdin.read()"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(h.store_path(results))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        held.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"

    yield hold
    for proc in held:
        proc.communicate(timeout=30)  # stdin closed: it ends


def _import_state(results: Path) -> dict[str, bytes]:
    folder = results / h.IMPORTS_DIR
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_replacement_the_store_refuses_keeps_the_previous_import(tmp_path, hold_store):
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(IMPORT_HEADER + "aws,a,gcp,b,10\n")
    second.write_text(IMPORT_HEADER + "aws,a,gcp,b,20\n")
    results = tmp_path / "results"
    base = [
        "history",
        "import",
        "--source",
        "theirs",
        "--date",
        "2024-01",
        "--results",
        str(results),
    ]
    assert cli(*base, str(first))[0] == 0
    kept = _import_state(results)
    hold_store(results)
    code, output = cli(*base, "--replace", str(second))
    assert code == 1 and "in use by another process" in one_line(output)
    assert _import_state(results) == kept  # the kept copy of the first, and nothing beside it


def test_a_failed_first_import_leaves_no_copy_so_a_retry_and_rebuild_work(tmp_path, hold_store):
    results = tmp_path / "results"
    make_sweep(results, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(results)
    data = tmp_path / "x.csv"
    data.write_text(IMPORT_HEADER + "aws,a,gcp,b,10\n")
    base = [
        "history",
        "import",
        "--source",
        "theirs",
        "--date",
        "2024-01",
        "--results",
        str(results),
    ]
    hold_store(results)
    code, output = cli(*base, str(data))
    assert code == 1 and "in use by another process" in one_line(output)
    assert _import_state(results) == {}


def test_a_failed_first_import_then_retry(tmp_path, monkeypatch):
    results = tmp_path / "results"
    make_sweep(results, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(results)
    data = tmp_path / "x.csv"
    data.write_text(IMPORT_HEADER + "aws,a,gcp,b,10\n")

    def refused(*args, **kwargs):
        raise duckdb.IOException("IO Error: No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(h, "_judge", refused)  # the store refuses the rows at its boundary
        with pytest.raises(RunFailure, match="the system refused a write"):
            importer.import_file(results, data, "theirs", "2024-01")
    assert not [p for p in (results / h.IMPORTS_DIR).rglob("*") if p.is_file()]
    assert importer.import_file(results, data, "theirs", "2024-01") == 1  # a retry is not refused
    code, output = cli("history", "rebuild", "--results", str(results))
    assert code == 0 and "left out" not in output, output


@pytest.mark.slow  # a whole site
def test_site_on_a_store_busy_elsewhere_fails_in_one_line_and_keeps_the_old_site(
    tmp_path, hold_store
):
    results = tmp_path / "results"
    make_sweep(results, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(results)
    out = tmp_path / "site"
    assert cli("site", "--results", str(results), "--out", str(out))[0] == 0
    before = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert any(name.startswith("history/") for name in before)
    hold_store(results)
    code, output = cli("site", "--results", str(results), "--out", str(out))
    assert code == 1 and "in use by another process" in one_line(output)
    assert {p.relative_to(out).as_posix() for p in out.rglob("*")} == before


# ---- interrupts and full disks ------------------------------------------------------------

_SLOW_QUERY = """
import sys, time, {module} as target
from orchestrator.cli import main

def slow(con, *args, **kwargs):
    print("querying", file=sys.stderr, flush=True)
    time.sleep({pause})
    con.execute("SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3").fetchall()

target.{function} = slow
main(sys.argv[1:])
"""


@pytest.mark.slow  # a fresh interpreter per case
@pytest.mark.parametrize(
    ("args", "module", "function", "pause"),
    [
        (["site", "--out", "{tmp}/site"], "orchestrator.site.history_pages", "history_data", 0),
        # ^C before the query starts (on the site's thread): a first interrupt finds none
        (["site", "--out", "{tmp}/site"], "orchestrator.site.history_pages", "history_data", 1),
        (["history", "ingest", "--all", "--replace"], "orchestrator.history.store", "_judge", 0),
    ],
)
def test_ctrl_c_during_a_duckdb_query_is_130_and_one_line(tmp_path, args, module, function, pause):
    import os
    import select
    import signal
    import subprocess
    import sys

    results = tmp_path / "results"
    make_sweep(results, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(results)
    before = h.store_path(results).read_bytes()
    code = _SLOW_QUERY.format(module=module, function=function, pause=pause)
    argv = [a.format(tmp=tmp_path) for a in args] + ["--results", str(results)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv], stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stderr is not None
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 120)  # until the query runs
        assert ready and proc.stderr.readline().strip() == "querying"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()  # never left running
            proc.wait()
    rest = proc.stderr.read()
    assert rest.strip() == "interrupted" and "Traceback" not in rest, rest
    assert not (tmp_path / "site").exists()  # no smaller site in its place
    with duckdb.connect(str(h.store_path(results)), read_only=True) as con:  # nothing lost
        assert con.execute("SELECT count(*) FROM measurements").fetchone() == (1,)
    assert before  # the store was there before and still opens


@pytest.mark.parametrize(
    "error",
    [
        duckdb.IOException('IO Error: Could not write file "x.wal": No space left on device'),
        duckdb.TransactionException(
            'TransactionContext Error: Failed to commit: Could not write file "x.wal": '
            "No space left on device"
        ),
        OSError(28, "No space left on device"),
    ],
)
def test_a_full_disk_during_ingest_is_one_line_and_loses_nothing(tmp_path, monkeypatch, error):
    """The system refusing DuckDB's write (as a full tmpfs made it: a TransactionException
    at commit), raised where the store writes a sweep's rows."""
    make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(tmp_path)
    make_sweep(tmp_path, "20261123T0000Z-bbbb", PAIRS)

    def refused(*args, **kwargs):
        raise error

    monkeypatch.setattr(h, "_write_batch", refused)
    code, output = cli("history", "ingest", "--all", "--results", str(tmp_path))
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 1 and "Traceback" not in output, output
    assert len(errors) == 1 and "No space left on device" in errors[0], output
    monkeypatch.undo()
    with duckdb.connect(str(h.store_path(tmp_path)), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM measurements").fetchone() == (1,)
    code, output = cli("history", "ingest", "--all", "--results", str(tmp_path))  # space again
    assert code == 0 and "2 sweeps" in output, output


# ---- values no check bounded: numbers, dates, sizes, aliases, kept state -------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["changes", "--runs", str(10**20)], "is not in the range 2<=x<=10000"),
        (["changes", "--baseline-runs", str(10**8)], "is not in the range 2<=x<=10000"),
        (["plan", "--max-regions", "3", "--pings", str(10**20)], "x<=1000000"),
        (["plan", "--max-regions", "3", "--duration", "99999999999"], "1<=x<=1000000"),
        (["demo", "--sweeps", str(10**9)], "3<=x<=1000000"),
    ],
)
def test_every_count_on_the_command_line_is_bounded(tmp_path, args, said):
    code, output = cli(*args, "--results", str(tmp_path)) if args[0] == "changes" else cli(*args)
    assert code == 2 and said in one_line(output)


def test_every_integer_option_of_every_command_has_an_upper_bound():
    import click

    def walk(command: click.Command, path: str) -> list[str]:
        found = []
        for param in command.params:
            kind = param.type
            bounded = isinstance(kind, click.IntRange) and kind.max is not None
            if isinstance(kind, click.types.IntParamType) and not bounded:
                found.append(f"{path} {param.name}")
        for name, sub in getattr(command, "commands", {}).items():
            found += walk(sub, f"{path} {name}")
        return found

    assert walk(main, "interregion") == []


BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n"
    for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_nested_aliases_are_refused_before_they_are_built(tmp_path):
    path = tmp_path / "regions.yaml"
    path.write_text(BOMB)
    with pytest.raises(CatalogError, match="aliases expand to more than 1,000,000 values"):
        load_catalog(path)
    assert parse_yaml("a: &a [1, 2]\nb: [*a, *a]\n", "x") == {"a": [1, 2], "b": [[1, 2], [1, 2]]}


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_a_catalog_or_notify_file_is_one_line(device):
    with pytest.raises(UserError, match="is a device"):
        load_catalog(Path(device))
    code, output = cli("changes", "--notify-file", device, "--results", "/nonexistent-ir")
    assert code == 2 and "is a device" in one_line(output)


def test_a_file_over_the_read_limit_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2048)
    with pytest.raises(UserError, match="larger than 0 MiB"):
        read_text(path, "text file", limit=1024)
    assert read_text(path, "text file", limit=4096) == "x" * 2048


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ("aws,a,gcp,b,inf,", "rtt_avg_ms: 'inf' is not a finite number"),
        ("aws,a,gcp,b,NaN,", "rtt_avg_ms: 'NaN' is not a finite number"),
        ("aws,a,gcp,b,1e30,", "rtt_avg_ms: '1e30' is outside 0 to 3.6e+06"),
        ("aws,a,gcp,b,10,1e30", "throughput_bps: '1e30' is outside 0 to 1e+13"),
        ("aws," + "a" * 200_000 + ",gcp,b,10,", "field larger than field limit"),
    ],
)
def test_an_imported_value_out_of_range_is_one_line_naming_its_line(tmp_path, row, said):
    path = tmp_path / "data.csv"
    path.write_text("src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms,throughput_bps\n" + row)
    results = tmp_path / "results"
    code, output = cli(
        "history", "import", "--source", "s", "--date", "2024-01", "--results", str(results),
        str(path),
    )  # fmt: skip
    line = one_line(output)
    assert code == 2 and said in line and "line 2" in line and str(path) in line
    assert not h.store_path(results).exists() and not (results / h.IMPORTS_DIR).exists()


@pytest.mark.parametrize("date", ["0000-01", "9999-12", "1969-12"])
def test_an_import_dated_outside_the_years_of_clouds_is_refused(tmp_path, date):
    path = tmp_path / "data.csv"
    path.write_text("src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\naws,a,gcp,b,10\n")
    code, output = cli(
        "history", "import", "--source", "s", "--date", date, "--results", str(tmp_path), str(path)
    )
    assert code == 2 and "give a year from 1990 to 2200" in one_line(output)


def test_a_converted_file_with_values_out_of_range_is_one_line(tmp_path):
    path = tmp_path / "sky.csv"
    path.write_text("src_region,dst_region,avg_rtt\naws:us-east-1,gcp:europe-west1,1e30\n")
    code, output = cli(
        "history", "convert", "--from", "skyplane", str(path), "--out", str(tmp_path / "o.csv")
    )
    assert code == 2 and "rtt_avg_ms: '1e30' is outside 0 to 3.6e+06" in one_line(output)
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"params": None}, "params: null"),
        ({"params": [1, 2]}, "params: [1, 2] is not dict[str, Any]"),
        ({"wall_s": "fast"}, 'wall_s: "fast" is not float | None'),
    ],
)
def test_a_sweep_record_of_the_wrong_shape_is_left_out_naming_it(tmp_path, change, said):
    make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    bad = make_sweep(tmp_path, "20261123T0000Z-bbbb", PAIRS)
    doc = json.loads((bad / store.SWEEP_FILE).read_text())
    (bad / store.SWEEP_FILE).write_text(json.dumps({**doc, **change}))
    for command in (["history", "ingest", "--all"], ["history", "rebuild"]):
        code, output = cli(*command, "--results", str(tmp_path))
        assert code == 0 and "Traceback" not in output, output
        assert "20261123T0000Z-bbbb left out" in output and said in output, output
        assert "1 sweep," in output, output
    code, output = cli("collect", "--sweep", bad.name, "--results", str(tmp_path))
    assert code == 2 and said in one_line(output)


@pytest.mark.parametrize(
    "kept", ['{"window_runs": "x"}', '{"window_runs": 100000000}', "[1, 2]", '{"nope": 1}']
)
def test_a_kept_rule_of_the_wrong_type_does_not_break_later_builds(tmp_path, kept):
    from orchestrator.history import judgments

    make_sweep(tmp_path, "20261122T0000Z-aaaa", PAIRS)
    h.ingest_all(tmp_path)
    with duckdb.connect(str(h.store_path(tmp_path))) as con:
        con.execute("DELETE FROM meta WHERE key = ?", [judgments.RULE_KEY])
        con.execute("INSERT INTO meta VALUES (?, ?)", [judgments.RULE_KEY, kept])
    make_sweep(tmp_path, "20261123T0000Z-bbbb", PAIRS)
    code, output = cli("history", "ingest", "--all", "--results", str(tmp_path))
    assert code == 0 and "judging rule cannot be read" in output and "2 sweeps" in output, output
