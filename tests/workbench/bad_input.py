"""One harness for the design's rule that bad input raises ValueError naming the parameter.

A test module lists CASES = [(func, good_kwargs, {param: [extra bad values]})]; every
parameter is then tried with every generic bad value (NaN, inf, text, bool, None, mixed list)
plus its own extras, and must raise InputError whose ``parameter`` is that name.
"""

from __future__ import annotations

import cmath
import dataclasses
import inspect
import numbers
import re
import warnings
from collections.abc import Mapping

import numpy as np
import pytest

from workbench._validate import InputError

BAD_ANY = [float("nan"), float("inf"), "3", True, None, [1, "a"]]


def bad_input_cases(cases, none_allowed=frozenset()):
    """pytest params (func, good, param, bad); ``none_allowed`` names parameters where None
    means "not given" and is therefore valid."""
    for func, good, extra in cases:
        for param in good:
            for bad in BAD_ANY + extra.get(param, []):
                if bad is None and param in none_allowed:
                    continue
                yield pytest.param(func, good, param, bad, id=f"{func.__name__}-{param}-{bad!r}")


def assert_rejected(func, good, param, bad):
    func(**good)  # the baseline is valid, so the failure is the bad value's
    with pytest.raises(ValueError) as info:
        func(**{**good, param: bad})
    assert isinstance(info.value, InputError)
    assert info.value.parameter == param, str(info.value)
    assert str(info.value).startswith(param)


# -- walking the whole public API with bad values -----------------------------------------------
#
# tests/workbench/test_public_api.py lists one good call of every public callable; each of its
# parameters is then replaced by every value of BAD_VALUES in turn. The contract (design.md,
# "Public Python API"): the call either returns a finite, valid result or raises ValueError or
# TypeError whose message names the parameter the caller passed. Anything else (OverflowError,
# AttributeError, KeyError, IndexError, MemoryError, an infinite or NaN result) is a bug.

BAD_VALUES = (10**400, 1e308, -1, 0, float("nan"), float("inf"), -float("inf"), "abc", "3", True,
              None, [], {}, [1, "a"])


def _call_args(func, kwargs):
    """Positional and keyword arguments for ``func`` from one dict: positional-only parameters by
    position, a ``*args`` parameter's tuple spread, names the signature lacks into ``**kwargs``."""
    sig = inspect.signature(func)
    args, kw = [], {}
    for name, value in kwargs.items():
        param = sig.parameters.get(name)
        if param is not None and param.kind is inspect.Parameter.POSITIONAL_ONLY:
            continue
        if param is not None and param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        kw[name] = value
    for name, param in sig.parameters.items():
        if name in kwargs and param.kind is inspect.Parameter.POSITIONAL_ONLY:
            args.append(kwargs[name])
        elif name in kwargs and param.kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(kwargs[name])
    return args, kw


def call(func, kwargs):
    args, kw = _call_args(func, kwargs)
    return func(*args, **kw)


def is_var_positional(func, name) -> bool:
    param = inspect.signature(func).parameters.get(name)
    return param is not None and param.kind is inspect.Parameter.VAR_POSITIONAL


def non_finite(value, path="result", depth=0, seen=None):
    """Where in ``value`` a NaN or an infinity sits (a path such as "result.summary.co2e_kg"),
    or None. Walks numbers, numpy arrays, mappings, sequences and dataclasses."""
    seen = set() if seen is None else seen
    if depth > 6 or id(value) in seen:
        return None
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return None
    if isinstance(value, numbers.Number):
        try:
            return None if cmath.isfinite(complex(value)) else path
        except OverflowError:
            return path
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and value.size and not np.all(np.isfinite(value)):
            return path
        if value.dtype.kind == "O":
            return next((p for i, x in enumerate(value.flat)
                         if (p := non_finite(x, f"{path}[{i}]", depth + 1, seen))), None)
        return None
    seen.add(id(value))
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = enumerate(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    else:
        return None
    for key, item in items:
        where = non_finite(item, f"{path}.{key}", depth + 1, seen)
        if where:
            return where
    return None


def names_parameter(exc: BaseException, param: str) -> bool:
    """Whether an error blames ``param``: an InputError whose ``parameter`` is it (or a part of
    it, "measured[0].gpus" for "measured"), any other error whose message contains the name."""
    if isinstance(exc, InputError) and (exc.parameter == param
                                        or exc.parameter.startswith((f"{param}.", f"{param}["))):
        return True
    # a relation between two parameters may name the other one first ("ai_max: must be > ai_min")
    return re.search(rf"(?<![\w.]){re.escape(param)}(?!\w)", str(exc)) is not None


def bad_value_problem(func, good, param, bad, named=None):
    """Why ``func(**good)`` with ``param`` set to ``bad`` breaks the contract, or None.
    ``named`` is the name (or names) the error may use instead of the parameter's own (a text
    parser names the field the text belongs to)."""
    value = (bad,) if is_var_positional(func, param) else bad
    names = (named,) if isinstance(named, str) else tuple(named or (param,))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = call(func, {**good, param: value})
    except (ValueError, TypeError) as exc:
        if any(names_parameter(exc, name) for name in names):
            return None
        return f"{type(exc).__name__} that does not name {' or '.join(map(repr, names))}: {exc}"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        return f"{type(exc).__name__}: {exc}"
    where = non_finite(result)
    return None if where is None else f"returned a NaN or an infinity at {where}"
