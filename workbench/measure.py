"""Measure this machine: memory bandwidth and matrix-multiply rate with numpy.

The results give a roofline for the CPU the app runs on, as a :class:`Hardware` whose sources
say how and when each figure was measured. Bandwidth in bytes/s, rates in FLOP/s.

Long runs report ``progress(fraction, message)`` (fraction in [0, 1]) and poll
``cancelled()``; when it returns True they stop and raise :class:`MeasurementCancelled`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime

import numpy as np

from workbench import _validate as v
from workbench.hardware import ComputeRate, Hardware, MemoryLevel

Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]

_DTYPES = ("float32", "float64")
# Work in blocks small enough for the intermediate s*c to stay in cache, so the DRAM traffic
# is the STREAM count (read b and c, write a) rather than numpy's extra temporary pass.
_TRIAD_BLOCK = 1 << 15

#: Largest STREAM array (2**27 elements: 1 GiB each in float64, 3 GiB for the three) and the
#: largest matmul (8192 x 8192: 512 MiB per float64 matrix, three of them), so a measurement
#: stays within a laptop's memory instead of failing with MemoryError.
MAX_STREAM_ELEMENTS = 1 << 27
MAX_MATMUL_N = 8192

SIZES = {
    # tiny: a few milliseconds, for tests and a quick look (cache-resident, so optimistic).
    "tiny": {"stream_n": 1 << 16, "stream_repeats": 3, "matmul_n": 96, "matmul_repeats": 2},
    # normal: arrays of 128 MiB each (well beyond any CPU cache), a few seconds in all.
    "normal": {"stream_n": 1 << 24, "stream_repeats": 5, "matmul_n": 2048, "matmul_repeats": 3},
}


class MeasurementCancelled(Exception):
    """Raised when ``cancelled()`` returned True during a measurement."""


def _callbacks(progress: object, cancelled: object) -> tuple[Progress, Cancelled]:
    if progress is not None and not callable(progress):
        raise v.InputError("progress", "must be a function progress(fraction, message) or None")
    if cancelled is not None and not callable(cancelled):
        raise v.InputError("cancelled", "must be a function cancelled() -> bool or None")
    return (progress or (lambda fraction, message: None)), (cancelled or (lambda: False))


def _check(cancelled: Cancelled) -> None:
    if cancelled():
        raise MeasurementCancelled("measurement cancelled")


def stream_triad(
    n_elements: int,
    dtype: str = "float64",
    repeats: int = 5,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> float:
    """Memory bandwidth in bytes/s from the STREAM triad a = b + s * c.

    Counts 3 arrays x itemsize bytes per element (STREAM's convention; write-allocate traffic
    is not counted) and reports the best of ``repeats`` timed passes.
    """
    n = v.integer("n_elements", n_elements, minimum=1, maximum=MAX_STREAM_ELEMENTS)
    dt = np.dtype(v.choice("dtype", dtype, _DTYPES))
    reps = v.integer("repeats", repeats, minimum=1, maximum=1000)
    report, stop = _callbacks(progress, cancelled)

    _check(stop)
    a = np.empty(n, dtype=dt)
    b = np.full(n, 1.0, dtype=dt)
    c = np.full(n, 2.0, dtype=dt)
    scalar = dt.type(3.0)
    tmp = np.empty(min(n, _TRIAD_BLOCK), dtype=dt)
    best = float("inf")
    for r in range(reps):
        _check(stop)
        start = time.perf_counter()
        for lo in range(0, n, _TRIAD_BLOCK):
            hi = min(lo + _TRIAD_BLOCK, n)
            t = tmp[: hi - lo]
            np.multiply(c[lo:hi], scalar, out=t)
            np.add(b[lo:hi], t, out=a[lo:hi])
        best = min(best, time.perf_counter() - start)
        report((r + 1) / reps, f"STREAM triad {r + 1}/{reps}")
    if not a[n - 1] == 7.0:  # 1 + 3 * 2: keeps the work observable and checks it
        raise RuntimeError("STREAM triad produced a wrong result")
    return 3.0 * n * dt.itemsize / max(best, 1e-9)


def matmul_peak(
    n: int,
    dtype: str = "float32",
    repeats: int = 3,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> float:
    """Matrix-multiply rate in FLOP/s: 2 n^3 / t for an n x n product, best of ``repeats``.

    numpy hands the product to its BLAS, which uses every core: this is the whole CPU's rate.
    One untimed warm-up product runs first.
    """
    size = v.integer("n", n, minimum=1, maximum=MAX_MATMUL_N)
    dt = np.dtype(v.choice("dtype", dtype, _DTYPES))
    reps = v.integer("repeats", repeats, minimum=1, maximum=1000)
    report, stop = _callbacks(progress, cancelled)

    _check(stop)
    rng = np.random.default_rng(0)
    x = rng.random((size, size)).astype(dt)
    y = rng.random((size, size)).astype(dt)
    out = np.empty((size, size), dtype=dt)
    np.matmul(x, y, out=out)  # warm-up: BLAS threads, page faults
    best = float("inf")
    for r in range(reps):
        _check(stop)
        start = time.perf_counter()
        np.matmul(x, y, out=out)
        best = min(best, time.perf_counter() - start)
        report((r + 1) / reps, f"matmul {size}x{size} {dt.name} {r + 1}/{reps}")
    return 2.0 * float(size) ** 3 / max(best, 1e-9)


def _physical_memory() -> float | None:
    """Installed RAM in bytes where the OS tells us (POSIX), else None."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    return float(total) if total > 0 else None


def _stage(report: Progress, start: float, width: float) -> Progress:
    """Map a stage's own 0..1 progress onto its slice of the whole run."""
    return lambda fraction, message: report(start + width * fraction, message)


def measure_machine(
    size: str = "normal",
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Hardware:
    """Measure this machine and describe it as a Hardware ("This machine (measured)").

    FP64 and FP32 rates from numpy matmul, and the DRAM bandwidth (as the device-memory level
    "HBM") from the STREAM triad. ``size`` "tiny" takes milliseconds (small, cache-resident
    arrays: a quick and optimistic look); "normal" a few seconds.
    """
    plan = SIZES[v.choice("size", size, tuple(SIZES))]
    report, stop = _callbacks(progress, cancelled)
    today = datetime.now().date().isoformat()

    report(0.0, "Measuring memory bandwidth")
    bw = stream_triad(
        plan["stream_n"], "float64", plan["stream_repeats"], _stage(report, 0.0, 0.4), stop
    )
    report(0.4, "Measuring FP64 matmul")
    fp64 = matmul_peak(plan["matmul_n"], "float64", plan["matmul_repeats"], _stage(report, 0.4, 0.3), stop)
    report(0.7, "Measuring FP32 matmul")
    fp32 = matmul_peak(plan["matmul_n"], "float32", plan["matmul_repeats"], _stage(report, 0.7, 0.3), stop)

    def matmul_source(dtype: str) -> str:
        n, reps = plan["matmul_n"], plan["matmul_repeats"]
        return f"numpy matmul (BLAS), n={n}, {dtype}, 2n^3/t, best of {reps}, {today}"

    stream_source = (
        f"numpy STREAM triad, n={plan['stream_n']:,} float64, 3 arrays counted, "
        f"best of {plan['stream_repeats']}, {today}"
    )
    hardware = Hardware(
        name="This machine (measured)",
        vendor="local",
        key="this-machine",
        compute=(
            ComputeRate("fp64", fp64, source=matmul_source("float64")),
            ComputeRate("fp32", fp32, source=matmul_source("float32")),
        ),
        memory=(
            MemoryLevel("HBM", bw, source=stream_source, capacity=_physical_memory(), technology="DRAM"),
        ),
        note=f"Measured on this computer with numpy ({size} size) on {today}.",
        builtin=False,
    )
    report(1.0, "Done")
    return hardware


__all__ = ["SIZES", "MeasurementCancelled", "matmul_peak", "measure_machine", "stream_triad"]
