"""The TCP study (`interregion study tcp`): its plan of variants, how it runs, its estimate, its
report and the emulator's check of it.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.study import plan_tcp_study`),
never a module of this package (tests/check_layers.py).

- `plan`: `DEFAULT_REPEATS`, `VARIANTS`.
- `report`: `REPORT_FILE`, `STUDIES_DIR`, `study_ids`.
- `tcp`: `TcpStudyPlan`, `TcpStudyRequest`, `plan_tcp_study`, `run_tcp_study`, `tcp_study`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.study.findings import REPORT_FILE, STUDIES_DIR, study_ids
    from orchestrator.study.tcp import (
        TcpStudyPlan,
        TcpStudyRequest,
        plan_tcp_study,
        run_tcp_study,
        tcp_study,
    )
    from orchestrator.study.variants import DEFAULT_REPEATS, VARIANTS

__all__ = [
    "DEFAULT_REPEATS",
    "REPORT_FILE",
    "STUDIES_DIR",
    "VARIANTS",
    "TcpStudyPlan",
    "TcpStudyRequest",
    "plan_tcp_study",
    "run_tcp_study",
    "study_ids",
    "tcp_study",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "DEFAULT_REPEATS": ("orchestrator.study.variants", "DEFAULT_REPEATS"),
    "VARIANTS": ("orchestrator.study.variants", "VARIANTS"),
    "REPORT_FILE": ("orchestrator.study.findings", "REPORT_FILE"),
    "STUDIES_DIR": ("orchestrator.study.findings", "STUDIES_DIR"),
    "study_ids": ("orchestrator.study.findings", "study_ids"),
    "TcpStudyRequest": ("orchestrator.study.tcp", "TcpStudyRequest"),
    "plan_tcp_study": ("orchestrator.study.tcp", "plan_tcp_study"),
    "run_tcp_study": ("orchestrator.study.tcp", "run_tcp_study"),
    "TcpStudyPlan": ("orchestrator.study.tcp", "TcpStudyPlan"),
    "tcp_study": ("orchestrator.study.tcp", "tcp_study"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
