"""Cost of collective communication: alpha-beta models and nccl-tests bandwidth conventions.

Every time is in seconds, every size in bytes, every bandwidth in bytes/s, ``alpha`` is the
latency of one algorithm step in seconds. ``size_bytes`` means what nccl-tests prints in its
"size" column: the whole array (for all-gather, reduce-scatter and all-to-all that is the
per-rank count x n x element size).

With a single rank every collective is a local copy (NCCL does no communication), so the
model times are 0 for ``n_ranks == 1``.

The time formulas broadcast over numpy arrays: ``size_bytes`` and ``n_ranks`` (and the link
parameters) may be arrays; a scalar input gives a float back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench._validate import InputError
from workbench.collectives import Collective, parse_collective
from workbench.nccl import NcclResult, parse_nccl_runs, parse_nccl_tests, rows_to_points

__all__ = [
    "ALGORITHMS",
    "FitResult",
    "NcclResult",
    "algbw",
    "best_algorithm",
    "bus_factor",
    "busbw",
    "crossover_size",
    "fit_alpha_beta",
    "parse_nccl_runs",
    "parse_nccl_tests",
    "ring_allreduce_time",
    "ring_time",
    "rows_to_points",
    "tree_allreduce_time",
]

ALGORITHMS = ("ring", "tree")

# nccl-tests operations that are not collectives of the animator but have a bus factor.
EXTRA_OPERATIONS = ("sendrecv", "gather")


# --- input checks --------------------------------------------------------------------------


def _ranks(name: str, value: object, minimum: int = 1) -> tuple[np.ndarray, bool]:
    """Whole rank counts in [minimum, MAX_GPUS] as a float array, and whether it was a scalar."""
    return v.whole_numbers(name, value, minimum, v.MAX_GPUS)


def _operation(collective: object) -> str:
    """Canonical operation name: a Collective value, or "sendrecv" / "gather"."""
    if isinstance(collective, str):
        key = collective.strip().lower().removesuffix("_perf").replace("-", "_")
        if key.replace("_", "") in EXTRA_OPERATIONS:
            return key.replace("_", "")
    try:
        return parse_collective(collective).value
    except InputError:
        names = ", ".join([c.value for c in Collective] + list(EXTRA_OPERATIONS))
        raise InputError("collective", f"must be one of {names}; got {collective!r}") from None


# --- alpha-beta time models ----------------------------------------------------------------


def _link_inputs(size_bytes, n_ranks, link_bw, alpha):
    size, s_scalar = v.array("size_bytes", size_bytes, non_negative_only=True)
    n, n_scalar = _ranks("n_ranks", n_ranks)
    bw, b_scalar = v.array("link_bw", link_bw, positive_only=True)
    a, a_scalar = v.array("alpha", alpha, non_negative_only=True)
    try:
        np.broadcast_shapes(size.shape, n.shape, bw.shape, a.shape)
    except ValueError:
        raise InputError("size_bytes", "the shapes of size_bytes, n_ranks, link_bw and alpha "
                                       "do not broadcast together") from None
    return size, n, bw, a, s_scalar and n_scalar and b_scalar and a_scalar


@v.public
def ring_allreduce_time(size_bytes, n_ranks, link_bw, alpha):
    """Ring all-reduce time in seconds: 2(n-1)/n * S/B + 2(n-1) * alpha.

    ``size_bytes`` S (bytes), ``n_ranks`` n (whole, >= 1; 1 gives 0), ``link_bw`` B
    (bytes/s, per direction of one ring link), ``alpha`` (seconds per step).
    """
    size, n, bw, a, scalar = _link_inputs(size_bytes, n_ranks, link_bw, alpha)
    t = 2.0 * (n - 1.0) / n * size / bw + 2.0 * (n - 1.0) * a
    return v.scalar_or_array(t, scalar)


def _log2_ceil(n: np.ndarray) -> np.ndarray:
    # Exact for whole n: frexp avoids log2 rounding (log2(2**k) could land just above k).
    mantissa, exponent = np.frexp(n)
    return np.where(mantissa == 0.5, exponent - 1, exponent).astype(float)


@v.public
def tree_allreduce_time(size_bytes, n_ranks, link_bw, alpha):
    """Double-binary-tree all-reduce time in seconds: 2 * S/B + 2 * ceil(log2 n) * alpha.

    A pipelined reduce up the tree then broadcast down: each sends the whole message once
    (S/B each) and pays one latency per tree level. ``n_ranks`` 1 gives 0.
    """
    size, n, bw, a, scalar = _link_inputs(size_bytes, n_ranks, link_bw, alpha)
    t = 2.0 * size / bw + 2.0 * _log2_ceil(n) * a
    t = np.where(n > 1, t, 0.0)
    return v.scalar_or_array(t, scalar)


@v.public
def ring_time(collective, size_bytes, n_ranks, link_bw, alpha):
    """Ring-algorithm time in seconds of ``collective`` for ``size_bytes`` as nccl-tests prints it.

    - all_reduce: 2(n-1)/n * S/B + 2(n-1) alpha
    - reduce_scatter, all_gather, all_to_all, scatter, gather: (n-1)/n * S/B + (n-1) alpha
    - broadcast, reduce (pipelined along the ring in many small chunks): S/B + (n-1) alpha
    - sendrecv (one hop): S/B + alpha
    ``n_ranks`` 1 gives 0.
    """
    op = _operation(collective)
    size, n, bw, a, scalar = _link_inputs(size_bytes, n_ranks, link_bw, alpha)
    steps = n - 1.0
    if op == Collective.ALL_REDUCE.value:
        t = 2.0 * steps / n * size / bw + 2.0 * steps * a
    elif op in (Collective.BROADCAST.value, Collective.REDUCE.value):
        t = size / bw + steps * a
    elif op == "sendrecv":
        t = size / bw + a
    else:
        t = steps / n * size / bw + steps * a
    t = np.where(n > 1, t, 0.0)
    return v.scalar_or_array(t, scalar)


@v.public
def crossover_size(n_ranks, link_bw, alpha):
    """Message size in bytes at which ring and tree all-reduce take the same time.

    Tree pays more bandwidth (2 S/B against 2(n-1)/n S/B) and less latency
    (ceil(log2 n) against n-1 steps), so below this size tree is faster and above it ring is:
    S* = alpha * B * n * (n - 1 - ceil(log2 n)) bytes. Since ceil(log2 n) <= n - 1, the
    answer is always finite and >= 0 (never None): it is 0 when tree never wins, i.e. for
    n <= 3 (equal latency terms) or alpha = 0.
    """
    n, n_scalar = _ranks("n_ranks", n_ranks)
    bw, b_scalar = v.array("link_bw", link_bw, positive_only=True)
    a, a_scalar = v.array("alpha", alpha, non_negative_only=True)
    s = a * bw * n * (n - 1.0 - _log2_ceil(n))
    return v.scalar_or_array(np.maximum(s, 0.0), n_scalar and b_scalar and a_scalar)


@v.public
def best_algorithm(size_bytes, n_ranks, link_bw, alpha) -> str:
    """"ring" or "tree": the faster all-reduce algorithm for one message size (ties: "ring").

    Scalar inputs only; compare ``crossover_size`` for a whole range at once.
    """
    size = v.non_negative("size_bytes", size_bytes)
    n = v.gpu_count("n_ranks", n_ranks)
    bw = v.positive("link_bw", link_bw)
    a = v.non_negative("alpha", alpha)
    ring = ring_allreduce_time(size, n, bw, a)
    tree = tree_allreduce_time(size, n, bw, a)
    return "tree" if tree < ring else "ring"


# --- nccl-tests bandwidth conventions ------------------------------------------------------


@v.public
def bus_factor(collective, n_ranks):
    """The nccl-tests factor turning algorithm bandwidth into bus bandwidth.

    all_reduce 2(n-1)/n; reduce_scatter, all_gather, all_to_all, scatter, gather (n-1)/n;
    broadcast, reduce, sendrecv 1. ``collective`` is a :class:`Collective` or a name
    (nccl-tests spellings such as "alltoall" and "sendrecv" included); ``n_ranks`` the
    total rank count (whole, >= 1), scalar or array.
    """
    op = _operation(collective)
    n, scalar = _ranks("n_ranks", n_ranks)
    if op == Collective.ALL_REDUCE.value:
        f = 2.0 * (n - 1.0) / n
    elif op in (Collective.BROADCAST.value, Collective.REDUCE.value, "sendrecv"):
        f = np.ones_like(n)
    else:
        f = (n - 1.0) / n
    return v.scalar_or_array(f, scalar)


@v.public
def algbw(size_bytes, time_s):
    """Algorithm bandwidth in bytes/s: size (bytes) / time (seconds, > 0)."""
    size, s_scalar = v.array("size_bytes", size_bytes, non_negative_only=True)
    t, t_scalar = v.array("time_s", time_s, positive_only=True)
    return v.scalar_or_array(size / t, s_scalar and t_scalar)


@v.public
def busbw(collective, size_bytes, time_s, n_ranks):
    """Bus bandwidth in bytes/s as nccl-tests reports it: algbw x bus_factor."""
    return bus_factor(collective, n_ranks) * algbw(size_bytes, time_s)


# --- fitting measured times ----------------------------------------------------------------


@dataclass(frozen=True)
class FitResult:
    """Least-squares fit of t = alpha + S / bandwidth.

    ``alpha`` in seconds (may come out slightly negative when the data are poor),
    ``bandwidth`` in bytes/s (the algorithm bandwidth the sizes imply; multiply by
    ``bus_factor`` for bus bandwidth), ``r2`` the coefficient of determination,
    ``n_points`` the number of points used.
    """

    alpha: float
    bandwidth: float
    r2: float
    n_points: int

    @v.public
    def predict(self, size_bytes):
        """Fitted time in seconds for ``size_bytes`` (scalar or array)."""
        size, scalar = v.array("size_bytes", size_bytes, non_negative_only=True)
        return v.scalar_or_array(self.alpha + size / self.bandwidth, scalar)


FIT_WEIGHTINGS = ("absolute", "relative")


@v.public
def fit_alpha_beta(sizes, times, weighting: str = "absolute") -> FitResult:
    """Fit t = alpha + S / B to measured (size bytes, time seconds) points by least squares.

    ``weighting="absolute"`` minimises the squared errors in seconds (dominated by the
    largest messages); ``"relative"`` minimises squared relative errors, which suits sweeps
    over many decades of size (nccl-tests' 8 B .. 8 GiB) and gives a more faithful alpha.
    ``r2`` is always computed on the plain (unweighted) times.

    Needs at least two distinct sizes and times that grow with size; raises
    ``InputError`` otherwise.
    """
    s, _ = v.array("sizes", sizes, non_negative_only=True)
    t, _ = v.array("times", times, positive_only=True)
    weighting = v.choice("weighting", weighting, FIT_WEIGHTINGS)
    s, t = np.ravel(s), np.ravel(t)
    if s.shape != t.shape:
        raise InputError("times", f"must have one value per size ({s.size} sizes, {t.size} times)")
    if np.unique(s).size < 2:
        raise InputError("sizes", "need at least two distinct sizes to fit alpha and bandwidth")
    # Scale sizes to ~1 so the normal equations stay well conditioned (8 B .. 8 GiB).
    scale = float(np.max(s))
    w = np.ones_like(t) if weighting == "absolute" else 1.0 / t
    design = np.column_stack([np.ones_like(s), s / scale]) * w[:, None]
    (alpha, slope), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    # The size term at the largest size must stand clear of rounding noise in the times.
    if not slope > 1e-12 * float(np.max(t)):
        raise InputError("times", "do not grow with size: no finite bandwidth fits these points")
    predicted = alpha + slope * s / scale
    ss_res = float(np.sum((t - predicted) ** 2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return FitResult(float(alpha), float(scale / slope), r2, int(s.size))
