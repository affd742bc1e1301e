"""Collective cost over a range of message sizes, at one size, and from a measured log.

The all-reduce calculator draws these numbers; a notebook gets the same ones::

    from workbench import comms_sweep
    sw = comms_sweep.sweep("all_reduce", 8, 360e9, 5e-6, 1024, 16 * 2**30)
    sw.sizes, sw.ring, sw.tree, sw.best_busbw
    comms_sweep.operating_point("all_reduce", 2**30, 8, 360e9, 5e-6).busbw
    comms_sweep.analyze_log(open("all_reduce.log").read()).fit

Everything is in SI units (bytes, seconds, bytes/s); the formulas are those of
:mod:`workbench.comms` (this module only combines them).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench import comms
from workbench._arrays import distinct
from workbench._validate import InputError
from workbench.nccl import NcclResult, parse_nccl_tests, rows_to_points

__all__ = [
    "CommsSweep",
    "MeasuredLog",
    "OperatingPoint",
    "analyze_log",
    "bandwidth_sweep",
    "has_tree",
    "latency_takes_over",
    "operating_point",
    "rank_sweep",
    "ring_parameters_from_fit",
    "ring_steps",
    "size_grid",
    "sweep",
]

#: Collectives with a tree algorithm in the model (NCCL's double binary tree: all-reduce only).
TREE_COLLECTIVES = ("all_reduce",)


@v.public
def has_tree(collective) -> bool:
    """Whether the model has a tree algorithm for ``collective`` (all-reduce only)."""
    return comms._operation(collective) in TREE_COLLECTIVES


@v.public
def size_grid(size_min, size_max, points_per_decade: int = 24) -> np.ndarray:
    """Message sizes in bytes, evenly spaced on a log scale from ``size_min`` to ``size_max``
    (both included, both > 0), ``points_per_decade`` per factor of ten (at least 2 points)."""
    lo = v.positive("size_min", size_min)
    hi = v.positive("size_max", size_max)
    if not lo < hi:
        raise InputError("size_max", f"must be > size_min ({lo:g}), got {hi:g}")
    per_decade = v.integer("points_per_decade", points_per_decade, 1, 1000)
    # log10(hi) - log10(lo), not log10(hi / lo): the ratio overflows for a subnormal size_min.
    n = max(2, math.ceil((math.log10(hi) - math.log10(lo)) * per_decade) + 1)
    sizes = np.geomspace(lo, hi, n)
    sizes[0], sizes[-1] = lo, hi  # exact ends, not rounded through logs
    return sizes


@v.public
def ring_steps(collective, n_ranks) -> int:
    """How many latency terms (alpha) the ring model of ``collective`` pays at ``n_ranks``:
    all-reduce 2(n-1); reduce-scatter, all-gather, all-to-all, scatter, gather, broadcast and
    reduce n-1; sendrecv 1; 0 for a single rank. It matches :func:`comms.ring_time`."""
    op = comms._operation(collective)
    n = v.gpu_count("n_ranks", n_ranks)
    if n == 1:
        return 0
    if op == "all_reduce":
        return 2 * (n - 1)
    if op == "sendrecv":
        return 1
    return n - 1


def _ring(collective, sizes, n, bw, alpha):
    if comms._operation(collective) == "all_reduce":
        return comms.ring_allreduce_time(sizes, n, bw, alpha)
    return comms.ring_time(collective, sizes, n, bw, alpha)


def _busbw(collective, sizes, times, n):
    """nccl-tests busbw; 0 where the time is 0 (a single rank: nothing moves)."""
    times = np.asarray(times, dtype=float)
    safe = np.where(times > 0, times, 1.0)
    bw = comms.busbw(collective, sizes, safe, n)
    return np.where(times > 0, bw, 0.0)


@dataclass(frozen=True)
class CommsSweep:
    """Model times and bus bandwidths of one collective over ``sizes`` (bytes).

    ``ring``: ring-algorithm time (s); ``tree``: double-binary-tree time (s), ``None`` for
    collectives without a tree; ``best``: the faster of the two at each size (ring when
    there is no tree); ``*_busbw``: nccl-tests bus bandwidth (B/s) of those times.
    """

    collective: str
    n_ranks: int
    link_bw: float
    alpha: float
    sizes: np.ndarray
    ring: np.ndarray
    tree: np.ndarray | None
    best: np.ndarray
    ring_busbw: np.ndarray
    tree_busbw: np.ndarray | None
    best_busbw: np.ndarray


@v.public
def sweep(collective, n_ranks, link_bw, alpha, size_min, size_max, points_per_decade: int = 24) -> CommsSweep:
    """Model curves of ``collective`` from ``size_min`` to ``size_max`` (see :class:`CommsSweep`)."""
    op = comms._operation(collective)
    n = v.gpu_count("n_ranks", n_ranks)
    link_bw = v.positive("link_bw", link_bw)
    alpha = v.non_negative("alpha", alpha)
    sizes = size_grid(size_min, size_max, points_per_decade)
    ring = _ring(op, sizes, n, link_bw, alpha)
    tree = comms.tree_allreduce_time(sizes, n, link_bw, alpha) if op in TREE_COLLECTIVES else None
    best = ring if tree is None else np.minimum(ring, tree)
    return CommsSweep(
        collective=op,
        n_ranks=n,
        link_bw=float(link_bw),
        alpha=float(alpha),
        sizes=sizes,
        ring=ring,
        tree=tree,
        best=best,
        ring_busbw=_busbw(op, sizes, ring, n),
        tree_busbw=None if tree is None else _busbw(op, sizes, tree, n),
        best_busbw=_busbw(op, sizes, best, n),
    )


@dataclass(frozen=True)
class OperatingPoint:
    """The model at one message size.

    ``ring_time``, ``tree_time`` (None without a tree) and ``best_time`` in seconds;
    ``best_algorithm`` "ring" or "tree"; ``crossover`` the all-reduce size (bytes) where ring
    and tree cost the same (None for other collectives; 0 when ring is never slower);
    ``algbw`` and ``busbw`` (B/s) of the best algorithm; ``bus_factor`` busbw / algbw.
    """

    collective: str
    size_bytes: float
    n_ranks: int
    ring_time: float
    tree_time: float | None
    best_algorithm: str
    best_time: float
    crossover: float | None
    algbw: float
    busbw: float
    bus_factor: float


@v.public
def operating_point(collective, size_bytes, n_ranks, link_bw, alpha) -> OperatingPoint:
    """Model numbers of ``collective`` for one message of ``size_bytes`` (see :class:`OperatingPoint`)."""
    op = comms._operation(collective)
    size = v.positive("size_bytes", size_bytes)
    n = v.gpu_count("n_ranks", n_ranks)
    link_bw = v.positive("link_bw", link_bw)
    alpha = v.non_negative("alpha", alpha)
    ring = float(_ring(op, size, n, link_bw, alpha))
    if op in TREE_COLLECTIVES:
        tree = float(comms.tree_allreduce_time(size, n, link_bw, alpha))
        best_name = comms.best_algorithm(size, n, link_bw, alpha)
        crossover = float(comms.crossover_size(n, link_bw, alpha))
    else:
        tree, best_name, crossover = None, "ring", None
    best = tree if best_name == "tree" else ring
    factor = float(comms.bus_factor(op, n))
    alg = float(comms.algbw(size, best)) if best > 0 else 0.0
    return OperatingPoint(op, size, n, ring, tree, best_name, best, crossover, alg, factor * alg, factor)


#: The rank-count chart's default span: a pair of GPUs to a hundred thousand.
RANKS_MIN = 2
RANKS_MAX = 100_000


@dataclass(frozen=True)
class RankSweep:
    """The model of one message of ``size_bytes`` over ``ranks`` (whole numbers, increasing).

    ``ring``, ``tree`` (None without a tree) and ``best`` in seconds, as :class:`CommsSweep`;
    ``ring_latency`` is the ring's latency term (ring steps x alpha) and ``ring_transfer`` the
    rest (the bytes over the link), so they add up to ``ring``; ``latency_from`` is the
    smallest rank count at which the latency term is at least the transfer term (None when it
    never is up to the last rank count).
    """

    collective: str
    size_bytes: float
    link_bw: float
    alpha: float
    ranks: np.ndarray
    ring: np.ndarray
    tree: np.ndarray | None
    best: np.ndarray
    ring_latency: np.ndarray
    ring_transfer: np.ndarray
    latency_from: int | None


@functools.lru_cache(maxsize=64)
def _rank_grid(n_min: int, n_max: int, points_per_decade: int) -> np.ndarray:
    """The rank counts of :func:`rank_sweep`, read-only (kept: a message size edit keeps the
    rank span, and the grid is a few tenths of a millisecond of small numpy calls)."""
    grid = distinct(np.round(size_grid(float(n_min), float(n_max), points_per_decade)))
    grid[0], grid[-1] = n_min, n_max
    grid.flags.writeable = False
    return grid


@functools.lru_cache(maxsize=64)
def _bracket_grid(top: int) -> np.ndarray:
    """Rank counts from RANKS_MIN to ``top`` on a geometric grid, to bracket where latency
    takes over (the same grid for every message size)."""
    grid = distinct(np.rint(np.geomspace(RANKS_MIN, top, 65)).astype(np.int64))
    grid.flags.writeable = False
    return grid


@v.public
def latency_takes_over(collective, size_bytes, link_bw, alpha, n_max: int = RANKS_MAX) -> int | None:
    """The smallest rank count (2 .. ``n_max``) at which the ring's latency term (ring steps x
    alpha) of one ``size_bytes`` message is at least its transfer term, None when it never is.
    For all-reduce that is n >= S / (alpha B); found from :func:`comms.ring_time` itself (its
    latency and transfer parts grow monotonically with n), so no formula is written twice."""
    op = comms._operation(collective)
    size = v.non_negative("size_bytes", size_bytes)
    bw = v.positive("link_bw", link_bw)
    a = v.non_negative("alpha", alpha)
    top = v.integer("n_max", n_max, RANKS_MIN, v.MAX_GPUS)

    def latency_wins(n):  # n: one rank count or an array of them
        return np.asarray(_ring(op, 0.0, n, bw, a), dtype=float) >= np.asarray(_ring(op, size, n, bw, 0.0), dtype=float)

    # Both parts grow with n, so the answer is the first n where latency wins: bracketed on a
    # geometric grid of rank counts, then found among the integers of that bracket, two
    # vectorised evaluations (a bisection took 34 validated scalar calls, 2 ms per redraw).
    grid = _bracket_grid(top)
    wins = latency_wins(grid)
    if not wins[-1]:
        return None
    first = int(np.argmax(wins))
    if first == 0:
        return int(grid[0])
    loses, wins_at = int(grid[first - 1]), int(grid[first])
    while wins_at - loses > 4096:  # millions of ranks: narrow the bracket before listing it
        points = distinct(np.linspace(loses, wins_at, 65).astype(np.int64))
        i = int(np.argmax(latency_wins(points)))  # points[0] loses, points[-1] wins
        loses, wins_at = int(points[i - 1]), int(points[i])
    ns = np.arange(loses + 1, wins_at + 1, dtype=np.int64)
    return int(ns[int(np.argmax(latency_wins(ns)))])


@v.public
def rank_sweep(collective, size_bytes, link_bw, alpha, n_min: int = RANKS_MIN, n_max: int = RANKS_MAX,
               points_per_decade: int = 24) -> RankSweep:
    """The model of one message against rank count, ``n_min`` .. ``n_max`` (see :class:`RankSweep`)."""
    op = comms._operation(collective)
    size = v.non_negative("size_bytes", size_bytes)
    bw = v.positive("link_bw", link_bw)
    a = v.non_negative("alpha", alpha)
    lo = v.integer("n_min", n_min, 1, v.MAX_GPUS)
    hi = v.integer("n_max", n_max, 2, v.MAX_GPUS)
    if not lo < hi:
        raise InputError("n_max", f"must be > n_min ({lo}), got {hi}")
    per_decade = v.integer("points_per_decade", points_per_decade, 1, 1000)
    ranks = _rank_grid(lo, hi, per_decade).copy()
    ring = np.asarray(_ring(op, size, ranks, bw, a), dtype=float)
    latency = np.asarray(_ring(op, 0.0, ranks, bw, a), dtype=float)
    tree = comms.tree_allreduce_time(size, ranks, bw, a) if op in TREE_COLLECTIVES else None
    return RankSweep(
        collective=op, size_bytes=size, link_bw=bw, alpha=a, ranks=ranks, ring=ring, tree=tree,
        best=ring if tree is None else np.minimum(ring, tree), ring_latency=latency,
        ring_transfer=ring - latency, latency_from=latency_takes_over(op, size, bw, a, hi),
    )


@dataclass(frozen=True)
class BandwidthSweep:
    """The model of one message over ``n_ranks`` against the link bandwidth ``bandwidths``
    (bytes/s, increasing): ``ring``, ``tree`` (None without a tree) and ``best`` in seconds."""

    collective: str
    size_bytes: float
    n_ranks: int
    alpha: float
    bandwidths: np.ndarray
    ring: np.ndarray
    tree: np.ndarray | None
    best: np.ndarray


@v.public
def bandwidth_sweep(collective, size_bytes, n_ranks, alpha, bw_min=1e9, bw_max=2e12,
                    points_per_decade: int = 24) -> BandwidthSweep:
    """The model of one message against the link bandwidth, ``bw_min`` .. ``bw_max`` bytes/s."""
    op = comms._operation(collective)
    size = v.non_negative("size_bytes", size_bytes)
    n = v.gpu_count("n_ranks", n_ranks)
    a = v.non_negative("alpha", alpha)
    lo = v.bounded("bw_min", bw_min, 1.0, v.MAX_BANDWIDTH, "B/s")
    hi = v.bounded("bw_max", bw_max, 1.0, v.MAX_BANDWIDTH, "B/s")
    if not lo < hi:
        raise InputError("bw_max", f"must be > bw_min ({lo:g}), got {hi:g}")
    bandwidths = size_grid(lo, hi, v.integer("points_per_decade", points_per_decade, 1, 1000))
    ring = np.asarray(_ring(op, size, n, bandwidths, a), dtype=float)
    tree = comms.tree_allreduce_time(size, n, bandwidths, a) if op in TREE_COLLECTIVES else None
    return BandwidthSweep(op, size, n, a, bandwidths, ring, tree, ring if tree is None else np.minimum(ring, tree))


@v.public
def ring_parameters_from_fit(fit: comms.FitResult, collective, n_ranks) -> tuple[float, float]:
    """(link_bw B/s, alpha s per step) of the ring model that reproduces a fitted line
    t = alpha_fit + S / B_fit: link_bw = B_fit x bus_factor, alpha = alpha_fit / ring_steps.
    A negative fitted alpha (poor data) gives alpha 0."""
    if not isinstance(fit, comms.FitResult):
        raise InputError("fit", f"must be a FitResult, got {type(fit).__name__}")
    steps = ring_steps(collective, n_ranks)
    if steps == 0:
        raise InputError("n_ranks", "must be >= 2 to have ring steps")
    link_bw = fit.bandwidth * float(comms.bus_factor(collective, n_ranks))
    return link_bw, max(fit.alpha, 0.0) / steps


@dataclass(frozen=True)
class MeasuredLog:
    """A parsed nccl-tests log, ready to draw next to the model.

    ``result``: every parsed row; ``collective``: the log's collective (or the one given);
    ``n_ranks``: ranks listed in the log (None when it lists none); ``sizes``, ``times``,
    ``busbw``: the out-of-place measurements of non-empty messages (bytes, s, B/s);
    ``fit``: t = alpha + S / B fitted to them (relative errors), None when it cannot be
    fitted, with the reason in ``fit_error``; ``printed_avg_busbw`` and
    ``computed_avg_busbw`` in B/s (the printed one None when the log has none).
    """

    result: NcclResult
    collective: str | None
    n_ranks: int | None
    sizes: np.ndarray
    times: np.ndarray
    busbw: np.ndarray
    fit: comms.FitResult | None
    fit_error: str
    printed_avg_busbw: float | None
    computed_avg_busbw: float

    @property
    def row_count(self) -> int:
        return len(self.result.rows)

    @v.public
    def fit_curve(self, sizes) -> tuple[np.ndarray, np.ndarray]:
        """(sizes, fitted times) for the sizes where the fitted time is > 0 (empty without a fit)."""
        sizes, _ = v.array("sizes", sizes, non_negative_only=True)
        if self.fit is None:
            return np.array([]), np.array([])
        times = np.asarray(self.fit.predict(sizes), dtype=float)
        keep = times > 0
        return sizes[keep], times[keep]

    @v.public
    def time_at(self, size_bytes) -> float | None:
        """The measured out-of-place time in seconds at ``size_bytes``, interpolated on log-log
        axes between the nearest measured sizes (a measured size gives its own time); None
        outside the measured range."""
        size = v.positive("size_bytes", size_bytes)
        if not len(self.sizes):
            return None
        order = np.argsort(self.sizes, kind="stable")
        xs, ys = self.sizes[order], self.times[order]
        if not xs[0] <= size <= xs[-1]:
            return None
        hit = np.flatnonzero(xs == size)
        if hit.size:
            return float(ys[hit[0]])
        return float(np.exp(np.interp(np.log(size), np.log(xs), np.log(ys))))

    @v.public
    def fitted_ring_parameters(self, collective=None, n_ranks=None) -> tuple[float, float] | None:
        """(link_bw, alpha per step) of the ring model matching the fit, or None without a fit
        or a rank count (``collective`` and ``n_ranks`` default to the log's)."""
        collective = self.collective if collective is None else comms._operation(collective)
        n = self.n_ranks if n_ranks is None else v.gpu_count("n_ranks", n_ranks)
        if self.fit is None or collective is None or n is None or n < 2:
            return None
        return ring_parameters_from_fit(self.fit, collective, n)


@v.public
def analyze_log(text: str, collective=None) -> MeasuredLog:
    """Parse an nccl-tests log (``InputError`` when it has no result rows) and fit it.
    ``collective`` is used when the log does not name its own."""
    result = parse_nccl_tests(text)
    name = result.collective or (comms._operation(collective) if collective else None)
    sizes, times = rows_to_points(result, "out")
    busbw = np.array([row.out_of_place.busbw for row in result.rows if row.size > 0], dtype=float)
    fit, fit_error = None, ""
    try:
        fit = comms.fit_alpha_beta(sizes, times, "relative")
    except InputError as exc:
        fit_error = str(exc)
    return MeasuredLog(
        result=result,
        collective=name,
        n_ranks=result.n_ranks,
        sizes=sizes,
        times=times,
        busbw=busbw,
        fit=fit,
        fit_error=fit_error,
        printed_avg_busbw=result.avg_busbw,
        computed_avg_busbw=result.computed_avg_busbw(),
    )
