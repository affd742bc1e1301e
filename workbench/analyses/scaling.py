"""What the Scaling and MFU panel shows: ``analyse(scenario, view, catalog)``.

It wraps what already computes each part: :func:`workbench.scaling_analysis.analyse_scaling`
for the headline numbers (MFU, HFU, the step, storage, training time), the scenario's dense
peak from the catalog, :func:`workbench.measured_scaling.analyse_measured` for the measured
table and the law fitted to it, and the speedup curves the chart draws. The warnings (an
impossible MFU, a peak that looks like another device's sparse one, a throughput measured on
another GPU) are worked out here too, so the panel only places text and curves.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench import _validate as v
from workbench import measured_scaling as ms
from workbench import scaling as sc
from workbench import scaling_analysis as sa
from workbench._arrays import distinct
from workbench.catalog import Catalog, check_catalog
from workbench.context import RunContext
from workbench.hardware import Hardware
from workbench.plan import mfu_rating
from workbench.scenarios import ScalingScenario

#: The GPU axis reaches at least this far, and 4 x the scenario's GPUs.
GPU_AXIS_MIN = 1024
#: A ceiling further above the chart's top than this many times is named in the results only.
CEILING_REACH = 32
#: A fitted ceiling within this share of the law's is the same line, drawn once.
SAME_CEILING = 0.05


@dataclass(frozen=True)
class Ceiling:
    """A horizontal line of the speedup chart: the most speedup a serial fraction allows."""

    value: float  # speedup, x (1/s)
    label: str  # "2% serial caps you at 50×"
    source: str  # "law" (the scenario's serial fraction) or "fit" (fitted to the measured rows)


@dataclass(frozen=True)
class PlanStep:
    """The run plan's predicted step, which the panel lists while it follows the plan (the
    overheads are in the predicted throughput, so its own step model would count them twice)."""

    terms: tuple[tuple[str, float], ...]  # (term of workbench.plan.TERMS, seconds) of the non-zero ones
    step_time_s: float  # s
    mfu: float  # fraction
    global_batch: int  # sequences per step
    seq_len: int  # tokens per sequence


@dataclass(frozen=True)
class ScalingAnalysis:
    """Every number the Scaling and MFU panel draws or lists (SI units, fractions 0..1).

    ``figures`` is None when the headline numbers cannot be worked out (the hardware is not in
    the catalog, it has no rate at the precision, or the inputs are refused): ``problem`` says
    why, and the chart, which needs none of it, is still drawn. The arrays are read-only.
    """

    figures: sa.ScalingAnalysis | None  # headline numbers (workbench.scaling_analysis)
    problem: str  # why ``figures`` is None ("" when it is not)
    peak_flops: float | None  # FLOP/s, dense peak of one GPU at the precision (None: unknown)
    train_tokens: float  # tokens of the planned run (the plan's, or the default context's)
    mfu_band: str  # "impossible", "excellent", "very good", "typical", "low" ("" without figures)
    mfu_rating: str  # the band in words (workbench.plan.mfu_rating; "" without figures)
    hardware_name: str  # the scenario's device as the catalog names it (its key when unknown)
    measured_on_name: str  # the device the throughput was measured on, by name ("" when planned)
    # the measured table
    measured: ms.MeasuredScaling | None  # rows read against the first, the law fitted (None: refused)
    measured_problem: str  # why ``measured`` is None ("Measured table: ...", "" when it is not)
    one_gpu_serial_fraction: float | None  # fraction: the largest row's Karp-Flatt e as a share of one
    #                                        GPU's time (strong scaling, base > 1 GPU, 0 <= e <= 1)
    # the speedup chart
    ceiling: float | None  # x, Amdahl's ceiling 1/s (strong scaling with s > 0; else None)
    ceiling_label: str  # what 1/s means in words, whatever the mode ("" for s = 0)
    gpus_top: int  # GPUs, the right end of the GPU axis
    curve_gpus: np.ndarray  # GPUs, 1 .. gpus_top, every power of two included
    curve_speedup: np.ndarray  # x, the scenario's law at curve_gpus
    fit_speedup: np.ndarray | None  # x, the fitted law at curve_gpus (None without a fit)
    measured_gpus: np.ndarray | None  # GPUs of the measured rows (None without a fit)
    measured_speedup: np.ndarray | None  # x, the rows over the fit's single-GPU throughput
    ceilings: tuple[Ceiling, ...]  # the ceilings drawn, highest first
    operating_speedup: float  # x, the law at the scenario's GPU count
    # the CSV: every power of two up to gpus_top and the scenario's GPU count
    csv_gpus: tuple[int, ...]
    csv_speedup: tuple[float, ...]  # x
    csv_efficiency: tuple[float, ...]  # fraction, speedup / GPUs
    # warnings ("" when there is nothing to say)
    stale_message: str  # a measured throughput from another device (the panel shows it when local)
    impossible_message: str  # MFU above 100%
    sparse_message: str  # the dense peak equals another device's 2:4 sparse peak
    # the run plan's step (None without a plan that could be predicted)
    plan_step: PlanStep | None

    @property
    def mfu(self) -> float | None:
        """Model FLOPs utilisation, a fraction (None without figures)."""
        return None if self.figures is None else self.figures.mfu

    @property
    def hfu(self) -> float | None:
        """Hardware FLOPs utilisation (recomputation counted), a fraction (None without figures)."""
        return None if self.figures is None else self.figures.hfu

    @property
    def predicted_mfu(self) -> float | None:
        """MFU once the step's overheads are counted, a fraction (None where not computable)."""
        return None if self.figures is None else self.figures.predicted_mfu

    @property
    def flops_per_token(self) -> float | None:
        """Model FLOPs per trained token, FLOP (None without figures)."""
        return None if self.figures is None else self.figures.flops_per_token

    def measured_csv(self) -> str:
        """The measured table as CSV (workbench.measured_scaling.table_csv), made when asked for."""
        if self.measured is None:
            raise v.InputError("measured", self.measured_problem or "the measured table cannot be read")
        return _table_csv(tuple((r.gpus, r.throughput) for r in self.measured.rows), self.measured.mode)


def _read_only(values: Any) -> np.ndarray:
    array = np.array(values, dtype=float)
    array.setflags(write=False)
    return array


# The measured table's fit is the slow part and depends on its rows and mode alone: a few are
# kept, so an edit of another field (or a compared scenario drawn again) does not fit again.
@functools.lru_cache(maxsize=16)
def _measured(rows: tuple[tuple[int, float], ...], mode: str) -> tuple[ms.MeasuredScaling | None, str]:
    try:
        return ms.analyse_measured(rows, mode), ""
    except ValueError as exc:
        return None, f"Measured table: {exc}"


@functools.lru_cache(maxsize=4)
def _table_csv(rows: tuple[tuple[int, float], ...], mode: str) -> str:
    return ms.table_csv(rows, mode)


def _device(catalog: Catalog, key: str) -> Hardware | None:
    try:
        return catalog.hardware(key)
    except (KeyError, ValueError):
        return None


def _devices(catalog: Catalog) -> tuple[Hardware, ...]:
    """Every device of a catalog that can list them (an ``items()`` method); the protocol
    itself only looks keys up, so a catalog that cannot list gives none."""
    items = getattr(catalog, "items", None)
    if not callable(items):
        return ()
    return tuple(d for d in items() if isinstance(d, Hardware))


def _ceilings(s: ScalingScenario, table: ms.MeasuredScaling | None, top: int) -> tuple[Ceiling, ...]:
    found: list[Ceiling] = []
    if s.mode == "strong" and s.serial_fraction > 0:
        found.append(Ceiling(1.0 / s.serial_fraction, ms.ceiling_label(s.serial_fraction), "law"))
    fit = table.fit if table is not None else None
    if fit is not None and fit.ceiling is not None:
        if not (found and abs(fit.ceiling / found[0].value - 1) < SAME_CEILING):
            found.append(Ceiling(fit.ceiling, f"fit: {ms.ceiling_label(fit.serial_fraction)}", "fit"))
    return tuple(sorted((c for c in found if c.value <= CEILING_REACH * top), key=lambda c: -c.value))


def _plan_step(view: Any) -> PlanStep | None:
    p = getattr(view, "prediction", None)
    if p is None:
        return None
    return PlanStep(terms=tuple((term, float(t)) for term, t in p.breakdown.items() if t > 0),
                    step_time_s=p.step_time_s, mfu=p.mfu, global_batch=p.plan.global_batch, seq_len=p.plan.seq_len)


def analyse(scenario: ScalingScenario, view: Any, catalog: Catalog) -> ScalingAnalysis:
    """What the Scaling and MFU panel shows for ``scenario`` under the plan ``view`` (a
    :class:`workbench.workspace.PlanView`, or None: the default context's training tokens and
    no plan step), the hardware looked up in ``catalog``. Never raises for a valid scenario:
    a part that cannot be worked out is None with its problem as text."""
    s = v.instance("scenario", scenario, ScalingScenario)
    check_catalog(catalog)
    train_tokens = view.plan.train_tokens if view is not None else RunContext().train_tokens

    hw: Hardware | None = None
    figures, peak, problem = None, None, ""
    try:
        hw = catalog.hardware(s.hardware)
        peak = hw.peak_flops(s.precision, sparse=False)  # MFU counts the dense peak, always
    except (KeyError, ValueError) as exc:
        problem = str(exc).strip("'\"")  # a KeyError's text comes quoted
    if peak is not None:
        try:
            figures = sa.analyse_scaling(s, peak, train_tokens)
        except ValueError as exc:
            problem = str(exc)
    band = ms.mfu_band(figures.mfu) if figures is not None else ""
    rating = mfu_rating(figures.mfu) if figures is not None else ""

    table, table_problem = _measured(s.measured, s.mode)
    one_gpu = None
    largest = table.largest if table is not None else None
    if (largest is not None and largest.serial_fraction is not None and s.mode == "strong"
            and table.base.gpus > 1 and 0 <= largest.serial_fraction <= 1):
        one_gpu = ms.one_gpu_serial_fraction(largest.serial_fraction, table.base.gpus)

    top = max(GPU_AXIS_MIN, 4 * s.n_gpus)
    n, speedup, _efficiency = sa.speedup_sweep(s.serial_fraction, top, s.mode)
    fit = table.fit if table is not None else None
    fit_speedup = measured_gpus = measured_speedup = None
    if fit is not None:
        fit_speedup = _read_only(fit.speedup(n))
        measured_gpus = _read_only([r.gpus for r in table.rows])
        measured_speedup = _read_only(np.array([r.throughput for r in table.rows], dtype=float) / fit.throughput_1)

    csv_n = distinct(np.concatenate([2.0 ** np.arange(0, int(math.log2(top)) + 1), [float(s.n_gpus)]]))
    csv_speedup = np.asarray(sa.speedup_at(s.serial_fraction, csv_n, s.mode), dtype=float)
    csv_efficiency = np.asarray(sc.scaling_efficiency(csv_speedup, csv_n, 1.0), dtype=float)

    name = hw.name if hw is not None else s.hardware
    measured_on = ""
    if s.throughput_source == "measured":
        other = _device(catalog, s.measured_on) if s.measured_on != s.hardware else hw
        measured_on = other.name if other is not None else s.measured_on
    stale = impossible = sparse = ""
    if s.measured_elsewhere:
        stale = ms.stale_throughput_message(s.tokens_per_s, measured_on, name,
                                            figures.mfu if figures is not None else None)
    if figures is not None and figures.mfu > 1:
        impossible = ms.impossible_mfu_message(figures.mfu, figures.flops_per_token, s.tokens_per_s, s.n_gpus,
                                               figures.peak_flops)
    if peak is not None:
        match = ms.sparse_peak_match(peak, s.precision, _devices(catalog), own_key=s.hardware)
        if match is not None:
            twin, _sparse = match
            sparse = ms.sparse_peak_message(name, s.precision, peak, twin.name, twin.peak_flops(s.precision))

    return ScalingAnalysis(
        figures=figures, problem=problem, peak_flops=peak, train_tokens=float(train_tokens),
        mfu_band=band, mfu_rating=rating, hardware_name=name, measured_on_name=measured_on,
        measured=table, measured_problem=table_problem, one_gpu_serial_fraction=one_gpu,
        ceiling=ms.amdahl_ceiling(s.serial_fraction) if s.mode == "strong" else None,
        ceiling_label=ms.ceiling_label(s.serial_fraction),
        gpus_top=top, curve_gpus=_read_only(n), curve_speedup=_read_only(speedup), fit_speedup=fit_speedup,
        measured_gpus=measured_gpus, measured_speedup=measured_speedup, ceilings=_ceilings(s, table, top),
        operating_speedup=float(sa.speedup_at(s.serial_fraction, s.n_gpus, s.mode)),
        csv_gpus=tuple(int(g) for g in csv_n), csv_speedup=tuple(float(x) for x in csv_speedup),
        csv_efficiency=tuple(float(x) for x in csv_efficiency),
        stale_message=stale, impossible_message=impossible, sparse_message=sparse, plan_step=_plan_step(view),
    )


__all__ = ["ScalingAnalysis", "Ceiling", "PlanStep", "analyse", "GPU_AXIS_MIN", "CEILING_REACH"]
