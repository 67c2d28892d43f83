"""The cloud hosts' systemd unit, checked statically (rendered as mesh.yml renders it,
then `systemd-analyze verify`), mesh.yml's shape, and `plan --mesh`'s figures."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import jinja2
import pytest
import yaml
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.core import paths
from orchestrator.mesh.cost import mesh_cost
from orchestrator.mesh.lifecycle import MeshRequest
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.pricing import load_pricing


def test_the_agents_unit_passes_systemd_analyze_verify(tmp_path):
    template = paths.PLAYBOOKS / "templates" / "interregion-mesh.service.j2"
    agent_dir = tmp_path / "interregion-abc"
    agent_dir.mkdir()
    (agent_dir / "ir_agent.py").write_text("")
    text = jinja2.Template(template.read_text(), undefined=jinja2.StrictUndefined).render(
        ansible_user="root", ir_python=sys.executable, ir_agent_dir=str(agent_dir)
    )
    unit = tmp_path / "interregion-mesh.service"
    unit.write_text(text)
    tool = shutil.which("systemd-analyze")
    assert tool, "systemd-analyze is missing: 'make deb' installs the systemd package"
    done = subprocess.run([tool, "verify", str(unit)], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    assert "Restart=always" in text and "--mesh" in text


def test_mesh_yml_starts_agents_and_its_unit_where_each_belongs():
    (play,) = yaml.safe_load((paths.PLAYBOOKS / "mesh.yml").read_text())
    by_name = {t["name"]: t for t in play["tasks"]}
    runs = [t for n, t in by_name.items() if n.startswith("Mesh agent runs")]
    assert [t["when"] for t in runs] == ['ir_backend == "local"', 'ir_backend != "local"']
    unit = by_name["Mesh agent's systemd unit is installed on cloud hosts"]
    assert unit["ansible.builtin.template"]["src"] == "templates/interregion-mesh.service.j2"


def test_mesh_request_checks():
    assert MeshRequest().check().bin_s == 300
    for bad in (MeshRequest(interval_s=0), MeshRequest(interval_s=7), MeshRequest(pings=0),
                MeshRequest(collect_every_s=1)):  # fmt: skip
        with pytest.raises(Exception, match="--"):
            bad.check()


def test_mesh_cost_by_hand():
    catalog = load_catalog()
    pricing = load_pricing()
    a, b = catalog.get("aws:us-east-1"), catalog.get("aws:us-east-2")
    cost = mesh_cost([a, b], pricing, 60, 5)
    # each host: 5 requests and 5 replies of 84 bytes to one peer a minute
    assert cost.egress_bytes_per_host_per_s == pytest.approx(2 * 5 * 84 / 60, abs=0.1)
    assert cost.probes_per_host_per_s == pytest.approx(5 / 60, abs=1e-3)
    month_gb = 2 * 5 * 84 / 60 * 730 * 3600 / 1e9
    expected = month_gb * (pricing.egress_usd_per_gb(a, b) + pricing.egress_usd_per_gb(b, a))
    assert cost.egress_usd_per_month == pytest.approx(expected, abs=0.01)
    vm = pricing.clouds["aws"].vm_usd_per_hour * 730 * 2
    assert cost.vm_usd_per_month == pytest.approx(vm, abs=0.01)


def test_plan_mesh_prints_hosts_traffic_and_cost():
    regions = "aws:us-east-1,gcp:europe-west1,aws:ap-northeast-1"
    out = CliRunner().invoke(main, ["plan", "--mesh", "--regions", regions, "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output[out.output.index("{") :])
    assert doc["hosts"] == 3 and doc["directed_pairs"] == 6
    assert doc["emulated"] and doc["total_usd_per_month"] > doc["vm_usd_per_month"] > 0
    text = CliRunner().invoke(main, ["plan", "--mesh", "--max-regions", "4"]).output
    assert "probes/s per host" in text and "cost per month" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mesh", "up", "--regions", "aws:us-east-1"], "at least 2 regions"),
        (
            ["mesh", "up", "--max-regions", "3", "--interval", "7"],
            "--bin-seconds 300: give a multiple",
        ),
        (["mesh", "status"], "no mesh under"),
        (["mesh", "down"], "no mesh under"),
        (["metrics", "--window", "5m"], "--window 5m: one of 1H"),
    ],
)
def test_bad_mesh_input_is_one_line(tmp_path, args, message):
    out = CliRunner().invoke(main, [*args, "--results", str(tmp_path)])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], out.output
    assert "Traceback" not in out.output
    assert not (tmp_path / "mesh").exists() or args[1] != "up"
