"""A sweep: its record (`sweep.json`) and its stages, provision, prepare, measure (rounds, the
ping phase and the playbook's event stream), collect, teardown and report, the runner that
chains them, and the sweeps a crash abandoned.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.sweep import agent_parts`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.sweep.abandoned import MESH_DIR, mark_owner, owner_alive
    from orchestrator.sweep.events import ClosedRound, PlannedRound, RoundTracker
    from orchestrator.sweep.hostcheck import congestion_problem
    from orchestrator.sweep.inventory import control_dir, ssh_common_args
    from orchestrator.sweep.launch import (
        NOT_CONFIRMED,
        Emulation,
        Held,
        Question,
        SweepDone,
        SweepRequest,
        SweepRun,
        answer,
        cloud_options_for,
        create,
        dry_run,
        locked,
        measure_sweep,
        plan_for,
        questions,
        resume,
        run_new,
        start,
    )
    from orchestrator.sweep.launch import collect as collect_sweep
    from orchestrator.sweep.launch import prepare as prepare_sweep
    from orchestrator.sweep.launch import provision as provision_sweep
    from orchestrator.sweep.launch import teardown as teardown_sweep
    from orchestrator.sweep.measure import (
        agent_parts,
        check_playbook_end,
        next_round_no,
        round_play,
        run_rounds,
    )
    from orchestrator.sweep.measure import measure as measure_stage
    from orchestrator.sweep.provision import existing_stacks
    from orchestrator.sweep.restore import restore_hosts
    from orchestrator.sweep.runner import run_sweep
    from orchestrator.sweep.stages import (
        collect,
        load_hosts,
        local_agent_dir,
        prepare,
        row_context,
        state_folder,
        write_sweep_inventory,
    )
    from orchestrator.sweep.stages import provision as provision_stage
    from orchestrator.sweep.stages import teardown as teardown_stage
    from orchestrator.sweep.sweep_folder import Sweep, open_sweep

__all__ = [
    "MESH_DIR",
    "NOT_CONFIRMED",
    "ClosedRound",
    "Emulation",
    "Held",
    "PlannedRound",
    "Question",
    "RoundTracker",
    "Sweep",
    "SweepDone",
    "SweepRequest",
    "SweepRun",
    "agent_parts",
    "answer",
    "check_playbook_end",
    "cloud_options_for",
    "collect",
    "collect_sweep",
    "congestion_problem",
    "control_dir",
    "create",
    "dry_run",
    "existing_stacks",
    "load_hosts",
    "local_agent_dir",
    "locked",
    "mark_owner",
    "measure_stage",
    "measure_sweep",
    "next_round_no",
    "open_sweep",
    "owner_alive",
    "plan_for",
    "prepare",
    "prepare_sweep",
    "provision_stage",
    "provision_sweep",
    "questions",
    "restore_hosts",
    "resume",
    "round_play",
    "row_context",
    "run_new",
    "run_rounds",
    "run_sweep",
    "ssh_common_args",
    "start",
    "state_folder",
    "teardown_stage",
    "teardown_sweep",
    "write_sweep_inventory",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
