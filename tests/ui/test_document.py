"""The workspace document in the window: one plan, one prediction per change, panels that follow
it, the same days everywhere, old projects migrated, a sixth panel in three places."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from PySide6.QtCore import Qt
from window_helpers import type_in

import presets
from storage import Project
from ui import dialogs
from ui import panels as panel_registry
from ui.main_window import WORKSPACE_KEY, MainWindow
from ui.panel import PanelBase
from workbench import carbon, workspace
from workbench import plan as plan_model
from workbench.plan import RunPlan
from workbench.scaling_analysis import analyse_scaling
from workbench.scenarios import FIELD_LABELS, SCENARIO_TYPES, Scenario, _int, register_scenario_type
from workbench.workspace import DEFAULT_PLAN

MAIN_WINDOW = Path(__file__).resolve().parents[2] / "ui" / "main_window.py"


@pytest.fixture(autouse=True)
def _no_blocking_dialogs(monkeypatch):
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, path, rec: False)
    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)


@pytest.fixture
def project_path(tmp_path) -> Path:
    path = tmp_path / "plan.swbproj"
    Project.create(path).close()
    return path


def _open(qtbot, path: Path) -> MainWindow:
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
def window(qtbot, project_path) -> MainWindow:
    return _open(qtbot, project_path)


@pytest.fixture
def predict_calls(monkeypatch):
    calls = []
    real = plan_model.predict

    def counting(plan, catalog=None):
        calls.append(plan)
        return real(plan, catalog)

    monkeypatch.setattr(plan_model, "predict", counting)
    return calls


# -- one prediction per change -------------------------------------------------------------------
def test_one_toolbar_edit_runs_predict_once(qtbot, window, predict_calls):
    window.document.prediction()  # the open's prediction is already made
    predict_calls.clear()
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "512")
    assert window.document.plan().n_gpus == 512
    window.summary_label.text()  # everything shown has been drawn
    assert len(predict_calls) == 1
    assert "512 ×" in window.summary_label.text()


def test_one_power_cap_slider_step_runs_predict_once(qtbot, window, predict_calls):
    power = window.panel("power")
    window.raise_panel("power")
    predict_calls.clear()
    slider = power.cap_slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_Left)
    assert window.document.plan().power_cap_w is not None  # the plan's cap moved
    assert len(predict_calls) == 1
    assert window.document.prediction().clock_fraction < 1


def test_a_toolbar_edit_is_one_undo_step_and_every_panel_follows(qtbot, window):
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.undo_stack.count() == 1 and window.undo_stack.undoText() == "Change GPU count to 64"
    plan = window.document.plan()
    assert window.panel("scaling").scenario().n_gpus == 64
    assert window.panel("power").scenario().n_gpus == 64
    assert window.panel("allreduce").scenario().n_ranks == plan.replicas  # the gradient sync
    assert window.panel("collective").scenario().n_ranks == 64
    assert window.panel("run_plan").scenario() == plan
    window.undo_stack.undo()
    assert window.document.plan() == DEFAULT_PLAN
    assert window.panel("scaling").scenario().n_gpus == 8


# -- the same numbers everywhere -------------------------------------------------------------
def _status_days(window) -> float:
    text = window.summary_label.text()
    return float(text.split(" days")[0].split("│")[-1].replace("&nbsp;", "").replace(",", "").strip())


def _assert_same_numbers(window):
    p = window.document.prediction()
    assert p is not None
    plan = window.document.plan()
    assert _status_days(window) == pytest.approx(p.train_days, abs=0.05)
    scaling = window.panel("scaling").scenario()
    analysis = analyse_scaling(scaling, p.peak_flops, plan.train_tokens)
    assert analysis.training_time_s == pytest.approx(p.train_time_s, rel=1e-9)
    power = window.panel("power")
    run = power.plan()
    for got, want in ((run.summary.duration_s, p.train_time_s), (run.summary.gpu_hours, p.gpu_hours),
                      (run.summary.facility_energy_j, p.facility_energy_j), (run.summary.co2e_kg, p.co2e_kg),
                      (run.summary.total_cost, p.total_cost)):
        assert got == pytest.approx(want, rel=1e-9)
    shown = {row[0]: row for row in window.panel("run_plan").results.rows()}
    assert any("days" in " ".join(row).lower() or "training time" in row[0].lower() for row in shown.values())
    assert carbon.J_PER_KWH  # (the status bar and panels read one prediction)


def test_the_70b_plan_shows_the_same_days_everywhere(qtbot, window):
    example = presets.sample_scenarios()[1][1]
    assert isinstance(example, RunPlan) and example.n_gpus == 1024
    window.document.replace_plan(example, "Open the 70B plan")
    _assert_same_numbers(window)


@pytest.mark.parametrize("index", range(len(presets.sample_scenarios())))
def test_every_sample_made_the_plan_shows_the_same_days_everywhere(qtbot, window, index):
    name, scenario = presets.sample_scenarios()[index]
    window.open_scenario(scenario, f"Open {name}")
    panel = window.panel(scenario.kind)
    if panel.CONTEXT_FIELDS and getattr(panel, "saves_scenario", True):
        assert panel.plan_banner.isVisibleTo(panel)  # it says it is not the plan
        panel.adopt_as_plan()
    if not getattr(panel, "saves_scenario", True) or panel.CONTEXT_FIELDS:
        assert not panel.override_context()
    _assert_same_numbers(window)


def test_a_panel_with_local_override_says_so_and_offers_the_way_back(qtbot, window):
    power = window.panel("power")
    type_in(qtbot, power.field("pue").edit, "1.5")
    assert window.document.plan().pue == 1.5  # a plan field: the plan changed
    power.action_override.setChecked(True)
    type_in(qtbot, power.field("pue").edit, "1.8")
    assert window.document.plan().pue == 1.5 and power.scenario().pue == 1.8
    assert power.plan_banner.isVisibleTo(power)
    assert "Local override" in power.plan_banner_label.text()
    power.follow_button.click()
    assert not power.override_context() and power.scenario().pue == 1.5
    assert not power.plan_banner.isVisibleTo(power)


def test_typing_a_throughput_the_plan_computes_makes_the_panel_local(qtbot, window):
    scaling = window.panel("scaling")
    type_in(qtbot, scaling.field("tokens_per_s").edit, "100k")
    assert scaling.override_context() and scaling.scenario().tokens_per_s == 100e3
    assert "comes from the run plan" in scaling.plan_banner_label.text()
    note = scaling.plan_banner_label.text()
    assert window.undo_stack.undoText().endswith("(Local override)")
    window.undo_stack.undo()  # the throughput and the override, together
    assert not scaling.override_context() and not scaling.plan_banner.isVisibleTo(scaling)
    window.undo_stack.redo()  # and back, saying again why
    assert scaling.override_context() and scaling.scenario().tokens_per_s == 100e3
    assert scaling.plan_banner_label.text() == note


# -- saving and opening ------------------------------------------------------------------------
def test_the_plan_is_saved_and_reopened(qtbot, project_path):
    window = _open(qtbot, project_path)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "128")
    assert window.save()
    window.close()
    again = _open(qtbot, project_path)
    assert again.document.plan().n_gpus == 128
    assert again.panel("scaling").scenario().n_gpus == 128


def test_a_project_saved_by_the_previous_version_opens_migrated(qtbot, project_path):
    old = {
        "version": 1,
        "context": {"hardware": "a100-sxm-80gb", "n_gpus": 64, "precision": "bf16", "sparse": False,
                    "interconnect": "nic-200g", "model_params": 70e9, "train_tokens": 2e12},
        "panels": {"power": {"kind": "power", "schema_version": 2, "pue": 1.4, "hardware": "a100-sxm-80gb",
                             "n_gpus": 64}},
        "overrides": {"power": True},
        "active": "scaling",
    }
    with Project.open(project_path) as project:
        project.set_meta(WORKSPACE_KEY, json.dumps(old))
        project.save()
    window = _open(qtbot, project_path)
    plan = window.document.plan()
    assert (plan.hardware, plan.n_gpus, plan.n_params, plan.train_tokens, plan.inter_node) == (
        "a100-sxm-80gb", 64, 70e9, 2e12, "nic-200g")
    assert window.panel("power").override_context() and window.panel("power").scenario().pue == 1.4
    assert window.panel("scaling").scenario().n_gpus == 64
    assert window.active_kind() == "scaling"


# -- the window only arranges -------------------------------------------------------------------
def test_the_main_window_has_no_plan_arithmetic_no_workspace_json_and_no_kind_literal():
    source = MAIN_WINDOW.read_text(encoding="utf-8")
    tree = ast.parse(source)
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    for record in panel_registry.PANELS:
        assert record.kind not in strings, record.kind
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    for name in ("predict", "plan_run", "plan_for_scenario", "power_cap_sweep", "run_summary_of", "loads",
                 "RunContext", "WORKSPACE_VERSION", "scenario_from_dict", "mfu", "carbon"):
        assert name not in names, name


# -- a sixth panel ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _NoteScenario(Scenario):
    """A dummy seventh kind: one number (registered by its test only, not at import)."""

    kind: ClassVar[str] = "note_test"
    count: int = 3

    def _check(self) -> None:
        self._set("count", _int("count", self.count, 0, 100))


class _NoteView(PanelBase):
    kind = "note_test"
    title = "Notes (test)"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        from ui.charts import Chart

        super().__init__(scenario or _NoteScenario(), parent, undo_stack=undo_stack)
        self.catalog = catalog
        self.chart = self.add_chart(Chart(self, title="Notes", x_label="Step", y_label="Count"))
        self.add_int_field("count", "Count", minimum=0, maximum=100)
        self.refresh()

    def refresh(self) -> None:
        if hasattr(self, "chart"):
            n = self.analysis()  # what the kind's analysis worked out: the view only draws it
            self.chart.add_series("count", [0.0, 1.0], [float(n), float(n)])


def _note_analysis(scenario: _NoteScenario, view, catalog) -> float:
    """The dummy kind's analysis (it would live beside its scenario type)."""
    return 2.0 * scenario.count


def test_another_panel_needs_a_scenario_type_a_view_and_one_registry_line(qtbot, project_path, tmp_path,
                                                                        monkeypatch):
    # the three places: the scenario type, the view, one registry line
    register_scenario_type(_NoteScenario)
    monkeypatch.setitem(workspace.ANALYSES, "note_test", _note_analysis)  # beside the scenario type
    FIELD_LABELS.setdefault("count", "Count")
    record = panel_registry.register_panel(panel_registry.PanelRecord(
        "note_test", "Notes (test)", "Notes", _NoteScenario, _NoteView, _NoteScenario))
    try:
        window = _open(qtbot, project_path)
        assert "note_test" in window.panels and "note_test" in window.docks
        notes = window.panel("note_test")
        window.raise_panel("note_test")
        before = window.document.analyses.computed["note_test"]
        type_in(qtbot, notes.field("count").edit, "7")
        assert notes.scenario().count == 7 and window.undo_stack.count() == 1
        assert window.document.analysis("note_test") == 14.0
        assert notes.chart.series()[0].item.getOriginalDataset()[1].tolist() == [14.0, 14.0]
        assert window.document.analyses.computed["note_test"] == before + 1  # drawn and read: once
        monkeypatch.setattr(dialogs, "ask_text", lambda *a, **k: "seven")
        assert window.save_panel_scenario("note_test") is not None
        assert window.save()
        # the browser lists it, the export draws it, the project keeps it and the workspace too
        groups = [window.browser.tree.topLevelItem(i).text(0) for i in range(window.browser.tree.topLevelItemCount())]
        assert any(g.startswith("Notes") for g in groups)
        png = Path(notes.export_to("png", tmp_path / "notes.png", width_px=800))
        assert png.stat().st_size > 1000
        window.close()
        again = _open(qtbot, project_path)
        assert again.panel("note_test").scenario().count == 7
        with Project.open(project_path) as project:
            names = [(r.kind, r.name) for r in project.list_scenarios()]
        assert ("note_test", "seven") in names
        again.close()
    finally:
        panel_registry.PANELS.remove(record)
        SCENARIO_TYPES.pop("note_test", None)
        FIELD_LABELS.pop("count", None)


# -- review findings: steps, overrides, limits --------------------------------------------------
def _pick(combo, key) -> None:
    index = combo.findData(key)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_each_device_picked_is_its_own_undo_step(qtbot, window):
    toolbar = window.context_toolbar
    _pick(toolbar.hardware_combo, "a100-sxm-80gb")
    _pick(toolbar.hardware_combo, "h200-sxm")
    assert window.undo_stack.count() == 2
    assert window.undo_stack.undoText() == "Change hardware to NVIDIA H200 SXM"
    window.undo_stack.undo()
    assert window.document.plan().hardware == "a100-sxm-80gb"
    assert window.document.plan().intra_node is None  # the A100's own link, not NVLink 4


def test_undoing_an_opened_scenario_returns_the_panel_to_the_plan(qtbot, window):
    scaling = window.panel("scaling")
    sample = next(s for n, s in presets.sample_scenarios() if n == "70B on 1,024 H100")
    window.open_scenario(sample, "Open 70B")
    assert scaling.override_context() and scaling.scenario() == sample
    window.undo_stack.undo()
    assert not scaling.override_context()
    assert scaling.scenario().n_gpus == window.document.plan().n_gpus
    window.undo_stack.redo()
    assert scaling.override_context() and scaling.scenario() == sample
    scaling.follow_button.click()  # back to the plan, one more step
    assert not scaling.override_context()
    window.undo_stack.undo()
    assert scaling.override_context() and scaling.scenario() == sample
    assert scaling.plan_banner.isVisibleTo(scaling)


def test_a_power_cap_the_model_cannot_honour_is_refused(qtbot, window):
    power = window.panel("power")
    edit = power.cap_field.edit
    type_in(qtbot, edit, "150 W")
    assert window.document.plan().power_cap_w is None and window.undo_stack.count() == 0
    assert "at least" in power.status_text() or power.cap_field.error()


def test_the_scaling_panel_shows_the_plan_s_step(qtbot, window):
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "1024")
    p = window.document.prediction()
    rows = {row[0]: row for row in window.panel("scaling").results.rows()}
    assert "Step time (run plan)" in rows
    assert float(rows["Step time (run plan)"][1]) == pytest.approx(p.step_time_s, rel=0.01)


def test_hardware_without_a_tdp_shows_energy_as_unknown_not_zero(qtbot, window):
    _pick(window.context_toolbar.hardware_combo, "tpu-v5p")  # a chip link, no published TDP
    text = window.summary_label.text()
    assert "energy n/a" in text and "0.0 MWh" not in text
    rows = {row[0]: row for row in window.panel("run_plan").results.rows()}
    assert rows["Facility energy"][1] == "n/a"


def test_the_allreduce_sweep_shrinks_back_on_undo(qtbot, window):
    allreduce = window.panel("allreduce")
    before = allreduce.scenario()
    type_in(qtbot, window.context_toolbar.model_field.edit, "405B")
    assert allreduce.scenario().size_max > before.size_max
    window.undo_stack.undo()
    assert allreduce.scenario() == before


def test_a_plan_that_cannot_be_predicted_says_why_everywhere(qtbot, window):
    _pick(window.context_toolbar.hardware_combo, "tpu-v4")  # no chip-to-chip bandwidth in its preset
    assert window.document.prediction() is None
    assert "unavailable" in window.summary_label.text()
    assert "intra-node" in window.summary_label.toolTip()
    window.raise_panel("scaling")  # where the user looks next
    scaling = window.panel("scaling")
    qtbot.waitUntil(scaling.on_screen)
    assert "cannot be predicted" in scaling.status_text()


def test_edit_scenario_changes_a_panel_or_the_plan_and_says_which_kinds(qtbot, window):
    seen = []
    window.document.kindsChanged.connect(lambda kinds: seen.extend(kinds))
    assert window.document.edit_scenario("power", region="us")
    assert window.document.scenario("power").region == "us" and "power" in seen
    assert window.document.edit_scenario("power", pue=1.4)  # a plan field: the plan changes
    assert window.document.plan().pue == 1.4 and window.undo_stack.count() == 2
    with pytest.raises(ValueError, match="pue"):
        window.document.edit_scenario("power", pue=0.5)
    assert window.document.plan().pue == 1.4
