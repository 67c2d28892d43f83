"""Checks of the prepared hosts against the test parameters, before any test runs.

Pure functions over facts the hosts reported (Ansible facts, sysctl values): the
sweep gathers them, these decide. A parameter a host cannot honour would
otherwise fail each of its tests one by one, after the VMs are paid for.
"""

from __future__ import annotations

from collections.abc import Mapping


def check_congestion(requested: str, available_by_host: Mapping[str, str]) -> list[str]:
    """The hosts whose kernel does not offer TCP congestion control `requested`.

    `available_by_host` maps a host name to its
    net.ipv4.tcp_available_congestion_control, a space-separated list such as
    "reno cubic". Hosts come back in the order given. An algorithm built as a
    module that is not loaded yet (tcp_bbr) is not listed there: such a host is
    reported, and loading the module on it is the fix.
    """
    return [
        host for host, available in available_by_host.items() if requested not in available.split()
    ]


def congestion_problem(requested: str, available_by_host: Mapping[str, str]) -> str | None:
    """A one-line error for hosts lacking `requested`, or None when every host has it."""
    missing = check_congestion(requested, available_by_host)
    if not missing:
        return None
    # What every host offers: the choices that work for the whole sweep.
    offered = sorted(set.intersection(*(set(a.split()) for a in available_by_host.values())))
    others = f" ({len(missing) - 1} more)" if len(missing) > 1 else ""
    choice = f"pick one of {', '.join(offered)}" if offered else "pick another algorithm"
    return (
        f"--congestion {requested}: {missing[0]}{others} does not offer it "
        f"(net.ipv4.tcp_available_congestion_control): {choice}, or load "
        f"tcp_{requested} on the hosts"
    )
