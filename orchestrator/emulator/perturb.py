"""Perturbations: a change set on purpose, per pair or per host, so a history has a
route change to find.

One perturbation is a target and what changes there:

- `A/B`: both directions between hosts A and B; `A>B`: from A to B only; `A`: every
  path to and from host A (not the controller's: ssh stays as it was).
- `delay_ms`: extra one-way delay on each direction of the target (so `A/B` with
  10 adds 20 ms to their RTT, `A>B` with 10 adds 10 ms);
- `loss_pct`: one-way loss on each direction, on top of any the emulation drew;
- `rate_mbit`: a rate cap. On `A` it lowers the host's own cap both ways; on `A>B`
  (and each direction of `A/B`) it caps what A sends to B.

On the command line: `TARGET,KEY=VALUE[,KEY=VALUE]`, e.g.
`aws:us-east-1/gcp:europe-west1,delay_ms=10` (region names hold colons, so the
parts are separated by commas; quote an `A>B` target for the shell). In a file
(YAML or JSON): a list of mappings with `target` and the amounts, or a mapping whose
`perturbations` key holds that list.
They are kept in the emulation spec, applied when the emulation comes up, and can
be replaced on a running one (`interregion emulator perturb`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from orchestrator.core import UserError

AMOUNTS = ("delay_ms", "loss_pct", "rate_mbit")
MAX_DELAY_MS = 10_000.0
FORMAT_HINT = "write TARGET,KEY=VALUE, e.g. aws:us-east-1/gcp:europe-west1,delay_ms=10"


@dataclass(frozen=True)
class Perturbation:
    target: str  # "A/B", "A>B" or "A"
    delay_ms: float = 0.0  # extra one-way delay
    loss_pct: float = 0.0  # one-way loss
    rate_mbit: float = 0.0  # a cap; 0 = none

    def __post_init__(self) -> None:
        what = f"perturbation '{self.target}'"
        ends(self.target)  # checks the target's shape
        if not 0.0 <= self.delay_ms <= MAX_DELAY_MS:
            raise UserError(f"{what}: delay_ms {self.delay_ms:g} is outside 0-{MAX_DELAY_MS:g}")
        if not 0.0 <= self.loss_pct <= 100.0:
            raise UserError(f"{what}: loss_pct {self.loss_pct:g} is outside 0-100")
        if self.rate_mbit < 0.0:
            raise UserError(f"{what}: rate_mbit {self.rate_mbit:g} is negative")
        if not (self.delay_ms or self.loss_pct or self.rate_mbit):
            raise UserError(f"{what} changes nothing: give delay_ms, loss_pct or rate_mbit")

    @property
    def text(self) -> str:
        amounts = [f"{k}={getattr(self, k):g}" for k in AMOUNTS if getattr(self, k)]
        return ",".join([self.target, *amounts])

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k == "target" or v}


def ends(target: str) -> tuple[str, str, bool]:
    """(src, dst, both) of a target: dst "" for a host; `both` for `A/B`."""
    for sep, both in (("/", True), (">", False)):
        if sep in target:
            src, _, dst = target.partition(sep)
            if not src or not dst or sep in dst or src == dst:
                break
            return src, dst, both
    else:
        if target and ":" in target:
            return target, "", True
    raise UserError(
        f"perturbation target '{target}' is not A/B, A>B or a host A (names like aws:us-east-1)"
    )


def parse(text: str) -> Perturbation:
    """`TARGET,KEY=VALUE,...` -> a Perturbation; bad input is one UserError line."""
    target, *parts = [p.strip() for p in text.split(",")]
    values: dict[str, float] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key not in AMOUNTS:
            raise UserError(
                f"perturbation '{text}': '{part}' is not one of "
                f"{', '.join(k + '=N' for k in AMOUNTS)}: {FORMAT_HINT}"
            )
        try:
            values[key] = float(value)
        except ValueError:
            raise UserError(f"perturbation '{text}': {key}={value} is not a number") from None
    if not parts:
        raise UserError(f"perturbation '{text}' sets nothing: {FORMAT_HINT}")
    return Perturbation(target, **values)


def from_dict(data: Any, where: str = "perturbation") -> Perturbation:
    if not isinstance(data, Mapping) or "target" not in data:
        raise UserError(f"{where}: expected a mapping with a target and amounts")
    unknown = sorted(set(data) - {f.name for f in fields(Perturbation)})
    if unknown:
        raise UserError(
            f"{where}: unknown key {unknown[0]} (expected target, {', '.join(AMOUNTS)})"
        )
    try:
        amounts = {k: float(data[k]) for k in AMOUNTS if k in data}
    except (TypeError, ValueError):
        raise UserError(f"{where}: amounts must be numbers") from None
    return Perturbation(str(data["target"]), **amounts)


def load_file(path: Path) -> tuple[Perturbation, ...]:
    """A YAML (or JSON) file of perturbations."""
    from orchestrator.core import load_yaml

    try:
        data = load_yaml(Path(path), "perturbation file")
    except FileNotFoundError:
        raise UserError(f"{path}: perturbation file not found") from None
    if isinstance(data, Mapping):
        data = data.get("perturbations")
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a list of perturbations (or a 'perturbations' key)")
    return tuple(from_dict(item, f"{path}: item {i + 1}") for i, item in enumerate(data))


def gather(texts: Sequence[str], file: Path | None) -> tuple[Perturbation, ...]:
    """The perturbations of a file (`--perturb-file`), then those given one by one."""
    found = load_file(file) if file is not None else ()
    return (*found, *(parse(t) for t in texts))


def check_hosts(perturbations: Iterable[Perturbation], hosts: Sequence[str]) -> None:
    """Every host a perturbation names is one of `hosts`."""
    known = set(hosts)
    for p in perturbations:
        src, dst, _ = ends(p.target)
        for name in (src, dst):
            if name and name not in known:
                raise UserError(
                    f"perturbation '{p.text}': {name} is not a host of this emulation "
                    f"(hosts: {', '.join(sorted(known)[:4])}{', ...' if len(known) > 4 else ''})"
                )


def directions(p: Perturbation, hosts: Sequence[str]) -> list[tuple[str, str]]:
    """The directed host pairs a perturbation touches."""
    src, dst, both = ends(p.target)
    if not dst:
        return [(a, b) for a in hosts for b in hosts if a != b and src in (a, b)]
    return [(src, dst), (dst, src)] if both else [(src, dst)]


def combined_loss_ppm(*loss_ppm: int) -> int:
    """Independent losses in series: 1 - product of (1 - each)."""
    keep = 1.0
    for ppm in loss_ppm:
        keep *= 1.0 - ppm / 1e6
    return round((1.0 - keep) * 1e6)


@dataclass(frozen=True)
class Effect:
    """What perturbations add to one direction."""

    delay_us: int = 0
    loss_ppm: int = 0
    rate_mbit: float = 0.0  # lowest cap of the direction; 0 = none


def effects(
    perturbations: Iterable[Perturbation], hosts: Sequence[str]
) -> dict[tuple[str, str], Effect]:
    """Per directed pair, the sum of delays, the combined loss and the lowest pair cap
    (a host's own cap is `host_caps`, not a per-pair cap)."""
    out: dict[tuple[str, str], Effect] = {}
    for p in perturbations:
        _, dst, _ = ends(p.target)
        for d in directions(p, hosts):
            e = out.get(d, Effect())
            rate = e.rate_mbit
            if p.rate_mbit and dst:
                rate = min(rate, p.rate_mbit) if rate else p.rate_mbit
            out[d] = replace(
                e,
                delay_us=e.delay_us + round(p.delay_ms * 1000.0),
                loss_ppm=combined_loss_ppm(e.loss_ppm, round(p.loss_pct * 10_000.0)),
                rate_mbit=rate,
            )
    return out


def host_caps(perturbations: Iterable[Perturbation]) -> dict[str, float]:
    """The lowest rate cap set on each host as a whole."""
    caps: dict[str, float] = {}
    for p in perturbations:
        src, dst, _ = ends(p.target)
        if p.rate_mbit and not dst:
            caps[src] = min(caps.get(src, p.rate_mbit), p.rate_mbit)
    return caps
