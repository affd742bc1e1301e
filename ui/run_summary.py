"""The status bar's line about the planned run: the document's prediction, formatted.

Nothing is computed here: every number is a field of ``workbench.plan.Prediction``.
"""

from __future__ import annotations

import html

from ui.widgets.steady_label import Run
from workbench import units
from workbench.hardware import PRECISION_LABELS
from workbench.plan import TERM_LABELS, Prediction, RunPlan, mfu_rating


def _q(value: float, unit: str) -> str:
    try:
        return units.format_quantity(value, unit, digits=3)
    except ValueError:
        return f"{value:.3g} {unit}"


def cost_text(p: Prediction, plan: RunPlan) -> str:
    """The run's cost, saying what it counts: energy alone while no GPU-hour price is set."""
    total = f"{p.total_cost:,.0f} {plan.currency}"
    if plan.gpu_hour_price == 0:
        return f"{total} (energy only; GPU-hour price not set)"
    return total


def measured_tip(p: Prediction, plan: RunPlan) -> str:
    """The tooltip's line for a plan whose step is a measured throughput's (rich text)."""
    source = f" from {html.escape(plan.measured_source)}" if plan.measured_source else ""
    model = plan.tokens_per_step / p.model_step_time_s if p.model_step_time_s else 0.0
    return (f"<b>Measured throughput</b>{source}: {_q(p.tokens_per_s, '')} tokens/s, the model predicts "
            f"{_q(model, '')} (Run plan panel: Use the model again)<br>")


#: between the summary's figures
SEPARATOR = " \u00a0│\u00a0 "


def summary_runs(p: Prediction | None, plan: RunPlan, hardware_name: str,
                 problem: str = "") -> tuple[tuple[Run, ...], str]:
    """(styled runs of plain text, rich-text tooltip) of the status bar's line."""
    head = Run(f"{plan.n_gpus:,} × {hardware_name}", bold=True)
    if p is None:
        tip = "The run plan cannot be predicted" + (f":<br>{html.escape(problem)}" if problem else ".")
        return (head, Run(" \u00a0 run summary unavailable")), tip
    mfu = [Run(f"MFU {p.mfu:.1%}")] + ([Run(" "), Run("measured", italic=True)] if p.uses_measured else [])
    parts: list[list[Run]] = [[head], mfu, [Run(f"{p.train_days:,.1f} days")], [Run(f"{p.gpu_hours:,.0f} GPU-h")]]
    if p.energy_known:
        parts += [[Run(f"{p.facility_energy_kwh / 1000.0:,.1f} MWh")], [Run(f"{p.co2e_kg / 1000.0:,.1f} t CO₂e")],
                  [Run(cost_text(p, plan))]]
    else:  # no TDP in the preset: unknown, not zero
        parts += [[Run("energy n/a (no TDP)")],
                  [Run(f"{p.compute_cost:,.0f} {plan.currency} GPU-hours only" if plan.gpu_hour_price
                       else "cost n/a")]]
    drag = TERM_LABELS.get(p.largest_drag, "none")
    cap = f"capped at {_q(plan.power_cap_w, 'W')}" if plan.power_cap_w else "uncapped (TDP)"
    tip = (
        "<b>The run plan</b> (Run plan panel; every panel shows the same numbers)<br>"
        f"{_q(plan.n_params, '')} parameters, {_q(plan.train_tokens, '')} tokens, "
        f"{PRECISION_LABELS.get(plan.precision, plan.precision)}; "
        f"TP {plan.tp} × PP {plan.pp} × CP {plan.cp} × DP {plan.dp}<br>"
        f"MFU {p.mfu:.1%}: {html.escape(mfu_rating(p.mfu))}<br>"
        + (measured_tip(p, plan) if p.uses_measured else "")
        + f"Step {p.step_time_s:.3g} s, {_q(p.tokens_per_s, '')} tokens/s; largest drag: {html.escape(drag)}<br>"
        f"GPU power {_q(p.gpu_power_w, 'W')} ({cap}), host {_q(p.host_power_w_per_gpu, 'W')} per GPU"
        + (" (the system's maximum less its GPUs')" if plan.host_overhead_w_per_gpu is None else "") + "; "
        f"PUE {plan.pue:g}; grid {plan.grid_g_per_kwh:g} g CO₂e/kWh<br>"
        f"Prices: {plan.energy_price_per_kwh:g} {html.escape(plan.currency)}/kWh, "
        + (f"{plan.gpu_hour_price:g} {html.escape(plan.currency)}/GPU-hour" if plan.gpu_hour_price
           else "GPU-hour price not set")
        + f"<br>Energy cost {p.energy_cost:,.0f}, compute cost {p.compute_cost:,.0f} {html.escape(plan.currency)}"
    )
    runs: list[Run] = []
    for i, part in enumerate(parts):
        if i:
            runs.append(Run(SEPARATOR))
        runs += part
    return tuple(runs), tip


__all__ = ["summary_runs", "cost_text", "measured_tip", "SEPARATOR"]
