"""What the Power and carbon panel shows: :func:`analyse` of a :class:`PowerScenario`.

One GPU's uncapped throughput (planned from an MFU or measured), the power-cap sweep and its
best cap, the planned run under the cap (:func:`workbench.carbon.plan_for_scenario`), the
Llama 3 style energy, and the whole footprint (:mod:`workbench.footprint`: a partly capped job,
Zeus's cost, idle hours, network and embodied emissions, the cap as a command), in one value.

The same run on every grid region and the best start on the scenario's 24-hour profile are
:func:`where`: the grid regions are presets, which ``workbench`` cannot read, so the caller
hands them over; the view asks for them only when it shows them.

Units are SI (W, J, s, tokens/s, kg CO2e) except where a name says kWh or g/kWh.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from workbench import _validate as v
from workbench import carbon, footprint
from workbench import mfu as mfu_model
from workbench import power as pw
from workbench.hardware import PRECISION_LABELS, Hardware

__all__ = ["PowerAnalysis", "WhereAnalysis", "CannotAnalyse", "CUSTOM", "analyse", "check_cap", "where"]

#: Region key of an intensity the scenario holds that is none of the presets' grids.
CUSTOM = "custom"
#: GPUs a node holds when there is no plan to say (the cap command's ``-i`` ids).
DEFAULT_GPUS_PER_NODE = 8


class CannotAnalyse(v.InputError):
    """The scenario cannot be analysed at all; ``sentence`` says why and what to do, whole,
    as a view shows it (the error's text is ``"<parameter>: <sentence>"``)."""

    def __init__(self, parameter: str, sentence: str):
        super().__init__(parameter, sentence)
        self.sentence = sentence


# eq=False: the fields hold numpy arrays, which have no single truth value to compare by
@dataclass(frozen=True, eq=False)
class PowerAnalysis:
    """Every number the Power and carbon panel draws or lists for one scenario."""

    hardware: Hardware  # the GPU modelled: its name labels the curves, its TDP the Llama 3 row
    tdp_w: float  # W, the board power at full clock: the uncapped end of the sweep
    peak_flops: float | None  # FLOP/s, dense peak at the scenario's precision (None: measured throughput)
    flops_per_token: float | None  # FLOP per token the MFU plan divides by, 6N (None: measured throughput)
    tokens_per_s_per_gpu: float  # tokens/s of one GPU uncapped
    plan_mfu: float | None  # fraction, the run plan's predicted MFU (None: no plan, or it has no prediction)
    plan_compute_bound_share: float | None  # fraction of the plan's step a cap slows (None: as above)
    sweep: pw.CappedPerformance  # one GPU at each cap of the 25 W grid, arrays in ascending cap order
    best: pw.CappedPerformance  # the sweep's best point for the scenario's objective (scalars)
    plan: carbon.PlannedRun  # the run under the cap: operating point, job tokens/s, RunSummary
    llama3_energy_kwh: float  # kWh, GPU-hours x TDP (no host power, no PUE), as the Llama 3 card counts
    partial: footprint.PartialCap | None  # the job with capped_gpus of n_gpus capped (None: uncapped)
    uncapped_gpus: int  # GPUs a partial cap leaves at their TDP (0: every GPU capped, or none)
    job_tokens_per_s: float  # tokens/s of the whole job (the slowest GPU sets every step)
    gpu_power_w: float  # W, average over every GPU of the job while it trains
    footprint: footprint.Footprint  # energy, CO2e and cost with idle hours, network and embodied
    facility_overhead_j: float  # J, what the facility draws beyond the IT energy: IT energy x (PUE - 1)
    zeus: footprint.ZeusCurve  # Zeus's cost of the run against the cap, its least marked
    zeus_now_j: float  # J, Zeus's cost of the run at the cap applied
    gpus_per_node: int  # GPUs a node holds (the plan's; 8 without one): what the command is written for
    command: footprint.CapCommand  # the nvidia-smi lines that apply the cap


def _hardware(scenario, catalog) -> Hardware:
    try:
        hw = catalog.hardware(scenario.hardware)
    except (KeyError, v.InputError):
        raise CannotAnalyse("hardware", f"Hardware '{scenario.hardware}' is not in the catalog: pick a GPU.") from None
    if hw.tdp_w is None:
        raise CannotAnalyse("hardware", f"{hw.name} has no TDP, so its power cannot be modelled: "
                                        "pick another GPU or add its TDP in the preset manager.")
    return hw


def _model_args(s) -> dict[str, float]:
    return dict(compute_bound_share=s.compute_bound_share, static_fraction=s.static_fraction,
                min_voltage_fraction=s.min_voltage_fraction)


def analyse(scenario, view, catalog) -> PowerAnalysis:
    """What the panel shows for ``scenario`` (a :class:`workbench.scenarios.PowerScenario`)
    under the plan ``view`` (a :class:`workbench.workspace.PlanView`, or None), its GPU looked
    up in ``catalog``. The scenario carries the plan's numbers once it follows the plan; the
    view adds the node size the cap command is written for and the predicted MFU the panel
    quotes. Raises :class:`CannotAnalyse` (an InputError) when the GPU is unknown or has no
    TDP, the cap is below the lowest the power model honours or the GPU has no rate at the
    precision the MFU refers to; any other InputError as the model raises it."""
    s = scenario
    hw = _hardware(s, catalog)
    tdp = hw.tdp_w
    model = _model_args(s)
    try:
        peak = carbon.plan_peak_flops(s, hw)
        rate = carbon.scenario_tokens_per_s(s, peak)
        sweep = pw.power_cap_sweep(tdp, rate, **model)
        best = pw.best_of_sweep(sweep, s.cap_objective, tdp, s.zeus_eta)
        plan = carbon.plan_for_scenario(s, tdp, tokens_per_s_per_gpu=rate)
        llama_kwh = float(carbon.llama3_style_energy_kwh(plan.summary.gpu_hours, tdp))
        partial = None
        if s.power_cap_w is not None:
            partial = footprint.partial_cap(s.n_gpus, s.capped_gpus, plan.cap_w, tdp, rate, **model)
        stragglers = partial is not None and partial.stragglers
        gpu_power = partial.mean_gpu_power_w if stragglers else float(plan.performance.power_w)
        embodied = None
        if s.embodied_gpu_g is not None:
            embodied = footprint.embodied_kg_per_gpu_s(
                s.embodied_gpu_g / 1000.0, s.embodied_server_g / 1000.0, s.embodied_gpus_per_server,
                s.embodied_lifetime_s, s.embodied_use_fraction)
        fp = footprint.run_footprint(
            s.n_gpus, plan.summary.duration_s, gpu_power, s.pue, s.grid_g_per_kwh,
            host_w_per_gpu=s.host_overhead_w_per_gpu, network_w_per_gpu=s.network_w_per_gpu, idle_s=s.idle_s,
            idle_power_w_per_gpu=s.idle_power_w_per_gpu, embodied_kg_per_gpu_s=embodied,
            energy_price_per_kwh=s.energy_price_per_kwh, gpu_hour_price=s.gpu_hour_price)
        zeus = footprint.zeus_curve(sweep, tdp, s.train_tokens, s.n_gpus, s.zeus_eta)
        zeus_now = footprint.zeus_run_cost(plan.performance, tdp, s.train_tokens, s.n_gpus, s.zeus_eta)
        per_node = DEFAULT_GPUS_PER_NODE
        if view is not None:
            per_node = int(getattr(view.plan, "gpus_per_node", 0) or DEFAULT_GPUS_PER_NODE)
        capped = s.capped_gpus if s.capped_gpus is not None and s.capped_gpus < s.n_gpus else None
        command = footprint.cap_commands(s.power_cap_w, tdp, capped, per_node)
    except v.InputError as exc:
        if exc.parameter == "power_cap_w":
            lowest = pw.min_power_cap(tdp, s.static_fraction, s.min_voltage_fraction)
            raise CannotAnalyse("power_cap_w", f"The power cap is below the lowest this model can honour on "
                                               f"{hw.name} ({lowest:.0f} W): raise it or clear it.") from exc
        if exc.parameter == "precision":
            raise CannotAnalyse("precision", f"{hw.name} has no {PRECISION_LABELS[s.precision]} rate for the MFU "
                                             "to refer to: pick another training precision, or plan from a "
                                             "measured throughput.") from exc
        raise
    prediction = view.prediction if view is not None else None
    return PowerAnalysis(
        hardware=hw, tdp_w=tdp, peak_flops=peak,
        flops_per_token=float(mfu_model.flops_per_token(s.n_params)) if peak is not None else None,
        tokens_per_s_per_gpu=rate,
        plan_mfu=prediction.mfu if prediction is not None else None,
        plan_compute_bound_share=prediction.compute_bound_share if prediction is not None else None,
        sweep=sweep, best=best, plan=plan, llama3_energy_kwh=llama_kwh, partial=partial,
        uncapped_gpus=partial.n_gpus - partial.n_capped if stragglers else 0,
        job_tokens_per_s=partial.job_tokens_per_s if partial is not None else plan.job_tokens_per_s,
        gpu_power_w=gpu_power, footprint=fp, facility_overhead_j=fp.it_energy_j * (fp.pue - 1.0),
        zeus=zeus, zeus_now_j=zeus_now, gpus_per_node=per_node, command=command,
    )


def check_cap(scenario, catalog) -> None:
    """Raise the power model's InputError ("power_cap_w", naming the lowest cap allowed) when
    ``scenario``'s cap is below what the model can honour on its GPU; nothing when the cap is
    fine, or when the GPU (unknown, or without a TDP) cannot say. For refusing such a cap as
    it is typed, before it becomes the scenario."""
    if scenario.power_cap_w is None:
        return
    try:
        hw = _hardware(scenario, catalog)
    except CannotAnalyse:
        return
    try:
        carbon.plan_for_scenario(scenario, hw.tdp_w, tokens_per_s_per_gpu=1.0)  # any rate: the cap decides
    except v.InputError as exc:
        if exc.parameter == "power_cap_w":
            raise
    except ValueError:
        pass  # another field's problem: whoever applies the scenario reports it


@dataclass(frozen=True, eq=False)
class WhereAnalysis:
    """The run of a :class:`PowerAnalysis` on every grid region, and when to start it."""

    regions: tuple[footprint.RegionEmission, ...]  # kg CO2e on each grid, lowest first (empty: see problem)
    best_start: footprint.BestStart | None  # on the scenario's 24-hour profile (None: no profile)
    problem: str = ""  # why the regions could not be compared ("" when they could)


def where(scenario, analysis: PowerAnalysis, regions: Sequence[tuple[str, float]]) -> WhereAnalysis:
    """The facility energy of ``analysis`` (worked out for ``scenario``) on each of ``regions``
    ((key, gCO2e/kWh) pairs, the presets' grids), plus the scenario's own intensity as
    :data:`CUSTOM` when its region is none of them, with the embodied emissions on each; and the
    best start of the run on the scenario's hourly profile. A comparison that fails is held as
    ``problem`` (the rest of the panel stands). Kept for the last few inputs: the same change
    read twice is compared once."""
    v.instance("analysis", analysis, PowerAnalysis, "a PowerAnalysis")
    pairs = tuple((str(key), float(g)) for key, g in regions)
    if scenario.region not in {key for key, _g in pairs}:
        pairs = (*pairs, (CUSTOM, float(scenario.grid_g_per_kwh)))
    fp = analysis.footprint
    return _where(fp.facility_energy_kwh, fp.embodied_co2e_kg or 0.0, pairs, tuple(scenario.hourly_g_per_kwh),
                  fp.training_s, fp.training_facility_kwh)


# a memo on plain numbers and tuples: a tab drawn again, or read for its CSV, compares nothing again
@functools.lru_cache(maxsize=8)
def _where(facility_kwh: float, embodied_kg: float, regions: tuple[tuple[str, float], ...],
           hourly: tuple[float, ...], training_s: float, training_kwh: float) -> WhereAnalysis:
    try:
        compared = footprint.compare_regions(facility_kwh, regions, embodied_kg)
        when = footprint.best_start(hourly, training_s, training_kwh) if hourly and training_s > 0 else None
    except (ValueError, ArithmeticError) as exc:
        return WhereAnalysis((), None, str(exc))
    return WhereAnalysis(compared, when)
