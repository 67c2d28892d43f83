"""Rounds of tests in which no VM takes part twice.

A slot is an unordered pair of regions; both directions of the pair are
measured in the same slot, one after the other. A round is a set of slots that
share no region (a matching), so no VM serves two tests at once. Finding the
fewest rounds is edge colouring the graph whose vertices are the regions and
whose edges are the slots:

- lower bound: Δ, the largest number of slots any one region takes part in
  (and ceil(slots / K) under --max-concurrent K);
- a full mesh (complete graph) uses the circle method: exactly Δ rounds for an
  even number of regions, Δ + 1 for an odd number, which is optimal;
- otherwise each slot is inserted with Δ colours, freeing a colour by swapping
  a two-colour (Kempe) path when no colour is free at both ends. That always
  works on bipartite graphs (e.g. cross-cloud only) and usually elsewhere; a
  stuck insertion order is retried shuffled (seeded, so still deterministic),
  and after KEMPE_ATTEMPTS orders, or at once if the graph is overfull (more
  slots than Δ rounds can hold), Misra-Gries (Vizing fans) colours with Δ + 1,
  which is guaranteed;
- finally rounds are balanced (equitable colouring: swapping alternating paths
  between the largest and smallest round) to at most K slots each.

Everything is deterministic: the same pairs in the same order give the same rounds.

A throughput sweep adds sentinels (`add_sentinels`): two slots of its first round
measured again at its end, in the last round where their regions are free, else in a
round of their own. Early against late tells a drained host allowance from the path
(orchestrator.plan.allowance).
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from orchestrator.core import UserError
from orchestrator.plan.selection import Pair


@dataclass(frozen=True)
class Slot:
    """Two regions tested against each other; `pairs` are the directed tests (1 or 2)."""

    regions: tuple[str, str]
    pairs: tuple[Pair, ...]
    sentinel: bool = False  # a repeat, at the sweep's end, of a slot of its first round


Round = list[Slot]
Edge = tuple[int, int]
T = TypeVar("T")

# Slots of the first round measured again at the end of a throughput sweep.
SENTINEL_SLOTS = 2

# Insertion orders tried with Δ colours before falling back to Δ + 1 (each
# failed try stops early, so this costs milliseconds).
KEMPE_ATTEMPTS = 16


def slots_of(pairs: Sequence[Pair]) -> list[Slot]:
    """Group directed pairs into slots, in order of first appearance."""
    grouped: dict[frozenset[str], list[Pair]] = {}
    for pair in pairs:
        if pair.src.key == pair.dst.key:
            raise UserError(f"pair {pair.src.key}/{pair.dst.key} tests a region against itself")
        members = grouped.setdefault(frozenset(pair.key), [])
        if any(p.key == pair.key for p in members):
            raise UserError(f"pair {pair.src.key} -> {pair.dst.key} is listed twice")
        members.append(pair)
    slots = []
    for members in grouped.values():
        first = members[0]
        members.sort(key=lambda p: p.key != first.key)
        slots.append(Slot(regions=first.key, pairs=tuple(members)))
    return slots


def max_degree(slots: Iterable[Slot]) -> int:
    """Δ: the largest number of slots one region takes part in."""
    degree: dict[str, int] = {}
    for slot in slots:
        for key in slot.regions:
            degree[key] = degree.get(key, 0) + 1
    return max(degree.values(), default=0)


def lower_bound(pairs: Sequence[Pair], max_concurrent: int | None = None) -> int:
    """No schedule can use fewer rounds: max(Δ, ceil(slots / max_concurrent))."""
    slots = slots_of(pairs)
    bound = max_degree(slots)
    if max_concurrent is not None:
        _check_max_concurrent(max_concurrent)
        bound = max(bound, math.ceil(len(slots) / max_concurrent))
    return bound


def schedule(
    pairs: Sequence[Pair], max_concurrent: int | None = None, sequential: bool = False
) -> list[Round]:
    """Rounds of slots: no region twice in a round, at most Δ + 1 rounds (without a cap).

    `max_concurrent` caps the slots per round (rounds = max(colours, ceil(slots / K)));
    `sequential` runs one slot per round.
    """
    if max_concurrent is not None:
        _check_max_concurrent(max_concurrent)
    slots = slots_of(pairs)
    if not slots:
        return []
    index: dict[str, int] = {}
    for slot in slots:
        for key in slot.regions:
            index.setdefault(key, len(index))
    edges = [_edge(index[slot.regions[0]], index[slot.regions[1]]) for slot in slots]
    classes = colour_edges(len(index), edges)
    if sequential:
        max_concurrent = 1
    if max_concurrent is not None:
        classes += [[] for _ in range(math.ceil(len(edges) / max_concurrent) - len(classes))]
    classes = equalise(classes)
    by_edge = dict(zip(edges, slots, strict=True))
    return [[by_edge[e] for e in sorted(matching)] for matching in classes]


def add_sentinels(
    rounds: Sequence[Sequence[T]],
    count: int = SENTINEL_SLOTS,
    max_concurrent: int | None = None,
    regions: Callable[[T], Iterable[str]] = lambda slot: slot.regions,  # type: ignore[attr-defined]
    mark: Callable[[T], T] = lambda slot: replace(slot, sentinel=True),  # type: ignore[type-var]
) -> list[list[T]]:
    """`rounds` with the first `count` slots of the first round repeated at the end (as
    `mark`ed sentinel slots): in the last round when none of their regions is busy there
    and the cap leaves room, else in one more round. A schedule of fewer than two rounds
    has no late round to compare with and is returned as it is. Works on any slot type
    (`regions` names a slot's two regions), so the measure stage can add them to its
    own rounds (orchestrator.sweep.sentinels)."""
    out = [list(r) for r in rounds]
    if len(out) < 2 or count < 1:
        return out
    late = [mark(slot) for slot in out[0][:count]]
    last = out[-1]
    busy = {key for slot in last for key in regions(slot)}
    free = not any(set(regions(slot)) & busy for slot in late)
    room = max_concurrent is None or len(last) + len(late) <= max_concurrent
    if free and room:
        last.extend(late)
    else:
        out.append(late)
    return out


def sentinel_slots(rounds: Sequence[Round]) -> list[Slot]:
    """The late (repeated) slots of a schedule."""
    return [slot for rnd in rounds for slot in rnd if slot.sentinel]


def _check_max_concurrent(k: int) -> None:
    if k < 1:
        raise UserError(f"--max-concurrent {k}: at least one test must run per round")


def _edge(a: int, b: int) -> Edge:
    return (a, b) if a < b else (b, a)


def colour_edges(n_vertices: int, edges: Sequence[Edge]) -> list[list[Edge]]:
    """Partition `edges` (a simple graph on vertices 0..n-1) into at most Δ + 1 matchings."""
    if not edges:
        return []
    if len(set(edges)) != len(edges):
        raise ValueError("edge list has duplicates")
    degree = [0] * n_vertices
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    delta = max(degree)
    used = [v for v in range(n_vertices) if degree[v]]
    if len(edges) == len(used) * (len(used) - 1) // 2:
        return _circle(used)
    # Overfull: more edges than Δ matchings can hold, so Δ + 1 is optimal.
    if len(edges) <= delta * (len(used) // 2):
        for attempt in range(KEMPE_ATTEMPTS):
            order = list(edges)
            if attempt:
                # a stuck insertion order is usually fine when shuffled; seeded: deterministic
                random.Random(attempt).shuffle(order)
            at = _kempe_colouring(n_vertices, order, delta)
            if at is not None:
                return _classes(at)
    return _classes(_misra_gries(n_vertices, edges, delta + 1))


def _classes(at: list[dict[int, int]]) -> list[list[Edge]]:
    by_colour: dict[int, list[Edge]] = {}
    for u, colours in enumerate(at):
        for colour, w in colours.items():
            if u < w:
                by_colour.setdefault(colour, []).append((u, w))
    return [sorted(by_colour[c]) for c in sorted(by_colour)]


def _circle(vertices: list[int]) -> list[list[Edge]]:
    """Round-robin tournament: vertex 0 stays, the others rotate."""
    players: list[int | None] = list(vertices)
    if len(players) % 2:
        players.append(None)  # the bye
    fixed, rest = players[0], players[1:]
    m = len(rest)
    rounds = []
    for r in range(m):
        games = [(fixed, rest[r])]
        games += [(rest[(r + i) % m], rest[(r - i) % m]) for i in range(1, m // 2 + 1)]
        rounds.append(sorted(_edge(a, b) for a, b in games if a is not None and b is not None))
    return rounds


# A colouring is kept as `at[v][colour] = neighbour`: the edge of that colour at v.


def _set(at: list[dict[int, int]], u: int, v: int, colour: int) -> None:
    at[u][colour] = v
    at[v][colour] = u


def _unset(at: list[dict[int, int]], u: int, v: int, colour: int) -> None:
    del at[u][colour]
    del at[v][colour]


def _free(at: list[dict[int, int]], v: int, k: int) -> int:
    return next(c for c in range(k) if c not in at[v])


def _path(at: list[dict[int, int]], start: int, first: int, second: int) -> list[Edge]:
    """The path from `start` alternating colours first, second, first, ... as (u, v) steps."""
    steps = []
    v, colour, other = start, first, second
    while colour in at[v]:
        w = at[v][colour]
        steps.append((v, w))
        v, colour, other = w, other, colour
    return steps


def _flip(at: list[dict[int, int]], steps: list[Edge], first: int, second: int) -> None:
    colours = [first if i % 2 == 0 else second for i in range(len(steps))]
    for (u, v), colour in zip(steps, colours, strict=True):
        _unset(at, u, v, colour)
    for (u, v), colour in zip(steps, colours, strict=True):
        _set(at, u, v, second if colour == first else first)


def _kempe_colouring(n: int, edges: Sequence[Edge], k: int) -> list[dict[int, int]] | None:
    """Insert edges one by one with k colours, swapping a Kempe path when needed.

    Returns None if some edge cannot be placed (never on bipartite graphs).
    """
    at: list[dict[int, int]] = [{} for _ in range(n)]
    for u, v in edges:
        common = next((c for c in range(k) if c not in at[u] and c not in at[v]), None)
        if common is not None:
            _set(at, u, v, common)
            continue
        placed = False
        for alpha in (c for c in range(k) if c not in at[u]):
            for beta in (c for c in range(k) if c not in at[v]):
                # alpha is missing at u and used at v; flip the alpha/beta path from v.
                steps = _path(at, v, alpha, beta)
                if steps and steps[-1][1] == u:
                    continue  # the path ends at u: flipping would take alpha from u too
                _flip(at, steps, alpha, beta)
                _set(at, u, v, alpha)
                placed = True
                break
            if placed:
                break
        if not placed:
            return None
    return at


def _misra_gries(n: int, edges: Sequence[Edge], k: int) -> list[dict[int, int]]:
    """Misra & Gries (1992): a proper colouring with k = Δ + 1 colours, always."""
    at: list[dict[int, int]] = [{} for _ in range(n)]
    for u, v in edges:
        fan = _maximal_fan(at, u, v)
        c = _free(at, u, k)
        d = _free(at, fan[-1], k)
        if c != d:
            _flip(at, _path(at, u, d, c), d, c)
        # the longest prefix of the fan that is still a fan, up to a vertex where d is free
        end = 0
        while d in at[fan[end]]:
            # Misra-Gries prove a prefix with d free at its end exists before any break;
            # checked always (an assert vanishes under python -O) so a bug never
            # yields a schedule with a VM in two tests at once.
            if end + 1 >= len(fan) or _colour_of(at, u, fan[end + 1]) in at[fan[end]]:
                raise RuntimeError(
                    f"edge colouring: the fan of {u} broke at {fan[end]} (a bug in plan/rounds.py)"
                )
            end += 1
        for i in range(end):
            colour = _colour_of(at, u, fan[i + 1])
            _unset(at, u, fan[i + 1], colour)
            _set(at, u, fan[i], colour)
        _set(at, u, fan[end], d)
    return at


def _colour_of(at: list[dict[int, int]], u: int, w: int) -> int:
    return next(c for c, x in at[u].items() if x == w)


def _maximal_fan(at: list[dict[int, int]], u: int, v: int) -> list[int]:
    """A maximal fan of u starting at v: colour of (u, fan[i+1]) is free at fan[i]."""
    fan = [v]
    in_fan = {v}
    extended = True
    while extended:
        extended = False
        last = fan[-1]
        for colour in sorted(at[u]):
            w = at[u][colour]
            if w not in in_fan and colour not in at[last]:
                fan.append(w)
                in_fan.add(w)
                extended = True
                break
    return fan


def equalise(classes: list[list[Edge]]) -> list[list[Edge]]:
    """Balance matchings so sizes differ by at most one, keeping each a matching.

    The union of the largest and the smallest matching is a set of alternating
    paths and even cycles; a path with one more edge of the larger moves one
    edge across when its colours are swapped (de Werra's equitable edge
    colouring). All such paths of the pair are swapped in one go.
    """
    sets = [set(m) for m in classes]
    largest = [(-len(m), i) for i, m in enumerate(sets)]
    smallest = [(len(m), i) for i, m in enumerate(sets)]
    heapq.heapify(largest)
    heapq.heapify(smallest)
    while largest and smallest:
        size, big = largest[0]
        if -size != len(sets[big]):
            heapq.heappop(largest)  # stale entry: the set changed since
            continue
        size, small = smallest[0]
        if size != len(sets[small]):
            heapq.heappop(smallest)
            continue
        a, b = sets[big], sets[small]
        if len(a) - len(b) <= 1:
            break
        for path in _surplus_paths(a, b):
            for e in path:
                if e in a:
                    a.remove(e)
                    b.add(e)
                else:
                    b.remove(e)
                    a.add(e)
            if len(a) - len(b) <= 1:
                break
        for i in (big, small):
            heapq.heappush(largest, (-len(sets[i]), i))
            heapq.heappush(smallest, (len(sets[i]), i))
    return [sorted(m) for m in sets]


def _surplus_paths(a: set[Edge], b: set[Edge]) -> Iterator[list[Edge]]:
    """Components of a | b with one edge more from a than from b (paths ending in a-edges)."""
    nbrs: dict[int, list[Edge]] = {}
    for e in sorted(a | b):
        for v in e:
            nbrs.setdefault(v, []).append(e)
    seen: set[Edge] = set()
    for start in sorted(nbrs):
        if len(nbrs[start]) != 1 or nbrs[start][0] in seen:
            continue  # paths are walked from an end
        path, v = [], start
        while True:
            nxt = [e for e in nbrs[v] if e not in seen]
            if not nxt:
                break
            e = nxt[0]
            seen.add(e)
            path.append(e)
            v = e[0] if e[1] == v else e[1]
        if sum(e in a for e in path) > sum(e in b for e in path):
            yield path
