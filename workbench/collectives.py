"""The collective operations of NCCL, and what happens to the data, step by step.

A rank's buffer is a list of ``n`` chunks (``n`` = number of ranks). A chunk's content is a
``frozenset`` of contributions ``(source_rank, chunk_index)``: a sum is the union of the
contributions it adds up, so a picture of the buffers shows where every piece of data went
and a test can check that nothing is invented, lost or counted twice. An empty slot is
``None``.

``frames`` turns a collective into the snapshots an animator draws. Two transfer kinds exist:

- a *copy* puts the sender's chunk into the receiver's slot; the sender keeps its copy;
- a *reduce* adds the sender's chunk into the receiver's slot. The sender's slot is then
  shown empty (unless it receives in the same step): its contribution now lives in the sum.
  The real send buffer is untouched, but this picture makes conservation visible: during a
  reduction every contribution is in exactly one place.

``step_times`` gives every frame its alpha-beta time, with the formulas of
:mod:`workbench.comms`, so the steps add up to the All-reduce calculator's time.

Chunk and message sizes are in bytes, bandwidths in bytes/s, times in seconds.
"""

from __future__ import annotations

import functools
import gc
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from workbench import _validate as v
from workbench._validate import InputError

MIN_RANKS = 2
MAX_RANKS = 64  # the animator's range; the cost formulas in comms accept any rank count

Contribution = tuple[int, int]  # (source_rank, chunk_index)
Chunk = frozenset[Contribution] | None
Buffers = tuple[tuple[Chunk, ...], ...]  # buffers[rank][slot]


class Collective(StrEnum):
    """A collective operation; the value is NCCL's snake_case name.

    A ``StrEnum`` (a ``str`` and an ``Enum``): ``Collective.ALL_REDUCE == "all_reduce"``.
    """

    ALL_REDUCE = "all_reduce"
    REDUCE = "reduce"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_GATHER = "all_gather"
    BROADCAST = "broadcast"
    SCATTER = "scatter"
    ALL_TO_ALL = "all_to_all"

    @property
    def label(self) -> str:
        """Human name for menus and titles ("All-reduce")."""
        return LABELS[self]

    @property
    def has_root(self) -> bool:
        """True when the operation has a root rank (reduce, broadcast, scatter)."""
        return self in (Collective.REDUCE, Collective.BROADCAST, Collective.SCATTER)

    @property
    def reduces(self) -> bool:
        """True when the operation adds contributions together."""
        return self in (Collective.ALL_REDUCE, Collective.REDUCE, Collective.REDUCE_SCATTER)


LABELS: dict[Collective, str] = {
    Collective.ALL_REDUCE: "All-reduce",
    Collective.REDUCE: "Reduce",
    Collective.REDUCE_SCATTER: "Reduce-scatter",
    Collective.ALL_GATHER: "All-gather",
    Collective.BROADCAST: "Broadcast",
    Collective.SCATTER: "Scatter",
    Collective.ALL_TO_ALL: "All-to-all",
}

# Accepted spellings: our names, nccl-tests binary stems (all_reduce_perf -> all_reduce,
# alltoall_perf -> alltoall) and the run-together forms used in file names.
_ALIASES: dict[str, Collective] = {}
for _c in Collective:
    _ALIASES[_c.value] = _c
    _ALIASES[_c.value.replace("_", "")] = _c
    _ALIASES[_c.value.replace("_", "-")] = _c
_ALIASES["alltoall"] = Collective.ALL_TO_ALL


def parse_collective(name_or_enum: object, parameter: str = "collective") -> Collective:
    """The :class:`Collective` for an enum member or a name.

    Accepts "all_reduce", "allreduce", "all-reduce", "AllReduce", "alltoall",
    "all_reduce_perf" and so on (case-insensitive). Raises ``InputError`` otherwise.
    """
    if isinstance(name_or_enum, Collective):
        return name_or_enum
    if not isinstance(name_or_enum, str):
        raise InputError(parameter, f"must be a collective name, got {name_or_enum!r}")
    key = name_or_enum.strip().lower()
    key = key.removesuffix("_perf")
    if key in _ALIASES:
        return _ALIASES[key]
    names = ", ".join(c.value for c in Collective)
    raise InputError(parameter, f"must be one of {names}; got {name_or_enum!r}")


def _ranks(n: object) -> int:
    return v.integer("n", n, minimum=MIN_RANKS, maximum=MAX_RANKS)


def _root(root: object, n: int) -> int:
    return v.integer("root", root, minimum=0, maximum=n - 1)


def _full_sum(n: int, chunk: int) -> frozenset[Contribution]:
    return frozenset((r, chunk) for r in range(n))


def initial_state(collective: Collective | str, n: int, root: int = 0) -> Buffers:
    """Every rank's buffer before the operation, ``buffers[rank][slot]``.

    Reducing collectives and all-to-all start with every slot full of the rank's own data;
    all-gather starts with rank r holding only its slot r; broadcast and scatter start with
    only the root's buffer full.
    """
    c = parse_collective(collective)
    n = _ranks(n)
    root = _root(root, n)
    own = tuple(tuple(frozenset({(r, j)}) for j in range(n)) for r in range(n))
    if c in (Collective.ALL_REDUCE, Collective.REDUCE, Collective.REDUCE_SCATTER,
             Collective.ALL_TO_ALL):
        return own
    if c is Collective.ALL_GATHER:
        return tuple(tuple(own[r][j] if j == r else None for j in range(n)) for r in range(n))
    # BROADCAST, SCATTER: only the root has data.
    empty = (None,) * n
    return tuple(own[root] if r == root else empty for r in range(n))


def expected_final_state(collective: Collective | str, n: int, root: int = 0) -> Buffers:
    """Every rank's buffer after the operation, straight from its definition.

    - all-reduce: every rank holds every chunk summed over all ranks;
    - reduce: the root holds the sums, the other ranks' contributions now live in them;
    - reduce-scatter: rank r holds the sum of chunk r, nothing else;
    - all-gather: every rank holds chunk j of rank j in slot j;
    - broadcast: every rank holds the root's chunks;
    - scatter: rank r holds the root's chunk r (the root keeps all of its own);
    - all-to-all: chunk j of rank r ends in slot r of rank j.
    """
    c = parse_collective(collective)
    n = _ranks(n)
    root = _root(root, n)
    sums = tuple(_full_sum(n, j) for j in range(n))
    empty = (None,) * n
    if c is Collective.ALL_REDUCE:
        return (sums,) * n
    if c is Collective.REDUCE:
        return tuple(sums if r == root else empty for r in range(n))
    if c is Collective.REDUCE_SCATTER:
        return tuple(tuple(sums[j] if j == r else None for j in range(n)) for r in range(n))
    if c is Collective.ALL_GATHER:
        return tuple(tuple(frozenset({(j, j)}) for j in range(n)) for _ in range(n))
    if c is Collective.BROADCAST:
        return tuple(tuple(frozenset({(root, j)}) for j in range(n)) for _ in range(n))
    if c is Collective.SCATTER:
        root_row = tuple(frozenset({(root, j)}) for j in range(n))
        return tuple(
            root_row if r == root else tuple(root_row[j] if j == r else None for j in range(n))
            for r in range(n)
        )
    # ALL_TO_ALL: rank r's slot j holds rank j's chunk r.
    return tuple(tuple(frozenset({(j, r)}) for j in range(n)) for r in range(n))


class Transfer(NamedTuple):
    """One chunk sent from rank ``src`` to rank ``dst`` in one step (an immutable tuple).

    ``chunk`` is the sender's slot; ``dst_chunk`` the receiver's slot (``None``: the same
    index, true for every collective except all-to-all). ``reduce`` says whether the
    receiver adds the chunk into its slot (True) or stores a copy (False).
    """

    src: int
    dst: int
    chunk: int
    reduce: bool
    dst_chunk: int | None = None

    @property
    def target_chunk(self) -> int:
        """The receiver's slot index."""
        return self.chunk if self.dst_chunk is None else self.dst_chunk


@dataclass(frozen=True, slots=True)
class Frame:
    """A snapshot for the animator: the buffers *after* the step's transfers.

    Frame 0 is the initial state (no transfers). ``bytes_per_link`` is the number of bytes
    the busiest link carries in this step (in ring schedules every used link carries the
    same: one chunk); ``link_bytes`` lists ((src, dst), bytes) for every used link.
    """

    step: int
    n_steps: int
    title: str
    phase: str
    buffers: Buffers
    transfers: tuple[Transfer, ...]
    bytes_per_link: float
    link_bytes: tuple[tuple[tuple[int, int], float], ...]


def apply_transfers(buffers: Buffers, transfers: Iterable[Transfer]) -> Buffers:
    """The buffers after one step in which all ``transfers`` happen at once.

    Every transfer reads the state before the step. A reduce adds the sender's chunk into
    the receiver's slot (contributions must not overlap: that would count one twice) and
    empties the sender's slot unless that slot also receives in this step; a copy replaces
    the receiver's slot. Raises ``ValueError`` on an inconsistent step (empty source,
    double counting, a slot both copied and reduced into, conflicting copies).
    """
    reduce_in: dict[tuple[int, int], list[frozenset[Contribution]]] = defaultdict(list)
    copy_in: dict[tuple[int, int], frozenset[Contribution]] = {}
    reduced_out: set[tuple[int, int]] = set()
    for src, dst, chunk, reduce, dst_chunk in transfers:
        content = buffers[src][chunk]
        if content is None:
            raise ValueError(f"rank {src} sends empty slot {chunk}")
        target = (dst, chunk if dst_chunk is None else dst_chunk)
        if reduce:
            reduce_in[target].append(content)
            reduced_out.add((src, chunk))
        else:
            if target in copy_in and copy_in[target] != content:
                raise ValueError(f"conflicting copies into rank {dst} slot {target[1]}")
            copy_in[target] = content
    if reduce_in.keys() & copy_in.keys():
        raise ValueError("a slot is both copied and reduced into in one step")
    rows = [list(row) for row in buffers]
    for rank, slot in reduced_out - reduce_in.keys():
        rows[rank][slot] = None
    for (rank, slot), incoming in reduce_in.items():
        base = buffers[rank][slot]
        if len(incoming) == 1 and base is not None:  # the ring case: one partial sum arrives
            if not base.isdisjoint(incoming[0]):
                raise ValueError(f"rank {rank} slot {slot} would count a contribution twice")
            rows[rank][slot] = base | incoming[0]
            continue
        total = set(base or ())
        for part in incoming:
            if not total.isdisjoint(part):
                raise ValueError(f"rank {rank} slot {slot} would count a contribution twice")
            total |= part
        rows[rank][slot] = frozenset(total)
    for (rank, slot), content in copy_in.items():
        rows[rank][slot] = content
    return tuple(tuple(row) for row in rows)


SCHEDULES = ("conceptual", "ring")


def frames(
    collective: Collective | str,
    n: int,
    schedule: str = "conceptual",
    root: int = 0,
    chunk_bytes: float = 1.0,
) -> list[Frame]:
    """The snapshots of ``collective`` on ``n`` ranks (2..64), frame 0 being the start.

    ``schedule``:

    - ``"conceptual"``: one logical step from the definition (every rank sends straight to
      every rank that needs its data).
    - ``"ring"``: the ring algorithm. All-reduce is reduce-scatter (n-1 steps) then
      all-gather (n-1 steps); at step s (1-based) rank r sends chunk (r - s) mod n to
      rank r+1, which reduces it in the first phase and stores it in the second.
      Reduce-scatter and all-gather are the matching n-1 steps. Broadcast is pipelined
      along the ring from the root and reduce along the ring into the root: chunk c
      crosses hop h at step c + h + 1, 2(n-1) steps in all (with n chunks; the cost
      formulas in ``comms`` assume many more, hence S/B there). Scatter and all-to-all
      have no ring algorithm in NCCL (they are point-to-point sends), so "ring" gives
      their conceptual frames.

    ``chunk_bytes`` is the size of one chunk in bytes (message size / n in ring schedules).
    """
    c = parse_collective(collective)
    n = _ranks(n)
    schedule = v.choice("schedule", schedule, SCHEDULES)
    root = _root(root, n)
    chunk_bytes = v.non_negative("chunk_bytes", chunk_bytes)
    return list(_frames(c, n, schedule, root, chunk_bytes))


@functools.lru_cache(maxsize=16)
def _frames(c: Collective, n: int, schedule: str, root: int, chunk_bytes: float) -> tuple[Frame, ...]:
    # Frames are immutable and the animator asks for the same ones repeatedly.
    # A conceptual all-reduce on 64 ranks allocates ~260k transfers and as many sets; they
    # hold no reference cycles, so the cyclic collector would only slow the build (2-3x).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build_frames(c, n, schedule, root, chunk_bytes)
    finally:
        if paused:
            gc.enable()


def _build_frames(c: Collective, n: int, schedule: str, root: int, chunk_bytes: float) -> tuple[Frame, ...]:
    steps = _ring_steps(c, n, root) if schedule == "ring" else None
    conceptual = steps is None
    if conceptual:
        steps = [(c.label, _conceptual_transfers(c, n, root))]
    state = initial_state(c, n, root)
    total = len(steps)
    out = [Frame(0, total, f"Step 0 of {total}: start", "start", state, (), 0.0, ())]
    for index, (phase, transfers) in enumerate(steps, start=1):
        # The conceptual step ends, by definition, in the defined result (the tests replay
        # its transfers to prove they produce it); ring steps are played out one by one.
        state = expected_final_state(c, n, root) if conceptual else apply_transfers(state, transfers)
        counts = Counter((t.src, t.dst) for t in transfers)
        link_bytes = tuple(sorted((link, k * chunk_bytes) for link, k in counts.items()))
        busiest = max(counts.values(), default=0) * chunk_bytes
        title = f"Step {index} of {total}: {phase.lower()}"
        out.append(Frame(index, total, title, phase, state, tuple(transfers), busiest, link_bytes))
    return tuple(out)


def _conceptual_transfers(c: Collective, n: int, root: int) -> list[Transfer]:
    ranks = range(n)
    if c is Collective.ALL_REDUCE:
        return [Transfer(s, d, j, True) for s in ranks for d in ranks if d != s for j in ranks]
    if c is Collective.REDUCE:
        return [Transfer(s, root, j, True) for s in ranks if s != root for j in ranks]
    if c is Collective.REDUCE_SCATTER:
        return [Transfer(s, j, j, True) for s in ranks for j in ranks if j != s]
    if c is Collective.ALL_GATHER:
        return [Transfer(s, d, s, False) for s in ranks for d in ranks if d != s]
    if c is Collective.BROADCAST:
        return [Transfer(root, d, j, False) for d in ranks if d != root for j in ranks]
    if c is Collective.SCATTER:
        return [Transfer(root, d, d, False) for d in ranks if d != root]
    # ALL_TO_ALL: rank s's chunk d goes to rank d's slot s.
    return [Transfer(s, d, d, False, dst_chunk=s) for s in ranks for d in ranks if d != s]


def _ring_steps(c: Collective, n: int, root: int) -> list[tuple[str, list[Transfer]]] | None:
    """(phase, transfers) per ring step, or None when the collective has no ring schedule."""

    def ring(step: int, reduce: bool) -> list[Transfer]:
        return [Transfer(r, (r + 1) % n, (r - step) % n, reduce) for r in range(n)]

    label_rs, label_ag = LABELS[Collective.REDUCE_SCATTER], LABELS[Collective.ALL_GATHER]
    if c is Collective.ALL_REDUCE:
        # The second phase continues the same rotation: step s sends chunk (r - s) mod n.
        return [(label_rs, ring(s, True)) for s in range(1, n)] + [
            (label_ag, ring(s, False)) for s in range(n, 2 * n - 1)
        ]
    if c is Collective.REDUCE_SCATTER:
        return [(label_rs, ring(s, True)) for s in range(1, n)]
    if c is Collective.ALL_GATHER:
        # Rank r starts with chunk r, so the rotation is one step later than reduce-scatter's.
        return [(label_ag, ring(s + n - 1, False)) for s in range(1, n)]
    if c in (Collective.BROADCAST, Collective.REDUCE):
        return _pipeline_steps(c, n, root)
    return None


def _pipeline_steps(c: Collective, n: int, root: int) -> list[tuple[str, list[Transfer]]]:
    # Broadcast runs root -> root+1 -> ... -> root+n-1; reduce runs root+1 -> ... -> root.
    if c is Collective.BROADCAST:
        chain = [(root + k) % n for k in range(n)]
    else:
        chain = [(root + 1 + k) % n for k in range(n)]
    reduce = c is Collective.REDUCE
    phase = f"Pipelined {c.label.lower()}"
    steps = []
    for step in range(1, 2 * n - 1):
        transfers = []
        for hop in range(n - 1):
            chunk = step - 1 - hop
            if 0 <= chunk < n:
                transfers.append(Transfer(chain[hop], chain[hop + 1], chunk, reduce))
        steps.append((phase, transfers))
    return steps


# --- time of each step (alpha-beta model) ---------------------------------------------------

#: Algorithms whose cost :func:`step_times` knows: the ring (every schedule) and, for a
#: conceptual all-reduce, NCCL's double binary tree.
ALGORITHMS = ("ring", "tree")


@dataclass(frozen=True, slots=True)
class StepTime:
    """The model time of one frame, in seconds: ``latency_s`` (the alpha terms paid in this
    step) plus ``transfer_s`` (bytes over link bandwidth paid in this step)."""

    step: int
    latency_s: float
    transfer_s: float

    @property
    def seconds(self) -> float:
        return self.latency_s + self.transfer_s


@v.public
def step_times(
    collective: Collective | str,
    n: int,
    schedule: str,
    message_bytes: float,
    link_bw: float,
    alpha: float,
    root: int = 0,
    algorithm: str = "ring",
) -> list[StepTime]:
    """The alpha-beta time of every frame of ``frames(collective, n, schedule, root)``.

    One :class:`StepTime` per frame, frame 0 (the start) costing nothing, so
    ``step_times(...)[frame.step]`` is that frame's time. ``message_bytes`` S is what
    nccl-tests prints as the size (the whole buffer), ``link_bw`` B the bytes/s of one link
    in one direction, ``alpha`` the latency of one algorithm step in seconds. The steps add
    up to :mod:`workbench.comms`' time for the same inputs (``ring_time``, which is
    ``ring_allreduce_time`` for all-reduce, or ``tree_allreduce_time``):

    - ring all-reduce, reduce-scatter, all-gather: every step moves one chunk of S/n over
      every link and pays one latency, alpha + S/(nB); 2(n-1) or n-1 of them.
    - pipelined broadcast and reduce: the model is S/B + (n-1) alpha (NCCL cuts the message
      into many more pieces than the n the frames draw). Read along the critical path: the
      first bytes need n-1 hops to reach the far end of the chain, one latency each (steps 1
      to n-1), and the whole message then streams through the last link, n chunks of
      S/(nB) (steps n-1 to 2(n-1)); step n-1 pays both.
    - scatter and all-to-all (point-to-point, one step in every schedule), and every
      conceptual step: the whole operation's time in its single step.
    - ``algorithm="tree"`` (conceptual all-reduce only): the double binary tree,
      2 S/B + 2 ceil(log2 n) alpha, in the single step.
    """
    c = parse_collective(collective)
    n = _ranks(n)
    schedule = v.choice("schedule", schedule, SCHEDULES)
    _root(root, n)
    size = v.positive("message_bytes", message_bytes)
    bw = v.positive("link_bw", link_bw)
    a = v.non_negative("alpha", alpha)
    algorithm = v.choice("algorithm", algorithm, ALGORITHMS)
    if algorithm == "tree" and (c is not Collective.ALL_REDUCE or schedule != "conceptual"):
        raise InputError(
            "algorithm",
            "tree is modelled for all-reduce only, as one conceptual step (the frames draw "
            f"the ring); got {c.value} with the {schedule} schedule",
        )
    start = StepTime(0, 0.0, 0.0)
    ring_steps = schedule == "ring" and c not in (Collective.SCATTER, Collective.ALL_TO_ALL)
    if not ring_steps:
        # One step holding the whole operation, written as workbench.comms writes it so that
        # the single step is the calculator's number to the last bit.
        hops = n - 1.0
        if algorithm == "tree":
            latency, transfer = 2.0 * ((n - 1).bit_length()) * a, 2.0 * size / bw
        elif c is Collective.ALL_REDUCE:
            latency, transfer = 2.0 * hops * a, 2.0 * hops / n * size / bw
        elif c in (Collective.BROADCAST, Collective.REDUCE):
            latency, transfer = hops * a, size / bw
        else:
            latency, transfer = hops * a, hops / n * size / bw
        return [start, StepTime(1, latency, transfer)]
    chunk_time = size / n / bw
    if c in (Collective.BROADCAST, Collective.REDUCE):
        times = [start] + [
            StepTime(s, a if s <= n - 1 else 0.0, chunk_time if s >= n - 1 else 0.0)
            for s in range(1, 2 * n - 1)
        ]
        total_time(times)
        return times
    count = 2 * (n - 1) if c is Collective.ALL_REDUCE else n - 1
    times = [start] + [StepTime(s, a, chunk_time) for s in range(1, count + 1)]
    total_time(times)  # finite steps can still add up past a float (an OverflowError here)
    return times


@v.public
def total_time(times: Iterable[StepTime]) -> float:
    """Seconds of a whole schedule: the (exactly rounded) sum of its step times."""
    return math.fsum(t.seconds for t in times)


def chunk_size(message_bytes: float, n: int) -> float:
    """Bytes in one chunk when a message is cut into one chunk per rank (what ``frames`` draws)."""
    return v.positive("message_bytes", message_bytes) / _ranks(n)


@dataclass(frozen=True)
class Traffic:
    """What a sequence of frames moves: steps, the busiest link in any step, bytes sent per rank."""

    steps: int
    busiest_link_bytes: float
    bytes_sent_per_rank: tuple[float, ...]


def traffic(frame_list: Sequence[Frame], n: int) -> Traffic:
    """Sum the per-link bytes of ``frames(...)`` output (frame 0, the start, moves nothing)."""
    n = _ranks(n)
    steps = list(frame_list)[1:]
    sent = [0.0] * n
    for frame in steps:
        for (src, _dst), moved in frame.link_bytes:
            sent[src] += moved
    busiest = max((frame.bytes_per_link for frame in steps), default=0.0)
    return Traffic(len(steps), busiest, tuple(sent))


def contributions(buffers: Sequence[Sequence[Chunk]]) -> frozenset[Contribution]:
    """Every contribution present anywhere in ``buffers``."""
    out: set[Contribution] = set()
    for row in buffers:
        for content in row:
            if content is not None:
                out |= content
    return frozenset(out)
