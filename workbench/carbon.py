"""Energy, emissions and cost of a training run.

Facility energy = IT energy x PUE; emissions = facility energy x grid carbon intensity.
Everything is SI (joules, seconds, watts, kg CO2e) except the two contract functions
:func:`facility_energy_kwh` and :func:`emissions_kg`, which take kWh (and g/kWh) by name
because grid intensities are published per kWh. Prices are per kWh and per GPU-hour, in
whatever currency the user works in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench import mfu
from workbench import power as pw

J_PER_KWH = 3.6e6  # 1 kWh = 1000 W x 3600 s
S_PER_HOUR = 3600.0


@v.public
def facility_energy_kwh(it_energy_kwh, pue):
    """Energy drawn by the whole facility in kWh: IT energy (kWh) x PUE (>= 1). Vectorised."""
    it, s1 = v.array("it_energy_kwh", it_energy_kwh, non_negative_only=True)
    factor, s2 = v.array("pue", pue)
    if factor.size and np.any(factor < 1):
        raise v.InputError("pue", f"must be >= 1 (facility energy / IT energy), got {factor.min():g}")
    it, factor = v.broadcast(it_energy_kwh=it, pue=factor)
    return v.scalar_or_array(it * factor, s1 and s2)


@v.public
def emissions_kg(facility_energy_kwh, grid_g_per_kwh):
    """Emissions in kg CO2e: facility energy (kWh) x grid intensity (g CO2e/kWh) / 1000. Vectorised."""
    energy, s1 = v.array("facility_energy_kwh", facility_energy_kwh, non_negative_only=True)
    grid, s2 = v.array("grid_g_per_kwh", grid_g_per_kwh, non_negative_only=True)
    energy, grid = v.broadcast(facility_energy_kwh=energy, grid_g_per_kwh=grid)
    return v.scalar_or_array(energy * grid / 1000.0, s1 and s2)


@v.public
def it_energy_j(n_gpus, gpu_power_w, duration_s, host_overhead_w_per_gpu: float = 0.0):
    """IT energy in joules: n_gpus x (GPU power + host share per GPU) x duration.

    ``gpu_power_w`` is the average draw of one GPU (not its TDP unless it runs at TDP);
    ``host_overhead_w_per_gpu`` spreads CPUs, memory, NICs and node fans over the GPUs
    (e.g. a DGX H100, 10.2 kW maximum with 8 x 700 W GPUs, leaves up to ~575 W per GPU).
    Vectorised over the first three.
    """
    gpus, s1 = v.whole_numbers("n_gpus", n_gpus)
    power, s2 = v.array("gpu_power_w", gpu_power_w, non_negative_only=True)
    time, s3 = v.array("duration_s", duration_s, non_negative_only=True)
    host = v.non_negative("host_overhead_w_per_gpu", host_overhead_w_per_gpu)
    gpus, power, time = v.broadcast(n_gpus=gpus, gpu_power_w=power, duration_s=time)
    return v.scalar_or_array(gpus * (power + host) * time, s1 and s2 and s3)


@v.public
def duration_from_tokens(tokens, tokens_per_s):
    """Seconds to process ``tokens`` at ``tokens_per_s`` (job throughput). Vectorised."""
    count, s1 = v.array("tokens", tokens, non_negative_only=True)
    rate, s2 = v.array("tokens_per_s", tokens_per_s, positive_only=True)
    count, rate = v.broadcast(tokens=count, tokens_per_s=rate)
    return v.scalar_or_array(count / rate, s1 and s2)


@v.public
def llama3_style_energy_kwh(gpu_hours, peak_power_w):
    """Energy in kWh the way the Llama 3 model card counts it: GPU-hours x per-GPU peak power.

    No PUE and no host overhead (the card uses 700 W for H100). Vectorised over ``gpu_hours``.
    """
    hours, scalar = v.array("gpu_hours", gpu_hours, non_negative_only=True)
    peak = v.positive("peak_power_w", peak_power_w)
    return v.scalar_or_array(hours * peak / 1000.0, scalar)


@dataclass(frozen=True)
class RunSummary:
    """Headline figures of a training run, as a dashboard header shows them."""

    n_gpus: int
    duration_s: float
    gpu_hours: float  # n_gpus x duration / 3600
    it_energy_j: float
    facility_energy_j: float  # it_energy_j x PUE
    facility_energy_kwh: float
    co2e_kg: float
    energy_cost: float  # facility kWh x energy price
    compute_cost: float  # GPU-hours x GPU-hour price
    total_cost: float  # energy_cost + compute_cost


@v.public
def run_summary(
    n_gpus: int,
    duration_s: float,
    gpu_power_w: float,
    pue: float,
    grid_g_per_kwh: float,
    energy_price_per_kwh: float = 0.0,
    gpu_hour_price: float = 0.0,
    host_overhead_w_per_gpu: float = 0.0,
) -> RunSummary:
    """GPU-hours, energy, emissions and cost of one run.

    The two prices add: leave ``energy_price_per_kwh`` at 0 when the GPU-hour price already
    includes power (a cloud rental), or ``gpu_hour_price`` at 0 to count energy only.
    """
    gpus = v.gpu_count("n_gpus", n_gpus)
    duration = v.non_negative("duration_s", duration_s)
    power = v.non_negative("gpu_power_w", gpu_power_w)
    factor = v.number("pue", pue)
    if factor < 1:
        raise v.InputError("pue", f"must be >= 1 (facility energy / IT energy), got {factor:g}")
    grid = v.non_negative("grid_g_per_kwh", grid_g_per_kwh)
    energy_price = v.non_negative("energy_price_per_kwh", energy_price_per_kwh)
    hour_price = v.non_negative("gpu_hour_price", gpu_hour_price)
    host = v.non_negative("host_overhead_w_per_gpu", host_overhead_w_per_gpu)

    it_j = it_energy_j(gpus, power, duration, host)
    facility_kwh = facility_energy_kwh(it_j / J_PER_KWH, factor)
    gpu_hours = gpus * duration / S_PER_HOUR
    energy_cost = facility_kwh * energy_price
    compute_cost = gpu_hours * hour_price
    return RunSummary(
        n_gpus=gpus,
        duration_s=duration,
        gpu_hours=gpu_hours,
        it_energy_j=it_j,
        facility_energy_j=it_j * factor,
        facility_energy_kwh=facility_kwh,
        co2e_kg=emissions_kg(facility_kwh, grid),
        energy_cost=energy_cost,
        compute_cost=compute_cost,
        total_cost=energy_cost + compute_cost,
    )


@dataclass(frozen=True)
class PlannedRun:
    """A planned run under a power cap: the per-GPU operating point, the job's throughput and
    the run's headline figures (:class:`RunSummary`)."""

    cap_w: float  # the cap applied (the TDP when uncapped)
    tdp_w: float
    performance: pw.CappedPerformance  # one GPU at ``cap_w`` (scalars)
    job_tokens_per_s: float  # n_gpus x per-GPU throughput under the cap
    summary: RunSummary


@v.public
def plan_run(
    hardware_tdp_w: float,
    n_gpus: int,
    train_tokens: float,
    tokens_per_s_per_gpu: float,
    power_cap_w: float | None = None,
    static_fraction: float = pw.DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = pw.DEFAULT_MIN_VOLTAGE_FRACTION,
    compute_bound_share: float = pw.DEFAULT_COMPUTE_BOUND_SHARE,
    pue: float = 1.0,
    grid_g_per_kwh: float = 475.0,
    energy_price_per_kwh: float = 0.0,
    gpu_hour_price: float = 0.0,
    host_overhead_w_per_gpu: float = 0.0,
    min_clock_fraction: float = pw.DEFAULT_MIN_CLOCK_FRACTION,
) -> PlannedRun:
    """Everything :func:`plan_summary` computes, plus the operating point it came from.

    The GPUs run under ``power_cap_w`` (``None``: uncapped, i.e. the TDP) as
    :func:`workbench.power.capped_performance` models it; the run lasts
    ``train_tokens / (n_gpus x capped tokens/s per GPU)`` and every GPU draws the model's
    average power for that long (plus ``host_overhead_w_per_gpu``).
    """
    tdp = v.bounded("hardware_tdp_w", hardware_tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W")
    gpus = v.gpu_count("n_gpus", n_gpus)
    tokens = v.positive("train_tokens", train_tokens)
    cap = tdp if power_cap_w is None else v.positive("power_cap_w", power_cap_w)
    try:
        perf = pw.capped_performance(
            cap, tdp, tokens_per_s_per_gpu, compute_bound_share,
            static_fraction, min_voltage_fraction, min_clock_fraction,
        )
    except v.InputError as exc:
        renamed = {"cap_w": "power_cap_w" if power_cap_w is not None else "hardware_tdp_w",
                   "tokens_per_s": "tokens_per_s_per_gpu", "tdp_w": "hardware_tdp_w"}.get(exc.parameter)
        if renamed is None:
            raise
        # the message names the power model's inputs too: in this function's words
        message = str(exc).split(": ", 1)[1].replace("tdp_w=", "hardware_tdp_w=")
        raise v.InputError(renamed, message) from None
    job_rate = gpus * float(perf.tokens_per_s)
    duration = float(duration_from_tokens(tokens, job_rate))
    summary = run_summary(
        gpus, duration, float(perf.power_w), pue, grid_g_per_kwh,
        energy_price_per_kwh, gpu_hour_price, host_overhead_w_per_gpu,
    )
    return PlannedRun(cap_w=cap, tdp_w=tdp, performance=perf, job_tokens_per_s=job_rate, summary=summary)


@v.public
def plan_summary(
    hardware_tdp_w: float,
    n_gpus: int,
    train_tokens: float,
    tokens_per_s_per_gpu: float,
    power_cap_w: float | None = None,
    static_fraction: float = pw.DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = pw.DEFAULT_MIN_VOLTAGE_FRACTION,
    compute_bound_share: float = pw.DEFAULT_COMPUTE_BOUND_SHARE,
    pue: float = 1.0,
    grid_g_per_kwh: float = 475.0,
    energy_price_per_kwh: float = 0.0,
    gpu_hour_price: float = 0.0,
    host_overhead_w_per_gpu: float = 0.0,
    min_clock_fraction: float = pw.DEFAULT_MIN_CLOCK_FRACTION,
) -> RunSummary:
    """The :class:`RunSummary` (energy, cost, CO2e, GPU-hours) of training ``train_tokens``
    tokens on ``n_gpus`` GPUs of ``hardware_tdp_w`` watts under ``power_cap_w``.

    ``tokens_per_s_per_gpu`` is the uncapped throughput of one GPU; the cap slows the
    compute-bound share of each step and lowers the average power (``workbench.power``).
    Defaults: PUE 1.0 (IT energy only), the 475 gCO2e/kWh world average, no prices.
    Bad input raises ``InputError`` naming the parameter (a cap below the lowest the model
    can honour names ``power_cap_w`` and the smallest cap allowed).
    """
    return plan_run(
        hardware_tdp_w, n_gpus, train_tokens, tokens_per_s_per_gpu, power_cap_w,
        static_fraction, min_voltage_fraction, compute_bound_share, pue, grid_g_per_kwh,
        energy_price_per_kwh, gpu_hour_price, host_overhead_w_per_gpu, min_clock_fraction,
    ).summary


#: PowerScenario fields that :func:`plan_run` takes under the same name.
_SCENARIO_FIELDS = (
    "n_gpus", "train_tokens", "tokens_per_s_per_gpu", "power_cap_w", "static_fraction",
    "min_voltage_fraction", "compute_bound_share", "pue", "grid_g_per_kwh",
    "energy_price_per_kwh", "gpu_hour_price", "host_overhead_w_per_gpu",
)


@v.public
def _field(scenario, name: str):
    """A field of a ``PowerScenario`` (or of anything with its field names)."""
    if not hasattr(scenario, name):
        raise v.InputError("scenario", f"must be a PowerScenario (with a {name!r} field), "
                                       f"got {v._describe(scenario)}")
    return getattr(scenario, name)


_ABSENT = object()


def _read(scenario, name: str):
    """:func:`_field` without the cost of its guard when the value plainly passes it (text, None,
    a whole number, a finite float: what a ``PowerScenario`` holds); anything else goes through
    :func:`_field`, which refuses it exactly as before."""
    value = getattr(scenario, name, _ABSENT)
    kind = type(value)
    if (kind is float and math.isfinite(value)) or kind is int or kind is str or value is None:
        return value
    return _field(scenario, name)


def plan_peak_flops(scenario, hardware) -> float | None:
    """The dense peak (FLOP/s) of ``hardware`` at the scenario's precision, which its MFU
    refers to; None when the scenario plans from a measured throughput. Raises
    ``InputError`` ("precision") when the device has no rate at that precision."""
    if _read(scenario, "throughput_mfu") is None:
        return None
    if not callable(getattr(hardware, "peak_flops", None)):
        raise v.InputError("hardware", f"must be a Hardware (with peak_flops(precision)), got {v._describe(hardware)}")
    return hardware.peak_flops(_read(scenario, "precision"))


@v.public
def scenario_tokens_per_s(scenario, peak_flops: float | None = None) -> float:
    """Uncapped tokens/s of one GPU for a ``PowerScenario``: planned from its MFU
    (``throughput_mfu`` x ``peak_flops`` / 6 ``n_params``, see
    :func:`workbench.mfu.tokens_per_s_at_mfu`) or, with no MFU, its measured
    ``tokens_per_s_per_gpu``. ``peak_flops`` is the device's dense peak at the scenario's
    precision, needed only for the MFU."""
    fraction = _read(scenario, "throughput_mfu")
    if fraction is None:
        return v.positive("tokens_per_s_per_gpu", _read(scenario, "tokens_per_s_per_gpu"))
    if peak_flops is None:
        raise v.InputError("peak_flops", "is needed to turn the scenario's MFU into a throughput")
    # a device's peak is at least 1 FLOP/s: below that the throughput rounds to 0 tokens/s
    peak_flops = v.bounded("peak_flops", peak_flops, 1.0, v.MAX_FLOPS, "FLOP/s")
    return mfu.tokens_per_s_at_mfu(fraction, peak_flops, _read(scenario, "n_params"))


@v.public
def plan_for_scenario(scenario, hardware_tdp_w: float, peak_flops: float | None = None,
                      **overrides) -> PlannedRun:
    """:func:`plan_run` for a ``PowerScenario`` (or anything with its field names), with
    ``overrides`` (e.g. ``n_gpus`` and ``train_tokens`` from the shared context) replacing
    scenario fields. The throughput is :func:`scenario_tokens_per_s` (``peak_flops`` is the
    dense peak its MFU refers to) unless ``tokens_per_s_per_gpu`` is overridden."""
    unknown = set(overrides) - set(_SCENARIO_FIELDS)
    if unknown:
        name = sorted(unknown)[0]
        raise v.InputError(name, f"is not a plan input; one of {', '.join(_SCENARIO_FIELDS)}")
    args = {name: overrides[name] if name in overrides else _read(scenario, name) for name in _SCENARIO_FIELDS}
    if "tokens_per_s_per_gpu" not in overrides:
        args["tokens_per_s_per_gpu"] = scenario_tokens_per_s(scenario, peak_flops)
    return plan_run(hardware_tdp_w, **args)
