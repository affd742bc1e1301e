"""Properties of the scenario file reader: whatever a file holds, ``read_scenario_file``
returns a valid scenario (with a clean name and notes) or raises ``InvalidItemError`` with
a one-line message naming the file. Nothing else escapes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_helpers import SAMPLES

from storage import SCENARIO_FILE_FORMAT, InvalidItemError, Project, read_scenario_file
from storage.project import MAX_NAME_LENGTH
from workbench.scenarios import SCENARIO_TYPES, Scenario, scenario_from_json

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# JSON values, from the plain to the odd: huge and negative numbers, long and control-laden
# text, nesting.
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
           | st.sampled_from(["", " ", "\x1b[2J", "h100-sxm", "bf16", "fp8", "a" * 300, "\u202e", "1e400"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)


def _example_dicts() -> list[dict]:
    return [json.loads(scenario.to_json()) for _, scenario in SAMPLES] + [
        json.loads(cls().to_json()) for cls in SCENARIO_TYPES.values() if _constructs(cls)]


def _constructs(cls) -> bool:
    try:
        cls()
    except (TypeError, ValueError):
        return False
    return True


EXAMPLES = _example_dicts()


@st.composite
def mutated_scenarios(draw) -> dict:
    """A real scenario's JSON with some fields replaced, removed or added."""
    body = dict(draw(st.sampled_from(EXAMPLES)))
    keys = sorted(body)
    for key in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)):
        action = draw(st.sampled_from(["replace", "remove"]))
        if action == "remove":
            body.pop(key, None)
        else:
            body[key] = draw(JSON)
    if draw(st.booleans()):
        body[draw(st.text(max_size=10))] = draw(JSON)
    if draw(st.booleans()):
        body["kind"] = draw(st.sampled_from([*SCENARIO_TYPES, "nonsense", ""]) | JSON)
    return body


@st.composite
def documents(draw) -> object:
    scenario = draw(mutated_scenarios() | JSON)
    document = {"format": draw(st.just(SCENARIO_FILE_FORMAT) | JSON), "scenario": scenario}
    for key, values in (("format_version", st.just(1) | JSON), ("name", st.text(max_size=250) | JSON),
                        ("notes", st.text(max_size=50) | JSON), ("app_version", JSON)):
        if draw(st.booleans()):
            document[key] = draw(values)
    return draw(st.just(document) | JSON)


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="scenario-file-properties-") as folder:
        yield Path(folder) / "scenario.swbscenario.json"


def _check_reader(path: Path) -> None:
    try:
        scenario, name, notes = read_scenario_file(path)
    except InvalidItemError as exc:
        message = str(exc)
        assert "\n" not in message and str(path) in message
        assert len(message) < 2000
        return
    assert isinstance(scenario, Scenario)
    assert scenario_from_json(scenario.to_json()) == scenario  # a valid scenario, round-tripping
    assert isinstance(name, str) and 0 < len(name) <= MAX_NAME_LENGTH
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in name)
    assert isinstance(notes, str)


@SETTINGS
@given(data=st.binary(max_size=2000))
def test_any_bytes(scratch, data):
    scratch.write_bytes(data)
    _check_reader(scratch)


@SETTINGS
@given(document=documents())
def test_any_json_document(scratch, document):
    scratch.write_text(json.dumps(document), encoding="utf-8")
    _check_reader(scratch)


@SETTINGS
@given(body=mutated_scenarios(), name=st.text(min_size=1, max_size=40))
def test_mutated_real_scenarios(scratch, body, name):
    document = {"format": SCENARIO_FILE_FORMAT, "format_version": 1, "name": name, "notes": "", "scenario": body}
    scratch.write_text(json.dumps(document), encoding="utf-8")
    _check_reader(scratch)


@SETTINGS
@given(index=st.integers(min_value=0, max_value=len(EXAMPLES) - 1), cut=st.integers(min_value=0, max_value=4000))
def test_truncated_real_files(scratch, index, cut):
    document = {"format": SCENARIO_FILE_FORMAT, "format_version": 1, "name": "Run", "notes": "n",
                "scenario": EXAMPLES[index]}
    text = json.dumps(document, indent=2)
    scratch.write_text(text[:cut], encoding="utf-8")
    _check_reader(scratch)


def test_exported_files_read_back(project_path, tmp_path):
    with Project.open(project_path) as project:
        for record in project.list_scenarios():
            path = project.export_scenario(record.id, tmp_path / f"{record.id}.json")
            scenario, name, notes = read_scenario_file(path)
            assert scenario == project.load_scenario(record.id) and name == record.name
            assert notes == record.notes
