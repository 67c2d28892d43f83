"""Change notifications: one JSON document POSTed to a URL per new or closed episode."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, read_text

TIMEOUT_S = 10.0


def _parts(url: str) -> urllib.parse.SplitResult:
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise UserError(f"--notify {redacted(url)}: not a URL") from None
    return parts


def _host(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return host + (f":{parts.port}" if parts.port else "")


def redacted(url: str) -> str:
    """`url` safe to print: a password in it (`user:password@`) becomes `***`."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.password is None:
            return url
        return urllib.parse.urlunsplit(
            parts._replace(netloc=f"{parts.username}:***@{_host(parts)}")
        )
    except ValueError:
        return "<a URL that cannot be read>"


def check_url(url: str) -> str:
    if not url.startswith(("http://", "https://")) or not _parts(url).hostname:
        raise UserError(f"--notify {redacted(url)}: give an http:// or https:// URL")
    return url


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """(the URL without `user:password@`, the headers that send them as HTTP basic
    auth): urllib would otherwise neither send them nor keep them out of its errors."""
    parts = _parts(url)
    if parts.username is None and parts.password is None:
        return url, {}
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    bare = urllib.parse.urlunsplit(parts._replace(netloc=_host(parts)))
    return bare, {"Authorization": f"Basic {token}"}


def url_from_file(path: Path) -> str:
    """The URL in the first non-empty line of `path` (kept out of the command line, the
    shell history and `ps`); one-line errors naming the file."""
    try:
        text = read_text(path, "URL file")
    except FileNotFoundError:
        raise UserError(f"--notify-file {path}: no such file") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise UserError(f"--notify-file {path}: empty: write the URL on its first line")
    return check_url(lines[0])


def post_json(url: str, doc: dict[str, Any], timeout_s: float = TIMEOUT_S) -> str:
    """POST `doc` as JSON, credentials in the URL as basic auth; "" when the server took
    it (2xx), else why not (one line, without the credentials)."""
    bare, auth = split_credentials(url)
    request = urllib.request.Request(
        bare,
        data=json.dumps(doc).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "interregion", **auth},
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
