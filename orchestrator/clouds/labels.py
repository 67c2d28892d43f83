"""The tags every cloud resource carries, so a reaper can find what a crash left.

AWS tags keep readable ISO times; GCP labels allow only lower-case letters,
digits, `_` and `-` (63 at most), so their values are sanitised and times are
written compactly. `parse_utc` reads both forms back.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

PROJECT = "interregion"
TAG_KEYS = ("project", "sweep_id", "owner", "created_utc", "expires_utc")

_GCP_VALUE_MAX = 63
_ISO = "%Y-%m-%dT%H:%M:%SZ"
_COMPACT = "%Y%m%dt%H%M%Sz"


def format_utc(moment: datetime) -> str:
    """`2026-11-22T01:30:00Z`: the AWS tag form."""
    return moment.astimezone(UTC).strftime(_ISO)


def parse_utc(text: str) -> datetime | None:
    """A tag or label time back to a datetime; None if it is neither form."""
    for form in (_ISO, _COMPACT, _COMPACT.upper()):
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def resource_tags(
    sweep_id: str, owner: str, created: datetime, expires: datetime
) -> dict[str, str]:
    """The five tags of every AWS resource of a sweep."""
    return {
        "project": PROJECT,
        "sweep_id": sweep_id,
        "owner": owner,
        "created_utc": format_utc(created),
        "expires_utc": format_utc(expires),
    }


def gcp_label_value(text: str) -> str:
    """`text` in GCP's label alphabet: lower case, other characters become `-`."""
    value = re.sub(r"[^a-z0-9_-]", "-", text.lower())
    return value[:_GCP_VALUE_MAX]


def gcp_labels(tags: dict[str, str]) -> dict[str, str]:
    """AWS-style tags as GCP labels (times in the compact form)."""
    labels = {}
    for key, value in tags.items():
        moment = parse_utc(value) if key.endswith("_utc") else None
        labels[key] = moment.strftime(_COMPACT) if moment is not None else gcp_label_value(value)
    return labels


def gcp_name_prefix(sweep_id: str) -> str:
    """Start of every GCP resource name: `ir-` and the sweep id in GCP's name alphabet."""
    body = re.sub(r"[^a-z0-9-]", "-", sweep_id.lower()).strip("-")
    return f"ir-{body}"[:35].rstrip("-")
