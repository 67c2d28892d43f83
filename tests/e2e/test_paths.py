"""End to end: a 2-region emulated sweep with the results folder given as a user would,
relative to the folder the command starts in, plain and with every character a tool
has tripped on (space, quotes, %, $, non-ASCII). Real Terraform, ssh and Ansible."""

from __future__ import annotations

import pytest
from e2e_support import leftovers, only_sweep, record, rows, run_cli

pytestmark = [pytest.mark.root, pytest.mark.slow]

TINY = ["--max-regions", "2", "--pings", "5", "--duration", "1", "--omit", "0", "--yes"]


@pytest.mark.parametrize("relative", ["rel/res", "res dir 'q' \"d\" 50% $x Zürich"])
def test_a_sweep_into_a_relative_results_folder_lands_there(tmp_path, relative):
    out = run_cli(["sweep", *TINY, "--results", relative], cwd=tmp_path)
    results = tmp_path / relative
    sweep_dir = only_sweep(results)
    try:
        assert out.returncode == 0, out.stderr[-3000:]
        assert record(sweep_dir)["status"] == "done"
        got = rows(sweep_dir)
        assert len(got) == 2 and all(r["status"] == "ok" for r in got.values()), got
        assert (sweep_dir / "report" / "summary.csv").is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == [relative.split("/")[0]]
    finally:
        assert not any(leftovers(sweep_dir).values()), leftovers(sweep_dir)


# What a shell, Ansible (its paths and its modules on the hosts) or ssh would expand,
# with $HOME, which is always set: Ansible once read `r$HOME` as r/root, found no hosts
# and failed every round. `${x}` is refused up front (tests/unit/cli/test_pathopt.py).
EXPANDED = "r $HOME $(id) `id` 50% 'q' \"d\" Zürich"


def test_a_latency_sweep_into_a_folder_named_with_shell_and_ansible_syntax(tmp_path):
    out = run_cli(
        ["sweep", *TINY, "--tests", "ping", "--results", EXPANDED], cwd=tmp_path, timeout_s=300
    )
    sweep_dir = only_sweep(tmp_path / EXPANDED)
    try:
        assert out.returncode == 0, out.stderr[-3000:]
        got = rows(sweep_dir)
        assert len(got) == 2 and all(r["status"] == "ok" for r in got.values()), got
        logs = "".join(p.read_text() for p in (sweep_dir / "state").glob("ansible-*.log"))
        # what Ansible said when it expanded the folder's name and found no inventory
        for said in ("Unable to parse", "No inventory was parsed", "hosts list is empty"):
            assert said not in logs, logs[-2000:]
        assert [p.name for p in tmp_path.iterdir()] == [EXPANDED]  # nothing named r/root
    finally:
        assert not any(leftovers(sweep_dir).values()), leftovers(sweep_dir)
