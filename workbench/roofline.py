"""The roofline model: how fast a kernel can run given its arithmetic intensity.

A kernel doing F FLOPs while moving B bytes to and from device memory has arithmetic
intensity ``ai = F / B`` (FLOP/byte). On a device with peak compute ``P`` (FLOP/s) and
memory bandwidth ``W`` (bytes/s) it cannot run faster than ``min(P, ai * W)`` FLOP/s.
The two roofs meet at the ridge point ``P / W``: below it a kernel is memory-bound,
at or above it compute-bound.

All rates are SI base units: FLOP/s, bytes/s; intensities in FLOP/byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench.hardware import MAX_SPARSITY_FACTOR, PRECISION_LABELS, PRECISIONS, Hardware
from workbench.kernels import Kernel

MEMORY = "memory"
COMPUTE = "compute"

# -- checks on measured points ---------------------------------------------------------
#: How far above its roof a measured point may sit before it is flagged (0.05: 5 %): boost
#: clocks above the nominal ones, rounded counts and timer resolution move a real point a
#: little; a time that belongs to another kernel moves it by multiples.
ABOVE_ROOF_TOLERANCE = 0.05

#: What a kernel above its roof is told (the table, the hover tip and the results say it).
ABOVE_ROOF_ADVICE = ("above the roof: check the time (it may belong to another kernel) "
                     "or the FLOP/byte counts")

#: What a kernel whose FLOPs or bytes were edited under an unchanged time is told.
STALE_TIME_ADVICE = ("time possibly stale: it was entered with the old FLOP/byte counts; "
                     "enter the time measured for these counts, or clear it")

EXPLANATION = """\
The roofline: attainable FLOP/s = min(peak FLOP/s, arithmetic intensity x memory bandwidth).

Arithmetic intensity (AI) is the work a kernel does per byte it moves to or from device
memory (FLOP/byte). The sloped roof is the memory bandwidth: there, every extra byte of
reuse buys speed. The flat roof is the peak compute rate. They meet at the ridge point,
peak / bandwidth (about 295 FLOP/byte for an H100 SXM in dense BF16): kernels left of it
are memory-bound, kernels right of it compute-bound.

Under the memory roof (left of the ridge), move fewer bytes per FLOP:
  - fuse chains of elementwise ops (bias, activation, dropout, residual add, norms) into
    one kernel so intermediates stay in registers instead of round-tripping through HBM;
  - restructure attention to keep the S x S score matrix on chip (FlashAttention-style
    tiling): the same FLOPs with a fraction of the traffic;
  - use narrower data types (BF16/FP8 instead of FP32) where accuracy allows.

Under the compute roof (right of the ridge), the kernel is limited by the math units:
  - make sure the work runs on tensor cores at the precision you expect;
  - use bigger batches and tile shapes that keep every SM busy (avoid small, skinny
    matrix shapes and partial waves);
  - a point far below the flat roof is latency- or occupancy-bound, not compute-bound.

A measured point above its roof means the time or the counts are off: a time left over from
another kernel, FLOPs or bytes edited after the time was measured, data served from L2 rather
than device memory (the L2 roof, where the preset gives one, shows how far that goes), or the
wrong precision's peak. A point more than 5% above its roof is flagged.
"""


# -- the model ---------------------------------------------------------------------------
@v.public
def ridge_point(peak_flops: float, mem_bw: float) -> float:
    """Intensity (FLOP/byte) where the memory roof meets the compute roof: peak / bandwidth."""
    peak = v.positive("peak_flops", peak_flops)
    bw = v.positive("mem_bw", mem_bw)
    return peak / bw


def _attainable(ai: np.ndarray, peak: np.ndarray, bw: np.ndarray) -> np.ndarray:
    # Decide the side by comparing with the ridge, so the ridge itself lands exactly on the
    # peak, and clip so rounding in ai * bw can never poke above it.
    with np.errstate(over="ignore"):
        sloped = ai * bw
    return np.minimum(peak, np.where(ai >= peak / bw, peak, sloped))


@v.public
def attainable(ai, peak_flops, mem_bw):
    """Attainable FLOP/s = min(peak_flops, ai * mem_bw).

    ``ai`` in FLOP/byte (>= 0), ``peak_flops`` in FLOP/s, ``mem_bw`` in bytes/s. Any of them
    may be a numpy array (they broadcast); scalar inputs give a float.
    """
    ai_arr, ai_scalar = v.array("ai", ai, non_negative_only=True)
    peak, peak_scalar = v.array("peak_flops", peak_flops, positive_only=True)
    bw, bw_scalar = v.array("mem_bw", mem_bw, positive_only=True)
    try:
        result = _attainable(ai_arr, peak, bw)
    except ValueError:
        raise v.InputError("ai", f"shape {ai_arr.shape} does not broadcast with peak_flops and mem_bw") from None
    return v.scalar_or_array(result, ai_scalar and peak_scalar and bw_scalar)


@v.public
def bound(ai, peak_flops, mem_bw):
    """"memory" below the ridge point, "compute" at or above it.

    ``ai`` (FLOP/byte) may be an array (then an array of labels); the rates are scalars.
    """
    ai_arr, ai_scalar = v.array("ai", ai, non_negative_only=True)
    ridge = ridge_point(peak_flops, mem_bw)
    labels = np.where(ai_arr >= ridge, COMPUTE, MEMORY)
    return str(labels) if ai_scalar else labels


# -- roofs to draw -----------------------------------------------------------------------
@dataclass(frozen=True)
class Roof:
    """One line of a roofline chart.

    ``kind`` "compute": a flat roof at ``peak_flops`` (FLOP/s), starting where the device-memory
    roof of bandwidth ``mem_bw`` (bytes/s) meets it. ``kind`` "memory" (device memory) or "l2"
    (a cache level: L2 or another, named in ``label``): the sloped roof ``ai * mem_bw``, rising
    until it meets ``peak_flops``.
    """

    label: str
    peak_flops: float  # FLOP/s
    mem_bw: float  # bytes/s
    kind: str  # "compute", "memory" or "l2"
    precision: str
    sparse: bool = False  # True only when the 2:4 sparse rate was applied

    def __post_init__(self) -> None:
        v.text("label", self.label)
        # a device's figures (workbench.hardware's bounds): the ridge peak / bandwidth stays finite
        object.__setattr__(self, "peak_flops", v.bounded("peak_flops", self.peak_flops, 1.0,
                                                         v.MAX_FLOPS * MAX_SPARSITY_FACTOR, "FLOP/s"))
        object.__setattr__(self, "mem_bw", v.bounded("mem_bw", self.mem_bw, 1.0, v.MAX_BANDWIDTH, "B/s"))
        v.choice("kind", self.kind, ("compute", "memory", "l2"))
        v.choice("precision", self.precision, PRECISIONS)
        v.flag("sparse", self.sparse)

    @property
    def ridge(self) -> float:
        """Intensity (FLOP/byte) where this roof's two lines meet."""
        return self.peak_flops / self.mem_bw

    @v.public
    def segment(self, ai_min: float, ai_max: float) -> tuple[np.ndarray, np.ndarray]:
        """The two end points (ai in FLOP/byte, FLOP/s) of this roof within [ai_min, ai_max].

        Empty arrays when the roof lies wholly outside the range.
        """
        lo, hi = _ai_range(ai_min, ai_max)
        if self.kind == "compute":
            start, end = max(lo, self.ridge), hi
        else:
            start, end = lo, min(hi, self.ridge)
        if start > end:
            return np.empty(0), np.empty(0)
        x = np.array([start, end])
        return x, _attainable(x, np.float64(self.peak_flops), np.float64(self.mem_bw))


def _ai_range(ai_min: object, ai_max: object) -> tuple[float, float]:
    lo = v.positive("ai_min", ai_min)
    hi = v.positive("ai_max", ai_max)
    if hi <= lo:
        raise v.InputError("ai_max", f"must be > ai_min ({lo:g}), got {hi:g}")
    return lo, hi


def _peak_label(precisions: Sequence[str], sparse: bool) -> str:
    names = "/".join(PRECISION_LABELS[p] for p in precisions)
    return f"{names} peak (2:4 sparse)" if sparse else f"{names} peak"


@v.public
def ceilings(
    hardware: Hardware,
    precision: str,
    sparse: bool = False,
    extra_precisions: bool = False,
    include_l2: bool = False,
) -> tuple[Roof, ...]:
    """The roofs to draw for ``hardware`` at ``precision``.

    Always: the compute roof for ``precision`` (the sparse rate only if ``sparse`` and the
    precision supports it) and the device-memory roof. ``extra_precisions`` adds one flat
    roof per other precision the device has (same sparsity setting; precisions with equal
    peaks share one roof). ``include_l2`` adds a sloped roof (kind "l2") for every cache level
    the device lists besides device memory (L2, or another cache such as AMD's Infinity Cache),
    fastest first, each labelled with its level's name.
    """
    if not isinstance(hardware, Hardware):
        raise v.InputError("hardware", f"must be a Hardware, got {type(hardware).__name__}")
    v.choice("precision", precision, PRECISIONS)
    sparse = v.flag("sparse", sparse)
    extra_precisions = v.flag("extra_precisions", extra_precisions)
    include_l2 = v.flag("include_l2", include_l2)

    main_rate = hardware.rate(precision)  # raises InputError("precision") if the device lacks it
    main_sparse = sparse and main_rate.sparsity_factor is not None
    main_peak = main_rate.flops(sparse)
    device = hardware.device_memory

    # Precisions sharing a peak are drawn as one roof ("BF16/FP16 peak").
    groups: dict[float, list[str]] = {main_peak: [precision]}
    if extra_precisions:
        for p in hardware.precisions:
            if p != precision:
                groups.setdefault(hardware.peak_flops(p, sparse), []).append(p)

    roofs = [
        Roof(_peak_label(groups[main_peak], main_sparse), main_peak, device.bandwidth, "compute", precision, main_sparse),
        Roof(f"{device.technology or device.name} bandwidth", main_peak, device.bandwidth, "memory", precision, main_sparse),
    ]
    for peak in sorted((p for p in groups if p != main_peak), reverse=True):
        names = groups[peak]
        p_sparse = sparse and hardware.supports_sparsity(names[0])
        roofs.append(Roof(_peak_label(names, p_sparse), peak, device.bandwidth, "compute", names[0], p_sparse))
    if include_l2:
        for level in hardware.cache_levels:
            roofs.append(Roof(f"{level.name} bandwidth", main_peak, level.bandwidth, "l2", precision, main_sparse))
    return tuple(roofs)


@v.public
def roof_curve(peak_flops: float, mem_bw: float, ai_min: float, ai_max: float, n: int = 256):
    """Samples of the roofline for plotting: ``(ai, attainable)`` arrays.

    ``n`` log-spaced intensities from ``ai_min`` to ``ai_max`` (FLOP/byte), plus the exact ridge
    point when it falls strictly inside the range, so the corner is drawn sharp.
    """
    peak = v.positive("peak_flops", peak_flops)
    bw = v.positive("mem_bw", mem_bw)
    lo, hi = _ai_range(ai_min, ai_max)
    count = v.integer("n", n, minimum=2, maximum=1_000_000)
    ai = np.geomspace(lo, hi, count)
    ai[0], ai[-1] = lo, hi  # geomspace can miss the end points by an ulp
    ridge = peak / bw
    if lo < ridge < hi:
        i = int(np.searchsorted(ai, ridge))
        if ai[i] != ridge:
            ai = np.insert(ai, i, ridge)
    return ai, _attainable(ai, np.float64(peak), np.float64(bw))


# -- placing kernels under the roof ------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """Where one kernel sits on a roofline chart."""

    kernel: Kernel
    intensity: float  # FLOP/byte
    ceiling: float  # attainable FLOP/s at that intensity
    achieved: float  # FLOP/s: measured if the kernel has a time, else the ceiling itself
    fraction_of_roof: float  # achieved / ceiling (1.0 without a measured time)
    bound: str  # "memory" or "compute"
    measured: bool  # whether ``achieved`` comes from a measured time

    @property
    def above_roof(self) -> bool:
        """A measured rate more than ``ABOVE_ROOF_TOLERANCE`` above the roof (see Placements)."""
        return self.measured and self.fraction_of_roof > 1.0 + ABOVE_ROOF_TOLERANCE


@v.public
def place(kernel: Kernel, peak_flops: float, mem_bw: float) -> Placement:
    """Place one kernel under the roofline of ``peak_flops`` (FLOP/s) and ``mem_bw`` (bytes/s).

    Without a measured time the kernel "sits on the roof": achieved = ceiling.
    """
    if not isinstance(kernel, Kernel):
        raise v.InputError("kernel", f"must be a Kernel, got {type(kernel).__name__}")
    peak = v.positive("peak_flops", peak_flops)
    bw = v.positive("mem_bw", mem_bw)
    ai = kernel.intensity
    ceiling = float(_attainable(np.float64(ai), np.float64(peak), np.float64(bw)))
    measured = kernel.time_s is not None
    achieved = kernel.flops / kernel.time_s if measured else ceiling
    return Placement(
        kernel=kernel,
        intensity=ai,
        ceiling=ceiling,
        achieved=achieved,
        fraction_of_roof=achieved / ceiling,
        bound=COMPUTE if ai >= peak / bw else MEMORY,
        measured=measured,
    )


@dataclass(frozen=True, eq=False)
class Placements:
    """Many kernels placed at once: parallel numpy arrays, one entry per kernel."""

    names: tuple[str, ...]
    intensity: np.ndarray  # FLOP/byte
    ceiling: np.ndarray  # FLOP/s
    achieved: np.ndarray  # FLOP/s
    fraction_of_roof: np.ndarray
    compute_bound: np.ndarray  # bool; False means memory-bound
    measured: np.ndarray  # bool

    def __len__(self) -> int:
        return len(self.names)

    @property
    def bound(self) -> np.ndarray:
        """"memory" / "compute" per kernel."""
        return np.where(self.compute_bound, COMPUTE, MEMORY)

    def above_roof(self, tolerance: float = ABOVE_ROOF_TOLERANCE) -> np.ndarray:
        """Per kernel, True where a measured rate exceeds its attainable roof by more than
        ``tolerance`` (a fraction: 0.05 flags a point more than 5 % above its roof).

        Kernels without a measured time sit on their roof by construction: never flagged.
        """
        tol = v.in_range("tolerance", tolerance, 0.0, 10.0)
        with np.errstate(invalid="ignore"):
            return self.measured & (self.fraction_of_roof > 1.0 + tol)

    def roof_warnings(self, peak_flops: float, caches: Sequence[tuple[str, float]] = (),
                      tolerance: float = ABOVE_ROOF_TOLERANCE) -> tuple[str, ...]:
        """One text per kernel: "" for a plausible point, else ``ABOVE_ROOF_ADVICE``, how far
        above its roof it is, and what else the numbers say.

        ``peak_flops`` is the compute roof the kernels were placed under (FLOP/s): a point
        above it is faster than the device computes, so its time cannot be its own. ``caches``
        are the device's cache levels as (name, bytes/s): a point above the device-memory roof
        but under a cache's roof may be real, its bytes served from that cache.
        """
        flagged = self.above_roof(tolerance)
        peak = v.positive("peak_flops", peak_flops)
        if isinstance(caches, (str, bytes)) or not isinstance(caches, Iterable):
            raise v.InputError("caches", "must be a list of (name, bytes/s) pairs")
        levels = []
        for item in caches:
            if not isinstance(item, tuple) or len(item) != 2:
                raise v.InputError("caches", f"must be (name, bytes/s) pairs, got {item!r}")
            levels.append((v.text("caches", item[0]), v.positive("caches", item[1])))
        tol = float(tolerance)
        out = [""] * len(self)
        for i in np.flatnonzero(flagged):
            achieved = float(self.achieved[i])
            text = f"{ABOVE_ROOF_ADVICE} ({float(self.fraction_of_roof[i]):.0%} of its roof)"
            if achieved > peak * (1.0 + tol):
                text += "; it is faster than the peak compute rate itself, so the time cannot be this kernel's"
            else:
                ai = np.float64(self.intensity[i])
                under = [name for name, bw in levels
                         if achieved <= float(_attainable(ai, np.float64(peak), np.float64(bw))) * (1.0 + tol)]
                if under:
                    text += (f"; it is under the {under[-1]} roof, so its bytes may have come from "
                             f"{under[-1]} rather than device memory")
            out[i] = text
        return tuple(out)


@v.public
def place_many(kernels: Iterable[Kernel], peak_flops: float, mem_bw: float) -> Placements:
    """Place many kernels at once (vectorised; 10,000 kernels take milliseconds)."""
    if isinstance(kernels, (str, bytes, Kernel)) or not isinstance(kernels, Iterable):
        raise v.InputError("kernels", "must be a list of Kernel values")
    items = list(kernels)
    for i, k in enumerate(items):
        if not isinstance(k, Kernel):
            raise v.InputError("kernels", f"item {i} is a {type(k).__name__}, not a Kernel")
    peak = v.positive("peak_flops", peak_flops)
    bw = v.positive("mem_bw", mem_bw)
    count = len(items)
    flops = np.fromiter((k.flops for k in items), dtype=float, count=count)
    moved = np.fromiter((k.bytes for k in items), dtype=float, count=count)
    time_s = np.fromiter((np.nan if k.time_s is None else k.time_s for k in items), dtype=float, count=count)

    ai = flops / moved
    ceiling = _attainable(ai, np.float64(peak), np.float64(bw))
    measured = ~np.isnan(time_s)
    with np.errstate(invalid="ignore"):
        achieved = np.where(measured, flops / time_s, ceiling)
    return Placements(
        names=tuple(k.name for k in items),
        intensity=ai,
        ceiling=ceiling,
        achieved=achieved,
        fraction_of_roof=achieved / ceiling,
        compute_bound=ai >= peak / bw,
        measured=measured,
    )


# -- checks on measured points ---------------------------------------------------------
@v.public
def time_may_be_stale(old: Kernel, new: Kernel) -> bool:
    """Whether ``new`` keeps ``old``'s measured time while its FLOPs or bytes changed: that time
    was measured for other counts (an edit of the counts does not change what was timed)."""
    for name, k in (("old", old), ("new", new)):
        if not isinstance(k, Kernel):
            raise v.InputError(name, f"must be a Kernel, got {type(k).__name__}")
    return (new.time_s is not None and new.time_s == old.time_s
            and (new.flops != old.flops or new.bytes != old.bytes))


__all__ = [
    "ABOVE_ROOF_ADVICE",
    "ABOVE_ROOF_TOLERANCE",
    "EXPLANATION",
    "STALE_TIME_ADVICE",
    "Placement",
    "Placements",
    "Roof",
    "attainable",
    "bound",
    "ceilings",
    "place",
    "place_many",
    "ridge_point",
    "roof_curve",
    "time_may_be_stale",
]
