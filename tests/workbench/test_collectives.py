"""Collective semantics for the animator: definitions, ring schedules, conservation, step times."""

from __future__ import annotations

import dataclasses
import gc
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import collectives, comms
from workbench._validate import InputError
from workbench.collectives import (
    LABELS,
    MAX_RANKS,
    MIN_RANKS,
    SCHEDULES,
    Collective,
    Frame,
    StepTime,
    Transfer,
    apply_transfers,
    contributions,
    expected_final_state,
    frames,
    initial_state,
    parse_collective,
    step_times,
    total_time,
)

ALL_N = range(MIN_RANKS, MAX_RANKS + 1)


# --- names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("all_reduce", Collective.ALL_REDUCE),
        ("allreduce", Collective.ALL_REDUCE),
        ("All-Reduce", Collective.ALL_REDUCE),
        ("all_reduce_perf", Collective.ALL_REDUCE),
        ("reduce", Collective.REDUCE),
        ("reducescatter", Collective.REDUCE_SCATTER),
        ("reduce_scatter", Collective.REDUCE_SCATTER),
        ("allgather", Collective.ALL_GATHER),
        ("all_gather", Collective.ALL_GATHER),
        ("broadcast", Collective.BROADCAST),
        ("scatter", Collective.SCATTER),
        ("alltoall", Collective.ALL_TO_ALL),
        ("all_to_all", Collective.ALL_TO_ALL),
        ("alltoall_perf", Collective.ALL_TO_ALL),
        (Collective.SCATTER, Collective.SCATTER),
    ],
)
def test_parse_collective_accepts_names_and_nccl_tests_spellings(name, expected):
    assert parse_collective(name) is expected


@pytest.mark.parametrize("bad", ["allreduc", "", "sendrecv", "gather", 3, None, True, 2.0])
def test_parse_collective_rejects_everything_else(bad):
    with pytest.raises(InputError) as info:
        parse_collective(bad)
    assert info.value.parameter == "collective"


def test_collective_values_labels_and_flags():
    assert [c.value for c in Collective] == [
        "all_reduce", "reduce", "reduce_scatter", "all_gather", "broadcast", "scatter", "all_to_all",
    ]
    assert set(LABELS) == set(Collective)
    assert len(set(LABELS.values())) == len(Collective)
    assert Collective.REDUCE_SCATTER.label == "Reduce-scatter"
    assert Collective("all_reduce") == "all_reduce"  # a str enum: usable as its name
    assert {c for c in Collective if c.has_root} == {
        Collective.REDUCE, Collective.BROADCAST, Collective.SCATTER,
    }
    assert {c for c in Collective if c.reduces} == {
        Collective.ALL_REDUCE, Collective.REDUCE, Collective.REDUCE_SCATTER,
    }


# --- definitions -------------------------------------------------------------------------


def full(n, j):
    return frozenset((r, j) for r in range(n))


def test_definitions_on_three_ranks():
    n = 3
    own = lambda r, j: frozenset({(r, j)})  # noqa: E731
    sums = tuple(full(n, j) for j in range(n))
    assert expected_final_state("all_reduce", n) == (sums,) * n
    assert expected_final_state("reduce", n, root=1) == ((None,) * 3, sums, (None,) * 3)
    assert expected_final_state("reduce_scatter", n) == (
        (sums[0], None, None), (None, sums[1], None), (None, None, sums[2]),
    )
    gathered = (own(0, 0), own(1, 1), own(2, 2))
    assert initial_state("all_gather", n) == (
        (own(0, 0), None, None), (None, own(1, 1), None), (None, None, own(2, 2)),
    )
    assert expected_final_state("all_gather", n) == (gathered,) * n
    root_row = (own(2, 0), own(2, 1), own(2, 2))
    assert initial_state("broadcast", n, root=2) == ((None,) * 3, (None,) * 3, root_row)
    assert expected_final_state("broadcast", n, root=2) == (root_row,) * n
    assert expected_final_state("scatter", n, root=2) == (
        (own(2, 0), None, None), (None, own(2, 1), None), root_row,
    )
    # all-to-all is a transpose: rank r's slot j holds rank j's chunk r.
    assert expected_final_state("all_to_all", n) == tuple(
        tuple(own(j, r) for j in range(n)) for r in range(n)
    )


@pytest.mark.parametrize("bad_n", [1, 0, -2, 65, 2.5, True, "4", None, math.nan])
def test_rank_count_outside_2_to_64_is_refused(bad_n):
    for function in (initial_state, expected_final_state, frames):
        with pytest.raises(InputError) as info:
            function("all_reduce", bad_n)
        assert info.value.parameter == "n"


@pytest.mark.parametrize("bad_root", [-1, 4, 1.5, "0", None])
def test_root_must_be_a_rank(bad_root):
    for function in (initial_state, expected_final_state, frames):
        with pytest.raises(InputError) as info:
            function("broadcast", 4, root=bad_root)
        assert info.value.parameter == "root"


def test_frames_validates_schedule_and_chunk_bytes():
    with pytest.raises(InputError) as info:
        frames("all_reduce", 4, schedule="tree")
    assert info.value.parameter == "schedule"
    for bad in (-1.0, math.nan, math.inf, "8", True):
        with pytest.raises(InputError) as info:
            frames("all_reduce", 4, chunk_bytes=bad)
        assert info.value.parameter == "chunk_bytes"
    with pytest.raises(InputError) as info:
        frames("allreduc", 4)
    assert info.value.parameter == "collective"


# --- every collective, every rank count ---------------------------------------------------


def replay(before, transfers):
    """An independent reading of one step, checking that no sum counts a contribution twice."""
    n = len(before)
    after = [list(row) for row in before]
    incoming = {}
    sent_reduce = set()
    for src, dst, chunk, reduce, dst_chunk in transfers:  # unpacked: this runs n**3 times
        assert 0 <= src < n and 0 <= dst < n and src != dst
        content = before[src][chunk]
        assert content is not None, f"rank {src} sends empty slot {chunk}"
        target = (dst, chunk if dst_chunk is None else dst_chunk)
        entry = incoming.get(target)
        if entry is None:
            incoming[target] = entry = (reduce, [])
        assert entry[0] == reduce, "a slot is both copied and reduced into"
        entry[1].append(content)
        if reduce:
            sent_reduce.add((src, chunk))
    for (rank, slot), (reduce, parts) in incoming.items():
        if reduce:
            total = set(before[rank][slot] or ())
            size = len(total)
            for part in parts:
                total.update(part)
                size += len(part)
            assert len(total) == size, f"rank {rank} slot {slot} double-counts a contribution"
            after[rank][slot] = frozenset(total)
        else:
            assert all(part == parts[0] for part in parts), "conflicting copies"
            after[rank][slot] = parts[0]
    for rank, slot in sent_reduce - incoming.keys():
        after[rank][slot] = None  # the partial sum moved on
    return tuple(tuple(row) for row in after)


@pytest.fixture
def no_gc():
    """Pause the cyclic collector: these frames hold millions of acyclic tuples and sets,
    and walking them again and again would triple the run time of the sweep."""
    gc.disable()
    yield
    gc.enable()


@pytest.mark.usefixtures("no_gc")
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("collective", list(Collective))
@pytest.mark.parametrize("n", ALL_N)
def test_frames_reach_the_definition_and_conserve_contributions(collective, n, schedule):
    root = n // 2 if collective.has_root else 0  # a root other than 0 catches index slips
    result = frames(collective, n, schedule, root=root)
    start = initial_state(collective, n, root)
    assert all(isinstance(f, Frame) for f in result)
    assert result[0].buffers == start and result[0].transfers == () and result[0].step == 0
    assert result[-1].buffers == expected_final_state(collective, n, root)
    # Each step is replayed from its transfers, which only move or add up what is already
    # there, so by induction no frame holds a contribution that was not in the start.
    for previous, frame in zip(result, result[1:], strict=False):
        assert frame.step == previous.step + 1 and frame.n_steps == len(result) - 1
        assert frame.transfers, "every step moves something"
        assert frame.buffers == replay(previous.buffers, frame.transfers)
    assert contributions(result[-1].buffers) == contributions(start), "a contribution was lost"


@pytest.mark.usefixtures("no_gc")
@pytest.mark.parametrize("n", ALL_N)
def test_ring_all_reduce_is_2_n_minus_1_steps_of_one_chunk_per_link(n):
    size = 1024.0 * n  # bytes; chunk = S / n
    result = frames("all_reduce", n, "ring", chunk_bytes=size / n)
    steps = result[1:]
    assert len(steps) == 2 * (n - 1)
    for k, frame in enumerate(steps, start=1):
        assert frame.bytes_per_link == size / n
        assert len(frame.link_bytes) == n  # every ring link busy, each with one chunk
        assert all(load == size / n for _, load in frame.link_bytes)
        assert sorted((t.src, t.dst) for t in frame.transfers) == [(r, (r + 1) % n) for r in range(n)]
        assert all(t.chunk == (t.src - k) % n for t in frame.transfers)
        reduce_phase = k <= n - 1
        assert all(t.reduce is reduce_phase for t in frame.transfers)
        phase = "reduce-scatter" if reduce_phase else "all-gather"
        assert frame.title == f"Step {k} of {2 * (n - 1)}: {phase}"
    # After the reduce-scatter half, rank r holds the complete sum of chunk r.
    assert steps[n - 2].buffers == expected_final_state("reduce_scatter", n)


@pytest.mark.parametrize("n", [2, 3, 8, 17, 64])
def test_other_ring_schedules_step_counts(n):
    assert len(frames("reduce_scatter", n, "ring")) - 1 == n - 1
    assert len(frames("all_gather", n, "ring")) - 1 == n - 1
    for name in ("broadcast", "reduce"):
        result = frames(name, n, "ring", root=n - 1, chunk_bytes=4.0)
        assert len(result) - 1 == 2 * (n - 1)  # n chunks pipelined over n-1 hops
        assert all(f.bytes_per_link == 4.0 for f in result[1:])
    for name in ("scatter", "all_to_all"):  # point-to-point in NCCL: conceptual frames
        assert frames(name, n, "ring") == frames(name, n, "conceptual")


def test_conceptual_is_one_step_titled_with_the_label():
    result = frames("reduce_scatter", 4, chunk_bytes=2.0)
    assert [f.title for f in result] == ["Step 0 of 1: start", "Step 1 of 1: reduce-scatter"]
    assert result[1].bytes_per_link == 2.0  # one chunk on each link
    broadcast = frames("broadcast", 4, chunk_bytes=2.0)
    assert broadcast[1].bytes_per_link == 8.0  # the root sends all four chunks on each link


def test_frames_are_immutable_and_fresh_lists():
    result = frames("all_gather", 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result[0].step = 3
    result.clear()
    assert len(frames("all_gather", 4)) == 2  # the cache hands out a new list each time


def test_apply_transfers_refuses_double_counting_and_empty_sources():
    start = initial_state("all_reduce", 2)
    moved = apply_transfers(start, [Transfer(0, 1, 0, True)])
    assert moved[0][0] is None and moved[1][0] == full(2, 0)
    with pytest.raises(ValueError, match="empty"):
        apply_transfers(moved, [Transfer(0, 1, 0, True)])
    stale = ((start[0][0], start[0][1]), moved[1])  # rank 0 still claims what it already sent
    with pytest.raises(ValueError, match="twice"):
        apply_transfers(stale, [Transfer(0, 1, 0, True)])
    with pytest.raises(ValueError, match="both"):
        apply_transfers(start, [Transfer(0, 1, 0, True), Transfer(0, 1, 0, False)])


def test_traffic_of_ring_allreduce_matches_the_textbook_volume():
    # Ring all-reduce: each rank sends 2(n-1) chunks of S/n bytes.
    n, message = 8, 256 * 2**20
    chunk = collectives.chunk_size(message, n)
    moved = collectives.traffic(collectives.frames("all_reduce", n, "ring", chunk_bytes=chunk), n)
    assert chunk == message / n
    assert moved.steps == 2 * (n - 1)
    assert moved.busiest_link_bytes == chunk
    assert moved.bytes_sent_per_rank == tuple([2 * (n - 1) * chunk] * n)


def test_chunk_size_rejects_bad_input():
    with pytest.raises(ValueError, match="message_bytes"):
        collectives.chunk_size(-1, 4)
    with pytest.raises(ValueError):
        collectives.chunk_size(1024, 1)


# --- step times: the alpha-beta model, step by step ----------------------------------------

def calculator_time(collective, size, n, bw, alpha, algorithm="ring"):
    """What the All-reduce calculator shows for these inputs (comms_sweep.operating_point)."""
    from workbench import comms_sweep

    point = comms_sweep.operating_point(collective, size, n, bw, alpha)
    return point.tree_time if algorithm == "tree" else point.ring_time


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("collective", list(Collective))
@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16, 33, 64])
def test_step_times_add_up_to_the_calculator_time(collective, n, schedule):
    size, bw, alpha = 256 * 2**20, 360e9, 5e-6
    root = n - 1 if collective.has_root else 0
    times = step_times(collective, n, schedule, size, bw, alpha, root=root)
    assert len(times) == len(frames(collective, n, schedule, root=root))
    assert [t.step for t in times] == list(range(len(times)))
    assert times[0] == StepTime(0, 0.0, 0.0)
    assert all(t.latency_s >= 0 and t.transfer_s >= 0 and t.seconds > 0 for t in times[1:])
    expected = float(comms.ring_time(collective, size, n, bw, alpha))
    assert sum(t.seconds for t in times) == pytest.approx(expected, rel=1e-12)
    assert total_time(times) == pytest.approx(calculator_time(collective, size, n, bw, alpha), rel=1e-12)
    if collective is Collective.ALL_REDUCE:
        assert total_time(times) == pytest.approx(
            float(comms.ring_allreduce_time(size, n, bw, alpha)), rel=1e-12
        )


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 64])
def test_conceptual_tree_all_reduce_is_the_calculator_tree_time(n):
    size, bw, alpha = 2**30, 450e9, 3e-6
    times = step_times("all_reduce", n, "conceptual", size, bw, alpha, algorithm="tree")
    assert len(times) == 2
    expected = float(comms.tree_allreduce_time(size, n, bw, alpha))
    assert times[1].seconds == expected  # one step, written as comms writes it: bit for bit
    assert sum(t.seconds for t in times) == pytest.approx(calculator_time("all_reduce", size, n, bw, alpha, "tree"),
                                                          rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    collective=st.sampled_from(list(Collective)),
    n=st.integers(MIN_RANKS, MAX_RANKS),
    schedule=st.sampled_from(SCHEDULES),
    size=st.floats(1.0, 1e13),
    bw=st.floats(1e6, 1e13),
    alpha=st.one_of(st.just(0.0), st.floats(1e-9, 1e-2)),
)
def test_step_times_sum_to_comms_for_any_inputs(collective, n, schedule, size, bw, alpha):
    times = step_times(collective, n, schedule, size, bw, alpha)
    assert sum(t.seconds for t in times) == pytest.approx(
        float(comms.ring_time(collective, size, n, bw, alpha)), rel=1e-12
    )


def test_ring_all_reduce_steps_each_cost_one_latency_and_one_chunk():
    n, size, bw, alpha = 8, 256 * 2**20, 360e9, 5e-6
    times = step_times("all_reduce", n, "ring", size, bw, alpha)[1:]
    assert len(times) == 2 * (n - 1)
    for t in times:
        assert t.latency_s == alpha
        assert t.transfer_s == pytest.approx(size / n / bw, rel=1e-15)


@pytest.mark.parametrize("name", ["broadcast", "reduce"])
@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_pipelined_broadcast_pays_n_minus_1_latencies_then_streams_the_message(name, n):
    size, bw, alpha = 64 * 2**20, 100e9, 1e-5
    times = step_times(name, n, "ring", size, bw, alpha, root=n // 2)[1:]
    assert len(times) == 2 * (n - 1)
    latency_steps = [t.step for t in times if t.latency_s > 0]
    transfer_steps = [t.step for t in times if t.transfer_s > 0]
    assert latency_steps == list(range(1, n))  # the head of the message crosses n-1 hops
    assert transfer_steps == list(range(n - 1, 2 * n - 1))  # n chunks through the last link
    assert math.fsum(t.transfer_s for t in times) == pytest.approx(size / bw, rel=1e-13)
    assert math.fsum(t.latency_s for t in times) == pytest.approx((n - 1) * alpha, rel=1e-13)


def test_step_times_refuse_bad_input():
    good = dict(collective="all_reduce", n=4, schedule="ring", message_bytes=1e6, link_bw=1e9, alpha=1e-6)
    for name, bad in [("message_bytes", 0.0), ("message_bytes", -1.0), ("link_bw", 0.0),
                      ("link_bw", math.inf), ("alpha", -1e-6), ("alpha", math.nan),
                      ("schedule", "tree"), ("n", 1), ("algorithm", "butterfly")]:
        with pytest.raises(InputError) as info:
            step_times(**{**good, name: bad})
        assert info.value.parameter == name
    with pytest.raises(InputError) as info:  # the frames draw no tree
        step_times(**good, algorithm="tree")
    assert info.value.parameter == "algorithm"
    with pytest.raises(InputError) as info:
        step_times(**{**good, "collective": "broadcast", "schedule": "conceptual"}, algorithm="tree")
    assert info.value.parameter == "algorithm"
    with pytest.raises(InputError) as info:
        step_times(**{**good, "collective": "reduce"}, root=4)
    assert info.value.parameter == "root"


def test_step_times_that_overflow_are_refused_not_returned():
    with pytest.raises(InputError) as info:  # 1e300 bytes over 1e-10 B/s: beyond any float
        step_times("all_reduce", 4, "ring", 1e300, 1e-10, 0.0)
    assert info.value.parameter in ("message_bytes", "link_bw")
    with pytest.raises(InputError):  # every step finite, their sum not
        step_times("all_reduce", 4, "ring", 1e18, 5e-291, 0.0)  # 6 steps of 5e307 s
    huge = [StepTime(k, 1e308, 0.0) for k in range(3)]
    with pytest.raises(InputError):
        total_time(huge)
