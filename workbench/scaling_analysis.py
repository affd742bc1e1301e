"""Everything the Scaling and MFU panel shows, as pure functions of a :class:`ScalingScenario`.

The panel (and a notebook) calls :func:`analyse_scaling` for the headline numbers and
:func:`speedup_sweep` / :func:`measured_speedups` for the chart; no formula lives in the UI.

Conventions (see :mod:`workbench.mfu`, :mod:`workbench.scaling`, :mod:`workbench.pipeline`):

- MFU counts model FLOPs per token, 6N + 12 L d T, against the *dense* peak of the GPUs at
  the training precision: structured sparsity is never counted in an MFU peak.
- HFU adds recomputed work (full activation recomputation: x 4/3).
- Speedup at n GPUs follows Amdahl for strong scaling and Gustafson for weak scaling, at the
  scenario's serial fraction. Measured (GPUs, throughput) points are fitted with Amdahl; their
  speedups are relative to the fit's single-GPU throughput.
- The predicted step: ``ScalingScenario`` has no global batch size, so one step is taken as
  one sequence per data-parallel replica per microbatch: tokens per step = seq_len x
  microbatches x max(1, n_gpus / pipeline_stages). The measured throughput is taken as the
  rate of the compute alone (its MFU is the kernel efficiency); the step's communication,
  pipeline bubble and data-loader wait are added on top and lower the predicted MFU.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench import mfu as mf
from workbench import pipeline as pl
from workbench import scaling as sc
from workbench._arrays import distinct
from workbench.scenarios import ScalingScenario
from workbench.units import UnitError, format_quantity, parse_quantity

__all__ = [
    "ScalingAnalysis",
    "analyse_scaling",
    "speedup_at",
    "speedup_sweep",
    "measured_speedups",
    "MeasuredSpeedups",
    "parse_measured",
    "format_measured",
    "LAW_NAMES",
]

#: The scaling law of each mode, by name.
LAW_NAMES: dict[str, str] = {"strong": "Amdahl", "weak": "Gustafson"}


@v.public
def speedup_at(serial_fraction: float, n, mode: str = "strong"):
    """Speedup at ``n`` GPUs (vectorised): Amdahl for ``"strong"``, Gustafson for ``"weak"``."""
    kind = v.choice("mode", mode, sc.SPEEDUP_MODES)
    law = sc.amdahl_speedup if kind == "strong" else sc.gustafson_speedup
    return law(serial_fraction, n)


@v.public
def speedup_sweep(serial_fraction: float, n_max: float, mode: str = "strong", points: int = 256):
    """A smooth speedup curve for a log GPU axis: ``(n, speedup, efficiency)`` arrays.

    ``n`` runs from 1 to ``n_max`` geometrically (``points`` samples) and includes every power
    of two in between, so the curve passes exactly through 1, 2, 4, ... GPUs. Efficiency is
    speedup / n.
    """
    top = v.bounded("n_max", n_max, 1, v.MAX_GPUS, "GPUs")
    count = v.integer("points", points, 2, 100_000)
    n = _gpu_grid(float(top), count).copy()
    speedup = np.asarray(speedup_at(serial_fraction, n, mode), dtype=float)
    return n, speedup, np.asarray(sc.scaling_efficiency(speedup, n, 1.0), dtype=float)


@functools.lru_cache(maxsize=64)
def _gpu_grid(top: float, count: int) -> np.ndarray:
    """The GPU counts of :func:`speedup_sweep` (kept: a serial fraction edit keeps the span,
    and the grid is a few tenths of a millisecond of small numpy calls)."""
    powers = 2.0 ** np.arange(0, math.floor(math.log2(top)) + 1)
    grid = distinct(np.concatenate([np.geomspace(1.0, top, count), powers, [top]]))
    grid.flags.writeable = False
    return grid


@dataclass(frozen=True)
class MeasuredSpeedups:
    """Measured points as speedups relative to the Amdahl fit's single-GPU throughput."""

    gpus: np.ndarray
    throughput: np.ndarray
    speedup: np.ndarray
    fit: sc.FitResult


@v.public
def measured_speedups(measured) -> MeasuredSpeedups | None:
    """Fit measured (gpus, throughput) pairs; ``None`` with fewer than two distinct GPU counts."""
    pairs = sorted(_pairs("measured", measured))
    if len({g for g, _ in pairs}) < 2:
        return None
    gpus = np.array([g for g, _ in pairs], dtype=float)
    throughput = np.array([x for _, x in pairs], dtype=float)
    fit = sc.fit_serial_fraction(gpus, throughput)
    return MeasuredSpeedups(gpus=gpus, throughput=throughput, speedup=throughput / fit.throughput_1, fit=fit)


@dataclass(frozen=True)
class ScalingAnalysis:
    """The panel's headline numbers (SI units; fractions 0..1; ``None`` where not computable)."""

    peak_flops: float  # dense FLOP/s of one GPU at the precision
    flops_per_token: float  # model FLOPs per trained token
    mfu: float
    hfu: float
    tokens_per_step: float | None
    breakdown: mf.StepBreakdown | None
    predicted_mfu: float | None
    law: str  # "Amdahl" or "Gustafson"
    speedup: float  # at n_gpus, by the law of the scenario's mode
    efficiency: float  # speedup / n_gpus
    measured: MeasuredSpeedups | None
    karp_flatt: float | None  # from the measured point with the most GPUs (> 1)
    karp_flatt_gpus: int | None
    read_bytes_per_s: float
    checkpoint_bytes: float
    checkpoint_estimated: bool  # True: size estimated from n_params (14 B/param)
    checkpoint_write_bytes_per_s: float
    train_tokens: float
    training_time_s: float


@v.public
def analyse_scaling(scenario, peak_flops: float, train_tokens: float) -> ScalingAnalysis:
    """Every number the Scaling and MFU panel shows for ``scenario``.

    ``peak_flops`` is the dense peak of one GPU at the scenario's precision (FLOP/s), never
    the sparse one; ``train_tokens`` the tokens of the planned run (for the training time).
    """
    s = v.instance("scenario", scenario, ScalingScenario)
    peak = v.positive("peak_flops", peak_flops)
    tokens = v.positive("train_tokens", train_tokens)
    shape = (s.n_layers, s.d_model, s.seq_len)
    per_token = mf.flops_per_token(s.n_params, *shape)
    util = float(mf.mfu(s.n_params, s.tokens_per_s, s.n_gpus, peak, *shape))
    hw_util = float(mf.hfu(s.n_params, s.tokens_per_s, s.n_gpus, peak, *shape, recompute=s.recompute))

    tokens_per_step = breakdown = predicted = None
    if s.seq_len > 0:
        replicas = max(1.0, s.n_gpus / s.pipeline_stages)
        tokens_per_step = float(s.seq_len * s.microbatches * replicas)
        breakdown = mf.step_decomposition(
            compute_s=tokens_per_step / s.tokens_per_s,
            comm_s=s.comm_time_s,
            overlap=s.overlap,
            pipeline_stages=s.pipeline_stages,
            microbatches=s.microbatches,
            dataloader_wait_s=s.dataloader_wait_s,
        )
        if 0 < util <= 1:
            predicted = mf.predicted_mfu(util, breakdown)

    speedup = float(speedup_at(s.serial_fraction, s.n_gpus, s.mode))
    efficiency = float(sc.scaling_efficiency(speedup, s.n_gpus, 1.0))

    points = measured_speedups(s.measured)
    kf = kf_gpus = None
    if points is not None and points.gpus[-1] > 1:
        kf_gpus = int(points.gpus[-1])
        kf = float(sc.karp_flatt(points.speedup[-1], kf_gpus))

    if s.bytes_per_token > 0:
        read = float(pl.required_read_bandwidth(s.n_gpus, s.tokens_per_s / s.n_gpus, s.bytes_per_token))
    else:
        read = 0.0
    estimated = s.checkpoint_bytes <= 0
    ckpt = pl.checkpoint_bytes(s.n_params) if estimated else s.checkpoint_bytes
    write = float(pl.checkpoint_write_bandwidth(ckpt, s.checkpoint_interval_s))

    return ScalingAnalysis(
        peak_flops=peak,
        flops_per_token=per_token,
        mfu=util,
        hfu=hw_util,
        tokens_per_step=tokens_per_step,
        breakdown=breakdown,
        predicted_mfu=predicted,
        law=LAW_NAMES[s.mode],
        speedup=speedup,
        efficiency=efficiency,
        measured=points,
        karp_flatt=kf,
        karp_flatt_gpus=kf_gpus,
        read_bytes_per_s=read,
        checkpoint_bytes=float(ckpt),
        checkpoint_estimated=estimated,
        checkpoint_write_bytes_per_s=write,
        train_tokens=tokens,
        training_time_s=float(mf.training_time(tokens, s.tokens_per_s)),
    )


# -- measured points as text ("8: 85.1k; 64: 610k") -------------------------------------------

_SEPARATORS = re.compile(r"[;\n]+")
_PAIR = re.compile(r"^\s*([^:=\s]+)\s*(?:[:=]|\s)\s*(.+?)\s*$")


@v.public
def parse_measured(text: str) -> tuple[tuple[int, float], ...]:
    """Measured (GPUs, throughput) pairs from text such as ``"8: 85.1k; 64: 610k"``.

    Pairs are separated by ";" or new lines; within a pair the GPU count and the throughput
    (tokens/s, k/M/B suffixes and digit groups allowed) by ":", "=" or a space. Empty text gives
    no points. Raises ``InputError`` (parameter "measured") saying which pair is wrong.
    """
    if not isinstance(text, str):
        raise v.InputError("measured", f"must be text, got {v._describe(text)}")
    pairs = []
    for i, chunk in enumerate(c for c in _SEPARATORS.split(text) if c.strip()):
        match = _PAIR.match(chunk)
        where = f"pair {i + 1} ({chunk.strip()!r})"
        if not match:
            raise v.InputError("measured", f"{where} must be 'GPUs: tokens/s', e.g. '8: 85k'")
        try:
            gpus = parse_quantity(match.group(1), "", name="GPUs")
            rate = parse_quantity(match.group(2), "", name="throughput")
        except (UnitError, ValueError):
            raise v.InputError("measured", f"{where} must be 'GPUs: tokens/s', e.g. '8: 85k'") from None
        if not (1 <= gpus <= v.MAX_GPUS and float(gpus).is_integer()):
            raise v.InputError("measured", f"{where}: the GPU count must be a whole number between 1 and "
                                           f"{v.MAX_GPUS:,}")
        if not rate > 0:
            raise v.InputError("measured", f"{where}: the throughput must be > 0 tokens/s")
        pairs.append((int(gpus), float(rate)))
    return tuple(pairs)


@v.public
def format_measured(pairs) -> str:
    """The text :func:`parse_measured` reads back: ``"8: 85.144k; 64: 610k"``."""
    return "; ".join(f"{g}: {format_quantity(x, '', digits=6)}" for g, x in _pairs("pairs", pairs))


def _pairs(name: str, value: object) -> list[tuple[int, float]]:
    """(GPUs, throughput) pairs: GPU counts whole in [1, MAX_GPUS], throughputs > 0."""
    out = []
    for i, pair in enumerate(v.items(name, value, "a list of (GPUs, throughput) pairs")):
        where = f"{name}[{i}]"
        item = v.items(where, pair, "a (GPUs, throughput) pair")
        if len(item) != 2:
            raise v.InputError(where, f"must be a (GPUs, throughput) pair, got {v._describe(pair)}")
        out.append((v.gpu_count(f"{where}.gpus", item[0]), v.positive(f"{where}.throughput", item[1])))
    return out
