"""Parallel scaling laws and how to read measured scaling data.

- Strong scaling (fixed problem, more GPUs): Amdahl, speedup S(n) = 1 / (s + (1 - s) / n)
  with serial fraction s; it can never exceed min(n, 1/s).
- Weak scaling (fixed work per GPU, problem grows with n): Gustafson, scaled speedup
  S(n) = s + (1 - s) n = n - s (n - 1).
- Karp-Flatt: the serial fraction a measured speedup implies, e = (1/S - 1/n) / (1 - 1/n).
  A value that grows with n points to overhead (communication) rather than a fixed serial part.

``n`` is a GPU count (>= 1; real values are accepted so curves can be drawn smooth).
Throughputs are any work/time (tokens/s, samples/s); times are seconds. Every function is
vectorised over its array arguments with NumPy broadcasting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench._arrays import distinct

SPEEDUP_MODES: tuple[str, ...] = ("strong", "weak")
#: Most points :func:`speedup_curve` computes (one per GPU count from 1 to n_max).
MAX_CURVE_POINTS = 1_000_000


# -- input helpers -----------------------------------------------------------------------------


def _at_least(name: str, value: object, low: float, *, strict: bool = False):
    arr, scalar = v.array(name, value)
    bad = arr <= low if strict else arr < low
    if arr.size and np.any(bad):
        raise v.InputError(name, f"must be {'>' if strict else '>='} {low:g} everywhere, got {arr.min():g}")
    return arr, scalar


def _serial(value: object):
    arr, scalar = v.array("serial_fraction", value)
    if arr.size and (np.any(arr < 0) or np.any(arr > 1)):
        raise v.InputError("serial_fraction", "must be in [0, 1] everywhere")
    return arr, scalar


# -- speedup laws --------------------------------------------------------------------------------


@v.public
def amdahl_speedup(serial_fraction, n):
    """Strong-scaling speedup on n GPUs, 1 / (s + (1 - s) / n); dimensionless, <= min(n, 1/s)."""
    s, s1 = _serial(serial_fraction)
    gpus, s2 = _at_least("n", n, 1.0)
    s, gpus = v.broadcast(serial_fraction=s, n=gpus)
    return v.scalar_or_array(1.0 / (s + (1.0 - s) / gpus), s1 and s2)


@v.public
def gustafson_speedup(serial_fraction, n):
    """Weak-scaling (scaled) speedup on n GPUs, s + (1 - s) n; always >= the Amdahl speedup."""
    s, s1 = _serial(serial_fraction)
    gpus, s2 = _at_least("n", n, 1.0)
    s, gpus = v.broadcast(serial_fraction=s, n=gpus)
    return v.scalar_or_array(s + (1.0 - s) * gpus, s1 and s2)


@v.public
def karp_flatt(speedup, n):
    """Experimentally determined serial fraction, (1/S - 1/n) / (1 - 1/n), for n > 1.

    ``speedup`` is the measured S(n) (> 0). Exact for Amdahl data: karp_flatt(amdahl(s, n), n) = s.
    """
    sp, s1 = v.array("speedup", speedup, positive_only=True)
    gpus, s2 = _at_least("n", n, 1.0, strict=True)
    sp, gpus = v.broadcast(speedup=sp, n=gpus)
    return v.scalar_or_array((1.0 / sp - 1.0 / gpus) / (1.0 - 1.0 / gpus), s1 and s2)


@v.public
def speedup_curve(serial_fraction: float, n_max: int, mode: str = "strong"):
    """Speedup at n = 1, 2, ..., n_max: Amdahl for ``"strong"``, Gustafson for ``"weak"``.

    Returns ``(n, speedup)``, two float arrays of length n_max, at most
    ``MAX_CURVE_POINTS`` (a million GPU counts, 8 MB per array); for a smooth curve to more
    GPUs, :func:`workbench.scaling_analysis.speedup_sweep` samples log-spaced counts.
    """
    s = v.fraction("serial_fraction", serial_fraction)
    top = v.integer("n_max", n_max, minimum=1, maximum=MAX_CURVE_POINTS)
    kind = v.choice("mode", mode, SPEEDUP_MODES)
    n = np.arange(1, top + 1, dtype=float)
    law = amdahl_speedup if kind == "strong" else gustafson_speedup
    return n, law(s, n)


# -- efficiency ----------------------------------------------------------------------------------


@v.public
def scaling_efficiency(throughput_n, n, throughput_1):
    """Throughput on n GPUs relative to n times the single-GPU throughput: X_n / (n X_1).

    With a fixed problem and throughput = work / time this is the strong-scaling efficiency
    (= speedup / n). It also reads as weak-scaling efficiency when the work per GPU is fixed
    and X is total work per second: n GPUs doing n times the work in the same time give 1.
    Dimensionless, 1 = perfect; vectorised over ``throughput_n`` and ``n``.
    """
    xn, s1 = v.array("throughput_n", throughput_n, non_negative_only=True)
    gpus, s2 = _at_least("n", n, 1.0)
    x1 = v.positive("throughput_1", throughput_1)
    xn, gpus = v.broadcast(throughput_n=xn, n=gpus)
    return v.scalar_or_array(xn / (gpus * x1), s1 and s2)


@v.public
def strong_scaling_efficiency(time_1, time_n, n):
    """Fixed problem: t_1 / (n t_n), from step (or job) times in seconds on 1 and n GPUs."""
    t1, s1 = v.array("time_1", time_1, positive_only=True)
    tn, s2 = v.array("time_n", time_n, positive_only=True)
    gpus, s3 = _at_least("n", n, 1.0)
    t1, tn, gpus = v.broadcast(time_1=t1, time_n=tn, n=gpus)
    return v.scalar_or_array(t1 / (gpus * tn), s1 and s2 and s3)


@v.public
def weak_scaling_efficiency(time_1, time_n):
    """Fixed work per GPU: t_1 / t_n, from times in seconds on 1 GPU and on n GPUs."""
    t1, s1 = v.array("time_1", time_1, positive_only=True)
    tn, s2 = v.array("time_n", time_n, positive_only=True)
    t1, tn = v.broadcast(time_1=t1, time_n=tn)
    return v.scalar_or_array(t1 / tn, s1 and s2)


# -- fitting measured data -----------------------------------------------------------------------


@dataclass(frozen=True)
class FitResult:
    """Amdahl model fitted to measured throughputs: X(n) = throughput_1 * amdahl(s, n)."""

    serial_fraction: float  # s, in [0, 1]
    throughput_1: float  # implied single-GPU throughput, same unit as the input
    rms_residual: float  # root mean square of measured - fitted throughput, same unit

    @v.public
    def predict(self, n):
        """Fitted throughput at n GPUs (vectorised)."""
        return self.throughput_1 * amdahl_speedup(self.serial_fraction, n)


def _profile(s: np.ndarray, n: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate s, the best X_1 (closed form) and the sum of squared residuals."""
    g = 1.0 / (s[:, None] + (1.0 - s[:, None]) / n[None, :])
    x1 = (g @ x) / np.einsum("ij,ij->i", g, g)
    sse = np.sum((x[None, :] - x1[:, None] * g) ** 2, axis=1)
    return x1, sse


@v.public
def fit_serial_fraction(gpus, throughputs) -> FitResult:
    """Least-squares Amdahl fit of measured throughput against GPU count.

    Minimises sum (X_i - X_1 * amdahl(s, n_i))^2 over s in [0, 1] and X_1 > 0 (in throughput
    units, so large-n points are not over-weighted). For each s the best X_1 is closed form;
    s itself is found on a grid, refined by golden-section search, and compared with the
    linearised fit of 1/X against 1/n. Superlinear data, which
    would want s < 0, is clamped at s = 0.
    """
    n, _ = _at_least("gpus", gpus, 1.0)
    x, _ = v.array("throughputs", throughputs, positive_only=True)
    if n.ndim != 1:
        raise v.InputError("gpus", "must be a one-dimensional list of GPU counts")
    if distinct(n).size < 2:
        raise v.InputError("gpus", "needs at least two different GPU counts to fit")
    if x.shape != n.shape:
        raise v.InputError("throughputs", f"must have one value per entry of gpus ({n.size}), got {x.size}")

    grid = np.linspace(0.0, 1.0, 2001)
    _, sse = _profile(grid, n, x)
    best = int(np.argmin(sse))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):  # shrinks the 1e-3 bracket far below double precision
        a = hi - ratio * (hi - lo)
        b = lo + ratio * (hi - lo)
        _, pair = _profile(np.array([a, b]), n, x)
        if pair[0] <= pair[1]:
            hi = b
        else:
            lo = a
    # The linearised fit, 1/X = s/X_1 + (1 - s)/(X_1 n), is exact for noise-free data.
    design = np.column_stack([np.ones_like(n), 1.0 / n])
    (a, b), *_ = np.linalg.lstsq(design, 1.0 / x, rcond=None)
    linear = float(np.clip(a / (a + b), 0.0, 1.0)) if a + b > 0 else grid[best]
    candidates = np.array([lo, hi, 0.5 * (lo + hi), grid[best], linear])
    x1s, sses = _profile(candidates, n, x)
    k = int(np.argmin(sses))
    return FitResult(
        serial_fraction=float(candidates[k]),
        throughput_1=float(x1s[k]),
        rms_residual=float(np.sqrt(sses[k] / n.size)),
    )
