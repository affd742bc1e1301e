"""A GPU power-capping model: what a lower power limit costs in speed and saves in energy.

The model (deliberately simple, every constant an input):

- Under a power cap the GPU lowers its clock to a fraction f of the full clock, f in
  [min_clock_fraction, 1].
- Supply voltage falls with the clock along a straight line, normalised to 1 at full clock:
  V(f) = v0 + (1 - v0) f, where v0 = ``min_voltage_fraction`` is the voltage that line
  reaches at zero clock (real DVFS tables bottom out at roughly 0.6-0.7 of the top voltage).
- Power = static (leakage, memory, fans: clock-independent) + dynamic (C V^2 f):
  P(f) = tdp * (static_fraction + (1 - static_fraction) * f * V(f)^2). P(1) = tdp.
- Only the compute-bound share of a step slows with the clock (memory- and network-bound
  parts do not): t(f) = t(1) * (share / f + 1 - share).
- The GPU is taken to draw P(f) for the whole step (a busy GPU under its cap).

Watts, joules, seconds, tokens/s throughout; ``tokens_per_s`` is the uncapped throughput of
one GPU so that tokens per joule is per GPU as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import _validate as v

DEFAULT_STATIC_FRACTION = 0.3
DEFAULT_MIN_VOLTAGE_FRACTION = 0.6
DEFAULT_MIN_CLOCK_FRACTION = 0.2
DEFAULT_COMPUTE_BOUND_SHARE = 0.7
# Zeus (ML.ENERGY) steps power limits by 25 W and weighs energy against time with eta = 0.5.
ZEUS_STEP_W = 25.0
ZEUS_ETA = 0.5
# Most caps a default sweep may hold: a 25 W step reaches a 250 kW TDP, while a mistyped TDP
# ("700 MW") or step ("0.001 W") would otherwise allocate gigabytes and freeze the panel.
MAX_SWEEP_CAPS = 10_000


@dataclass(frozen=True)
class _Model:
    tdp: float
    static: float
    v0: float
    f_min: float

    def power(self, f):
        volts = self.v0 + (1.0 - self.v0) * f
        return self.tdp * (self.static + (1.0 - self.static) * f * volts * volts)


def _model(tdp_w, static_fraction, min_voltage_fraction, min_clock_fraction=0.0) -> _Model:
    return _Model(
        tdp=v.bounded("tdp_w", tdp_w, v.MIN_GPU_POWER_W, v.MAX_GPU_POWER_W, "W"),
        static=v.fraction("static_fraction", static_fraction, allow_one=False),
        v0=v.fraction("min_voltage_fraction", min_voltage_fraction),
        f_min=v.fraction("min_clock_fraction", min_clock_fraction, allow_one=False),
    )


def _lowest_cap(model: _Model) -> float:
    return float(model.power(model.f_min))


def _clock(model: _Model, caps: np.ndarray, name: str) -> np.ndarray:
    """Solve P(f) = cap by bisection (P is increasing in f); P(result) <= cap always."""
    lowest = _lowest_cap(model)
    if caps.size:
        if model.f_min == 0.0 and np.any(caps <= lowest):
            raise v.InputError(name, f"must be > {lowest:g} W (the static power: static_fraction="
                                     f"{model.static:g} of tdp_w={model.tdp:g} W), got {caps.min():g}")
        if np.any(caps < lowest):
            raise v.InputError(
                name,
                f"must be >= {lowest:g} W (the power at min_clock_fraction={model.f_min:g} of a "
                f"tdp_w={model.tdp:g} W GPU with static_fraction={model.static:g}, "
                f"min_voltage_fraction={model.v0:g}), "
                f"got {caps.min():g}",
            )
    lo = np.full(caps.shape, model.f_min)
    hi = np.ones(caps.shape)
    for _ in range(64):  # interval shrinks by 2^-64: exact to double precision
        mid = 0.5 * (lo + hi)
        below = model.power(mid) <= caps
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    f = np.where(caps >= model.tdp, 1.0, lo)
    if f.size and np.any(f <= 0.0):
        # Only with min_clock_fraction 0, static_fraction 0 and a cap within ~1e-50 W of 0:
        # a zero clock would make every throughput 0 and tokens per joule NaN.
        raise v.InputError(name, f"is too small for the model to resolve a clock, got {caps.min():g}")
    return f


@v.public
def power_at_clock(
    clock_fraction,
    tdp_w: float,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
):
    """Board power in W at clock fraction f in [0, 1] (vectorised): the model's P(f)."""
    model = _model(tdp_w, static_fraction, min_voltage_fraction)
    f, scalar = v.array("clock_fraction", clock_fraction)
    if f.size and (np.any(f < 0) or np.any(f > 1)):
        raise v.InputError("clock_fraction", "must be in [0, 1] everywhere")
    return v.scalar_or_array(model.power(f), scalar)


@v.public
def min_power_cap(
    tdp_w: float,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
) -> float:
    """Lowest cap in W the model can honour: P(min_clock_fraction) (> it when that is 0)."""
    return _lowest_cap(_model(tdp_w, static_fraction, min_voltage_fraction, min_clock_fraction))


@v.public
def clock_fraction_for_cap(
    cap_w,
    tdp_w: float,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
):
    """Clock fraction f at which P(f) = cap; 1.0 for cap >= tdp. Vectorised over ``cap_w``.

    ``static_fraction``: share of TDP drawn regardless of clock, in [0, 1).
    ``min_voltage_fraction``: v0, the normalised voltage the V(f) line reaches at zero clock.
    ``min_clock_fraction``: lowest clock the GPU runs at; caps below P(min_clock_fraction)
    raise an InputError that names the smallest cap allowed.
    """
    model = _model(tdp_w, static_fraction, min_voltage_fraction, min_clock_fraction)
    caps, scalar = v.array("cap_w", cap_w, positive_only=True)
    return v.scalar_or_array(_clock(model, caps, "cap_w"), scalar)


@dataclass(frozen=True)
class CappedPerformance:
    """Operating point(s) under a power cap; arrays when swept over caps."""

    cap_w: float | np.ndarray
    clock_fraction: float | np.ndarray
    tokens_per_s: float | np.ndarray  # per GPU
    power_w: float | np.ndarray  # average board power, P(f) <= cap
    tokens_per_joule: float | np.ndarray
    joules_per_token: float | np.ndarray


def _performance(model: _Model, caps: np.ndarray, name: str, tokens_per_s, share, scalar: bool):
    rate = v.positive("tokens_per_s", tokens_per_s)
    bound = v.fraction("compute_bound_share", share)
    f = _clock(model, caps, name)
    throughput = rate / (bound / f + (1.0 - bound))
    watts = np.minimum(model.power(f), caps)  # equal by construction; the clamp states the promise
    out = (caps, f, throughput, watts, throughput / watts, watts / throughput)
    return CappedPerformance(*(v.scalar_or_array(x, scalar) for x in out))


@v.public
def capped_performance(
    cap_w,
    tdp_w: float,
    tokens_per_s: float,
    compute_bound_share: float = DEFAULT_COMPUTE_BOUND_SHARE,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
) -> CappedPerformance:
    """Throughput, power and energy per token of one GPU under ``cap_w`` (vectorised over caps).

    ``tokens_per_s`` is the uncapped per-GPU throughput; ``compute_bound_share`` the part of
    the step time that scales with the clock (0 = fully memory bound, 1 = fully compute bound).
    """
    model = _model(tdp_w, static_fraction, min_voltage_fraction, min_clock_fraction)
    caps, scalar = v.array("cap_w", cap_w, positive_only=True)
    return _performance(model, caps, "cap_w", tokens_per_s, compute_bound_share, scalar)


@v.public
def power_cap_sweep(
    tdp_w: float,
    tokens_per_s: float,
    caps=None,
    step_w: float = ZEUS_STEP_W,
    compute_bound_share: float = DEFAULT_COMPUTE_BOUND_SHARE,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
) -> CappedPerformance:
    """:func:`capped_performance` over a range of caps, arrays in ascending cap order.

    Without ``caps``: TDP, TDP - step_w, TDP - 2 step_w, ... down to the lowest feasible cap
    (Zeus steps power limits by 25 W the same way).
    """
    model = _model(tdp_w, static_fraction, min_voltage_fraction, min_clock_fraction)
    if caps is None:
        step = v.positive("step_w", step_w)
        lowest = _lowest_cap(model)
        steps = int(np.floor((model.tdp - lowest) / step))
        if steps >= MAX_SWEEP_CAPS:
            smallest = (model.tdp - lowest) / (MAX_SWEEP_CAPS - 1)
            raise v.InputError(
                "step_w",
                f"must be >= {smallest:.3g} W for a TDP of {model.tdp:g} W "
                f"(at most {MAX_SWEEP_CAPS:,} caps per sweep), got {step:g}",
            )
        grid = model.tdp - step * np.arange(steps, -1, -1, dtype=float)
        if model.f_min == 0.0:
            grid = grid[grid > lowest]  # static power itself is out of reach
        name = "step_w"
    else:
        grid, _ = v.array("caps", caps, positive_only=True)
        if grid.ndim != 1 or grid.size == 0:
            raise v.InputError("caps", "must be a non-empty one-dimensional list of caps in W")
        name = "caps"
    return _performance(model, grid, name, tokens_per_s, compute_bound_share, False)


@v.public
def best_cap_for_efficiency(
    tdp_w: float,
    tokens_per_s: float,
    caps=None,
    step_w: float = ZEUS_STEP_W,
    compute_bound_share: float = DEFAULT_COMPUTE_BOUND_SHARE,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
) -> CappedPerformance:
    """The operating point of the sweep with the most tokens per joule (the lowest such cap on a tie).

    Returns a scalar :class:`CappedPerformance`; its ``cap_w`` is the cap to set.
    """
    sweep = power_cap_sweep(
        tdp_w, tokens_per_s, caps, step_w, compute_bound_share,
        static_fraction, min_voltage_fraction, min_clock_fraction,
    )
    return best_of_sweep(sweep, "energy", tdp_w)


@v.public
def zeus_cost(energy_j, time_s, max_power_w: float, eta: float = ZEUS_ETA):
    """Zeus energy-time cost in joules: eta x E + (1 - eta) x max_power x t (vectorised).

    ``eta`` = 1 cares only about energy, 0 only about time; ``max_power_w`` is the GPU's
    maximum power limit, which turns time into joules.
    """
    energy, s1 = v.array("energy_j", energy_j, non_negative_only=True)
    time, s2 = v.array("time_s", time_s, non_negative_only=True)
    top = v.positive("max_power_w", max_power_w)
    weight = v.fraction("eta", eta)
    try:
        cost = weight * energy + (1.0 - weight) * top * time
    except ValueError:
        raise v.InputError("energy_j", "shapes of energy_j and time_s do not broadcast together") from None
    return v.scalar_or_array(cost, s1 and s2)


#: What "the best power cap" optimises: Zeus's energy-time cost (eta x energy + (1 - eta) x
#: max power x time, eta = 0.5), or energy alone (the most tokens per joule).
CAP_OBJECTIVES: tuple[str, ...] = ("energy_time", "energy")


@v.public
def best_cap(
    objective: str,
    tdp_w: float,
    tokens_per_s: float,
    eta: float = ZEUS_ETA,
    caps=None,
    step_w: float = ZEUS_STEP_W,
    compute_bound_share: float = DEFAULT_COMPUTE_BOUND_SHARE,
    static_fraction: float = DEFAULT_STATIC_FRACTION,
    min_voltage_fraction: float = DEFAULT_MIN_VOLTAGE_FRACTION,
    min_clock_fraction: float = DEFAULT_MIN_CLOCK_FRACTION,
) -> CappedPerformance:
    """The operating point of the sweep that is best for ``objective`` (a scalar value).

    - "energy": the most tokens per joule (:func:`best_cap_for_efficiency`).
    - "energy_time": the least Zeus cost per token, :func:`zeus_cost` of one token's energy
      and time with ``max_power_w`` the TDP: eta x P / r + (1 - eta) x TDP / r. Time counts, so
      it caps less deeply than energy alone.
    """
    sweep = power_cap_sweep(tdp_w, tokens_per_s, caps, step_w, compute_bound_share, static_fraction,
                            min_voltage_fraction, min_clock_fraction)
    return best_of_sweep(sweep, objective, tdp_w, eta)


@v.public
def best_of_sweep(sweep: CappedPerformance, objective: str, tdp_w: float, eta: float = ZEUS_ETA) -> CappedPerformance:
    """The point of an existing :func:`power_cap_sweep` that :func:`best_cap` would pick (the
    lowest such cap on a tie), without sweeping again."""
    v.instance("sweep", sweep, CappedPerformance, "a CappedPerformance from power_cap_sweep")
    goal = v.choice("objective", objective, CAP_OBJECTIVES)
    if goal == "energy":
        score = -np.asarray(sweep.tokens_per_joule)
    else:
        score = zeus_cost(np.asarray(sweep.joules_per_token), 1.0 / np.asarray(sweep.tokens_per_s),
                          v.positive("tdp_w", tdp_w), eta)
    k = int(np.argmin(score))
    return CappedPerformance(*(float(np.asarray(x)[k]) for x in (
        sweep.cap_w, sweep.clock_fraction, sweep.tokens_per_s,
        sweep.power_w, sweep.tokens_per_joule, sweep.joules_per_token,
    )))
