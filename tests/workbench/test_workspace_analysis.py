"""Each kind's analysis, found by kind and kept once per change (``workbench.workspace``)."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

import presets.catalog
from workbench import InputError
from workbench import workspace as ws
from workbench.scenarios import CollectiveScenario, ScalingScenario

CATALOG = presets.catalog.BUILTIN


@pytest.fixture
def counted(monkeypatch):
    """A stand-in analysis for the scaling kind that counts its calls."""
    calls = []

    def analyse(scenario, view, catalog):
        calls.append((scenario, view))
        if scenario.n_gpus == 3:
            raise InputError("n_gpus", "three GPUs cannot be split")
        return ("analysed", scenario.n_gpus, None if view is None else view.plan.n_gpus)

    monkeypatch.setitem(ws.ANALYSES, "scaling", analyse)
    return calls


def test_a_registered_analysis_is_what_analyse_gives_for_its_kind(counted):
    view = ws.PlanView(plan=ws.DEFAULT_PLAN)
    assert ws.analyse("scaling", ScalingScenario(n_gpus=16), view, CATALOG) == ("analysed", 16, 8)
    assert ws.analyse("scaling", ScalingScenario(n_gpus=16), None, CATALOG) == ("analysed", 16, None)
    assert ws.analyse("scaling", None, view, CATALOG) is None  # no scenario, nothing to show


def test_a_scenario_of_another_kind_is_refused_naming_the_scenario(counted):
    with pytest.raises(InputError) as err:
        ws.analyse("scaling", CollectiveScenario(), None, CATALOG)
    assert err.value.parameter == "scenario" and "'scaling'" in str(err.value)
    assert counted == []


def test_a_kind_without_an_analysis_module_gives_none(monkeypatch):
    monkeypatch.delitem(ws._FOUND, "no_such_kind", raising=False)
    monkeypatch.setattr(ws, "_FOUND", dict(ws._FOUND))

    class Dummy:
        kind = "no_such_kind"

    assert ws.analysis_function("no_such_kind") is None
    assert ws.analyse("no_such_kind", Dummy(), None, CATALOG) is None


def test_an_analysis_module_that_fails_to_import_is_an_error_not_a_kind_without_one(monkeypatch, tmp_path):
    package = tmp_path / "workbench_probe"
    (package / "analyses").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    # a module whose own import is broken must not pass for "this kind has no analysis"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(ws, "_FOUND", {})
    import workbench.analyses as analyses_package

    monkeypatch.setattr(analyses_package, "__path__", [*analyses_package.__path__, str(package / "analyses")])
    (package / "analyses" / "broken_kind.py").write_text("import module_that_is_not_installed_anywhere\n")
    with pytest.raises(ModuleNotFoundError):
        ws.analysis_function("broken_kind")
    sys.modules.pop("workbench.analyses.broken_kind", None)


def test_the_cache_computes_once_while_scenario_view_and_revision_are_the_same(counted):
    cache = ws.AnalysisCache()
    scenario, view = ScalingScenario(n_gpus=16), ws.PlanView(plan=ws.DEFAULT_PLAN)
    first = cache.get("scaling", scenario, view, CATALOG, 1)
    assert cache.get("scaling", scenario, view, CATALOG, 1) is first
    assert len(counted) == 1 and cache.computed["scaling"] == 1
    # an equal but new view is a new change: the plan was edited and edited back
    cache.get("scaling", scenario, ws.PlanView(plan=ws.DEFAULT_PLAN), CATALOG, 1)
    cache.get("scaling", scenario, view, CATALOG, 2)  # the presets changed
    cache.get("scaling", scenario.with_changes(n_gpus=32), view, CATALOG, 2)
    assert cache.computed["scaling"] == 4
    assert cache.get("scaling", scenario.with_changes(n_gpus=32), view, CATALOG, 2)[1] == 32


def test_an_analysis_that_raised_raises_again_without_running_until_something_changes(counted):
    cache = ws.AnalysisCache()
    bad, view = ScalingScenario(n_gpus=3), ws.PlanView(plan=ws.DEFAULT_PLAN)
    for _ in range(3):
        with pytest.raises(InputError, match="three GPUs"):
            cache.get("scaling", bad, view, CATALOG)
    assert cache.computed["scaling"] == 1
    assert cache.get("scaling", replace(bad, n_gpus=4), view, CATALOG)[1] == 4


def test_register_analysis_refuses_what_is_not_a_function():
    with pytest.raises(InputError) as err:
        ws.register_analysis("scaling", "not a function")
    assert err.value.parameter == "analyse"


@pytest.mark.parametrize("kind", ["/", "a.b", "../etc", "power kind"])
def test_a_kind_that_is_not_a_name_is_refused_before_any_import(kind):
    with pytest.raises(InputError) as err:
        ws.analysis_function(kind)
    assert err.value.parameter == "kind"


def test_the_arrays_of_a_kept_analysis_cannot_be_written_by_one_reader_for_all(monkeypatch):
    import numpy as np

    from workbench.workspace import PlanView

    shared = {}

    def analyse(scenario, view, catalog):
        shared["curve"] = np.array([1.0, 2.0, 3.0])
        return (scenario.n_gpus, {"curve": shared["curve"]}, [np.zeros(2)])

    monkeypatch.setitem(ws.ANALYSES, "scaling", analyse)
    result = ws.AnalysisCache().get("scaling", ScalingScenario(n_gpus=8), PlanView(plan=ws.DEFAULT_PLAN), CATALOG)
    with pytest.raises(ValueError, match="read-only"):
        result[1]["curve"][0] = 99.0  # a panel scaling the curve in place would change every reader's
    with pytest.raises(ValueError, match="read-only"):
        result[2][0][:] = 1.0
    assert shared["curve"].tolist() == [1.0, 2.0, 3.0]


def test_arrays_in_fields_rows_and_mappings_are_made_read_only_and_leaves_left_alone(monkeypatch):
    from dataclasses import dataclass

    import numpy as np

    from workbench.workspace import PlanView

    @dataclass(frozen=True)
    class Step:
        ranks: frozenset
        label: str
        times: np.ndarray

    @dataclass(frozen=True)
    class Result:
        n: int
        steps: tuple
        by_name: dict
        note: None

    steps = tuple(Step(frozenset({0, 1}), f"step {i}", np.arange(3.0)) for i in range(4))
    deep = np.ones(2)
    result = Result(8, steps, {"a": (1, 2.0, "x", deep)}, None)
    monkeypatch.setitem(ws.ANALYSES, "scaling", lambda scenario, view, catalog: result)
    got = ws.AnalysisCache().get("scaling", ScalingScenario(n_gpus=8), PlanView(plan=ws.DEFAULT_PLAN), CATALOG)
    assert got is result
    assert not any(step.times.flags.writeable for step in got.steps)
    assert not deep.flags.writeable  # among leaves in a row of a mapping
    assert got.steps[0].ranks == frozenset({0, 1}) and got.n == 8
