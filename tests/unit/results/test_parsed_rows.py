"""The rows of a measurements.csv that parse, copied (what the site publishes); the
whole file's damage cases are tests/unit/site/test_build.py's, through the site."""

import csv

from orchestrator.results import write_parsed_rows


def test_a_cut_row_of_the_same_width_is_not_published(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("sweep_id,status,error\ns,ok,\ns,failed,iperf3: conn")
    written, dropped = write_parsed_rows(src, tmp_path / "out.csv")
    assert (written, dropped) == (1, 1)
    with (tmp_path / "out.csv").open() as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok"]
