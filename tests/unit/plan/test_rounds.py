"""The round scheduler: every pair once, no VM twice in a round, at most Δ + 1 rounds."""

import math
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core.errors import UserError
from orchestrator.model.catalog import Region
from orchestrator.plan.rounds import (
    _classes,
    _misra_gries,
    colour_edges,
    equalise,
    lower_bound,
    max_degree,
    schedule,
    slots_of,
)
from orchestrator.plan.selection import Pair


def region(i: int) -> Region:
    cloud = "aws" if i % 2 else "gcp"
    return Region(cloud, f"r{i:03d}", "City", "US", 0.0, float(i % 180), "test")


def pairs_from(edges, directions=None):
    """Directed pairs for undirected edges: both directions unless `directions` says 1."""
    out = []
    for n, (a, b) in enumerate(edges):
        ra, rb = region(a), region(b)
        out.append(Pair(ra, rb, 0.0))
        if directions is None or directions[n % len(directions)]:
            out.append(Pair(rb, ra, 0.0))
    return out


def check_rounds(pairs, rounds):
    scheduled = [p.key for rnd in rounds for slot in rnd for p in slot.pairs]
    assert sorted(scheduled) == sorted(p.key for p in pairs)  # every pair exactly once
    for rnd in rounds:
        members = [key for slot in rnd for key in slot.regions]
        assert len(members) == len(set(members))  # no region twice in a round
        for slot in rnd:
            assert {k for p in slot.pairs for k in p.key} == set(slot.regions)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(
    data=st.data(),
    n=st.integers(2, 100),
    density=st.floats(0.02, 1.0),
    max_concurrent=st.none() | st.integers(1, 30),
    sequential=st.booleans(),
)
def test_schedule_properties(data, n, density, max_concurrent, sequential):
    all_edges = list(combinations(range(n), 2))
    # a random subset: hypothesis draws a seed-like mask to keep shrinking cheap
    mask_seed = data.draw(st.integers(0, 2**32 - 1))
    rnd = random.Random(mask_seed)
    edges = [e for e in all_edges if rnd.random() < density] or [all_edges[0]]
    directions = data.draw(st.lists(st.booleans(), min_size=1, max_size=5))
    pairs = pairs_from(edges, directions)

    rounds = schedule(pairs, max_concurrent=max_concurrent, sequential=sequential)
    check_rounds(pairs, rounds)
    delta = max_degree(slots_of(pairs))
    cap = 1 if sequential else max_concurrent
    if cap is None:
        assert delta <= len(rounds) <= delta + 1
    else:
        assert all(len(r) <= cap for r in rounds)
        # the bound docs/planning.md states: max(colours, ceil(slots / K)), colours = Δ or Δ + 1
        colours = len(schedule(pairs))
        assert len(rounds) == max(colours, math.ceil(len(edges) / cap))
    assert len(rounds) >= lower_bound(pairs, cap)
    sizes = [len(r) for r in rounds]
    assert max(sizes) - min(sizes) <= 1  # balanced
    assert schedule(pairs, max_concurrent=max_concurrent, sequential=sequential) == rounds


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 2**32 - 1), density=st.floats(0.05, 1))
def test_misra_gries_alone_never_needs_more_than_delta_plus_one(n, seed, density):
    rnd = random.Random(seed)
    edges = [e for e in combinations(range(n), 2) if rnd.random() < density]
    if not edges:
        return
    degree = [0] * n
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    classes = _classes(_misra_gries(n, edges, max(degree) + 1))
    assert len(classes) <= max(degree) + 1
    assert sorted(e for c in classes for e in c) == sorted(edges)
    for c in classes:
        ends = [v for e in c for v in e]
        assert len(ends) == len(set(ends))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 76, 77, 100])
def test_full_mesh_needs_n_minus_1_rounds_for_even_n_and_n_for_odd(n):
    pairs = pairs_from(list(combinations(range(n), 2)))
    rounds = schedule(pairs)
    check_rounds(pairs, rounds)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    assert lower_bound(pairs) == n - 1


@pytest.mark.parametrize(("a", "b"), [(1, 5), (8, 6), (34, 43), (17, 17)])
def test_bipartite_cross_cloud_needs_exactly_delta(a, b):
    # Every one of `a` regions against every one of `b` regions (König: Δ colours).
    edges = [(i, a + j) for i in range(a) for j in range(b)]
    pairs = pairs_from(edges)
    rounds = schedule(pairs)
    check_rounds(pairs, rounds)
    assert len(rounds) == max(a, b) == lower_bound(pairs)


def test_sparse_bipartite_graph_needs_exactly_delta():
    # An even cycle plus chords between the two sides: bipartite, Δ = 3.
    edges = [(i, (i + 1) % 10) for i in range(10)] + [(0, 5), (2, 7)]
    rounds = schedule(pairs_from(edges))
    assert len(rounds) == 3 == max_degree(slots_of(pairs_from(edges)))


def test_odd_cycle_needs_delta_plus_one():
    edges = [(i, (i + 1) % 5) for i in range(5)]
    assert len(schedule(pairs_from(edges))) == 3


def test_both_directions_share_a_slot_and_keep_their_order():
    pairs = pairs_from([(0, 1)])
    [[slot]] = schedule(pairs)
    assert slot.pairs == tuple(pairs)
    assert slot.regions == pairs[0].key


def test_max_concurrent_caps_and_balances_rounds():
    pairs = pairs_from(list(combinations(range(10), 2)))  # 45 slots, Δ = 9
    rounds = schedule(pairs, max_concurrent=4)
    check_rounds(pairs, rounds)
    assert len(rounds) == 12 == lower_bound(pairs, 4)  # ceil(45 / 4)
    assert sorted(len(r) for r in rounds) == [3] * 3 + [4] * 9


def test_sequential_runs_one_slot_per_round():
    pairs = pairs_from([(0, 1), (2, 3), (4, 5)])
    rounds = schedule(pairs, sequential=True)
    assert [len(r) for r in rounds] == [1, 1, 1]
    assert len(schedule(pairs)) == 1


def test_errors():
    with pytest.raises(UserError, match="--max-concurrent 0"):
        schedule(pairs_from([(0, 1)]), max_concurrent=0)
    with pytest.raises(UserError, match="listed twice"):
        schedule(pairs_from([(0, 1)]) * 2)
    same = region(1)
    with pytest.raises(UserError, match="against itself"):
        schedule([Pair(same, same, 0.0)])
    assert schedule([]) == []
    assert lower_bound([]) == 0


def test_colour_edges_and_equalise_on_a_star():
    edges = [(0, i) for i in range(1, 6)]
    classes = colour_edges(6, edges)
    assert len(classes) == 5  # a star needs one round per edge
    balanced = equalise([[(0, 1), (2, 3), (4, 5)], [], []])
    assert [len(m) for m in balanced] == [1, 1, 1]
    assert sorted(e for m in balanced for e in m) == [(0, 1), (2, 3), (4, 5)]
    # a path a-b-a between two matchings moves one edge: 2 and 1, never 3 and 0
    path = equalise([[(0, 1), (2, 3)], [(1, 2)], []])
    assert sorted(len(m) for m in path) == [1, 1, 1]


def test_the_planning_page_states_the_bound_the_scheduler_keeps():
    from orchestrator.core import paths

    readme = " ".join((paths.ROOT / "docs" / "planning.md").read_text().split())
    assert "max(colours, ⌈slots/K⌉) rounds, where colours is Δ or Δ+1" in readme
    assert "`--max-concurrent K` caps them at K slots each" in readme
