"""`history ingest --all`'s and `history rebuild`'s use cases without click: the store
filled from the folder, its count of sweeps and rows, a missing folder refused in one line
with nothing made."""

from __future__ import annotations

import pytest
from history_support import step_sweeps

from orchestrator.core.errors import UserError
from orchestrator.history import store as h
from orchestrator.history.ingest import Filled, ingest_every_sweep, rebuild_history
from orchestrator.text import filled_line, rebuilt_line


def test_ingest_every_sweep_then_rebuild_count_the_same(tmp_path):
    step_sweeps(tmp_path, [150.0] * 3)
    warned: list[str] = []
    done = ingest_every_sweep(tmp_path, warned.append)
    assert done == Filled(3, 6, h.store_path(tmp_path)) and not warned  # 2 directions each
    h.store_path(tmp_path).unlink()  # rebuild needs nothing but the sweeps' folders
    assert rebuild_history(tmp_path, warned.append) == done
    with h.opened(tmp_path, read_only=True) as con:
        assert con.execute("SELECT count(*), sum(rows) FROM sweeps").fetchone() == (3, 6)
    assert filled_line(done) == f"3 sweeps, 6 rows in {done.store}"
    assert rebuilt_line(done) == f"rebuilt {done.store}: 3 sweeps, 6 rows"


def test_ingest_every_sweep_warns_of_a_sweep_it_cannot_read_and_keeps_the_rest(tmp_path):
    step_sweeps(tmp_path, [150.0] * 2)
    (tmp_path / "20261101T0000Z-dead").mkdir()
    (tmp_path / "20261101T0000Z-dead" / "sweep.json").write_text("{not json")
    warned: list[str] = []
    done = ingest_every_sweep(tmp_path, warned.append)
    assert (done.sweeps, done.rows) == (2, 4)
    assert len(warned) == 1 and "20261101T0000Z-dead" in warned[0]


@pytest.mark.parametrize("use_case", [ingest_every_sweep, rebuild_history])
def test_a_missing_results_folder_is_one_line_and_nothing_is_made(tmp_path, use_case):
    with pytest.raises(UserError, match=r"--results .*nope: no such folder") as e:
        use_case(tmp_path / "nope", print)
    assert "\n" not in str(e.value) and not (tmp_path / "nope").exists()
