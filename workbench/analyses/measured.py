"""What the Plan vs actual panel shows: its training logs and energy log against the run plan.

The logs are compared with the scenario's plan (the window's, while the scenario follows it;
the one saved in the scenario under Local override). Its prediction is the view's when the
view holds that plan, so a window predicts each plan once; it is predicted here only for a
plan the view does not hold (a panel on its own, or Local override). A plan that cannot be
predicted is not a failure: the measured numbers are still worth showing, so the reason is
kept in ``problem`` and the plan's side of the comparison is empty.

Reading a log is not part of this: the panel reads a file when the user opens it, and the
scenario holds what was read (:mod:`workbench.measured`).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench import measured as ms
from workbench.catalog import Catalog
from workbench.measured import EnergyAnalysis, MeasuredScenario, RunAnalysis
from workbench.plan import Prediction, RunPlan, predict
from workbench.workspace import PlanView


@dataclass(frozen=True)
class MeasuredAnalysis:
    """Every log of a :class:`~workbench.measured.MeasuredScenario` against its plan.

    The per-log tuples (``runs``, ``steady_waited``, ``adopt_tokens_per_s``) hold one entry per
    log, in the scenario's order.
    """

    plan: RunPlan  # the plan compared against
    prediction: Prediction | None  # its prediction; None when it cannot be predicted
    problem: str  # why there is no prediction ("" when there is one)
    peak_flops: float | None  # FLOP/s, dense, one GPU at the plan's precision (None: unknown device)
    runs: tuple[RunAnalysis, ...]  # each log against the plan: per-step series, steady medians, gap
    steady_waited: tuple[int | None, ...]  # count of steady steps that waited on data (None: no waits reported)
    adopt_tokens_per_s: tuple[float | None, ...]  # tokens/s, whole job: a log's steady rate per GPU on the
    # window plan's GPUs, what "Adopt measured throughput" puts into the plan (None: no rate, or no window plan)
    energy: EnergyAnalysis | None  # the energy log against the plan (None: no energy log)
    energy_tokens_per_s_per_gpu: float | None  # tokens/s per GPU the measured tokens per joule use
    # (the first log with a steady rate; None: no such log)
    logs: tuple[ms.RunLog, ...]  # the logs analysed, as read (the per-step CSV adds their loss)

    def series_rows(self) -> list[tuple]:
        """One row per step of every log, in the order of :data:`SERIES_HEADERS` (for the CSV).
        Built when asked for, not kept: a long log has hundreds of thousands of steps."""
        return [row for run, a in zip(self.logs, self.runs, strict=True) for row in ms.series_rows(run, a)]

    def csv_columns(self) -> list[tuple[str, list]]:
        """The per-step series as (header naming its unit, values) columns; [] with no log."""
        rows = self.series_rows()
        if not rows:
            return []
        return [(header, [r[i] for r in rows]) for i, header in enumerate(SERIES_HEADERS)]


#: The per-step CSV's headers (each names its unit).
SERIES_HEADERS: tuple[str, ...] = ms.SERIES_HEADERS


def _prediction(plan: RunPlan, view: PlanView | None, catalog: Catalog) -> tuple[Prediction | None, str]:
    if view is not None and view.plan == plan:
        return view.prediction, view.problem  # the window predicted this plan already
    try:
        return predict(plan, catalog), ""
    except (ValueError, ArithmeticError) as exc:
        return None, str(exc)


def _peak(plan: RunPlan, prediction: Prediction | None, view: PlanView | None, catalog: Catalog) -> float | None:
    """The plan's dense peak per GPU: the prediction's, else its device's (a plan that cannot be
    predicted may still name a known device, and the logged TFLOP/s still turn into MFU)."""
    if prediction is not None:
        return prediction.peak_flops
    try:
        hw = view.hardware if view is not None and view.plan == plan and view.hardware is not None \
            else catalog.hardware(plan.hardware)
        return hw.peak_flops(plan.precision)
    except (KeyError, ValueError):
        return None


def _steady_waited(a: RunAnalysis) -> int | None:
    if a.data_wait_basis == "the log does not report data waits":
        return None
    return sum(1 for w, on in zip(a.waited, a.steady, strict=True) if w and on)


def analyse(scenario: MeasuredScenario, view: PlanView | None, catalog: Catalog) -> MeasuredAnalysis:
    """The scenario's logs and energy log against its plan (see the module's docstring)."""
    plan = scenario.plan
    prediction, problem = _prediction(plan, view, catalog)
    peak = _peak(plan, prediction, view, catalog)
    runs = tuple(ms.analyse_run(run, plan, prediction, peak_flops=peak, warmup_steps=scenario.warmup_steps)
                 for run in scenario.runs)
    rate = next((a.median_tokens_per_s_per_gpu for a in runs if a.median_tokens_per_s_per_gpu), None)
    energy = (ms.analyse_energy(scenario.energy, plan, prediction, tokens_per_s_per_gpu=rate)
              if scenario.energy is not None else None)
    # adopting puts the rate per GPU into the window's plan, on that plan's GPUs
    adopt = tuple(a.median_tokens_per_s_per_gpu * view.plan.n_gpus
                  if view is not None and a.median_tokens_per_s_per_gpu else None for a in runs)
    return MeasuredAnalysis(
        plan=plan, prediction=prediction, problem=problem if prediction is None else "", peak_flops=peak,
        runs=runs, steady_waited=tuple(_steady_waited(a) for a in runs), adopt_tokens_per_s=adopt,
        energy=energy, energy_tokens_per_s_per_gpu=rate, logs=scenario.runs,
    )


__all__ = ["MeasuredAnalysis", "SERIES_HEADERS", "analyse"]
