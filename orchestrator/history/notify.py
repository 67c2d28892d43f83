"""Change notifications: one JSON document POSTed to a URL per new or closed episode."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from orchestrator.core.errors import UserError

TIMEOUT_S = 10.0


def check_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--notify {url}: give an http:// or https:// URL")
    return url


def post_json(url: str, doc: dict[str, Any], timeout_s: float = TIMEOUT_S) -> str:
    """POST `doc` as JSON; "" when the server took it (2xx), else why not (one line)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(doc).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "interregion"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return "" if 200 <= response.status < 300 else f"HTTP {response.status}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        return f"{type(e).__name__}: {reason}"


def event_of(doc: dict[str, Any], last_sent: str | None) -> str | None:
    """What to send for an episode in this state: "opened" (new and open), "closed"
    (closed since last sent, or first seen closed), or None (nothing new)."""
    status = doc["status"]
    if last_sent is None:
        return "opened" if status == "open" else "closed"
    if last_sent == "open" and status != "open":
        return "closed"
    return None
