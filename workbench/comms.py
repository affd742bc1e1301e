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
from workbench._arrays import distinct
from workbench._validate import InputError
from workbench.collectives import Collective, parse_collective
from workbench.units import format_quantity

__all__ = [
    "ALGORITHMS",
    "FitResult",
    "NcclResult",  # noqa: F822 - resolved by __getattr__
    "algbw",
    "best_algorithm",
    "bus_factor",
    "busbw",
    "crossover_size",
    "fit_alpha_beta",
    "hierarchical_link",
    "parse_nccl_runs",  # noqa: F822
    "parse_nccl_tests",  # noqa: F822
    "ring_allreduce_time",
    "ring_time",
    "rows_to_points",  # noqa: F822
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
    if size.ndim + n.ndim + bw.ndim + a.ndim == 0:  # four numbers: nothing to broadcast
        return size, n, bw, a, True
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


@v.public
def hierarchical_link(ranks_per_node, n_ranks, intra_bw, intra_alpha, inter_bw, inter_alpha) -> tuple[float, float]:
    """(bytes/s, alpha) of the ring a collective over ``n_ranks`` runs on when
    ``ranks_per_node`` of them share a node: NVLink (or PCIe) inside the node, NICs between.

    Inside one node (``ranks_per_node >= n_ranks``): the intra-node link. Across nodes with
    one rank per node: each GPU's own NIC. Otherwise (NCCL rings, one NIC per GPU) every
    rank's traffic crosses the NICs of its node, ``ranks_per_node`` of them in parallel, so
    the ring runs at min(intra_bw, ranks_per_node x inter_bw) with the network's latency
    (8 x 24 GB/s = 192 GB/s busbw measured on DGX A100, NVIDIA/nccl issue 1576).
    Bandwidths in bytes/s per GPU and direction, alphas in seconds per step.
    """
    k = v.gpu_count("ranks_per_node", ranks_per_node)
    n = v.gpu_count("n_ranks", n_ranks)
    intra = v.positive("intra_bw", intra_bw)
    intra_a = v.non_negative("intra_alpha", intra_alpha)
    inter = v.positive("inter_bw", inter_bw)
    inter_a = v.non_negative("inter_alpha", inter_alpha)
    if k >= n:
        return intra, intra_a
    if k == 1:  # one rank per node: no intra-node hop at all
        return inter, inter_a
    return min(intra, k * inter), inter_a


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


#: What :func:`fit_alpha_beta` needs on each side of the size S½ = alpha x B where the
#: latency and the transfer term are equal: at least this many sizes below it (for alpha to be
#: measured rather than extrapolated) and above it (for the bandwidth).
MIN_POINTS_PER_REGION = 3
#: Relative residuals (RMS of (t - fit) / t) up to which a fit is "good", then "fair"; above
#: the second it is "poor". nccl-tests sweeps on real clusters land near 0.15-0.3: NCCL
#: changes protocol (LL, LL128, Simple) and channel count with size, which one alpha and one
#: bandwidth cannot follow exactly.
GOOD_FIT_RMS = 0.10
FAIR_FIT_RMS = 0.35

#: Verdicts of a fit (:attr:`FitResult.verdict`).
FIT_GOOD = "good"
FIT_FAIR = "fair"
FIT_POOR = "poor"
FIT_NO_LATENCY = "latency not measured"
FIT_NO_BANDWIDTH = "bandwidth not measured"
FIT_TOO_FEW = "too few sizes"
FIT_VERDICTS = (FIT_GOOD, FIT_FAIR, FIT_POOR, FIT_NO_LATENCY, FIT_NO_BANDWIDTH, FIT_TOO_FEW)


@dataclass(frozen=True)
class FitResult:
    """Least-squares fit of t = alpha + S / bandwidth, and how far to trust it.

    ``alpha`` in seconds (may come out slightly negative when the data are poor),
    ``bandwidth`` in bytes/s (the algorithm bandwidth the sizes imply; multiply by
    ``bus_factor`` for bus bandwidth), ``r2`` the coefficient of determination (on plain
    times, so dominated by the largest messages), ``n_points`` the number of points used.

    Quality: ``rel_rms`` and ``max_rel_residual`` are the RMS and the largest magnitude of
    the relative residuals (t - fit) / t; ``half_size`` is S½ = alpha x bandwidth (bytes),
    the size at which latency and transfer take equally long (0 when alpha <= 0);
    ``n_latency`` and ``n_bandwidth`` count the sizes below and above it. ``alpha_measured``
    is true only with at least ``MIN_POINTS_PER_REGION`` latency-dominated sizes (and alpha >
    0), ``bandwidth_measured`` with as many bandwidth-dominated ones: otherwise that parameter
    is an extrapolation of the line, not a measurement. ``verdict`` is one of
    :data:`FIT_VERDICTS` and ``reason`` says it in a sentence.
    """

    alpha: float
    bandwidth: float
    r2: float
    n_points: int
    rel_rms: float = 0.0
    max_rel_residual: float = 0.0
    half_size: float = 0.0
    n_latency: int = 0
    n_bandwidth: int = 0
    alpha_measured: bool = True
    bandwidth_measured: bool = True
    verdict: str = FIT_GOOD
    reason: str = ""

    @property
    def usable(self) -> bool:
        """Both parameters measured and the line close enough to the points (good or fair)."""
        return self.alpha_measured and self.bandwidth_measured and self.verdict in (FIT_GOOD, FIT_FAIR)

    @v.public
    def predict(self, size_bytes):
        """Fitted time in seconds for ``size_bytes`` (scalar or array)."""
        size, scalar = v.array("size_bytes", size_bytes, non_negative_only=True)
        return v.scalar_or_array(self.alpha + size / self.bandwidth, scalar)


FIT_WEIGHTINGS = ("absolute", "relative")


def _bytes_text(value: float) -> str:
    return format_quantity(value, "B", binary=True)


def _seconds_text(value: float) -> str:
    return format_quantity(value, "s")


def _assess(alpha: float, bandwidth: float, s: np.ndarray, t: np.ndarray, minimum: int):
    """(rel_rms, max_rel, half_size, n_latency, n_bandwidth, alpha_ok, bandwidth_ok, verdict,
    reason) of the line alpha + S / bandwidth through the points (s, t)."""
    relative = (t - (alpha + s / bandwidth)) / t
    rel_rms = float(np.sqrt(np.mean(relative**2)))
    max_rel = float(np.max(np.abs(relative)))
    half = alpha * bandwidth if alpha > 0 else 0.0
    n_lat = int(np.count_nonzero(s < half))
    n_bw = int(np.count_nonzero(s > half))
    alpha_ok = alpha > 0 and n_lat >= minimum
    bandwidth_ok = n_bw >= minimum
    total = s.size
    span = f"{_bytes_text(float(s.min()))} to {_bytes_text(float(s.max()))}"
    where = (f"S½ = α·B = {_bytes_text(half)}, where latency and transfer take equally long"
             if half > 0 else "the fitted α is not positive")
    if not alpha_ok and not bandwidth_ok:
        verdict = FIT_TOO_FEW
        reason = (f"too few sizes on either side of {where}: {n_lat} below and {n_bw} above "
                  f"(at least {minimum} each are needed); neither α nor B is measured")
    elif not alpha_ok:
        verdict = FIT_NO_LATENCY
        shown = f"α = {_seconds_text(alpha)}" if alpha > 0 else "α"
        reason = (f"{n_lat} of the {total} sizes ({span}) lie below {where} (at least {minimum} are "
                  f"needed): {shown} is an extrapolation of the line, not a measured latency; "
                  "the bandwidth is measured")
    elif not bandwidth_ok:
        verdict = FIT_NO_BANDWIDTH
        reason = (f"{n_bw} of the {total} sizes ({span}) lie above {where} (at least {minimum} are "
                  "needed): the bandwidth is an extrapolation, not measured; the latency is measured")
    else:
        verdict = FIT_GOOD if rel_rms <= GOOD_FIT_RMS else FIT_FAIR if rel_rms <= FAIR_FIT_RMS else FIT_POOR
        reason = (f"the line misses the {total} points by {rel_rms:.0%} RMS, at most {max_rel:.0%} "
                  f"({n_lat} latency-dominated sizes, {n_bw} bandwidth-dominated)")
        if verdict != FIT_GOOD:
            reason += ("; NCCL changes protocol and channel count with the size, which one α and one B "
                       "cannot follow")
    return rel_rms, max_rel, half, n_lat, n_bw, alpha_ok, bandwidth_ok, verdict, reason


@v.public
def fit_alpha_beta(sizes, times, weighting: str = "absolute") -> FitResult:
    """Fit t = alpha + S / B to measured (size bytes, time seconds) points by least squares.

    ``weighting="absolute"`` minimises the squared errors in seconds (dominated by the
    largest messages); ``"relative"`` minimises squared relative errors, which suits sweeps
    over many decades of size (nccl-tests' 8 B .. 8 GiB) and gives a more faithful alpha.
    ``r2`` is always computed on the plain (unweighted) times.

    The result says how far to trust it (:class:`FitResult`): alpha counts as measured only
    with at least :data:`MIN_POINTS_PER_REGION` sizes below S½ = alpha x B, the bandwidth only
    with as many above. Four sizes from 128 MiB to 1 GiB fit a line whose alpha of half a millisecond
    no point has measured: the verdict says so instead of reporting it as a latency.

    Needs at least two distinct sizes and times that grow with size; raises
    ``InputError`` otherwise.
    """
    s, _ = v.array("sizes", sizes, non_negative_only=True)
    t, _ = v.array("times", times, positive_only=True)
    weighting = v.choice("weighting", weighting, FIT_WEIGHTINGS)
    s, t = np.ravel(s), np.ravel(t)
    if s.shape != t.shape:
        raise InputError("times", f"must have one value per size ({s.size} sizes, {t.size} times)")
    if distinct(s).size < 2:
        raise InputError("sizes", "need at least two distinct sizes to fit alpha and bandwidth")
    # Scale sizes to ~1 so the normal equations stay well conditioned (8 B .. 8 GiB).
    scale = float(np.max(s))
    # relative: weights 1/t, scaled so the largest is 1 (the fit does not change, and times
    # near the smallest float no longer overflow the least-squares solver)
    w = np.ones_like(t) if weighting == "absolute" else np.min(t) / t
    design = np.column_stack([np.ones_like(s), s / scale]) * w[:, None]
    (alpha, slope), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    # The size term at the largest size must stand clear of rounding noise in the times.
    if not slope > 1e-12 * float(np.max(t)):
        raise InputError("times", "do not grow with the sizes: no finite bandwidth fits these points")
    predicted = alpha + slope * s / scale
    ss_res = float(np.sum((t - predicted) ** 2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    bandwidth = float(scale / slope)
    quality = _assess(float(alpha), bandwidth, s, t, MIN_POINTS_PER_REGION)
    return FitResult(float(alpha), bandwidth, r2, int(s.size), *quality)


#: The nccl-tests parser's names, kept here for notebooks written against ``workbench.comms``;
#: the parser (a score of regular expressions) is imported when one of them is first used.
_FROM_NCCL = ("NcclResult", "parse_nccl_runs", "parse_nccl_tests", "rows_to_points")


def __getattr__(name: str):
    if name in _FROM_NCCL:
        from workbench import nccl

        return getattr(nccl, name)
    raise AttributeError(f"module 'workbench.comms' has no attribute {name!r}")
