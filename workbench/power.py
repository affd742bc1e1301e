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

import math
import struct
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


# -- solving P(f) = cap -------------------------------------------------------------------------------
# _Model.power, in floating point, is non-decreasing in f: each of its operations (a sum or product
# of non-negative numbers, one of them rising with f) rounds monotonically. So the clocks f in
# [f_min, 1] with P(f) <= cap are a run of doubles from f_min up to a largest one, and a 64-step
# bisection of [f_min, 1] ends on exactly that double once its interval has closed to neighbouring
# doubles, which it always has when the answer is >= _EXACT_FROM (doubles there are >= 2^-56
# apart; 64 halvings reach ~2^-64). _clock finds that largest double directly (the cubic's root in
# closed form, one Newton step, then a search over the neighbouring doubles that evaluates P as the
# model does), and hands an answer below _EXACT_FROM (only with a min_clock_fraction below it, far
# from any real GPU) to the bisection itself: every clock is bit for bit the one the bisection
# gives, so P(f) <= cap always and f is the largest double that keeps to the cap.
_EXACT_FROM = 0.125
_ONE_BITS = int(np.float64(1.0).view(np.int64))  # positive doubles order as their bit patterns do
_MAX_STRIDE = 1 << 61  # keeps bit arithmetic on [0, 1] clear of int64 overflow
_WINDOW = np.arange(-16, 17, dtype=np.int64)  # doubles around the estimate checked in one go
_SLICE = 4096  # caps checked together: 4096 x 33 doubles, about a megabyte


def _bisect(model: _Model, caps: np.ndarray) -> np.ndarray:
    """The reference solve: 64 halvings of [f_min, 1] that keep P(lo) <= cap."""
    lo = np.full(caps.shape, model.f_min)
    hi = np.ones(caps.shape)
    for _ in range(64):  # interval shrinks by 2^-64: exact to double precision
        mid = 0.5 * (lo + hi)
        below = model.power(mid) <= caps
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return lo


def _estimate(model: _Model, caps, sqrt, cbrt, maximum):
    """About the clock where P(f) = cap (a float, or an array for an array of caps; within a few
    ulps, or not finite when the formula fails): the model's cubic solved in closed form, then
    one Newton step. With V = v0 + (1 - v0) f the cubic is V^3 - v0 V^2 - (1 - v0) y = 0, where
    y = (cap - static power) / dynamic power at full clock; it has one real root (Cardano's
    u + v0^2 / 9u, shifted by v0 / 3), for every y > 0."""
    static_w, dynamic_w = model.tdp * model.static, model.tdp * (1.0 - model.static)
    v0, slope = model.v0, 1.0 - model.v0
    y = (caps - static_w) / dynamic_w
    if slope == 0.0:  # a flat voltage: P is linear in f
        f = y
    else:
        half_q = v0 * v0 * v0 / 27.0 + 0.5 * slope * y
        u = cbrt(half_q + sqrt(maximum(half_q * half_q - (v0 * v0 * v0 / 27.0) ** 2, 0.0)))
        f = (u + v0 * v0 / (9.0 * u) - 2.0 * v0 / 3.0) / slope
    volts = v0 + slope * f
    return f - (static_w + dynamic_w * f * volts * volts - caps) / (dynamic_w * volts * (volts + 2.0 * slope * f))


def _bits(f: float) -> int:
    return struct.unpack("<q", struct.pack("<d", f))[0]


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _clock_one(model: _Model, cap: float) -> float:
    """The largest double f in [f_min, 1] with P(f) <= cap, for P(_EXACT_FROM) <= cap < tdp."""
    try:
        f = _estimate(model, cap, math.sqrt, math.cbrt, max)
    except ArithmeticError:  # ZeroDivisionError or OverflowError: start the search from f = 1
        f = 1.0
    f = min(max(f, model.f_min), 1.0) if math.isfinite(f) else 1.0
    # bracket the answer by doubling strides out from f, then halve the bracket down to it
    power, low, high = model.power, _bits(model.f_min), _ONE_BITS  # P(f_min) <= cap < P(1) = tdp
    start = _bits(f)
    stride = 1
    if power(f) <= cap:
        low = start
        while (probe := low + stride) < high:
            if power(_double(probe)) > cap:
                high = probe
                break
            low, stride = probe, min(2 * stride, _MAX_STRIDE)
    else:
        high = start
        while (probe := high - stride) > low:
            if power(_double(probe)) <= cap:
                low = probe
                break
            high, stride = probe, min(2 * stride, _MAX_STRIDE)
    while high - low > 1:
        mid = (low + high) // 2
        if power(_double(mid)) <= cap:
            low = mid
        else:
            high = mid
    return _double(low)


def _clock_many(model: _Model, caps: np.ndarray) -> np.ndarray:
    """:func:`_clock_one` over a 1-d array of caps, vectorised: the doubles within 16 of the
    estimate are checked at once, which settles all but the rare estimate that is further off
    (a long array in slices, so the checks need no more memory than a slice's)."""
    if caps.size > _SLICE:
        return np.concatenate([_clock_many(model, caps[i:i + _SLICE]) for i in range(0, caps.size, _SLICE)])
    f = _estimate(model, caps, np.sqrt, np.cbrt, np.maximum)
    f = np.clip(np.where(np.isfinite(f), f, 1.0), model.f_min, 1.0)
    near = (f.view(np.int64)[:, None] + _WINDOW).view(np.float64)
    within = model.power(near) <= caps[:, None]  # a run of True, then False (P is monotone)
    settled = within[:, 0] & ~within[:, -1]
    out = near[np.arange(caps.size), np.argmin(within, axis=1) - 1]
    if not settled.all():
        out[~settled] = [_clock_one(model, float(cap)) for cap in caps[~settled]]
    return out


def _clock(model: _Model, caps: np.ndarray, name: str) -> np.ndarray:
    """Solve P(f) = cap for the largest f with P(f) <= cap (P is increasing in f): the clock a
    bisection of [min_clock_fraction, 1] gives, 1.0 for caps >= tdp; P(result) <= cap always."""
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
    # caps >= tdp run at full clock; below P(_EXACT_FROM) the bisection answers (see _EXACT_FROM)
    exact_from = float(model.power(_EXACT_FROM)) if model.f_min < _EXACT_FROM else lowest
    if caps.ndim == 0:
        cap = float(caps)
        if cap >= model.tdp:
            f = np.asarray(1.0)
        elif cap >= exact_from:
            f = np.asarray(_clock_one(model, cap))
        else:
            f = _bisect(model, caps)
    else:
        flat = caps.reshape(-1)
        fast = (flat < model.tdp) & (flat >= exact_from)
        if fast.all():
            out = _clock_many(model, flat)
        else:
            out = np.ones(flat.shape)
            if fast.any():
                out[fast] = _clock_many(model, flat[fast])
            slow = flat < exact_from
            if slow.any():
                out[slow] = _bisect(model, flat[slow])
        f = out.reshape(caps.shape)
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
