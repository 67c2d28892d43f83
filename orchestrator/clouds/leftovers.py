"""What the reaper looks for: resources tagged for the project, and which of them are due.

Pure: each cloud module lists its resources as Leftovers; `due` decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from orchestrator.clouds.labels import PROJECT, gcp_label_value, parse_utc
from orchestrator.core import DurationError, UserError, parse_seconds


@dataclass(frozen=True)
class Leftover:
    cloud: str  # "aws" or "gcp"
    region: str  # region, or zone for GCP instances, or "global"
    kind: str  # instance, address, key-pair, security-group, firewall, subnetwork, network
    id: str  # what the delete call takes
    name: str
    tags: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def sweep_id(self) -> str:
        return self.tags.get("sweep_id", "")

    def to_json(self) -> dict[str, str]:
        return {
            "cloud": self.cloud,
            "region": self.region,
            "kind": self.kind,
            "id": self.id,
            "name": self.name,
            "sweep_id": self.sweep_id,
            "expires_utc": self.tags.get("expires_utc", ""),
        }

    def describe(self) -> str:
        expires = self.tags.get("expires_utc", "?")
        return (
            f"{self.cloud} {self.region} {self.kind} {self.name or self.id} "
            f"(sweep {self.sweep_id or '?'}, expires {expires})"
        )


def is_ours(tags: dict[str, str]) -> bool:
    return tags.get("project") == PROJECT


def due(
    tags: dict[str, str],
    now: datetime,
    sweep_id: str | None = None,
    older_than: timedelta | None = None,
) -> bool:
    """Whether a resource with these tags is to be reaped.

    A sweep id selects that sweep's resources whatever their age; otherwise
    `older_than` selects by creation time, and by default what has expired.
    A resource whose times cannot be read is left alone: never guess towards
    deleting.
    """
    if not is_ours(tags):
        return False
    if sweep_id is not None:
        # GCP labels hold the sanitised id; compare in that alphabet too
        return tags.get("sweep_id") in (sweep_id, gcp_label_value(sweep_id))
    if older_than is not None:
        created = parse_utc(tags.get("created_utc", ""))
        return created is not None and created <= now - older_than
    expires = parse_utc(tags.get("expires_utc", ""))
    return expires is not None and expires <= now


def parse_age(text: str) -> timedelta:
    """`--older-than 2h` (also 90m, 1d, 30s, PT2H, P1W: core.durations) as a timedelta."""
    try:
        return timedelta(seconds=parse_seconds(text))
    except DurationError as e:
        raise UserError(f"--older-than {e}") from None
    except OverflowError:
        raise UserError(f"--older-than '{text}' is beyond any date: give a shorter age") from None
