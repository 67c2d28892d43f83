"""Published measurements beside our own: the vendored data converted and imported."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.exchange import importer
from orchestrator.exchange.public_data import convert
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.model.catalog import load_catalog
from orchestrator.results import files as store
from orchestrator.results import flags

DATA = Path(__file__).resolve().parents[3] / "data"
SKYPLANE = DATA / "skyplane-latency-2022.csv"
DOIT = DATA / "doit-intercloud-throughput-2022-02.csv"


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_builtin_names_the_shipped_file_of_each_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no data/ here: the file is found by name alone
    for fmt, path in (("skyplane", SKYPLANE), ("doit", DOIT)):
        result = _cli("history", "convert", "--from", fmt, "builtin", "--out", f"{fmt}.csv")
        assert result.exit_code == 0, result.output
        with (tmp_path / f"{fmt}.csv").open() as f:
            by_name = list(csv.DictReader(f))
        expected = convert(fmt, path.read_text(), load_catalog())
        assert len(by_name) == len(expected) > 1000
        assert [r["src_region"] for r in by_name] == [r["src_region"] for r in expected]
    # a file of that name is ./builtin; a missing file is still one line
    (tmp_path / "builtin").write_text(SKYPLANE.read_text())
    result = _cli("history", "convert", "--from", "skyplane", "./builtin", "--out", "b.csv")
    assert result.exit_code == 0, result.output
    result = _cli("history", "convert", "--from", "skyplane", "builtinx", "--out", "x.csv")
    assert result.exit_code == 2 and "builtinx" in result.output, result.output


def _count(results, query):
    con = duckdb.connect(str(results / "history.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_doit_converter_turns_bytes_into_bit_rates():
    rows = convert("doit", DOIT.read_text(), load_catalog())
    assert len(rows) == 2138
    first = rows[0]  # GCP southamerica-east1 -> AWS eu-west-2, 44,171,264 bytes in ~10 s
    assert (first["src_cloud"], first["src_region"]) == ("gcp", "southamerica-east1")
    assert (first["dst_cloud"], first["dst_region"]) == ("aws", "eu-west-2")
    assert first["throughput_bps"] == "35337011.2"
    assert first["rtt_avg_ms"] == "191.605"
    assert first["started_utc"] == "2022-02-14T08:59:09Z"
    assert (first["src_machine_type"], first["dst_machine_type"]) == ("e2-small", "t3.nano")


def test_skyplane_converter_keeps_aws_and_gcp_and_names_zones_regions():
    rows = convert("skyplane", SKYPLANE.read_text(), load_catalog())
    assert len(rows) == 4692  # data/README.md: the AWS/GCP rows
    assert {r["src_cloud"] for r in rows} == {"aws", "gcp"}
    assert not any(r["src_region"].count("-") == 2 and r["src_cloud"] == "gcp" for r in rows)


@pytest.mark.slow
def test_vendored_data_imports_through_the_cli_and_survives_rebuild(tmp_path):
    results = tmp_path / "results"
    for fmt, path, month in (("skyplane", SKYPLANE, "2022-11"), ("doit", DOIT, "2022-02")):
        out = tmp_path / f"{fmt}.csv"
        result = _cli("history", "convert", "--from", fmt, path, "--out", out)
        assert result.exit_code == 0, result.output
        args = ("history", "import", "--source", fmt, "--date", month, out)
        result = _cli(*args, "--results", results)
        assert result.exit_code == 0, result.output
    query = "SELECT source, count(*), min(started_utc) FROM measurements GROUP BY 1 ORDER BY 1"
    counts = _count(results, query)
    # skyplane's network tiers are sources of their own (PREMIUM both ends keeps the name)
    assert [(s, n) for s, n, _t in counts] == [
        ("doit", 2138),
        ("skyplane", 2256),
        ("skyplane-premium-standard", 1008),
        ("skyplane-standard", 420),
        ("skyplane-standard-premium", 1008),
    ]
    assert str(counts[1][2]) == "2022-11-01 00:00:00"  # no time in the file: the month's start
    assert str(counts[0][2]).startswith("2022-02-14")
    # the same source and month again: refused, then replaced with --replace
    again = ("history", "import", "--source", "doit", "--date", "2022-02", tmp_path / "doit.csv")
    assert _cli(*again, "--results", results).exit_code == 2
    result = _cli(*again, "--replace", "--results", results)
    assert result.exit_code == 0 and "replaced the import of doit 2022-02" in result.output
    assert _count(results, query)[0][1] == 2138
    before = _count(results, "SELECT * FROM measurements ORDER BY ALL")
    (results / "history.duckdb").unlink()
    assert h.rebuild(results) == (5, 2138 + 4692)
    after = _count(results, "SELECT * FROM measurements ORDER BY ALL")
    assert after == before
    labels = _count(results, "SELECT source, backend, label, emulated FROM sweeps ORDER BY 1")
    assert labels[:3] == [("doit", "import:doit", "doit", False),
                          ("skyplane", "import:skyplane", "skyplane", False),
                          ("skyplane-premium-standard", "import:skyplane-premium-standard",
                           "skyplane (premium-standard tier)", False)]  # fmt: skip
    # the pair: pooled tiers showed 210.4 ms one way and 180.6 the other; apart,
    # and without the flagged rows, no directed pair is asymmetric against its reverse over
    # the same ends (a mixed-tier source's reverse is the other mixed-tier source's)
    with h.opened(results, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p50", "all")
    value = {
        mx["source"]: {(c["src"], c["dst"]): c["value"] for c in mx["cells"]}
        for mx in doc["matrices"]
    }
    mixed = ("skyplane-premium-standard", "skyplane-standard-premium")
    for source, cells in value.items():
        reverse = value[mixed[1 - mixed.index(source)]] if source in mixed else cells
        for (a, b), x in cells.items():
            y = reverse.get((b, a))
            assert y is None or not flags.asymmetric(x, y), (source, a, b, x, y)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--source", "emulated", "--date", "2022-02"), "kept for interregion's own"),
        (("--source", "Sky Plane", "--date", "2022-02"), "lower-case letters"),
        (("--source", "doit", "--date", "2022-13"), "as YYYY-MM"),
        (("--source", "doit", "--date", "Feb 2022"), "as YYYY-MM"),
    ],
)
def test_bad_import_options_are_one_line_errors(tmp_path, args, message):
    f = tmp_path / "x.csv"
    f.write_text(store.csv_text([]))
    result = _cli("history", "import", *args, f, "--results", tmp_path)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and message in result.output


def test_a_file_in_another_schema_is_refused_with_the_converter_named(tmp_path):
    result = _cli("history", "import", "--source", "doit", "--date", "2022-02", DOIT,
                  "--results", tmp_path)  # fmt: skip
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "history convert" in result.output
    assert not (tmp_path / "imports").exists()


def test_import_without_numbers_is_refused(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("src_cloud;src_region;dst_cloud;dst_region;rtt_avg_ms\naws;a;gcp;b;n/a\n")
    with pytest.raises(UserError, match="no row has a usable"):
        importer.import_file(tmp_path, f, "theirs", "2024-01")


def test_semicolon_and_bom_are_read(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("\ufeffsrc_cloud;src_region;dst_cloud;dst_region;rtt_avg_ms\naws;a;gcp;b;12.5\n")
    assert importer.import_file(tmp_path, f, "theirs", "2024-01", label="Their 2024 data") == 1
    assert _count(tmp_path, "SELECT src, dst, rtt_avg_ms FROM measurements") == [
        ("aws:a", "gcp:b", 12.5)
    ]
