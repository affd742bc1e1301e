"""A PNG dropped on the window is a stranger's file: whatever its text chunks or bytes hold,
reading its scenario gives a scenario, None, or the module's input error, never another
exception and never a scenario holding inf or NaN (issue 14)."""

from __future__ import annotations

import dataclasses
import io
import math
import numbers

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, PngImagePlugin

from ui.export import SCENARIO_KEY, read_png_scenario
from workbench.scenarios import RooflineScenario, scenario_from_json

VALID = RooflineScenario().to_json()


def _png(text: str | None, *, compressed: bool = False) -> bytes:
    info = PngImagePlugin.PngInfo()
    if text is not None:
        if compressed:
            info.add_itxt(SCENARIO_KEY, text, zip=True)
        else:
            info.add_itxt(SCENARIO_KEY, text)
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 10, 10)).save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


def _finite(scenario) -> bool:
    for f in dataclasses.fields(scenario):
        value = getattr(scenario, f.name)
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isfinite(value):
            return False
    return True


def _read(tmp_path, data: bytes):
    path = tmp_path / "dropped.png"
    path.write_bytes(data)
    try:
        text = read_png_scenario(path)
    except ValueError:
        return "refused"
    if text is None:
        return None
    try:
        scenario = scenario_from_json(text)
    except ValueError:
        return "refused"
    assert _finite(scenario)
    return scenario


def test_a_valid_chunk_reads_back_as_its_scenario(tmp_path):
    assert _read(tmp_path, _png(VALID)) == RooflineScenario()
    assert _read(tmp_path, _png(None)) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=300),
                      st.builds(lambda a, b: VALID[:a] + b + VALID[a:], st.integers(0, len(VALID)),
                                st.text(max_size=20)),
                      st.sampled_from([VALID.replace("0.0", "1e400"), VALID.replace("false", "NaN"),
                                       '{"kind": "roofline", "version": 99}', "[]", "null", "1e999"])),
       compressed=st.booleans())
def test_any_scenario_chunk_reads_or_is_refused(tmp_path, text, compressed):
    _read(tmp_path, _png(text, compressed=compressed))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, 10_000)))
def test_damaged_bytes_read_or_are_refused(tmp_path, flips, cut):
    data = bytearray(_png(VALID))
    for at, mask in flips:
        data[at % len(data)] ^= mask
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _read(tmp_path, bytes(data))
