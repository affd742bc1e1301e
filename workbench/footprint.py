"""The whole footprint of a training run, beyond the power model's busy GPUs.

What this module adds to :mod:`workbench.power` and :mod:`workbench.carbon`:

- **Energy against time** (:func:`zeus_curve`): Zeus's cost, eta x energy + (1 - eta) x max
  power x time, of the whole run at every cap of a sweep, and the cap that minimises it.
- **Capping part of a job** (:func:`partial_cap`): in synchronous data parallel every step
  waits for the slowest GPU, so a few capped GPUs are stragglers that set the pace of all;
  the uncapped ones finish early and wait at static power.
- **The cap as a command** (:func:`cap_commands`): the ``nvidia-smi`` lines that set it.
- **Idle allocations, network power and embodied emissions** (:func:`run_footprint`): hours a
  reservation is held but not training, network power per GPU in the IT energy, and
  manufacturing emissions amortised over the hardware's lifetime
  (:func:`embodied_kg_per_gpu_s`).
- **Where and when** (:func:`compare_regions`, :func:`best_start`): the same run's CO2e on
  each grid, and the start time that meets the lowest average intensity of a 24-hour profile
  (entered as text, :func:`parse_hourly_text`, or read from a CSV of timestamp and g/kWh,
  :func:`parse_intensity_csv`).

SI units throughout (joules, seconds, watts, kg CO2e) except where a name says kWh or g/kWh:
grid intensities are published per kWh. Every figure that is a fact about hardware (an
embodied estimate, a transceiver's power) comes from ``presets`` with its source; nothing
here assumes one.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, time

import numpy as np

from workbench import _validate as v
from workbench import carbon
from workbench import power as pw
from workbench._arrays import distinct

__all__ = [
    "SECONDS_PER_YEAR",
    "HOURS_PER_DAY",
    "ZeusCurve",
    "zeus_curve",
    "zeus_run_cost",
    "PartialCap",
    "partial_cap",
    "CapCommand",
    "cap_commands",
    "embodied_kg_per_gpu_s",
    "Footprint",
    "run_footprint",
    "RegionEmission",
    "compare_regions",
    "hourly_profile",
    "parse_hourly_text",
    "ProfileImport",
    "parse_intensity_csv",
    "BestStart",
    "best_start",
]

#: A year of 365 days: the amortisation year (8,760 h, as BLOOM's per-hour embodied figures use).
SECONDS_PER_YEAR = 365 * 24 * 3600.0
HOURS_PER_DAY = 24
_DAY_S = HOURS_PER_DAY * 3600.0


# -- energy against time ------------------------------------------------------------------------
@dataclass(frozen=True)
class ZeusCurve:
    """Zeus's energy-time cost of a whole run at each cap of a sweep (arrays, ascending caps)."""

    cap_w: np.ndarray
    eta: float
    max_power_w: float  # the job's maximum power: n_gpus x TDP, which turns time into joules
    energy_j: np.ndarray  # GPU energy of the run at each cap
    time_s: np.ndarray  # run duration at each cap
    energy_term_j: np.ndarray  # eta x energy
    time_term_j: np.ndarray  # (1 - eta) x max power x time
    cost_j: np.ndarray  # the sum
    best: int  # index of the least cost (the lowest such cap on a tie)

    @property
    def best_cap_w(self) -> float:
        return float(self.cap_w[self.best])

    @property
    def best_cost_j(self) -> float:
        return float(self.cost_j[self.best])


@v.public
def zeus_curve(sweep: pw.CappedPerformance, tdp_w: float, train_tokens: float, n_gpus: int,
               eta: float = pw.ZEUS_ETA) -> ZeusCurve:
    """Zeus's cost (:func:`workbench.power.zeus_cost`) of training ``train_tokens`` tokens on
    ``n_gpus`` GPUs at each cap of ``sweep`` (a :func:`workbench.power.power_cap_sweep`).

    Energy = tokens x joules per token; time = tokens / (GPUs x tokens/s per GPU); the maximum
    power is GPUs x TDP. Per token the cost is eta x P/r + (1 - eta) x TDP/r for one GPU of
    power P and rate r, so the least cost is at the cap :func:`workbench.power.best_of_sweep`
    picks for "energy_time" with the same ``eta``.
    """
    v.instance("sweep", sweep, pw.CappedPerformance, "a CappedPerformance from power_cap_sweep")
    tdp = v.bounded("tdp_w", tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W")
    tokens = v.bounded("train_tokens", train_tokens, 0.0, v.MAX_TOKENS, "tokens", low_open=True)
    gpus = v.gpu_count("n_gpus", n_gpus)
    weight = v.fraction("eta", eta)
    caps = np.atleast_1d(np.asarray(sweep.cap_w, dtype=float))
    per_token_j = np.atleast_1d(np.asarray(sweep.joules_per_token, dtype=float))
    rate = np.atleast_1d(np.asarray(sweep.tokens_per_s, dtype=float))
    # the choice is made per token, exactly as best_of_sweep makes it; the run scales it
    per_token_cost = pw.zeus_cost(per_token_j, 1.0 / rate, tdp, weight)
    best = int(np.argmin(per_token_cost))
    energy = tokens * per_token_j
    duration = tokens / (gpus * rate)
    top = gpus * tdp
    return ZeusCurve(
        cap_w=caps, eta=weight, max_power_w=top, energy_j=energy, time_s=duration,
        energy_term_j=weight * energy, time_term_j=(1.0 - weight) * top * duration,
        cost_j=tokens * per_token_cost, best=best,
    )



@v.public
def zeus_run_cost(performance: pw.CappedPerformance, tdp_w: float, train_tokens: float, n_gpus: int,
                  eta: float = pw.ZEUS_ETA) -> float:
    """Zeus's cost (J) of the whole run at one operating point (a scalar
    :func:`workbench.power.capped_performance`), as :func:`zeus_curve` counts it at each cap."""
    v.instance("performance", performance, pw.CappedPerformance, "a CappedPerformance")
    tdp = v.bounded("tdp_w", tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W")
    tokens = v.bounded("train_tokens", train_tokens, 0.0, v.MAX_TOKENS, "tokens", low_open=True)
    gpus = v.gpu_count("n_gpus", n_gpus)
    rate = v.positive("performance.tokens_per_s", float(np.asarray(performance.tokens_per_s)))
    per_token = v.non_negative("performance.joules_per_token", float(np.asarray(performance.joules_per_token)))
    energy = tokens * per_token
    return float(pw.zeus_cost(energy, tokens / (gpus * rate), gpus * tdp, v.fraction("eta", eta)))

# -- capping part of a job ----------------------------------------------------------------------
@dataclass(frozen=True)
class PartialCap:
    """A synchronous data-parallel job with ``n_capped`` of its ``n_gpus`` GPUs capped.

    Every step waits for the slowest GPU: the job runs at the capped GPUs' speed, and the
    uncapped GPUs compute for ``busy_fraction`` of each step at full power and wait the rest
    at static power.
    """

    n_gpus: int
    n_capped: int
    cap_w: float
    stragglers: bool  # some but not all GPUs capped, and the cap slows them
    capped: pw.CappedPerformance  # one capped GPU
    uncapped: pw.CappedPerformance  # one GPU at its TDP
    tokens_per_s_per_gpu: float  # every GPU's share of the job: the capped rate
    job_tokens_per_s: float
    uncapped_job_tokens_per_s: float  # the job with no cap at all
    busy_fraction: float  # share of a step an uncapped GPU computes
    waiting_power_w: float  # static power, drawn while an uncapped GPU waits
    uncapped_gpu_power_w: float  # an uncapped GPU's average over a step
    mean_gpu_power_w: float  # average over every GPU of the job

    @property
    def wait_fraction(self) -> float:
        """Share of each step an uncapped GPU spends waiting for the stragglers."""
        return 1.0 - self.busy_fraction

    @property
    def throughput_loss(self) -> float:
        """Share of the uncapped job's throughput lost to the cap."""
        return 1.0 - self.job_tokens_per_s / self.uncapped_job_tokens_per_s


@v.public
def partial_cap(
    n_gpus: int,
    capped_gpus: int | None,
    cap_w: float,
    tdp_w: float,
    tokens_per_s: float,
    compute_bound_share: float = pw.DEFAULT_COMPUTE_BOUND_SHARE,
    static_fraction: float = pw.DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = pw.DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = pw.DEFAULT_MIN_CLOCK_FRACTION,
) -> PartialCap:
    """Throughput and power of a job with ``capped_gpus`` of ``n_gpus`` GPUs under ``cap_w``
    (``None``, or more than ``n_gpus``: all of them), the others at their TDP.

    Synchronous data parallel: the step takes as long as the slowest GPU's, so the job's rate
    is GPUs x the capped rate whatever the count; an uncapped GPU draws the TDP while it
    computes (the capped step time x capped rate / uncapped rate) and its static power
    (``static_fraction`` x TDP) while it waits. ``tokens_per_s`` is one GPU's uncapped rate.
    """
    gpus = v.gpu_count("n_gpus", n_gpus)
    count = gpus if capped_gpus is None else min(v.integer("capped_gpus", capped_gpus, 0, v.MAX_GPUS), gpus)
    tdp = v.bounded("tdp_w", tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W")
    cap = v.positive("cap_w", cap_w)
    model = (compute_bound_share, static_fraction, min_voltage_fraction, min_clock_fraction)
    capped = pw.capped_performance(min(cap, tdp), tdp, tokens_per_s, *model)
    full = pw.capped_performance(tdp, tdp, tokens_per_s, *model)
    if count == 0:
        capped = full
    rate = float(capped.tokens_per_s)
    busy = rate / float(full.tokens_per_s)
    waiting = float(pw.power_at_clock(0.0, tdp, static_fraction, min_voltage_fraction))
    uncapped_power = float(full.power_w) * busy + waiting * (1.0 - busy)
    mean = (count * float(capped.power_w) + (gpus - count) * uncapped_power) / gpus
    return PartialCap(
        n_gpus=gpus, n_capped=count, cap_w=cap, stragglers=0 < count < gpus and busy < 1.0,
        capped=capped, uncapped=full, tokens_per_s_per_gpu=rate, job_tokens_per_s=gpus * rate,
        uncapped_job_tokens_per_s=gpus * float(full.tokens_per_s), busy_fraction=busy,
        waiting_power_w=waiting, uncapped_gpu_power_w=uncapped_power, mean_gpu_power_w=mean,
    )


# -- the cap as a command -----------------------------------------------------------------------
@dataclass(frozen=True)
class CapCommand:
    """Shell lines that set a power cap with ``nvidia-smi``, and what to know about them."""

    lines: tuple[str, ...]
    note: str

    def text(self) -> str:
        """The lines and the note as one copyable block (the note as shell comments)."""
        return "\n".join((*self.lines, *(f"# {line}" for line in self.note.split("\n"))))


CAP_NOTE = ("Needs root; the limit must lie within the range 'nvidia-smi -q -d POWER' shows.\n"
            "A power limit lasts until the GPU resets or the node reboots:\n"
            "have provisioning (a boot-time unit) or DCGM apply it again.")


def _watts(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 5e-3 else f"{value:.2f}"


@v.public
def cap_commands(cap_w: float | None, tdp_w: float, capped_gpus: int | None = None,
                 gpus_per_node: int = 8) -> CapCommand:
    """The ``nvidia-smi`` command(s) that apply ``cap_w`` (``None``: no cap, the TDP) to
    ``capped_gpus`` GPUs (``None``: every GPU), ``gpus_per_node`` to a node.

    ``sudo nvidia-smi -pl W`` caps every GPU of the node it runs on; ``-i N`` picks GPU N
    (``sudo nvidia-smi -i 0 -pl 450``).
    """
    tdp = v.bounded("tdp_w", tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W")
    per_node = v.gpu_count("gpus_per_node", gpus_per_node)
    if cap_w is None or v.positive("cap_w", cap_w) >= tdp:
        return CapCommand(
            (f"sudo nvidia-smi -pl {_watts(tdp)}   # uncapped: back to the default limit (TDP) on each node",),
            CAP_NOTE)
    watts = _watts(cap_w)
    if capped_gpus is None:
        return CapCommand((f"sudo nvidia-smi -pl {watts}   # every GPU of the node: run it on each node",), CAP_NOTE)
    count = v.integer("capped_gpus", capped_gpus, 0, v.MAX_GPUS)
    if count == 0:
        return CapCommand(("# no GPU capped: nothing to run",), CAP_NOTE)
    full, rest = divmod(count, per_node)
    lines = []
    if full:
        where = "one node" if full == 1 else f"each of {full:,} nodes"
        lines.append(f"sudo nvidia-smi -pl {watts}   # all {per_node} GPUs, on {where}")
    if rest == 1:
        lines.append(f"sudo nvidia-smi -i 0 -pl {watts}   # GPU 0" + (" of one more node" if full else ""))
    elif rest:
        ids = " ".join(str(i) for i in range(rest))
        lines.append(f"for i in {ids}; do sudo nvidia-smi -i $i -pl {watts}; done"
                     + ("   # on one more node" if full else f"   # GPUs 0-{rest - 1}"))
    return CapCommand(tuple(lines), CAP_NOTE)


# -- embodied emissions, idle allocations, network power -----------------------------------------
@v.public
def embodied_kg_per_gpu_s(gpu_kg: float, server_kg: float = 0.0, gpus_per_server: int = 8,
                          lifetime_s: float = 6 * SECONDS_PER_YEAR, use_fraction: float = 1.0) -> float:
    """Manufacturing emissions per GPU-second (kg CO2e/s) of a GPU and its share of a server:
    (gpu_kg + server_kg / gpus_per_server) / (lifetime_s x use_fraction).

    ``lifetime_s`` is how long the hardware serves before it is replaced; ``use_fraction``
    the share of that time it is allocated to jobs (the rest is amortised over the jobs too).
    Multiply by 3600 for kg per GPU-hour.
    """
    device = v.non_negative("gpu_kg", gpu_kg)
    server = v.non_negative("server_kg", server_kg)
    share = v.gpu_count("gpus_per_server", gpus_per_server)
    life = v.bounded("lifetime_s", lifetime_s, 1.0, 100 * SECONDS_PER_YEAR, "s")
    use = v.fraction("use_fraction", use_fraction, allow_zero=False)
    return (device + server / share) / (life * use)


@dataclass(frozen=True)
class Footprint:
    """Energy, emissions and cost of a run with its idle allocation, network power and
    embodied emissions. Energies in J (and kWh where named), emissions in kg CO2e."""

    n_gpus: int
    training_s: float
    idle_s: float
    training_gpu_hours: float
    idle_gpu_hours: float
    reserved_gpu_hours: float  # training + idle: what the reservation holds
    gpu_energy_j: float  # GPUs x average GPU power x training time
    host_energy_j: float
    network_energy_j: float
    training_it_j: float
    idle_it_j: float  # 0 when the idle power is not known
    idle_power_known: bool
    it_energy_j: float
    pue: float
    training_facility_kwh: float
    idle_facility_kwh: float
    facility_energy_kwh: float
    training_co2e_kg: float
    idle_co2e_kg: float
    operational_co2e_kg: float  # training + idle
    embodied_kg_per_gpu_s: float | None  # None: no embodied figure set
    embodied_co2e_kg: float | None
    total_co2e_kg: float  # operational + embodied (operational only when not set)
    energy_cost: float
    compute_cost: float  # reserved GPU-hours x GPU-hour price: idle hours are paid too
    idle_cost: float  # the idle allocation's share of the total
    total_cost: float

    @property
    def facility_energy_j(self) -> float:
        return self.facility_energy_kwh * carbon.J_PER_KWH

    @property
    def idle_share(self) -> float:
        """Share of the reserved GPU-hours spent idle."""
        return self.idle_gpu_hours / self.reserved_gpu_hours if self.reserved_gpu_hours else 0.0


@v.public
def run_footprint(
    n_gpus: int,
    training_s: float,
    gpu_power_w: float,
    pue: float,
    grid_g_per_kwh: float,
    host_w_per_gpu: float = 0.0,
    network_w_per_gpu: float = 0.0,
    idle_s: float = 0.0,
    idle_power_w_per_gpu: float | None = None,
    embodied_kg_per_gpu_s: float | None = None,
    energy_price_per_kwh: float = 0.0,
    gpu_hour_price: float = 0.0,
) -> Footprint:
    """The whole footprint of ``n_gpus`` GPUs training for ``training_s`` at an average
    ``gpu_power_w`` each, plus ``host_w_per_gpu`` and ``network_w_per_gpu`` (NICs, optics
    and switch ports spread over the GPUs), then held idle for ``idle_s`` at
    ``idle_power_w_per_gpu`` (everything a held, idle GPU slot draws; ``None``: not known,
    so the idle energy is left out and ``idle_power_known`` says so, though its GPU-hours are
    still paid).

    Facility energy = IT energy x PUE; operational CO2e = facility energy x grid intensity;
    embodied CO2e = reserved GPU-seconds x ``embodied_kg_per_gpu_s`` (``None``: not set).
    Cost = facility kWh x energy price + reserved GPU-hours x GPU-hour price.
    """
    gpus = v.gpu_count("n_gpus", n_gpus)
    train = v.bounded("training_s", training_s, 0.0, v.MAX_SECONDS * 1e3, "s")
    power = v.non_negative("gpu_power_w", gpu_power_w)
    factor = v.number("pue", pue)
    if factor < 1:
        raise v.InputError("pue", f"must be >= 1 (facility energy / IT energy), got {factor:g}")
    grid = v.non_negative("grid_g_per_kwh", grid_g_per_kwh)
    host = v.non_negative("host_w_per_gpu", host_w_per_gpu)
    network = v.non_negative("network_w_per_gpu", network_w_per_gpu)
    idle = v.bounded("idle_s", idle_s, 0.0, v.MAX_SECONDS * 1e3, "s")
    idle_w = None if idle_power_w_per_gpu is None else v.non_negative("idle_power_w_per_gpu", idle_power_w_per_gpu)
    embodied = None if embodied_kg_per_gpu_s is None else v.non_negative("embodied_kg_per_gpu_s",
                                                                           embodied_kg_per_gpu_s)
    energy_price = v.non_negative("energy_price_per_kwh", energy_price_per_kwh)
    hour_price = v.non_negative("gpu_hour_price", gpu_hour_price)

    gpu_j = float(carbon.it_energy_j(gpus, power, train))
    host_j = float(carbon.it_energy_j(gpus, host, train))
    network_j = float(carbon.it_energy_j(gpus, network, train))
    training_it = gpu_j + host_j + network_j
    idle_it = float(carbon.it_energy_j(gpus, idle_w, idle)) if idle_w is not None else 0.0
    training_kwh = float(carbon.facility_energy_kwh(training_it / carbon.J_PER_KWH, factor))
    idle_kwh = float(carbon.facility_energy_kwh(idle_it / carbon.J_PER_KWH, factor))
    training_co2 = float(carbon.emissions_kg(training_kwh, grid))
    idle_co2 = float(carbon.emissions_kg(idle_kwh, grid))
    train_h = gpus * train / carbon.S_PER_HOUR
    idle_h = gpus * idle / carbon.S_PER_HOUR
    embodied_co2 = None if embodied is None else embodied * gpus * (train + idle)
    operational = training_co2 + idle_co2
    compute_cost = (train_h + idle_h) * hour_price
    energy_cost = (training_kwh + idle_kwh) * energy_price
    return Footprint(
        n_gpus=gpus, training_s=train, idle_s=idle,
        training_gpu_hours=train_h, idle_gpu_hours=idle_h, reserved_gpu_hours=train_h + idle_h,
        gpu_energy_j=gpu_j, host_energy_j=host_j, network_energy_j=network_j,
        training_it_j=training_it, idle_it_j=idle_it, idle_power_known=idle_w is not None,
        it_energy_j=training_it + idle_it, pue=factor,
        training_facility_kwh=training_kwh, idle_facility_kwh=idle_kwh,
        facility_energy_kwh=training_kwh + idle_kwh,
        training_co2e_kg=training_co2, idle_co2e_kg=idle_co2, operational_co2e_kg=operational,
        embodied_kg_per_gpu_s=embodied, embodied_co2e_kg=embodied_co2,
        total_co2e_kg=operational + (embodied_co2 or 0.0),
        energy_cost=energy_cost, compute_cost=compute_cost,
        idle_cost=idle_h * hour_price + idle_kwh * energy_price,
        total_cost=energy_cost + compute_cost,
    )


# -- where: the same run on every grid ----------------------------------------------------------
@dataclass(frozen=True)
class RegionEmission:
    """The run's CO2e on one grid."""

    key: str
    g_per_kwh: float
    operational_co2e_kg: float
    total_co2e_kg: float  # with the (grid-independent) embodied emissions


@v.public
def compare_regions(facility_energy_kwh: float, regions: Sequence[tuple[str, float]],
                    embodied_co2e_kg: float = 0.0) -> tuple[RegionEmission, ...]:
    """The same run (``facility_energy_kwh``) on each of ``regions`` ((key, gCO2e/kWh) pairs),
    lowest CO2e first (ties by key). The energy, and so its cost, is the same everywhere;
    only the intensity changes."""
    energy = v.non_negative("facility_energy_kwh", facility_energy_kwh)
    embodied = v.non_negative("embodied_co2e_kg", embodied_co2e_kg)
    out = []
    for i, pair in enumerate(v.items("regions", regions, "a list of (key, gCO2e/kWh) pairs")):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise v.InputError("regions", f"item {i} must be a (key, gCO2e/kWh) pair, got {v._describe(pair)}")
        key = v.text(f"regions[{i}] key", pair[0])
        grid = v.bounded(f"regions[{i}] intensity", pair[1], 0.0, v.MAX_GRID_G_PER_KWH, "gCO2e/kWh")
        operational = float(carbon.emissions_kg(energy, grid))
        out.append(RegionEmission(key, grid, operational, operational + embodied))
    return tuple(sorted(out, key=lambda r: (r.total_co2e_kg, r.key)))


# -- when: a time-of-day profile ---------------------------------------------------------------
@v.public
def hourly_profile(values: Iterable[float]) -> tuple[float, ...]:
    """24 hourly grid intensities (gCO2e/kWh, hour 0 = midnight to 1 am), checked."""
    try:
        items = tuple(values)
    except TypeError:
        raise v.InputError("hourly_g_per_kwh", f"must be 24 numbers, got {v._describe(values)}") from None
    if len(items) != HOURS_PER_DAY:
        raise v.InputError("hourly_g_per_kwh", f"must hold 24 hourly values (midnight first), got {len(items)}")
    return tuple(v.bounded("hourly_g_per_kwh", x, 0.0, v.MAX_GRID_G_PER_KWH, "gCO2e/kWh") for x in items)


_SEPARATORS = re.compile(r"[\s,;]+")


@v.public
def parse_hourly_text(text: str) -> tuple[float, ...]:
    """24 hourly intensities typed as text, separated by commas, semicolons, spaces or new
    lines ("420, 410, 400, ..."), midnight first."""
    if not isinstance(text, str):
        raise v.InputError("text", f"must be text, got {v._describe(text)}")
    words = [w for w in _SEPARATORS.split(text.strip()) if w]
    values = []
    for i, word in enumerate(words):
        try:
            values.append(float(word))
        except ValueError:
            raise v.InputError("text", f"value {i + 1} ({word!r}) is not a number") from None
        if not math.isfinite(values[-1]):
            raise v.InputError("text", f"value {i + 1} ({word!r}) is not a finite number")
    if len(values) != HOURS_PER_DAY:
        raise v.InputError("text", f"needs 24 hourly values (midnight first), got {len(values)}")
    try:
        return hourly_profile(values)
    except v.InputError as exc:
        raise v.InputError("text", str(exc).split(": ", 1)[1]) from None


@dataclass(frozen=True)
class ProfileImport:
    """A 24-hour profile read from a CSV of timestamp and intensity: each hour of the day's
    mean over every row that falls in it."""

    values: tuple[float, ...]
    rows: int  # rows averaged
    samples_per_hour: tuple[int, ...]
    skipped: int  # rows with an empty intensity
    value_column: str


_TIME_WORDS = ("time", "date", "hour", "period")
_VALUE_WORDS = ("intensity", "g/kwh", "gco2", "co2", "carbon")


def _timestamp_hour(text: str) -> int | None:
    word = text.strip()
    if not word:
        return None
    if word.endswith(("Z", "z")):
        word = word[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(word).hour
    except ValueError:
        pass
    try:
        return time.fromisoformat(word).hour
    except ValueError:
        return None


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


@v.public
def parse_intensity_csv(text: str) -> ProfileImport:
    """The hour-of-day profile of a CSV export with a timestamp column and an intensity column
    in gCO2e/kWh (hourly or finer; several days are averaged hour by hour).

    Columns are found by their header: the first whose name mentions time or date, and the
    first other one that mentions intensity, g/kWh, CO2 or carbon (without a header: the
    first two). Timestamps are ISO 8601 ("2024-05-01T13:00:00Z", "2024-05-01 13:00") or a
    time of day ("13:00"); the hour is taken as written (a file in UTC gives UTC hours).
    Lines starting with "#" and rows with an empty intensity are skipped; every hour of the day
    must have data.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise v.InputError("csv", f"is not UTF-8 text ({exc.reason})") from None
    if not isinstance(text, str):
        raise v.InputError("csv", f"must be text, got {v._describe(text)}")
    rows = [(n, row) for n, row in enumerate(csv.reader(io.StringIO(text.lstrip("\ufeff"))), start=1)
            if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")]
    if not rows:
        raise v.InputError("csv", "holds no rows")
    time_col, value_col, value_name = 0, 1, "column 2"
    first_line, first = rows[0]
    if _timestamp_hour(first[0]) is None or len(first) < 2 or not _is_number(first[1]):
        header = [cell.strip().lower() for cell in first]
        times = [i for i, h in enumerate(header) if any(w in h for w in _TIME_WORDS)]
        time_col = times[0] if times else 0
        values = [i for i, h in enumerate(header) if i != time_col and any(w in h for w in _VALUE_WORDS)]
        others = [i for i in range(len(header)) if i != time_col]
        if not values and not others:
            raise v.InputError("csv", f"line {first_line}: needs a timestamp column and an intensity column")
        value_col = values[0] if values else others[0]
        value_name = first[value_col].strip() or f"column {value_col + 1}"
        rows = rows[1:]
    sums = [0.0] * HOURS_PER_DAY
    counts = [0] * HOURS_PER_DAY
    skipped = 0
    for line, row in rows:
        if len(row) <= max(time_col, value_col):
            raise v.InputError("csv", f"line {line}: has {len(row)} columns, needs {max(time_col, value_col) + 1}")
        hour = _timestamp_hour(row[time_col])
        if hour is None:
            raise v.InputError("csv", f"line {line}: {row[time_col].strip()!r} is not a timestamp "
                                      "(ISO 8601, e.g. 2024-05-01T13:00:00Z, or a time of day, 13:00)")
        cell = row[value_col].strip()
        if not cell:
            skipped += 1
            continue
        try:
            value = float(cell)
        except ValueError:
            raise v.InputError("csv", f"line {line}: intensity {cell!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or value > v.MAX_GRID_G_PER_KWH:
            raise v.InputError("csv", f"line {line}: intensity {cell} must be between 0 and "
                                      f"{v.MAX_GRID_G_PER_KWH:g} gCO2e/kWh")
        sums[hour] += value
        counts[hour] += 1
    missing = [h for h in range(HOURS_PER_DAY) if counts[h] == 0]
    if missing:
        shown = ", ".join(f"{h:02d}:00" for h in missing[:6]) + (" ..." if len(missing) > 6 else "")
        raise v.InputError("csv", f"has no data for {len(missing)} hour(s) of the day: {shown}")
    return ProfileImport(
        values=tuple(s / c for s, c in zip(sums, counts, strict=True)), rows=sum(counts),
        samples_per_hour=tuple(counts), skipped=skipped, value_column=value_name,
    )


@dataclass(frozen=True)
class BestStart:
    """When to start a run of ``duration_s`` on a 24-hour intensity profile (the run draws
    constant power; a run longer than a day wraps around the profile)."""

    duration_s: float
    start_s: float  # best start, seconds after midnight
    best_g_per_kwh: float  # the run's average intensity from that start
    worst_start_s: float
    worst_g_per_kwh: float
    daily_mean_g_per_kwh: float  # what a start at a random time meets on average
    hourly_starts_s: np.ndarray  # 0, 3600, ... 23 x 3600: for a chart
    hourly_window_g_per_kwh: np.ndarray  # the run's average intensity from each whole hour
    facility_energy_kwh: float
    best_co2e_kg: float
    mean_co2e_kg: float
    worst_co2e_kg: float

    @property
    def saving_vs_mean_kg(self) -> float:
        return self.mean_co2e_kg - self.best_co2e_kg

    @property
    def saving_vs_worst_kg(self) -> float:
        return self.worst_co2e_kg - self.best_co2e_kg

    @property
    def saving_fraction(self) -> float:
        """Share of the mean-start CO2e the best start saves."""
        return 1.0 - self.best_g_per_kwh / self.daily_mean_g_per_kwh if self.daily_mean_g_per_kwh else 0.0


def _window_average(profile: np.ndarray, start_h: np.ndarray, duration_h: float) -> np.ndarray:
    """Mean of the step profile (hour i holds profile[i]) over [s, s + D), wrapping."""
    cumulative = np.concatenate([[0.0], np.cumsum(profile)])
    total = cumulative[-1]

    def integral(t: np.ndarray) -> np.ndarray:  # of the profile from 0 to t (t >= 0)
        days, rest = np.divmod(t, HOURS_PER_DAY)
        hour = np.minimum(np.floor(rest).astype(int), HOURS_PER_DAY - 1)
        return days * total + cumulative[hour] + profile[hour] * (rest - hour)

    return (integral(start_h + duration_h) - integral(start_h)) / duration_h


@v.public
def best_start(hourly_g_per_kwh: Sequence[float], duration_s: float,
               facility_energy_kwh: float = 0.0) -> BestStart:
    """The start time (to the minute the profile allows) with the lowest average intensity
    over a run of ``duration_s``, the worst one, and the CO2e of ``facility_energy_kwh`` drawn
    evenly over the run from each, against the profile's daily mean (the average over every
    start time). The average over a window is piecewise linear in the start, so its least value
    is at a start on a whole hour or one where the run ends on a whole hour: both are tried.
    """
    profile = np.asarray(hourly_profile(hourly_g_per_kwh), dtype=float)
    duration = v.bounded("duration_s", duration_s, 0.0, v.MAX_SECONDS * 1e3, "s", low_open=True)
    energy = v.non_negative("facility_energy_kwh", facility_energy_kwh)
    hours = duration / 3600.0
    whole = np.arange(HOURS_PER_DAY, dtype=float)
    shift = hours - math.floor(hours)
    candidates = distinct(np.concatenate([whole, np.mod(whole - shift, HOURS_PER_DAY)]))
    averages = _window_average(profile, candidates, hours)
    low, high = float(averages.min()), float(averages.max())
    tol = 1e-12 * max(abs(high), 1.0)
    best = int(np.flatnonzero(averages <= low + tol)[0])  # the earliest of equal starts
    worst = int(np.flatnonzero(averages >= high - tol)[0])
    mean = float(profile.mean())
    return BestStart(
        duration_s=duration, start_s=float(candidates[best]) * 3600.0, best_g_per_kwh=low,
        worst_start_s=float(candidates[worst]) * 3600.0, worst_g_per_kwh=high, daily_mean_g_per_kwh=mean,
        hourly_starts_s=whole * 3600.0, hourly_window_g_per_kwh=_window_average(profile, whole, hours),
        facility_energy_kwh=energy, best_co2e_kg=float(carbon.emissions_kg(energy, low)),
        mean_co2e_kg=float(carbon.emissions_kg(energy, mean)),
        worst_co2e_kg=float(carbon.emissions_kg(energy, high)),
    )
