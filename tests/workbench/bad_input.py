"""One harness for the design's rule that bad input raises ValueError naming the parameter.

A test module lists CASES = [(func, good_kwargs, {param: [extra bad values]})]; every
parameter is then tried with every generic bad value (NaN, inf, text, bool, None, mixed list)
plus its own extras, and must raise InputError whose ``parameter`` is that name.
"""

from __future__ import annotations

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
