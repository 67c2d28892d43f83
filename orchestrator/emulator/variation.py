"""Run-to-run variation: what each emulation draws for each pair, from a recorded seed.

A real pair's RTT moves a little from one run to the next (other traffic, a different
ECMP path, a VM placed elsewhere) and, now and then, a path loses packets for a
while. An emulation draws both once per pair at `up`, from its seed, so sweeps of a
history differ the way real runs do, and the same seed gives the same draws.

- Delay: the pair's base RTT times (1 + e), e heavy-tailed: Student's t with 3
  degrees of freedom, scaled so the median |e| is 0.56 % (the median run-to-run
  deviation of doit's repeated tests, bench/history.py), clipped at 3 %: a larger
  move is a route change, which is what perturbations are for.
- Loss episode: with probability 2 % a pair loses 0.5-3 % of its packets each way
  during that emulation (the public data has no loss figures; a cloud backbone
  loses ~0, so episodes are rare and small).

Each pair's draws depend only on the seed and the pair's names (never on which
other regions were selected), so adding a region leaves every other pair's draws as
they were.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

# The median of |T| for Student's t with 3 degrees of freedom.
T3_MEDIAN_ABS = 0.7648923


@dataclass(frozen=True)
class VariationParams:
    delay_rel_median: float = 0.0056  # median |relative change| of a pair's RTT per run
    delay_rel_max: float = 0.03  # larger moves are route changes, not variation
    loss_episode_p: float = 0.02  # chance a pair has a loss episode in one emulation
    loss_pct_min: float = 0.5
    loss_pct_max: float = 3.0


DEFAULT_VARIATION = VariationParams()
NO_VARIATION = VariationParams(delay_rel_median=0.0, loss_episode_p=0.0)


@dataclass(frozen=True)
class PairDraw:
    delay_factor: float  # multiplies the pair's base RTT
    loss_pct: float  # one-way loss in each direction; 0 outside an episode


def seed_for(name: str) -> int:
    """A seed derived from a name (a sweep id): reproducible, and different per sweep."""
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def student_t3(rng: random.Random) -> float:
    chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
    return rng.gauss(0.0, 1.0) / math.sqrt(chi2 / 3.0)


def draw_pair(seed: int, a: str, b: str, p: VariationParams = DEFAULT_VARIATION) -> PairDraw:
    """The draws of the unordered pair (a, b) in the emulation of `seed`."""
    lo, hi = sorted((a, b))
    # A str seed is hashed with SHA-512: stable across processes and Python runs.
    rng = random.Random(f"interregion/{seed}/{lo}/{hi}")
    e = student_t3(rng) * p.delay_rel_median / T3_MEDIAN_ABS
    e = max(-p.delay_rel_max, min(p.delay_rel_max, e))
    loss = 0.0
    if rng.random() < p.loss_episode_p:
        loss = rng.uniform(p.loss_pct_min, p.loss_pct_max)
    return PairDraw(1.0 + e, loss)
