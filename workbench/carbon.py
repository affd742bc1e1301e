"""Energy, emissions and cost of a training run.

Facility energy = IT energy x PUE; emissions = facility energy x grid carbon intensity.
Everything is SI (joules, seconds, watts, kg CO2e) except the two contract functions
:func:`facility_energy_kwh` and :func:`emissions_kg`, which take kWh (and g/kWh) by name
because grid intensities are published per kWh. Prices are per kWh and per GPU-hour, in
whatever currency the user works in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import _validate as v

J_PER_KWH = 3.6e6  # 1 kWh = 1000 W x 3600 s
S_PER_HOUR = 3600.0


def facility_energy_kwh(it_energy_kwh, pue):
    """Energy drawn by the whole facility in kWh: IT energy (kWh) x PUE (>= 1). Vectorised."""
    it, s1 = v.array("it_energy_kwh", it_energy_kwh, non_negative_only=True)
    factor, s2 = v.array("pue", pue)
    if factor.size and np.any(factor < 1):
        raise v.InputError("pue", f"must be >= 1 (facility energy / IT energy), got {factor.min():g}")
    it, factor = v.broadcast(it_energy_kwh=it, pue=factor)
    return v.scalar_or_array(it * factor, s1 and s2)


def emissions_kg(facility_energy_kwh, grid_g_per_kwh):
    """Emissions in kg CO2e: facility energy (kWh) x grid intensity (g CO2e/kWh) / 1000. Vectorised."""
    energy, s1 = v.array("facility_energy_kwh", facility_energy_kwh, non_negative_only=True)
    grid, s2 = v.array("grid_g_per_kwh", grid_g_per_kwh, non_negative_only=True)
    energy, grid = v.broadcast(facility_energy_kwh=energy, grid_g_per_kwh=grid)
    return v.scalar_or_array(energy * grid / 1000.0, s1 and s2)


def it_energy_j(n_gpus, gpu_power_w, duration_s, host_overhead_w_per_gpu: float = 0.0):
    """IT energy in joules: n_gpus x (GPU power + host share per GPU) x duration.

    ``gpu_power_w`` is the average draw of one GPU (not its TDP unless it runs at TDP);
    ``host_overhead_w_per_gpu`` spreads CPUs, memory, NICs and node fans over the GPUs
    (e.g. a DGX H100, 10.2 kW maximum with 8 x 700 W GPUs, leaves up to ~575 W per GPU).
    Vectorised over the first three.
    """
    gpus, s1 = v.array("n_gpus", n_gpus)
    if gpus.size and (np.any(gpus < 1) or np.any(gpus != np.floor(gpus))):
        raise v.InputError("n_gpus", "must be whole numbers >= 1")
    power, s2 = v.array("gpu_power_w", gpu_power_w, non_negative_only=True)
    time, s3 = v.array("duration_s", duration_s, non_negative_only=True)
    host = v.non_negative("host_overhead_w_per_gpu", host_overhead_w_per_gpu)
    gpus, power, time = v.broadcast(n_gpus=gpus, gpu_power_w=power, duration_s=time)
    return v.scalar_or_array(gpus * (power + host) * time, s1 and s2 and s3)


def duration_from_tokens(tokens, tokens_per_s):
    """Seconds to process ``tokens`` at ``tokens_per_s`` (job throughput). Vectorised."""
    count, s1 = v.array("tokens", tokens, non_negative_only=True)
    rate, s2 = v.array("tokens_per_s", tokens_per_s, positive_only=True)
    count, rate = v.broadcast(tokens=count, tokens_per_s=rate)
    return v.scalar_or_array(count / rate, s1 and s2)


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
    gpus = v.integer("n_gpus", n_gpus, minimum=1)
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
