"""What the Run plan panel shows: ``analyse(plan, view, catalog)``.

The Run plan panel's scenario is the plan itself. Its prediction is the document's when the
view it follows is this plan (``view.prediction``, or ``view.problem`` when it cannot be
predicted); on its own (no view, or a view of another plan) the plan is predicted here with
the catalog. From the prediction come the step's segments and its largest drag, the memory bar
and what would make it fit, the what-if ladder (:func:`workbench.plan.what_if`), the headline
numbers in the units the panel lists them and the MFU rating.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench import _validate as v
from workbench import plan as pl
from workbench.catalog import Catalog, check_catalog

#: The parts of the memory bar, in drawing order: (MemoryEstimate attribute, label).
MEMORY_PARTS: tuple[tuple[str, str], ...] = (
    ("weights", "Weights"), ("gradients", "Gradients"), ("optimizer", "Optimizer state"),
    ("activations", "Activations"),
)


@dataclass(frozen=True)
class StepSegment:
    """One term of the step bar."""

    term: str  # a key of workbench.plan.TERMS
    label: str  # workbench.plan.TERM_LABELS[term]
    seconds: float  # s per step
    share: float  # fraction of the step


@dataclass(frozen=True)
class MemoryPart:
    """One part of the memory bar."""

    key: str  # "weights", "gradients", "optimizer" or "activations"
    label: str
    bytes: float  # B per GPU


@dataclass(frozen=True)
class RunPlanAnalysis:
    """Every number the Run plan panel draws or lists. Without a prediction (``problem`` says
    why) the numbers are None and the sequences empty."""

    plan: pl.RunPlan  # the plan analysed
    prediction: pl.Prediction | None  # workbench.plan.predict's answer (None: it cannot be predicted)
    problem: str  # why there is no prediction ("" when there is one)
    # the step chart
    segments: tuple[StepSegment, ...]  # the non-zero terms, in TERMS order
    largest_drag: StepSegment | None  # the model's costliest term other than compute (None: all compute)
    # the memory chart
    memory_parts: tuple[MemoryPart, ...]  # in MEMORY_PARTS order (zero-sized parts included)
    memory_total: float | None  # B per GPU
    memory_capacity: float | None  # B per GPU (None: the preset gives no memory size)
    memory_fits: bool | None  # within the capacity (True when there is none to exceed)
    memory_spare: float | None  # B per GPU left, capacity - total (negative when over; None without a capacity)
    memory_shortfall: float | None  # B per GPU over the capacity (0 when it fits)
    memory_fixes: tuple[str, ...]  # single changes (or the shortest chain) that fit it
    # the what-if ladder
    what_if: tuple[pl.WhatIf, ...]  # each drag removed, largest MFU gain first
    # the headline rows
    mfu_rating: str  # workbench.plan.mfu_rating of the MFU ("" without a prediction)
    train_days: float | None  # days
    facility_energy_mwh: float | None  # MWh (None also when the preset has no TDP)
    co2e_t: float | None  # tonnes CO2e (None also when the preset has no TDP)
    cost: float | None  # in the plan's currency (None when neither energy nor a GPU-hour price is known)
    # the measured-throughput line
    measured_tokens_per_s_per_gpu: float | None  # tokens/s (None: the plan has no measured throughput)
    model_tokens_per_s: float | None  # tokens/s the model predicts when a measured throughput sets the step


def _own_answer(plan: pl.RunPlan, view: Any, catalog: Catalog) -> tuple[pl.Prediction | None, str]:
    """The document's answer when the view is this plan's; else this plan predicted here."""
    if view is not None and (view.plan is plan or view.plan == plan):
        if view.prediction is not None or view.problem:
            return view.prediction, view.problem
    try:
        return pl.predict(plan, catalog), ""
    except (ValueError, ArithmeticError) as exc:
        return None, str(exc)


def analyse(plan: pl.RunPlan, view: Any, catalog: Catalog) -> RunPlanAnalysis:
    """What the Run plan panel shows for ``plan``, which follows ``view`` (a
    :class:`workbench.workspace.PlanView` or None), predicted with ``catalog`` when the view
    has no answer for it. A plan that cannot be predicted gives ``problem``, not an error."""
    plan = v.instance("plan", plan, pl.RunPlan)
    check_catalog(catalog)
    p, problem = _own_answer(plan, view, catalog)
    measured_per_gpu = (plan.measured_tokens_per_s / plan.n_gpus if plan.measured_tokens_per_s is not None
                        else None)
    if p is None:
        return RunPlanAnalysis(
            plan=plan, prediction=None, problem=problem, segments=(), largest_drag=None, memory_parts=(),
            memory_total=None, memory_capacity=None, memory_fits=None, memory_spare=None, memory_shortfall=None,
            memory_fixes=(), what_if=(), mfu_rating="", train_days=None, facility_energy_mwh=None, co2e_t=None,
            cost=None, measured_tokens_per_s_per_gpu=measured_per_gpu, model_tokens_per_s=None)
    def segment(term: str) -> StepSegment:
        return StepSegment(term, pl.TERM_LABELS[term], p.breakdown[term], p.breakdown[term] / p.step_time_s)

    segments = tuple(segment(term) for term in pl.TERMS if p.breakdown.get(term, 0.0) > 0)
    drag = segment(p.largest_drag) if p.largest_drag else None
    m = p.memory
    model_rate = plan.tokens_per_step / p.model_step_time_s if p.model_step_time_s else None
    return RunPlanAnalysis(
        plan=plan, prediction=p, problem="", segments=segments, largest_drag=drag,
        memory_parts=tuple(MemoryPart(key, label, float(getattr(m, key))) for key, label in MEMORY_PARTS),
        memory_total=m.total, memory_capacity=m.capacity, memory_fits=m.fits,
        memory_spare=None if m.capacity is None else m.capacity - m.total, memory_shortfall=m.shortfall,
        memory_fixes=tuple(p.memory_fixes), what_if=tuple(pl.what_if(p)), mfu_rating=pl.mfu_rating(p.mfu),
        train_days=p.train_days,
        facility_energy_mwh=p.facility_energy_kwh / 1000.0 if p.energy_known else None,
        co2e_t=p.co2e_kg / 1000.0 if p.energy_known else None,
        cost=p.total_cost if p.energy_known or plan.gpu_hour_price else None,
        measured_tokens_per_s_per_gpu=measured_per_gpu, model_tokens_per_s=model_rate,
    )


__all__ = ["RunPlanAnalysis", "StepSegment", "MemoryPart", "MEMORY_PARTS", "analyse"]
