"""Input checks shared by every public function of the model.

Each check returns the cleaned value or raises :class:`InputError` (a ``ValueError``) whose
message names the parameter and the allowed range, so the UI can show it next to the field.
NaN and infinity are always rejected: they must never leak out of a formula silently.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np


class InputError(ValueError):
    """Bad input to a ``workbench`` function. ``parameter`` names the offending argument."""

    def __init__(self, parameter: str, message: str):
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def number(name: str, value: object) -> float:
    """A finite real number (bools and strings are rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            value = value.item()
        else:
            raise InputError(name, f"must be a number, got {_describe(value)}")
    result = float(value)
    if not math.isfinite(result):
        raise InputError(name, f"must be a finite number, got {result}")
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
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        raise InputError(name, f"must be in {left}{low:g}, {high:g}{right}, got {result:g}")
    return result


def fraction(name: str, value: object, *, allow_zero: bool = True, allow_one: bool = True) -> float:
    """A number in [0, 1] (ends optionally excluded)."""
    return in_range(name, value, 0.0, 1.0, low_inclusive=allow_zero, high_inclusive=allow_one)


def integer(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number (an integral float such as 8.0 is accepted), optionally bounded."""
    if isinstance(value, bool):
        raise InputError(name, f"must be a whole number, got {_describe(value)}")
    if isinstance(value, numbers.Integral):
        result = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        result = int(value)
    else:
        raise InputError(name, f"must be a whole number, got {_describe(value)}")
    if minimum is not None and result < minimum:
        raise InputError(name, f"must be >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise InputError(name, f"must be <= {maximum}, got {result}")
    return result


def text(name: str, value: object, *, allow_empty: bool = False) -> str:
    """A string (stripped); empty only if allowed."""
    if not isinstance(value, str):
        raise InputError(name, f"must be text, got {_describe(value)}")
    result = value.strip()
    if not result and not allow_empty:
        raise InputError(name, "must not be empty")
    return result


def choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """One of a fixed set of names."""
    options = tuple(allowed)
    if not isinstance(value, str) or value not in options:
        raise InputError(name, f"must be one of {', '.join(options)}; got {_describe(value)}")
    return value


def array(name: str, value: object, *, positive_only: bool = False, non_negative_only: bool = False):
    """A float array (or scalar) with every element finite, optionally > 0 or >= 0.

    Returns ``(array, was_scalar)`` so callers can hand a scalar back for a scalar input.
    """
    # Refuse text and bools before numpy would quietly read "3" as 3.0 or True as 1.0.
    if isinstance(value, (bool, str, bytes)):
        raise InputError(name, f"must be a number or array of numbers, got {_describe(value)}")
    try:
        raw = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise InputError(name, "must be a number or a rectangular array of numbers") from None
    if raw.dtype.kind not in "iuf":
        raise InputError(name, f"must be a number or array of numbers, got {_describe(value)}")
    arr = raw.astype(float)
    if arr.size and not np.all(np.isfinite(arr)):
        raise InputError(name, "must be finite (no NaN or infinity)")
    if positive_only and arr.size and np.any(arr <= 0):
        raise InputError(name, f"must be > 0 everywhere, got minimum {arr.min():g}")
    if non_negative_only and arr.size and np.any(arr < 0):
        raise InputError(name, f"must be >= 0 everywhere, got minimum {arr.min():g}")
    return arr, arr.ndim == 0


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
    if np.issubdtype(result.dtype, np.floating) and result.size and not np.all(np.isfinite(result)):
        raise InputError("inputs", "the result overflows (values too large or too small to compute); "
                                   "check the magnitudes and units of the inputs")
    return float(result) if was_scalar else result
