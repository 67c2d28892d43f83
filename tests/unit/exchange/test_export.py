"""Exporting the history store: real DuckDB files under tmp_path, Parquet and CSV, errors."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from click.testing import CliRunner
from history_support import PAIRS, make_sweep, sweep_id_at

from orchestrator.cli import main
from orchestrator.exchange import exporter
from orchestrator.history import store as h

T0 = datetime(2026, 11, 22, tzinfo=UTC)
A, B = PAIRS[0]


def _sweep(results, i, rtt=80.0):
    samples = {(A, B): [rtt + 0.1 * k for k in range(20)], (B, A): [rtt + 1.0] * 20}
    t = T0 + timedelta(hours=6 * i)
    return make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_to_a_place_that_cannot_be_written_is_one_line(tmp_path, fmt):
    _sweep(tmp_path, 0)
    h.ingest_all(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / f"x.{fmt}"  # under a plain file: no folder can be made there
    result = CliRunner().invoke(
        main, ["history", "export", "--format", fmt, "--out", str(out), "--results", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --out {out}: cannot write it"), line
    assert blocker.read_text() == ""


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_writes_every_row_since(tmp_path, fmt):
    for i in range(3):
        _sweep(tmp_path, i)
    h.ingest_all(tmp_path)
    out = tmp_path / f"out.{fmt}"
    assert exporter.export(tmp_path, out, fmt) == 6
    reader = "read_parquet" if fmt == "parquet" else "read_csv"
    con = duckdb.connect()
    assert con.execute(f"SELECT count(*) FROM {reader}('{out}')").fetchone() == (6,)
    assert exporter.export(tmp_path, out, fmt, since=T0 + timedelta(hours=6)) == 4
    assert con.execute(f"SELECT count(*) FROM {reader}('{out}')").fetchone() == (4,)
    if fmt == "parquet":
        (samples,) = con.execute(f"SELECT rtt_samples_ms FROM {reader}('{out}') LIMIT 1").fetchone()
        assert len(samples) == 20
    else:  # one time format in every CSV: ISO 8601 with milliseconds and Z
        import csv

        with out.open(newline="") as f:
            rows = list(csv.DictReader(f))
        stamps = [r[c] for r in rows for c in ("started_utc", "ingested_utc") if c in r]
        assert "started_utc" in rows[0] and stamps
        iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
        assert all(iso.fullmatch(s) for s in stamps), stamps[:3]
        assert rows[0]["started_utc"] == (T0 + timedelta(hours=6)).strftime(
            "%Y-%m-%dT%H:%M:%S.000Z"
        )


def test_export_cli_and_bad_since(tmp_path):
    _sweep(tmp_path, 0)
    h.ingest_all(tmp_path)
    args = ["history", "export", "--format", "csv", "--results", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "history.csv").exists()
    # 06:00 UTC given with its offset: the sweep of 00:00 is left out, the one of 06:00 kept
    _sweep(tmp_path, 1)
    h.ingest_all(tmp_path)
    result = CliRunner().invoke(main, [*args, "--since", "2026-11-22T08:00+02:00"])
    assert result.exit_code == 0 and result.output.startswith("2 rows"), result.output
    result = CliRunner().invoke(main, [*args, "--since", "last tuesday"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "--since 'last tuesday'" in result.output
