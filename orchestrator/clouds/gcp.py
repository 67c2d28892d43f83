"""GCP through google-cloud-compute: regions, zones, quotas, zone fallback, the reaper.

Every call goes through `GcpApi` (one project, one set of credentials, REST
transport); tests point it at a local HTTP server answering the same JSON.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from orchestrator.clouds.labels import PROJECT
from orchestrator.clouds.leftovers import Leftover, is_ours
from orchestrator.core import RunFailure, UserError, missing_extra

try:
    import google.auth.exceptions
    import requests
    from google.api_core import exceptions as gexc
    from google.cloud import compute_v1
except ImportError as e:  # an optional part: the [gcp] extra
    raise missing_extra("gcp", e) from None

NO_CREDENTIALS = (
    "no GCP credentials: run 'gcloud auth application-default login' "
    "or set GOOGLE_APPLICATION_CREDENTIALS, then retry"
)
NO_PROJECT = "no GCP project: pass --gcp-project or set GOOGLE_CLOUD_PROJECT"
NAME_PREFIX = "ir-"  # every GCP resource of the project (labels.gcp_name_prefix)
_OURS_FILTER = f'labels.project = "{PROJECT}"'
OPERATION_TIMEOUT_S = 600

_CLIENTS = {
    "projects": compute_v1.ProjectsClient,
    "regions": compute_v1.RegionsClient,
    "zones": compute_v1.ZonesClient,
    "machine_types": compute_v1.MachineTypesClient,
    "instances": compute_v1.InstancesClient,
    "addresses": compute_v1.AddressesClient,
    "firewalls": compute_v1.FirewallsClient,
    "subnetworks": compute_v1.SubnetworksClient,
    "networks": compute_v1.NetworksClient,
    "zone_operations": compute_v1.ZoneOperationsClient,
    "region_operations": compute_v1.RegionOperationsClient,
    "global_operations": compute_v1.GlobalOperationsClient,
}
_DONE = compute_v1.Operation.Status.DONE
DEFAULT_ENDPOINT = "https://compute.googleapis.com"

# What the REST transport raises when no answer comes back: requests' connection errors
# and timeouts from the API calls, google.auth's TransportError (wrapping them) from a
# token refresh.
NETWORK_ERRORS = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    google.auth.exceptions.TransportError,
)


def _endpoint_of(error: BaseException) -> str:
    """scheme://host[:port] of the request that failed (never its path or query)."""
    for e in (error, error.__cause__, *error.args):
        url = getattr(getattr(e, "request", None), "url", None)
        if url:
            parts = urlsplit(str(url))
            return f"{parts.scheme}://{parts.netloc}"
    return DEFAULT_ENDPOINT


def unreachable(error: BaseException) -> UserError:
    """One line for a network failure, naming the endpoint that could not be reached."""
    chain = (error, error.__cause__)
    timed_out = any(isinstance(e, requests.exceptions.Timeout) for e in chain)
    return RunFailure(
        f"cannot reach GCP at {_endpoint_of(error)} "
        f"({'timed out' if timed_out else 'no connection'}): check the network connection "
        "(and HTTPS_PROXY if set), then retry"
    )


@contextmanager
def network_errors() -> Iterator[None]:
    """Turn the client library's network failures into one-line UserErrors, also when
    google.api_core's retry gave up on them (RetryError, the last failure as its cause)."""
    try:
        yield
    except NETWORK_ERRORS as e:
        raise unreachable(e) from None
    except gexc.RetryError as e:
        if isinstance(e.cause, NETWORK_ERRORS):
            raise unreachable(e.cause) from None
        raise


_FIX_CREDENTIALS = "or unset it and run 'gcloud auth application-default login'"


def credentials_file_problem(path: str) -> str | None:
    """What is wrong with the file GOOGLE_APPLICATION_CREDENTIALS names, or None.

    Checked before google.auth reads it: google-auth says "set
    GOOGLE_APPLICATION_CREDENTIALS" when it is set but names a missing file, and
    fails with a raw AttributeError or IsADirectoryError on some broken ones.
    """
    file = Path(path)
    if not file.exists():
        return (
            f"no GCP credentials: GOOGLE_APPLICATION_CREDENTIALS names {path}, which does not "
            f"exist: point it at a credentials JSON file, {_FIX_CREDENTIALS}"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        why = "" if isinstance(data, dict) and data.get("type") else "JSON without a 'type'"
    except IsADirectoryError:
        why = "a directory"
    except UnicodeDecodeError:
        why = "not UTF-8 text"
    except ValueError:
        why = "not JSON"
    except OSError as e:
        why = f"unreadable: {e.strerror}"
    return _not_credentials(path, why) if why else None


def _not_credentials(path: str, why: str) -> str:
    return (
        f"no GCP credentials: GOOGLE_APPLICATION_CREDENTIALS names {path}, which is not a "
        f"credentials file ({why}): point it at a service-account key or ADC file, "
        f"{_FIX_CREDENTIALS}"
    )


def credentials_problem(path: str | None, error: Exception) -> str:
    """The one line for google.auth.default()'s DefaultCredentialsError."""
    if not path:
        return NO_CREDENTIALS
    problem = credentials_file_problem(path)
    if problem:
        return problem
    # A JSON object of a known shape google-auth still refuses: its own reason.
    inner = next((a for a in error.args if isinstance(a, Exception)), None)
    why = " ".join(str(inner or (error.args[0] if error.args else error)).split())
    return _not_credentials(path, why)


class GcpApi:
    """One project and its credentials; clients made on first use."""

    def __init__(
        self,
        project: str | None = None,
        credentials: Any = None,
        api_endpoint: str | None = None,
    ) -> None:
        if credentials is None:
            path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
            problem = credentials_file_problem(path) if path else None
            if problem:
                raise UserError(problem)
            try:
                credentials, default_project = google.auth.default()
            except google.auth.exceptions.DefaultCredentialsError as e:
                raise UserError(credentials_problem(path, e)) from None
            project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or default_project
        project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
        if not project:
            raise UserError(NO_PROJECT)
        self.project = project
        self._credentials = credentials
        self._options = {"api_endpoint": api_endpoint} if api_endpoint else None
        self._clients: dict[str, Any] = {}

    def client(self, kind: str) -> Any:
        if kind not in self._clients:
            self._clients[kind] = _CLIENTS[kind](
                credentials=self._credentials, transport="rest", client_options=self._options
            )
        return self._clients[kind]


def _call(what: str, fn: Callable[[], Any]) -> Any:
    """One-line errors for what a user can fix: permissions, a disabled API."""
    try:
        with network_errors():
            return fn()
    except gexc.Unauthenticated:
        raise UserError(NO_CREDENTIALS) from None
    except gexc.PermissionDenied as e:
        raise UserError(
            f"GCP denied {what} ({e.message}): grant the role in infra/iam/gcp-role.yaml"
        ) from None


def _last(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class RegionInfo:
    name: str
    status: str  # UP or DOWN
    zones: tuple[str, ...]
    quotas: dict[str, tuple[float, float]]  # metric -> (limit, usage)


def regions(api: GcpApi) -> dict[str, RegionInfo]:
    """The project's regions, their zones and regional quotas (CPUS, IN_USE_ADDRESSES...)."""
    listed = _call("listing regions", lambda: list(api.client("regions").list(project=api.project)))
    return {
        r.name: RegionInfo(
            name=r.name,
            status=r.status,
            zones=tuple(sorted(_last(z) for z in r.zones)),
            quotas={q.metric: (q.limit, q.usage) for q in r.quotas},
        )
        for r in listed
    }


def project_quotas(api: GcpApi) -> dict[str, tuple[float, float]]:
    """Project-wide quotas, e.g. CPUS_ALL_REGIONS: metric -> (limit, usage)."""
    project = _call("reading the project", lambda: api.client("projects").get(project=api.project))
    return {q.metric: (q.limit, q.usage) for q in project.quotas}


def zone_status(api: GcpApi) -> dict[str, str]:
    """Zone name -> UP or DOWN."""
    zones = _call("listing zones", lambda: list(api.client("zones").list(project=api.project)))
    return {z.name: z.status for z in zones}


def machine_type_cpus(api: GcpApi, zone: str, machine_type: str) -> int | None:
    """vCPUs of a machine type in a zone; None where the zone does not offer it."""
    try:
        found = _call(
            "reading machine types",
            lambda: api.client("machine_types").get(
                project=api.project, zone=zone, machine_type=machine_type
            ),
        )
    except gexc.NotFound:
        return None
    return int(found.guest_cpus)


@dataclass(frozen=True)
class RegionFacts:
    """What preflight needs to know of one GCP region, gathered before spending."""

    region: str
    status: str  # "" if the project has no such region
    default_zone: str
    zone: str  # the zone to use: the default, or the first other UP zone offering the type
    machine_type: str
    machine_type_cpus: int | None  # None: no UP zone of the region offers the type
    quotas: dict[str, tuple[float, float]]


def region_facts(
    api: GcpApi,
    region: str,
    default_zone: str,
    machine_type: str,
    known: dict[str, RegionInfo],
    zones_up: dict[str, str],
) -> RegionFacts:
    info = known.get(region)
    if info is None or info.status != "UP":
        status = info.status if info else ""
        return RegionFacts(region, status, default_zone, "", machine_type, None, {})
    candidates = [default_zone] if default_zone in info.zones else []
    candidates += [z for z in info.zones if z != default_zone]
    for zone in candidates:
        if zones_up.get(zone) != "UP":
            continue
        cpus = machine_type_cpus(api, zone, machine_type)
        if cpus is not None:
            return RegionFacts(
                region, info.status, default_zone, zone, machine_type, cpus, info.quotas
            )
    return RegionFacts(region, info.status, default_zone, "", machine_type, None, info.quotas)


# --- the reaper ---------------------------------------------------------------


def _aggregated(client: Any, api: GcpApi, attribute: str) -> Iterable[tuple[str, Any]]:
    request = {"project": api.project, "filter": _OURS_FILTER}
    for scope, scoped in client.aggregated_list(request=request):
        for item in getattr(scoped, attribute):
            yield _last(scope), item


def _described(item: Any) -> dict[str, str]:
    """Labels of resources that take none, kept as JSON in their description."""
    try:
        tags = json.loads(item.description or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, dict) else {}


def find_leftovers(api: GcpApi) -> list[Leftover]:
    """Every instance, address, firewall rule, subnetwork and network of the project."""
    with network_errors():
        return _find_leftovers(api)


def _find_leftovers(api: GcpApi) -> list[Leftover]:
    found = []
    for zone, i in _aggregated(api.client("instances"), api, "instances"):
        if is_ours(dict(i.labels)):
            found.append(Leftover("gcp", zone, "instance", i.name, i.name, dict(i.labels)))
    for region, a in _aggregated(api.client("addresses"), api, "addresses"):
        if is_ours(dict(a.labels)):
            found.append(Leftover("gcp", region, "address", a.name, a.address, dict(a.labels)))
    unlabelled = [
        ("firewall", "global", api.client("firewalls").list(project=api.project)),
        ("network", "global", api.client("networks").list(project=api.project)),
    ]
    for kind, scope, items in unlabelled:
        for item in items:
            tags = _described(item)
            if item.name.startswith(NAME_PREFIX) and is_ours(tags):
                found.append(Leftover("gcp", scope, kind, item.name, item.name, tags))
    subnetworks = api.client("subnetworks").aggregated_list(request={"project": api.project})
    for scope, scoped in subnetworks:
        for s in scoped.subnetworks:
            tags = _described(s)
            if s.name.startswith(NAME_PREFIX) and is_ours(tags):
                found.append(Leftover("gcp", _last(scope), "subnetwork", s.name, s.name, tags))
    return found


_ORDER = ("instance", "address", "firewall", "subnetwork", "network")


def delete_leftovers(
    api: GcpApi, leftovers: list[Leftover], warn: Callable[[str], None]
) -> list[Leftover]:
    """Delete in dependency order; returns what was deleted. Failures are warnings."""
    p = api.project
    calls: dict[str, Callable[[Leftover], Any]] = {
        "instance": lambda x: api.client("instances").delete(
            project=p, zone=x.region, instance=x.id
        ),
        "address": lambda x: api.client("addresses").delete(
            project=p, region=x.region, address=x.id
        ),
        "firewall": lambda x: api.client("firewalls").delete(project=p, firewall=x.id),
        "subnetwork": lambda x: api.client("subnetworks").delete(
            project=p, region=x.region, subnetwork=x.id
        ),
        "network": lambda x: api.client("networks").delete(project=p, network=x.id),
    }
    deleted = []
    for kind in _ORDER:
        # Start every deletion of a kind, then wait for all: kinds depend on the
        # previous one, items of one kind do not.
        pending = []
        for x in (x for x in leftovers if x.kind == kind):
            try:
                pending.append((x, calls[kind](x)))
            except gexc.NotFound:
                deleted.append(x)  # gone already (the dead-man switch got there first)
            except gexc.GoogleAPICallError as e:
                warn(f"could not delete {x.describe()}: {e.message}")
        for x, operation in pending:
            try:
                _finish(api, operation)
                deleted.append(x)
            except (gexc.GoogleAPICallError, TimeoutError, RuntimeError) as e:
                warn(f"could not delete {x.describe()}: {e}")
    return deleted


def _finish(api: GcpApi, operation: Any, timeout_s: float = OPERATION_TIMEOUT_S) -> None:
    """Wait for a compute operation through this API's own endpoint; raise on its error.

    (The library's own polling would ignore a custom api_endpoint.)
    """
    deadline = time.monotonic() + timeout_s
    while operation.status != _DONE:
        if time.monotonic() > deadline:
            raise TimeoutError(f"operation {operation.name} still running after {timeout_s:g} s")
        if operation.zone:
            operation = api.client("zone_operations").wait(
                project=api.project, zone=_last(operation.zone), operation=operation.name
            )
        elif operation.region:
            operation = api.client("region_operations").wait(
                project=api.project, region=_last(operation.region), operation=operation.name
            )
        else:
            operation = api.client("global_operations").wait(
                project=api.project, operation=operation.name
            )
    if operation.error and operation.error.errors:
        raise RuntimeError(operation.error.errors[0].message)
