"""What Ansible is shown of a sweep: paths under a plain name (plain_view) and values
marked as data (as_data, write_document), read back by Ansible's own loader and templar."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from orchestrator.core import paths
from orchestrator.drivers.ansible import (
    VIEW_PREFIX,
    as_data,
    plain_view,
    remove_views,
    write_document,
    write_playbook,
)

# what a shell, Ansible's path expansion, ssh or Jinja would each act on
ODD = "r $HOME ${x} $(id) `id` 50% 'q' \"d\" ~ Zürich {{ lookup('pipe', 'id') }}"


def test_the_view_shows_a_sweeps_folders_under_a_plain_name_and_is_gone_after(tmp_path):
    state = tmp_path / ODD / "20261128T1510Z-45e1" / "state"
    state.mkdir(parents=True)
    (state / "inventory.yml").write_text("all: {}\n")
    with plain_view(state) as view:
        holder = view.state.parent
        assert re.fullmatch(rf"/tmp/{VIEW_PREFIX}20261128T1510Z-45e1-[a-z0-9_]+", str(holder))
        assert os.path.expandvars(str(view.state)) == str(view.state)
        assert (view.state / "inventory.yml").read_text() == "all: {}\n"
        assert (view.playbooks / "prepare.yml").samefile(paths.PLAYBOOKS / "prepare.yml")
        assert holder.stat().st_mode & 0o777 == 0o700
    assert not holder.exists()
    assert (state / "inventory.yml").exists()  # only the links went


def test_the_view_is_removed_when_the_block_fails(tmp_path):
    try:
        with plain_view(tmp_path) as view:
            holder = view.state.parent
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert not holder.exists()


def test_a_view_a_killed_controller_left_is_removed_and_only_it(tmp_path):
    sweep_id = "20261128T1702Z-0b1e"
    state = tmp_path / sweep_id / "state"
    state.mkdir(parents=True)
    (state / "keep.txt").write_text("measured\n")
    left = Path(tempfile.mkdtemp(prefix=f"{VIEW_PREFIX}{sweep_id}-", dir="/tmp"))
    (left / "s").symlink_to(state)
    (left / "p").symlink_to(paths.PLAYBOOKS)
    other = Path(tempfile.mkdtemp(prefix=f"{VIEW_PREFIX}{sweep_id}-", dir="/tmp"))
    (other / "not-ours.txt").write_text("x")  # something else in it: left alone
    try:
        assert remove_views(sweep_id) == [left]
        assert not left.exists() and other.exists()
        assert (state / "keep.txt").read_text() == "measured\n"  # what the links showed
        assert (paths.PLAYBOOKS / "prepare.yml").exists()
        assert remove_views("20261128T1702Z-ffff") == []  # another sweep's: none
    finally:
        (other / "not-ours.txt").unlink()
        other.rmdir()


def _templated(path: Path, pick):
    """The document at `path` as ansible-playbook loads an inventory or a playbook
    (trusted as a template: plugins/inventory/yaml.py, playbook/__init__.py), the picked
    value templated."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.loader import init_plugin_loader
    from ansible.template import Templar, trust_as_template

    init_plugin_loader()
    doc = DataLoader().load_from_file(str(path), trusted_as_template=True)
    templar = Templar(loader=DataLoader(), variables={"v": pick(doc)})
    return templar.template(trust_as_template("{{ v }}"))


def test_a_value_in_an_inventory_is_data_to_jinja(tmp_path):
    """A region name or a path holding `{{ lookup('pipe', 'id') }}` is written as it is,
    not run on the controller; unmarked, the same loader would template it."""
    plain = tmp_path / "plain.yml"
    write_document(plain, {"v": "{{ 1 + 2 }}"})
    assert _templated(plain, lambda d: d["v"]) == 3
    path = tmp_path / "inventory.yml"
    write_document(path, as_data({"all": {"vars": {"ir_agent_dir": ODD, "n": 3}}}))
    assert "!unsafe" in path.read_text()
    assert _templated(path, lambda d: d["all"]["vars"]["ir_agent_dir"]) == ODD
    assert _templated(path, lambda d: d["all"]["vars"]["n"]) == 3


def test_a_plays_variables_are_data_and_its_tasks_stay_templates(tmp_path):
    path = tmp_path / "measure-001.yml"
    play = {"name": "Round 1", "hosts": "a:b", "vars": {"ir_parts": {"a": {"peer": ODD}}}}
    play["tasks"] = [{"ansible.builtin.raw": "{{ ir_parts | to_json }}"}]
    write_playbook(path, [play])
    text = path.read_text()
    assert "!unsafe" in text and "ansible.builtin.raw: '{{ ir_parts | to_json }}'" in text
    got = _templated(path, lambda d: d[0]["vars"]["ir_parts"])
    assert got == {"a": {"peer": ODD}}
