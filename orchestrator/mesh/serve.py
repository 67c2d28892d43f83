"""`interregion metrics --serve HOST:PORT`: the mesh's metrics over HTTP at /metrics, for
a Prometheus that scrapes the controller machine instead of node_exporter's textfile.

The standard library's ThreadingHTTPServer, bound to 127.0.0.1 unless another address is
given (0.0.0.0 or :: only when given: every interface). Each scrape renders the store as
it is then (orchestrator.mesh.openmetrics.render, read only); the format follows the
scraper's Accept header as Prometheus' own client libraries do: OpenMetrics 1.0 when it
accepts `application/openmetrics-text`, else the Prometheus text format 0.0.4. A store
busy with the controller's write answers 503 with one line (the next scrape gets it);
every other path is 404. It runs until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import http.server
import ipaddress
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.core import UserError

DEFAULT_HOST = "127.0.0.1"
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BIND = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$")

# renders the exposition in a format ("openmetrics" or "prometheus"); a UserError is a 503
Render = Callable[[str], str]


def parse_bind(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[V6]:PORT`, `:PORT` or `PORT` (127.0.0.1) as (host, port); the host an
    IP address or localhost."""
    value = text.strip()
    if value.isdigit():
        value = f":{value}"
    m = _BIND.match(value)
    problem = f"--serve {text}: give HOST:PORT, e.g. 127.0.0.1:9109 (or PORT for 127.0.0.1)"
    if not m:
        raise UserError(problem)
    host = m.group("v6") or m.group("host") or DEFAULT_HOST
    port = int(m.group("port"))
    if port > 65535:
        raise UserError(f"--serve {text}: the port is 0 to 65535")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise UserError(
                f"--serve {text}: the host is an IP address (or localhost), not a name"
            ) from None
    return host, port


def every_interface(host: str) -> bool:
    return host != "localhost" and ipaddress.ip_address(host).is_unspecified


def wants_openmetrics(accept: str | None) -> bool:
    return "application/openmetrics-text" in (accept or "")


class _Handler(http.server.BaseHTTPRequestHandler):
    render: Render  # set on the server's subclass
    server_version = "interregion-metrics"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        if self.path.split("?", 1)[0] != "/metrics":
            self._send(404, "text/plain; charset=utf-8", "not found: the metrics are at /metrics\n",
                       body)  # fmt: skip
            return
        om = wants_openmetrics(self.headers.get("Accept"))
        try:
            text = type(self).render("openmetrics" if om else "prometheus")
        except UserError as e:
            self._send(503, "text/plain; charset=utf-8", f"{e}\n", body)
            return
        self._send(200, OPENMETRICS_TYPE if om else PROMETHEUS_TYPE, text, body)

    def _send(self, code: int, content_type: str, text: str, body: bool) -> None:
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape a minute is no news


class _V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


def make_server(host: str, port: int, render: Render) -> http.server.ThreadingHTTPServer:
    """The server bound to (host, port) (port 0: any free one; server_address says which);
    a refused bind is a one-line error."""
    handler = type("MetricsHandler", (_Handler,), {"render": staticmethod(render)})
    server_class: type[http.server.ThreadingHTTPServer] = http.server.ThreadingHTTPServer
    if ":" in host:
        server_class = _V6Server
    try:
        return server_class((host, port), handler)
    except OSError as e:
        raise UserError(
            f"--serve {host}:{port}: cannot listen there ({e.strerror or e}): give a free port"
        ) from None


def serve_metrics(bind: str, window: str, results: Path, *, say: Callable[[str], None],
                  warn: Callable[[str], None]) -> None:  # fmt: skip
    """`metrics --serve HOST:PORT`: /metrics of the store under `results` until
    interrupted (Ctrl-C, SIGTERM); the address it listens on `say`d."""
    from orchestrator.history import opened, store_path
    from orchestrator.mesh import openmetrics

    if window not in openmetrics.WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(openmetrics.WINDOWS)}")
    host, port = parse_bind(bind)
    if not store_path(results).exists():
        raise UserError(f"no history store under {results}: 'interregion mesh up' starts a "
                        "mesh, which fills it")  # fmt: skip

    def render(fmt: str) -> str:
        with opened(results, read_only=True) as con:
            return openmetrics.render(con, window, fmt=fmt)

    server = make_server(host, port, render)
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    if every_interface(host):
        warn(f"metrics: listening on every interface ({host}): anyone who reaches this "
             "machine can read them")  # fmt: skip
    say(f"metrics: serving http://{shown}:{bound_port}/metrics (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()
