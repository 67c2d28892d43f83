"""How long the ping phase takes: every host probes all its peers at once.

The planner's side of the ping phase (orchestrator.sweep.pingphase runs it): each
host sends `pings` probes to each peer, at least `MIN_GAP_S` apart, and the
playbook starts and collects every host's agent around that.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.results import peers_by_host

MIN_GAP_S = 0.01  # one host never sends two probes closer than this
REPLY_WAIT_S = 2.0  # after its last probe, a host waits this long for late replies
PHASE_MARGIN_S = 1.0  # process start and the document's way back


# The playbook starts every host's agent in the background, then collects their
# documents; Ansible holds at most PHASE_FORKS hosts at once (controller memory). All
# hosts begin probing together once all are started: probing while others are still
# being started would slow their start several-fold on a small controller (77 hosts on 2
# cores: bench/sweep.py), and the collection can only begin after.
PHASE_FORKS = 24  # hosts Ansible holds at once (bench/sweep.py: ctl PSS)
LAUNCH_BASE_S = 2.0  # ansible-playbook's start, up to its first task (measured 1.3-3.0 s)
PER_HOST_S = 0.06  # starting, or collecting, one host: Ansible fork and SSH (0.057 s)
START_MARGIN_S = 0.2  # from the last host's start task to its agent's first probe


def launch_seconds(hosts: int, controller_rtt_ms: float = 0.0) -> float:
    """When, after the playbook starts, every host's agent has been started: the moment
    they all begin probing together."""
    return LAUNCH_BASE_S + PER_HOST_S * hosts + 2 * controller_rtt_ms / 1000


def collect_seconds(hosts: int, controller_rtt_ms: float = 0.0) -> float:
    """From the end of the probing to the last document: the first PHASE_FORKS hosts
    were waiting for theirs, the others are collected one by one after."""
    return PER_HOST_S * max(0, hosts - PHASE_FORKS) + controller_rtt_ms / 1000


def host_seconds(peers: int, pings: int, interval_s: float) -> float:
    """How long one host's probing takes: `pings` probes to each of `peers`."""
    if not peers:
        return 0.0
    gap = max(MIN_GAP_S, interval_s / peers)
    return ((pings * peers) - 1) * gap


def busiest_seconds(tests: Sequence[tuple[str, str]], pings: int, interval_s: float) -> float:
    """How long the busiest host sends probes: from its first to its last."""
    busiest = max((len(p) for p in peers_by_host(tests).values()), default=0)
    return host_seconds(busiest, pings, interval_s)


def probing_seconds(tests: Sequence[tuple[str, str]], pings: int, interval_s: float) -> float:
    """How long the hosts probe: the busiest host, the wait for the last replies (an RTT
    at most, REPLY_WAIT_S at worst: a lost reply) and the margin."""
    return busiest_seconds(tests, pings, interval_s) + PHASE_MARGIN_S


def phase_seconds(
    tests: Sequence[tuple[str, str]], pings: int, interval_s: float, controller_rtt_ms: float = 0.0
) -> float:
    """The expected wall time of the phase's playbook: start every agent, probe, collect."""
    hosts = len(peers_by_host(tests))
    return (
        launch_seconds(hosts, controller_rtt_ms)
        + probing_seconds(tests, pings, interval_s)
        + collect_seconds(hosts, controller_rtt_ms)
    )
