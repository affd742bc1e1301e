"""Input checks shared by every public function of the model.

Each check returns the cleaned value or raises :class:`InputError` (a ``ValueError``) whose
message names the parameter and the allowed range, so the UI can show it next to the field.
NaN and infinity are always rejected: they must never leak out of a formula silently.

Finite inputs can still give an infinite result (1e308 bytes over 1e-300 B/s). The
:func:`public` decorator guards the way out of every public function: an overflow inside it,
or a NaN or infinity anywhere in what it returns, becomes a :class:`NonFiniteError` naming the
caller's input that drove it. Where physics gives a bound (a GPU count), the limits below
say so up front instead.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

#: The most GPUs (or ranks) any input may name: ten million, some fifty times the largest
#: clusters built so far, so a count that looks like a typo is refused rather than modelled.
MAX_GPUS = 10_000_000
#: The most power one GPU (or its share of a node) may draw, in W: a hundred kilowatts, fifty
#: times today's largest accelerator modules; a GPU's power limit is at least a milliwatt.
MAX_GPU_POWER_W = 100_000.0
MIN_GPU_POWER_W = 1e-3
#: The largest model any input may describe, in parameters (1e16: ten thousand times today's
#: largest dense models), and the most tokens a run may train on (1e18: some fifty thousand
#: times a 2024 frontier run's 15T).
MAX_PARAMS = 1e16
MAX_TOKENS = 1e18
#: Rates and sizes of hardware as bytes/s, FLOP/s and bytes: at least 1 (a typo of "1e-9 TB/s"
#: would otherwise make every time infinite) and at most 1e18 B/s, 1e21 FLOP/s, 1e18 bytes
#: (an exabyte per second, a zettaFLOP/s, an exabyte: far beyond any device).
MAX_BANDWIDTH = 1e18
MAX_FLOPS = 1e21
MAX_BYTES = 1e18
#: A job's throughput, tokens/s: at least a thousandth (slower is a typo, and would make the run
#: last beyond any float) and at most 1e15.
MIN_TOKENS_PER_S = 1e-3
MAX_TOKENS_PER_S = 1e15
#: The longest duration a time input (an interval, a wait per step) may have: 1e9 s, about 30 years.
MAX_SECONDS = 1e9
#: Prices per kWh and per GPU-hour, in any currency: at most a billion.
MAX_PRICE = 1e9
#: Grid carbon intensity, gCO2e/kWh: at most 10,000 (coal plants emit about 1,000).
MAX_GRID_G_PER_KWH = 10_000.0
#: The largest whole number accepted where no tighter bound is given: 2**53, the largest a
#: float (which every formula computes in) holds exactly.
MAX_WHOLE = 2**53


class InputError(ValueError):
    """Bad input to a ``workbench`` function. ``parameter`` names the offending argument."""

    def __init__(self, parameter: str, message: str):
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


class NonFiniteError(InputError):
    """A NaN or an infinity: given, or computed from finite inputs that are too large or too
    small (an overflow). :func:`public` re-blames one raised for an inner function's own
    parameter on the caller's input that drove it."""


def _describe(value: object) -> str:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**21:
        # from its bits: str() of an int past 4,300 digits raises
        return f"a whole number of about {int(abs(int(value)).bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except ValueError:  # a list holding an int past Python's 4,300-digit limit
        return f"a {type(value).__name__} holding a number too long to show"
    return text if len(text) <= 40 else text[:37] + "..."


def _num(value: float) -> str:
    """A bound or value as a person reads it: whole numbers with digit groups ("10,000,000")."""
    if isinstance(value, numbers.Integral) or (math.isfinite(value) and float(value).is_integer()
                                                 and abs(value) < 1e15):
        if abs(int(value)) >= 10**21:
            return _describe(int(value))
        return f"{int(value):,}"
    return f"{value:g}"


def number(name: str, value: object) -> float:
    """A finite real number (bools and strings are rejected)."""
    if type(value) is float and math.isfinite(value):  # the common case, without the ABC checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            value = value.item()
        else:
            raise InputError(name, f"must be a number, got {_describe(value)}")
    try:
        result = float(value)
    except OverflowError:  # an int beyond the float range, e.g. 10**400 from JSON
        raise NonFiniteError(name, f"must be a finite number, got {_describe(value)}, "
                                   "too large for a float (about 1.8e308 at most)") from None
    if not math.isfinite(result):
        raise NonFiniteError(name, f"must be a finite number, got {result}")
    return result


def positive(name: str, value: object) -> float:
    """A finite number > 0."""
    result = number(name, value)
    if result <= 0:
        raise InputError(name, f"must be > 0, got {result:g}")
    return result


def non_negative(name: str, value: object) -> float:
    """A finite number >= 0."""
    result = number(name, value)
    if result < 0:
        raise InputError(name, f"must be >= 0, got {result:g}")
    return result


def in_range(
    name: str,
    value: object,
    low: float,
    high: float,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """A finite number within [low, high] (bounds optionally exclusive)."""
    result = number(name, value)
    ok_low = result >= low if low_inclusive else result > low
    ok_high = result <= high if high_inclusive else result < high
    if not (ok_low and ok_high):
        raise InputError(name, f"must be {_between(low, high, low_inclusive, high_inclusive)}, got {result:g}")
    return result


def _between(low: float, high: float, low_inclusive: bool = True, high_inclusive: bool = True,
             unit: str = "") -> str:
    unit = f" {unit}" if unit else ""
    if low_inclusive and high_inclusive:
        return f"between {_num(low)} and {_num(high)}{unit}"
    above = f"at least {_num(low)}" if low_inclusive else f"more than {_num(low)}"
    below = f"at most {_num(high)}" if high_inclusive else f"less than {_num(high)}"
    return f"{above} and {below}{unit}"


def bounded(name: str, value: object, low: float, high: float, unit: str = "", *,
            low_open: bool = False, high_open: bool = False) -> float:
    """A finite number within the physical range [low, high] of a quantity (``unit`` for the
    message): "link_bw: must be between 1 and 1e+18 B/s, got 1e+300"."""
    result = number(name, value)
    if result < low or (low_open and result == low) or result > high or (high_open and result == high):
        raise InputError(name, f"must be {_between(low, high, not low_open, not high_open, unit)}, got {result:g}")
    return result


def fraction(name: str, value: object, *, allow_zero: bool = True, allow_one: bool = True) -> float:
    """A number in [0, 1] (ends optionally excluded)."""
    return in_range(name, value, 0.0, 1.0, low_inclusive=allow_zero, high_inclusive=allow_one)


def integer(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number (an integral float such as 8.0 is accepted), optionally bounded."""
    if type(value) is int:  # the common case, without the ABC checks
        result = value
    elif isinstance(value, bool):
        raise InputError(name, f"must be a whole number, got {_describe(value)}")
    elif isinstance(value, numbers.Integral):
        result = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        result = int(value)
    else:
        raise InputError(name, f"must be a whole number, got {_describe(value)}")
    top = MAX_WHOLE if maximum is None else maximum
    if (minimum is None or result >= minimum) and result <= top:
        return result
    shown = _num(result) if isinstance(value, numbers.Integral) else f"{float(value):g}"
    if minimum is not None and result < minimum:
        raise InputError(name, f"must be >= {minimum}, got {shown}")
    if minimum is not None:
        raise InputError(name, f"must be between {_num(minimum)} and {_num(top)}, got {shown}")
    raise InputError(name, f"must be <= {_num(top)}, got {shown}")


def gpu_count(name: str, value: object) -> int:
    """A whole number of GPUs (or ranks), between 1 and :data:`MAX_GPUS`."""
    return integer(name, value, 1, MAX_GPUS)


def text(name: str, value: object, *, allow_empty: bool = False) -> str:
    """A string (stripped); empty only if allowed."""
    if not isinstance(value, str):
        raise InputError(name, f"must be text, got {_describe(value)}")
    result = value.strip()
    if not result and not allow_empty:
        raise InputError(name, "must not be empty")
    return result


def flag(name: str, value: object) -> bool:
    """True or False (a numpy bool too; 1, "yes" and None are refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(name, f"must be True or False, got {_describe(value)}")
    return bool(value)


def instance(name: str, value: object, kind: type | tuple[type, ...], what: str = "") -> object:
    """A value of the type ``kind`` (``what`` describes it: "a RunPlan")."""
    if not isinstance(value, kind):
        if not what:
            names = [k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,))]
            what = "a " + " or a ".join(names)
        raise InputError(name, f"must be {what}, got {_describe(value)}")
    return value


def function(name: str, value: object, what: str = "a function") -> object:
    """Something callable (a callback, a look-up)."""
    if not callable(value):
        raise InputError(name, f"must be {what}, got {_describe(value)}")
    return value


def items(name: str, value: object, what: str = "a list") -> tuple:
    """The elements of a list or tuple (text, mappings and single values are refused)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise InputError(name, f"must be {what}, got {_describe(value)}")
    return tuple(value)


def required_fields(cls: type, data: Mapping, prefix: str = "") -> None:
    """Refuse saved data that lacks a field the dataclass ``cls`` has no default for."""
    for f in dataclasses.fields(cls):
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING \
                and f.name not in data:
            raise InputError(prefix + f.name, "is required")


def from_mapping(cls: type, data: object, what: str, name: str = ""):
    """The dataclass ``cls`` built from saved data, a mapping of its fields. Unknown and missing
    fields raise InputError naming them; ``name`` says where a nested entry sits ("compute[0]")
    and prefixes what its own checks name ("compute[0].dense_flops")."""
    prefix = f"{name}." if name else ""
    if not isinstance(data, Mapping):
        raise InputError(name or what, f"must be a mapping of {what} fields, got {_describe(data)}")
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if not isinstance(key, str) or key not in known:
            raise InputError(prefix + str(key), f"is not a {what} field")
    required_fields(cls, data, prefix)
    try:
        return cls(**data)
    except InputError as exc:
        if not name:
            raise
        message = str(exc).split(": ", 1)[-1]
        raise type(exc)(prefix + exc.parameter, message) from None


def choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """One of a fixed set of names."""
    options = tuple(allowed)
    if not isinstance(value, str) or value not in options:
        raise InputError(name, f"must be one of {', '.join(options)}; got {_describe(value)}")
    return value


#: what array() says, alike for a plain number and for an array
_WHOLE_TOO_LARGE = "must be finite, got a whole number too large for a float (about 1.8e308 at most)"
_NOT_FINITE = "must be finite (no NaN or infinity)"


def _below_zero(name: str, smallest: float, positive_only: bool) -> InputError:
    return InputError(name, f"must be {'>' if positive_only else '>='} 0 everywhere, got minimum {smallest:g}")


def array(name: str, value: object, *, positive_only: bool = False, non_negative_only: bool = False):
    """A float array (or scalar) with every element finite, optionally > 0 or >= 0.

    Returns ``(array, was_scalar)`` so callers can hand a scalar back for a scalar input.
    """
    kind = type(value)
    if kind is float or kind is int:  # a plain number: the checks below without numpy's overhead
        try:
            scalar = float(value)
        except OverflowError:
            raise NonFiniteError(name, _WHOLE_TOO_LARGE) from None
        if not math.isfinite(scalar):
            raise NonFiniteError(name, _NOT_FINITE)
        if positive_only and scalar <= 0:
            raise _below_zero(name, scalar, positive_only=True)
        if non_negative_only and scalar < 0:
            raise _below_zero(name, scalar, positive_only=False)
        return np.asarray(scalar), True
    # Refuse text and bools before numpy would quietly read "3" as 3.0 or True as 1.0.
    if isinstance(value, (bool, str, bytes)):
        raise InputError(name, f"must be a number or array of numbers, got {_describe(value)}")
    try:
        raw = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise InputError(name, "must be a number or a rectangular array of numbers") from None
    if raw.dtype.kind == "O" and raw.size and all(
            isinstance(x, numbers.Real) and not isinstance(x, bool) for x in raw.flat):
        try:  # Python ints beyond int64, e.g. 10**400
            raw = raw.astype(float)
        except OverflowError:
            raise NonFiniteError(name, _WHOLE_TOO_LARGE) from None
    if raw.dtype.kind not in "iuf":
        raise InputError(name, f"must be a number or array of numbers, got {_describe(value)}")
    arr = raw.astype(float)
    # the arrays' own all() and any(): numpy's module functions add a Python layer each
    if arr.size and not np.isfinite(arr).all():
        raise NonFiniteError(name, _NOT_FINITE)
    if positive_only and arr.size and (arr <= 0).any():
        raise _below_zero(name, arr.min(), positive_only=True)
    if non_negative_only and arr.size and (arr < 0).any():
        raise _below_zero(name, arr.min(), positive_only=False)
    return arr, arr.ndim == 0


def whole_numbers(name: str, value: object, minimum: int = 1, maximum: int = MAX_GPUS):
    """Whole numbers (GPU counts, ranks, stages) in [minimum, maximum], a scalar or an array:
    ``(array, was_scalar)`` as :func:`array` gives them."""
    arr, scalar = array(name, value)  # finite (else it raised)
    if arr.ndim == 0:  # one number (most calls): Python's checks, without numpy's reductions
        number = float(arr)
        whole = number.is_integer()
        worst = None if minimum <= number <= maximum else number
    elif arr.size:
        whole = not (arr != np.floor(arr)).any()
        low = (arr < minimum).any()
        worst = float(arr.min()) if low else float(arr.max()) if (arr > maximum).any() else None
    else:
        whole, worst = True, None
    if not whole:
        raise InputError(name, "must be whole numbers")
    if worst is not None:
        raise InputError(name, f"must be between {_num(minimum)} and {_num(maximum)}, got {_num(worst)}")
    return arr, scalar


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together; a shape mismatch names the first parameter."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        names = ", ".join(arrays)
        raise InputError(next(iter(arrays)), f"shapes of {names} do not broadcast together") from None


def scalar_or_array(result: np.ndarray, was_scalar: bool):
    """Hand back a Python float for scalar input, the array otherwise.

    Finite inputs can still overflow (1e308 bytes over 1e-300 B/s): an infinite or NaN result
    is refused here rather than handed on to turn into NaN further down.
    """
    result = np.asarray(result)
    if result.dtype.kind == "f" and result.size and not np.isfinite(result).all():
        raise NonFiniteError("result", "overflows (values too large or too small to compute); "
                                       "check the magnitudes and units of the inputs")
    return float(result) if was_scalar else result


# -- the way out of a public function -------------------------------------------------------------
#: dataclass field names by type (None: not a dataclass), for the check every public call makes
_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def field_names(kind: type) -> tuple[str, ...] | None:
    """The field names of dataclass type ``kind`` (None for any other type), looked up once
    per type: the checks and walks over every analysis's result ask on each call."""
    names = _FIELD_NAMES.get(kind, ())
    if names == ():
        names = tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else None
        _FIELD_NAMES[kind] = names
    return names


def non_finite(value: object, _depth: int = 0) -> bool:
    """Whether a NaN or an infinity sits anywhere in ``value``: a number, a numpy array, or a
    mapping, sequence or dataclass holding them (a few levels deep)."""
    if _depth > 4:
        return False
    kind = type(value)
    # the common cases first, without the abstract number types' slower checks
    if kind is float:
        return not math.isfinite(value)
    if kind is int or kind is bool or kind is str or value is None:
        return False
    if kind is tuple or kind is list:
        return any(non_finite(x, _depth + 1) for x in value)
    names = field_names(kind)
    if names is not None:
        return any(non_finite(getattr(value, name), _depth + 1) for name in names)
    if isinstance(value, (bool, str, bytes)):
        return False
    if isinstance(value, numbers.Integral):
        return False
    if isinstance(value, numbers.Real):
        return not math.isfinite(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return bool(value.size) and not bool(np.isfinite(value).all())
        return value.dtype.kind == "O" and any(non_finite(x, _depth + 1) for x in value.flat)
    if isinstance(value, Mapping):
        return any(non_finite(x, _depth + 1) for x in value.values())
    if isinstance(value, (list, tuple)):
        return any(non_finite(x, _depth + 1) for x in value)
    return False


def _magnitudes(name: str, value: object, depth: int = 0):
    """(name, value, |log10 value|) of every finite non-zero number in an argument: itself, its
    elements, or (one level down) the numeric fields of a dataclass ("scenario.n_params")."""
    if isinstance(value, bool):
        return
    if isinstance(value, numbers.Real):
        try:
            x = float(value)
        except OverflowError:
            yield name, value, math.inf
            return
        if math.isfinite(x) and x != 0:
            yield name, x, abs(math.log10(abs(x)))
        return
    if isinstance(value, (np.ndarray, list, tuple)) and depth == 0:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return
        arr = arr[np.isfinite(arr) & (arr != 0)]
        if arr.size:
            big = float(arr[np.argmax(np.abs(np.log10(np.abs(arr))))])
            yield name, big, abs(math.log10(abs(big)))
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and depth == 0:
        for f in dataclasses.fields(value):
            yield from _magnitudes(f"{name}.{f.name}", getattr(value, f.name), depth + 1)


#: An input beyond 1e20 (or below 1e-20) in magnitude is taken as what drove an overflow.
_EXTREME = 20.0


def _overflow_error(func, bound: inspect.BoundArguments) -> NonFiniteError:
    """The error for a result that overflowed: it names the caller's input farthest from 1 in
    magnitude (the 1e308 or the 1e-300 that drove the overflow)."""
    arguments = dict(bound.arguments)
    for name, param in bound.signature.parameters.items():
        if param.kind is param.VAR_KEYWORD:
            arguments.update(arguments.pop(name, {}))
        elif param.kind is param.VAR_POSITIONAL:
            arguments.pop(name, None)
    arguments.pop("self", None)
    candidates = [m for name, value in arguments.items() for m in _magnitudes(name, value)]
    what = f"{func.__name__}()"
    if not candidates or max(m[2] for m in candidates) < _EXTREME:
        # no input stands out as extreme: name them all rather than guess
        names = ", ".join(arguments) or "inputs"
        return NonFiniteError(next(iter(arguments), "inputs"),
                              f"{what} overflows with these values of {names} (its result would be beyond "
                              "the float range, about 1.8e308, or undefined); check their magnitudes and units")
    name, value, _ = max(candidates, key=lambda m: m[2])
    size = "large" if isinstance(value, int) or abs(value) > 1 else "small"
    shown = _describe(value) if isinstance(value, int) else f"{value:g}"
    return NonFiniteError(name, f"{shown} is too {size}: {what} would overflow (its result would be beyond "
                                "the float range, about 1.8e308, or undefined); check the value and its unit")


def _names_caller(parameter: str, bound: inspect.BoundArguments) -> bool:
    names = set(bound.arguments)
    for name, param in bound.signature.parameters.items():
        if param.kind is param.VAR_KEYWORD:
            names |= set(bound.arguments.get(name, {}))
    root = parameter.split(".", 1)[0].split("[", 1)[0]
    return root in names


def public(func):
    """Guard the way out of a public function of the model (a decorator).

    The function validates its own inputs; this makes sure that what still goes wrong with
    finite, valid inputs reaches the caller as an :class:`InputError` naming one of *their*
    parameters: an ``OverflowError`` or ``ZeroDivisionError`` raised inside, a
    :class:`NonFiniteError` that an inner call raised for one of its own parameters, and a
    NaN or infinity anywhere in the result all become a :class:`NonFiniteError` that names
    the caller's input farthest from 1 in magnitude, the one that drove the overflow (or
    all of them, when none stands out). numpy's overflow warnings are silenced inside: the
    error says it instead.
    """
    signature = inspect.signature(func)

    def bind(args, kwargs) -> inspect.BoundArguments:
        return signature.bind(*args, **kwargs)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            # numpy's overflow warnings would only repeat, less clearly, the error raised below
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                result = func(*args, **kwargs)
        except NonFiniteError as exc:
            bound = bind(args, kwargs)
            if _names_caller(exc.parameter, bound):
                raise
            raise _overflow_error(func, bound) from None
        except (OverflowError, ZeroDivisionError, FloatingPointError):
            raise _overflow_error(func, bind(args, kwargs)) from None
        if non_finite(result):
            raise _overflow_error(func, bind(args, kwargs))
        return result

    return wrapper
