"""The TCP study (`interregion study tcp`): its plan of variants, how it runs, its estimate, its
report and the emulator's check of it.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.study import plan_tcp_study`), never a module of this package
(tests/check_layers.py).
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


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
