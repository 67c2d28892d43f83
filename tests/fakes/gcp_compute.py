"""A local Compute Engine REST API: the few calls orchestrator.clouds.gcp makes.

It answers on 127.0.0.1 with the JSON shapes of compute/v1 (resources,
lists, aggregated lists, operations, error bodies), so the real
google-cloud-compute client and its REST transport run against it. State is
plain dicts the tests fill and inspect. Deletions answer with a RUNNING
operation that the `.../operations/NAME/wait` call completes, as the real API
may.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BASE = "https://compute.googleapis.com/compute/v1"


@dataclass
class ComputeState:
    project: str
    regions: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Region JSON
    zones: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Zone JSON
    machine_types: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    project_quotas: list[dict[str, Any]] = field(default_factory=list)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> Instance
    addresses: dict[str, dict[str, Any]] = field(default_factory=dict)
    firewalls: dict[str, dict[str, Any]] = field(default_factory=dict)
    networks: dict[str, dict[str, Any]] = field(default_factory=dict)
    subnetworks: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (collection, name) whose deletion fails inside the operation, as in-use resources do
    fail_deletes: set[tuple[str, str]] = field(default_factory=set)

    def link(self, *parts: str) -> str:
        return "/".join([BASE, "projects", self.project, *parts])

    # -- builders the tests use ------------------------------------------------
    def add_region(
        self, name: str, zones: dict[str, str], quotas: dict[str, tuple[float, float]]
    ) -> None:
        """A region, its zones (name -> UP/DOWN) and its quotas (metric -> limit, usage)."""
        self.regions[name] = {
            "kind": "compute#region",
            "id": str(abs(hash(name)) % 10**12),
            "name": name,
            "status": "UP",
            "zones": [self.link("zones", z) for z in sorted(zones)],
            "quotas": [
                {"metric": m, "limit": limit, "usage": usage}
                for m, (limit, usage) in quotas.items()
            ],
            "selfLink": self.link("regions", name),
        }
        for zone, status in zones.items():
            self.zones[zone] = {
                "kind": "compute#zone",
                "id": str(abs(hash(zone)) % 10**12),
                "name": zone,
                "status": status,
                "region": self.link("regions", name),
                "selfLink": self.link("zones", zone),
            }

    def add_machine_type(self, zone: str, name: str, cpus: int, memory_mb: int) -> None:
        self.machine_types[(zone, name)] = {
            "kind": "compute#machineType",
            "id": str(abs(hash((zone, name))) % 10**12),
            "name": name,
            "guestCpus": cpus,
            "memoryMb": memory_mb,
            "zone": zone,
            "selfLink": self.link("zones", zone, "machineTypes", name),
        }

    def add_instance(self, name: str, zone: str, labels: dict[str, str]) -> None:
        self.instances[name] = {
            "kind": "compute#instance",
            "id": str(abs(hash(name)) % 10**12),
            "name": name,
            "zone": self.link("zones", zone),
            "status": "RUNNING",
            "labels": labels,
            "machineType": self.link("zones", zone, "machineTypes", "e2-small"),
            "selfLink": self.link("zones", zone, "instances", name),
        }

    def add_address(self, name: str, region: str, ip: str, labels: dict[str, str]) -> None:
        self.addresses[name] = {
            "kind": "compute#address",
            "id": str(abs(hash(name)) % 10**12),
            "name": name,
            "address": ip,
            "addressType": "EXTERNAL",
            "networkTier": "PREMIUM",
            "status": "IN_USE",
            "region": self.link("regions", region),
            "labels": labels,
            "selfLink": self.link("regions", region, "addresses", name),
        }

    def add_global(self, kind: str, name: str, description: str) -> None:
        """A firewall rule or network (these take no labels, only a description)."""
        table = {"firewall": self.firewalls, "network": self.networks}[kind]
        path = {"firewall": "firewalls", "network": "networks"}[kind]
        table[name] = {
            "kind": f"compute#{kind}",
            "id": str(abs(hash(name)) % 10**12),
            "name": name,
            "description": description,
            "selfLink": self.link("global", path, name),
        }

    def add_subnetwork(self, name: str, region: str, network: str, description: str) -> None:
        self.subnetworks[name] = {
            "kind": "compute#subnetwork",
            "id": str(abs(hash(name)) % 10**12),
            "name": name,
            "description": description,
            "region": self.link("regions", region),
            "ipCidrRange": "100.64.0.0/24",
            "network": self.link("global", "networks", network),
            "selfLink": self.link("regions", region, "subnetworks", name),
        }


def _scope(url: str) -> str:
    parts = url.split("/")
    return f"{parts[-2]}/{parts[-1]}"  # zones/europe-west1-b, regions/europe-west1


_LABEL_FILTER = re.compile(r'^labels\.(\w+)\s*=\s*"([^"]*)"$')


def _matches(item: dict[str, Any], filter_: str | None) -> bool:
    """The one filter form the code sends: labels.KEY = "VALUE"."""
    if not filter_:
        return True
    m = _LABEL_FILTER.match(filter_.strip())
    if m is None:
        raise ValueError(f"unsupported filter {filter_!r}")
    return item.get("labels", {}).get(m.group(1)) == m.group(2)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self, what: str) -> None:
        self._send(
            404,
            {
                "error": {
                    "code": 404,
                    "message": f"The resource '{what}' was not found",
                    "errors": [
                        {
                            "message": f"The resource '{what}' was not found",
                            "domain": "global",
                            "reason": "notFound",
                        }
                    ],
                }
            },
        )

    def _route(self, method: str) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        state.requests.append((method, self.path))
        prefix = f"/compute/v1/projects/{state.project}"
        if not url.path.startswith(prefix):
            return self._not_found(url.path)
        path = url.path[len(prefix) :]
        with self.server.lock:
            try:
                status, body = self.server.dispatch(method, path, query)
            except KeyError as e:
                return self._not_found(str(e.args[0]))
            except ValueError as e:
                status, body = 400, {"error": {"code": 400, "message": str(e)}}
        self._send(status, body)

    def do_GET(self) -> None:
        self._route("GET")

    def do_DELETE(self) -> None:
        self._route("DELETE")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._route("POST")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: ComputeState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.lock = threading.Lock()
        self._ids = itertools.count(1)

    def _operation(self, target: str, scope: tuple[str, str] | None) -> dict[str, Any]:
        s = self.state
        name = f"operation-{next(self._ids)}"
        op: dict[str, Any] = {
            "kind": "compute#operation",
            "id": str(next(self._ids)),
            "name": name,
            "operationType": "delete",
            "status": "RUNNING",
            "progress": 0,
            "targetLink": target,
        }
        if scope is not None:
            key = "zone" if scope[0] == "zones" else "region"
            op[key] = s.link(*scope)
            op["selfLink"] = s.link(*scope, "operations", name)
        else:
            op["selfLink"] = s.link("global", "operations", name)
        s.operations[name] = op
        return op

    def _failed_operation(self, target: str, scope: tuple[str, str]) -> dict[str, Any]:
        op = self._operation(target, scope)
        op.update(
            status="DONE",
            progress=100,
            httpErrorStatusCode=400,
            httpErrorMessage="BAD REQUEST",
            error={
                "errors": [
                    {
                        "code": "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE",
                        "message": f"The resource '{target}' is already being used",
                    }
                ]
            },
        )
        return op

    def dispatch(self, method: str, path: str, query: dict[str, str]) -> tuple[int, Any]:
        s = self.state
        parts = path.strip("/").split("/") if path.strip("/") else []
        flt = query.get("filter")
        if method == "GET" and parts == []:
            return 200, {"kind": "compute#project", "name": s.project, "quotas": s.project_quotas}
        if method == "GET" and parts == ["regions"]:
            return 200, {"kind": "compute#regionList", "items": list(s.regions.values())}
        if method == "GET" and parts == ["zones"]:
            return 200, {"kind": "compute#zoneList", "items": list(s.zones.values())}
        if (
            method == "GET"
            and len(parts) == 4
            and parts[0] == "zones"
            and parts[2] == "machineTypes"
        ):
            return 200, s.machine_types[(parts[1], parts[3])]
        if method == "GET" and parts[:1] == ["aggregated"] and len(parts) == 2:
            kind = parts[1]
            table = {
                "instances": s.instances,
                "addresses": s.addresses,
                "subnetworks": s.subnetworks,
            }[kind]
            scope_key = "zone" if kind == "instances" else "region"
            items: dict[str, Any] = {}
            for item in table.values():
                if _matches(item, flt):
                    items.setdefault(_scope(item[scope_key]), {kind: []})[kind].append(item)
            return 200, {"kind": f"compute#{kind}AggregatedList", "items": items}
        if method == "GET" and parts[:1] == ["global"] and len(parts) == 2:
            table = {"firewalls": s.firewalls, "networks": s.networks}[parts[1]]
            return 200, {"kind": f"compute#{parts[1][:-1]}List", "items": list(table.values())}
        if (
            method == "DELETE"
            and len(parts) == 4
            and parts[2] in ("instances", "addresses", "subnetworks")
        ):
            table = {
                "instances": s.instances,
                "addresses": s.addresses,
                "subnetworks": s.subnetworks,
            }[parts[2]]
            item = table[parts[3]]
            if (parts[2], parts[3]) in s.fail_deletes:
                return 200, self._failed_operation(item["selfLink"], (parts[0], parts[1]))
            if parts[2] == "addresses" and any(
                i["status"] != "TERMINATED"
                for i in s.instances.values()
                if item["address"] in json.dumps(i)
            ):
                raise ValueError("address in use")
            del table[parts[3]]
            return 200, self._operation(item["selfLink"], (parts[0], parts[1]))
        if method == "DELETE" and len(parts) == 3 and parts[0] == "global":
            table = {"firewalls": s.firewalls, "networks": s.networks}[parts[1]]
            if parts[1] == "networks" and any(
                sub["network"].endswith(f"/{parts[2]}") for sub in s.subnetworks.values()
            ):
                raise ValueError("network in use by subnetworks")
            item = table.pop(parts[2])
            return 200, self._operation(item["selfLink"], None)
        if method == "POST" and parts[-1:] == ["wait"]:
            op = s.operations[parts[-2]]
            op.update(status="DONE", progress=100)
            return 200, op
        raise KeyError(path)


class FakeCompute:
    """Start with `with FakeCompute(project) as fake:`; `fake.endpoint` for client_options."""

    def __init__(self, project: str = "test-project") -> None:
        self.state = ComputeState(project)
        self._server = _Server(self.state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeCompute:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
