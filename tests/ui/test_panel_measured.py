"""Plan vs actual panel, driven as a person would: open logs with the buttons, drop them on the
window, read the table and the charts, adopt the measured throughput, save and reopen."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication

from storage import Project
from ui import dialogs
from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.export import export_panel, read_png_scenario
from ui.main_window import MainWindow
from ui.panels import PANELS, kind_labels, panel_by_kind
from ui.panels.measured import KEY_WAITED, MeasuredPanel
from workbench import measured, units
from workbench.plan import predict
from workbench.scenarios import scenario_from_json
from workbench.workspace import DEFAULT_PLAN

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOG_A = FIXTURES / "trainlogs" / "plan_vs_actual_a.log"
LOG_B = FIXTURES / "trainlogs" / "plan_vs_actual_b_torchtitan.log"
CODECARBON = FIXTURES / "energy" / "plan_vs_actual_codecarbon.csv"


@pytest.fixture
def catalog(qapp):
    return HardwareCatalog()


@pytest.fixture
def panel(qtbot, catalog):
    p = MeasuredPanel(catalog)
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    return p


def choose_file(monkeypatch, path: Path) -> list[tuple]:
    """The file dialog answers ``path``; returns the questions it was asked."""
    asked = []

    def ask_open_path(parent, caption, filters, directory=""):
        asked.append((caption, filters))
        return str(path)

    monkeypatch.setattr(dialogs, "ask_open_path", ask_open_path)
    return asked


def open_log(qtbot, panel, monkeypatch, path: Path) -> None:
    asked = choose_file(monkeypatch, path)
    qtbot.mouseClick(panel.open_log_button, Qt.MouseButton.LeftButton)
    assert asked and asked[-1][0] == "Open training log"


def open_energy(qtbot, panel, monkeypatch, path: Path) -> None:
    asked = choose_file(monkeypatch, path)
    qtbot.mouseClick(panel.open_energy_button, Qt.MouseButton.LeftButton)
    assert asked and "CodeCarbon" in asked[-1][1]


def cell(panel, quantity: str, column: int) -> str:
    """The text of a table cell: column 1 is the plan, 2 the first log, ..."""
    return panel.table_row(quantity)[column]


def number(text: str) -> str:
    """The value of a measured cell without its difference from the plan."""
    return text.split(" (", 1)[0]


def analysis(path: Path, **kwargs) -> measured.RunAnalysis:
    run = measured.run_from_text(path.name, path.read_text())
    return measured.analyse_run(run, DEFAULT_PLAN, predict(DEFAULT_PLAN), **kwargs)


# -- a log and an energy CSV ---------------------------------------------------------------------
def test_a_log_and_an_energy_csv_fill_the_plan_against_actual_table(qtbot, panel, monkeypatch):
    assert panel.charts_hint.isVisible()  # before anything is opened, the panel says what to do
    open_log(qtbot, panel, monkeypatch, LOG_A)
    open_energy(qtbot, panel, monkeypatch, CODECARBON)
    assert not panel.charts_hint.isVisible()
    s = panel.scenario()
    assert [r.name for r in s.runs] == [LOG_A.name] and s.energy.name == CODECARBON.name
    a = analysis(LOG_A)
    p = predict(DEFAULT_PLAN)
    headers = [panel.results.horizontalHeaderItem(c).text() for c in range(panel.results.columnCount())]
    assert headers == ["Quantity", "Plan", LOG_A.name, "Unit"]

    # step time: plan and median side by side, with the difference
    row = panel.table_row("Step time (median)")
    assert row[1] == f"{p.step_time_s:.3g}" and row[3] == "s"
    assert number(row[2]) == f"{a.median_step_time_s:.3g}"
    assert row[2].endswith(f"({a.median_step_time_s / p.step_time_s - 1:+.1%})")
    row = panel.table_row("Throughput, whole job (median)")
    assert (row[1], number(row[2]), row[3]) == (units.format_quantity(p.tokens_per_s, ""),
                                                 units.format_quantity(a.median_tokens_per_s, ""), "tokens/s")
    row = panel.table_row("MFU, recomputed with the plan")
    assert (row[1], number(row[2]), row[3]) == (f"{100 * p.mfu:.3g}", f"{100 * a.median_mfu_recomputed:.3g}", "%")
    assert number(cell(panel, "MFU as logged", 2)) == f"{100 * a.median_mfu_logged:.3g}"
    # the data waits: measured against the plan's data term, and the share of the gap they explain
    assert number(cell(panel, "Data wait per step", 2)) == f"{a.data_wait_s:.3g}"
    assert cell(panel, "Steps that waited on data", 2) == "4 of 36"
    gap = panel.table_row("Step-time gap to the plan")
    assert gap[3] == "ms" and gap[2] == f"+{1000 * a.gap.total_s:.3g}"
    assert cell(panel, "of which data loading", 2).endswith(f"({a.gap.data_loading_s / a.gap.total_s:.0%} of the gap)")
    assert cell(panel, "Steady state", 2) == "steps 5–40"

    # energy: kWh, power per GPU, tokens per joule and CO2e with the plan's grid and PUE
    e = panel.energy_analysis()
    assert number(cell(panel, "Energy (GPU + host)", 2)) == f"{e.measured_energy_j / 3.6e6:.3g}"
    assert cell(panel, "Energy (GPU + host)", 1) == f"{e.planned_energy_j / 3.6e6:.3g}"
    assert number(cell(panel, "GPU board power per GPU", 2)) == "640"
    assert number(cell(panel, "Tokens per joule (GPU + host)", 2)) == f"{a.median_tokens_per_s_per_gpu / e.measured_power_w:.3g}"
    assert panel.table_row("CO2e, the plan's grid and PUE")[3] == "g"
    assert number(cell(panel, "CO2e, the plan's grid and PUE", 2)) == f"{1000 * e.measured_co2e_kg:.3g}"
    assert cell(panel, "CO2e as CodeCarbon reported", 2) == "169"

    # the MFU note, and the lines not read, with their numbers
    assert "6N FLOPs per token only" in panel.notes_text() and "HFU" not in panel.notes_text()
    assert f"{LOG_A.name} line 34: step not read: loss is nan" in panel.skipped_text.toPlainText()
    assert f"{LOG_A.name} line 3: warning" in panel.skipped_text.toPlainText()
    # one undo step per file
    stack = panel.undo_stack()
    assert stack.count() == 2 and stack.undoText() == f"Open energy log {CODECARBON.name}"
    stack.undo()
    assert panel.scenario().energy is None and "Energy (GPU + host)" not in [r[0] for r in panel.results.table_rows()]


def test_the_steps_that_waited_on_data_are_marked(qtbot, panel, monkeypatch):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    series = {s.name: s for s in panel.rate_chart.series()}
    marks = series[f"{LOG_A.name}: waited on data"]
    shown = [int(x) for x, y in zip(marks.x, marks.y, strict=True) if y == y]  # NaN between markers
    assert shown == [9, 17, 26, 33]
    assert marks.symbol == "t" and not marks.in_legend
    assert series[KEY_WAITED].in_legend  # the key explains the triangles
    line = series[LOG_A.name]
    assert line.x.tolist() == list(range(1, 41))
    # the plan's throughput per GPU and MFU are drawn as lines to measure against
    values = sorted(value for _line, value, *_ in panel.rate_chart._lines)
    assert predict(DEFAULT_PLAN).tokens_per_s_per_gpu in values and 5.0 in values  # plan, steady from step 5


def test_two_logs_share_one_chart_each_in_its_colour(qtbot, panel, monkeypatch):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    open_log(qtbot, panel, monkeypatch, LOG_B)
    series = {s.name: s for s in panel.rate_chart.series()}
    a, b = series[LOG_A.name], series[LOG_B.name]
    assert a.color != b.color and a.in_legend and b.in_legend
    assert panel.rate_chart.legend_visible()
    assert b.y[5] == pytest.approx(measured.run_from_text(LOG_B.name, LOG_B.read_text()).tokens_per_s_per_gpu[5])
    mfu = {s.name for s in panel.mfu_chart.series()}
    assert {f"{LOG_A.name}: logged", f"{LOG_B.name}: logged", f"{LOG_B.name}: recomputed with the plan"} <= mfu
    headers = [panel.results.horizontalHeaderItem(c).text() for c in range(panel.results.columnCount())]
    assert headers[2] == LOG_A.name and headers[3].startswith("plan_vs_actual_b_torch")
    # torchtitan prints no step time: its cell says so; it counts MFU as the plan does
    assert cell(panel, "Step time (median)", 3) == "–"
    b_analysis = analysis(LOG_B)
    assert number(cell(panel, "MFU as logged", 3)) == f"{100 * b_analysis.median_mfu_logged:.3g}"
    # the same file twice (two clusters' train.log) gets a name of its own
    open_log(qtbot, panel, monkeypatch, LOG_A)
    assert [r.name for r in panel.scenario().runs][-1] == f"{LOG_A.name} (2)"
    # removing one is one undo step
    panel.run_list.setCurrentRow(1)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert [r.name for r in panel.scenario().runs] == [LOG_A.name, f"{LOG_A.name} (2)"]
    assert panel.undo_stack().undoText() == f"Remove training log {LOG_B.name}"


def test_the_warm_up_can_be_set(qtbot, panel, monkeypatch):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    assert panel.auto_warmup.isChecked() and not panel.warmup_field.isEnabled()
    panel.auto_warmup.click()
    assert panel.scenario().warmup_steps == 4 and panel.warmup_field.isEnabled()  # the same steps as before
    edit = panel.warmup_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "10")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert panel.scenario().warmup_steps == 10
    assert cell(panel, "Steady state", 2) == "steps 11–40"
    assert number(cell(panel, "Step time (median)", 2)) == f"{analysis(LOG_A, warmup_steps=10).median_step_time_s:.3g}"
    panel.auto_warmup.click()
    assert panel.scenario().warmup_steps is None


def test_files_it_cannot_use_change_nothing_and_say_why(qtbot, panel, monkeypatch, tmp_path):
    notes = tmp_path / "notes.log"
    notes.write_text("remember to book the cluster\n")
    open_log(qtbot, panel, monkeypatch, notes)
    assert not panel.scenario().runs and panel.undo_stack().count() == 0
    assert "notes.log is not a training log" in panel.status_text() and "line 1" in panel.status_text()
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as fh:
        fh.truncate(measured.MAX_LOG_BYTES + 1)  # a sparse file: nothing is written
    open_log(qtbot, panel, monkeypatch, huge)
    assert "huge.log is 20.0 MB" in panel.status_text() and "20 MB are not read" in panel.status_text()
    assert not panel.scenario().runs
    open_energy(qtbot, panel, monkeypatch, LOG_A)
    assert "is not an energy log" in panel.status_text() and panel.scenario().energy is None


def test_text_from_a_log_is_shown_as_plain_text(qtbot, panel, monkeypatch, tmp_path):
    odd = tmp_path / "<b>run <img src=x>.log"
    odd.write_text("<i>hello<i>\n" + LOG_A.read_text())
    open_log(qtbot, panel, monkeypatch, odd)
    name = odd.name
    assert panel.run_list.item(0).text().startswith(name)  # literally, tags and all
    assert panel.notes_label.textFormat() == Qt.TextFormat.PlainText
    assert panel.status.textFormat() == Qt.TextFormat.PlainText
    assert f"{name} line 1: not a step line  (<i>hello<i>)" in panel.skipped_text.toPlainText()
    tip = panel.results.horizontalHeaderItem(2).toolTip()
    assert "&lt;b&gt;" in tip  # escaped for the tooltip's markup
    assert QApplication.instance() is not None


def test_csv_holds_the_comparison_and_the_per_step_series(qtbot, panel, monkeypatch, tmp_path):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    open_log(qtbot, panel, monkeypatch, LOG_B)
    path = export_panel(panel, "csv", tmp_path / "measured.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        lines = list(csv.reader(fh))
    assert lines[0] == ["quantity", "value", "unit"]
    blank = lines.index([])
    table = {q: (v, u) for q, v, u in lines[1:blank]}
    assert table["Step time (median): plan"] == (f"{predict(DEFAULT_PLAN).step_time_s:.3g}", "s")
    assert table[f"Step time (median): {LOG_A.name}"] == (f"{analysis(LOG_A).median_step_time_s:.3g}", "s")
    assert f"Step time (median): {LOG_A.name} against the plan" in table
    header, data = lines[blank + 1], lines[blank + 2:]
    assert header == list(measured.SERIES_HEADERS)
    assert len(data) == 40 + 30
    waited = [int(r[1]) for r in data if r[0] == LOG_A.name and r[8] == "1"]
    assert waited == [9, 17, 26, 33]


def test_png_export_carries_the_scenario_with_its_logs(qtbot, panel, monkeypatch, tmp_path):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    open_energy(qtbot, panel, monkeypatch, CODECARBON)
    png = panel.export_to("png", tmp_path / "measured.png", width_px=1280)
    image = QImage(str(png))
    assert image.width() == 1280 and image.height() > 400  # both charts
    assert scenario_from_json(read_png_scenario(png)) == panel.scenario()


@pytest.mark.parametrize(("mode", "presentation"), [("light", False), ("dark", False), ("light", True)])
def test_the_panel_draws_in_every_theme(qtbot, panel, monkeypatch, mode, presentation):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    open_log(qtbot, panel, monkeypatch, LOG_B)
    try:
        th.apply_theme(QApplication.instance(), mode)
        th.set_presentation(presentation)
        panel.resize(1920, 1080)
        image = panel.grab().toImage()
        assert image.width() == 1920
        theme = th.current_theme()
        series = {s.name: s for s in panel.rate_chart.series()}
        first, second = series[LOG_A.name].color, series[LOG_B.name].color
        assert first == theme.tone(theme.series_color(0)).name()
        drawn = [image.pixelColor(x, y).name() for x in range(0, 1920, 2) for y in range(0, 1080, 2)]
        assert drawn.count(first) > 300 and drawn.count(second) > 300  # both logs' lines, on screen
        # the legend stays above the data: the top of the range leaves it room
        (_x, (_lo, top)) = panel.rate_chart.visible_range()
        assert top > 1.2 * max(series[LOG_A.name].y)
    finally:
        th.set_presentation(False)
        th.apply_theme(QApplication.instance(), "light")


def test_compare_overlays_a_saved_scenarios_logs_dashed(qtbot, panel, monkeypatch):
    open_log(qtbot, panel, monkeypatch, LOG_A)
    saved = measured.MeasuredScenario(runs=(measured.run_from_text(LOG_B.name, LOG_B.read_text()),))
    panel.set_comparison([("cluster B", saved)])
    series = {s.name: s for s in panel.rate_chart.series()}
    assert series[f"cluster B: {LOG_B.name}"].style == Qt.PenStyle.DashLine
    assert series[LOG_A.name].style == Qt.PenStyle.SolidLine
    assert panel.scenario().runs == panel.scenario().runs[:1]  # an overlay, not an edit
    panel.clear_comparison()
    assert f"cluster B: {LOG_B.name}" not in {s.name for s in panel.rate_chart.series()}


def test_standalone_adopting_needs_the_window(qtbot, panel, monkeypatch):
    assert not panel.adopt_throughput_button.isEnabled()  # nothing measured yet
    open_log(qtbot, panel, monkeypatch, LOG_A)
    assert panel.adopt_throughput_button.isEnabled()
    assert not panel.adopt_measured_throughput()  # standalone there is no window plan to put it into
    assert "main window" in panel.status_text()


# -- in the window ---------------------------------------------------------------------------------------
@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(dialogs, "show_message", lambda *a, **k: None)
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda *a, **k: dialogs.DISCARD)
    path = tmp_path / "plan.swbproj"
    Project.create(path).close()
    w = MainWindow(Project.open(path))
    qtbot.addWidget(w)
    w.resize(1600, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


def drop(window, *paths: Path) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPoint(300, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    if not enter.isAccepted():
        return False
    event = QDropEvent(QPointF(300, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    return event.isAccepted()


def test_the_panel_is_in_the_registry_browser_and_window(qtbot, window):
    assert "measured" in panel_by_kind() and kind_labels()["measured"] == "Plan vs actual"
    assert [r.kind for r in PANELS][-1] == "measured"
    assert window.docks["measured"].objectName() == "dock.measured"
    group = window.browser.group_item("measured")
    assert group is not None and group.text(0) == "Plan vs actual (1)"
    sample = window.project.load_scenario(("measured", group.child(0).text(0)))
    assert len(sample.runs) == 2 and sample.energy is not None


def test_dropped_logs_reach_the_panel_and_survive_save_and_reopen(qtbot, window, tmp_path):
    panel = window.panel("measured")
    assert drop(window, LOG_A, LOG_B)  # two at once
    qtbot.waitUntil(lambda: len(panel.scenario().runs) == 2, timeout=3000)
    assert window.active_kind() == "measured"
    assert drop(window, CODECARBON)
    qtbot.waitUntil(lambda: panel.scenario().energy is not None, timeout=3000)
    assert window.undo_stack.undoText() == f"Open energy log {CODECARBON.name}"
    saved = panel.scenario()
    assert window.isWindowModified()
    window.action_save.trigger()
    path = window.project.path
    window.close()

    again = MainWindow(Project.open(path))
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    reopened = again.panel("measured").scenario()
    assert reopened.runs == saved.runs and reopened.energy == saved.energy
    again.raise_panel("measured")
    qtbot.waitUntil(lambda: not again.panel("measured").is_stale(), timeout=3000)
    assert number(again.panel("measured").table_row("Step time (median)")[2]) == \
        f"{analysis(LOG_A).median_step_time_s:.3g}"


def test_file_open_routes_a_log_to_the_panel(qtbot, window, monkeypatch):
    asked = choose_file(monkeypatch, LOG_A)
    window.open_dialog()
    assert "Training logs and energy CSVs" in asked[-1][1]
    assert [r.name for r in window.panel("measured").scenario().runs] == [LOG_A.name]
    assert window.active_kind() == "measured"


def test_the_panel_follows_the_plan(qtbot, window):
    panel = window.panel("measured")
    window.raise_panel("measured")  # a panel behind another tab draws when it is shown
    assert panel.load_file(LOG_A)
    window.document.edit_plan(n_gpus=16)
    assert panel.scenario().plan.n_gpus == 16
    p16 = window.document.prediction()
    assert panel.table_row("Throughput, whole job (median)")[1] == units.format_quantity(p16.tokens_per_s, "")
    window.action_undo.trigger()
    assert panel.scenario().plan == window.document.plan()


def shown(window, kind: str, quantity: str) -> str:
    """The value panel ``kind`` displays in its results row ``quantity`` (the panel brought to the front)."""
    window.raise_panel(kind)
    values = [value for q, value, _unit in window.panel(kind).results.rows() if q == quantity]
    assert len(values) == 1, (kind, quantity)
    return values[0]


def test_adopting_the_measured_throughput_puts_it_into_the_plan_as_one_undo_step(qtbot, window):
    panel, power, scaling = window.panel("measured"), window.panel("power"), window.panel("scaling")
    window.raise_panel("measured")
    assert panel.load_file(LOG_A)
    model = window.document.prediction()
    before = {
        "summary": window.summary_label.text(), "plan days": shown(window, "run_plan", "Training time"),
        "power rate": shown(window, "power", "Throughput per GPU"),
        "scaling time": shown(window, "scaling", "Training time"),
        "scenarios": (power.scenario(), scaling.scenario()),
    }
    assert f"{model.train_days:,.1f} days" in before["summary"] and "measured" not in before["summary"]
    rate = analysis(LOG_A).median_tokens_per_s_per_gpu
    window.raise_panel("measured")
    assert panel.adopt_throughput_button.isVisible() and panel.adopt_throughput_button.isEnabled()
    qtbot.mouseClick(panel.adopt_throughput_button, Qt.MouseButton.LeftButton)

    plan = window.document.plan()
    job = rate * plan.n_gpus
    assert plan.measured_tokens_per_s == pytest.approx(job) and plan.measured_source == LOG_A.name
    p = window.document.prediction()
    days = plan.train_tokens / job / 86400
    assert p.train_days == pytest.approx(days) and p.step_time_s == pytest.approx(plan.tokens_per_step / job)
    assert abs(p.train_days - model.train_days) > 0.05 * model.train_days  # the log is not the model
    # the status bar, the Run plan panel, Power and carbon and Scaling and MFU all show the measured run
    summary = window.summary_label.text()
    assert f"{days:,.1f} days" in summary and "measured" in summary
    assert shown(window, "run_plan", "Training time") == f"{days:,.0f}"
    assert LOG_A.name in window.panel("run_plan").measured_text()
    assert not power.override_context() and not scaling.override_context()  # they follow the plan
    assert power.scenario().tokens_per_s_per_gpu == pytest.approx(rate)
    assert shown(window, "power", "Throughput per GPU") == units.format_quantity(rate, "")
    assert shown(window, "power", "Run duration") == units.format_quantity(days * 86400, "s").split(" ")[0]
    assert scaling.scenario().tokens_per_s == pytest.approx(job)
    assert shown(window, "scaling", "Training time") == units.format_quantity(days * 86400, "s").split(" ")[0]
    assert window.undo_stack.undoText() == f"Adopt measured throughput from {LOG_A.name}"
    window.raise_panel("measured")
    assert "The run plan uses" in panel.notes_text()

    window.action_undo.trigger()  # one step back to the prediction, everywhere
    assert window.document.plan().measured_tokens_per_s is None
    assert window.summary_label.text() == before["summary"]
    assert shown(window, "run_plan", "Training time") == before["plan days"]
    assert shown(window, "power", "Throughput per GPU") == before["power rate"]
    assert shown(window, "scaling", "Training time") == before["scaling time"]
    assert (power.scenario(), scaling.scenario()) == before["scenarios"]
    window.raise_panel("measured")
    assert "The run plan uses" not in panel.notes_text()


def test_a_hidden_panel_draws_before_its_numbers_are_read(qtbot, window, tmp_path):
    panel = window.panel("measured")
    window.raise_panel("power")  # the Plan vs actual tab is behind another
    assert panel.load_file(LOG_A) and panel.load_file(LOG_B)
    assert number(panel.table_row("Step time (median)")[2]) == f"{analysis(LOG_A).median_step_time_s:.3g}"
    path = window.export_active("csv", tmp_path / "hidden.csv", kind="measured")
    with open(path, newline="", encoding="utf-8") as fh:
        assert sum(1 for row in csv.reader(fh) if row and row[0] == LOG_B.name) == 30


def test_a_saved_scenario_opens_against_its_own_plan(qtbot, window, monkeypatch):
    panel = window.panel("measured")
    record = window.project.list_scenarios("measured")[0]
    window.document.edit_plan(n_gpus=16)
    window.open_saved_scenario(record.id)
    assert panel.override_context()  # compared with the plan it was saved with
    assert panel.scenario().plan.n_gpus == 8
    assert "compared with the plan saved in this scenario" in panel.plan_banner_label.text()
    assert not panel.adopt_button.isVisibleTo(panel)  # nothing of this panel is a plan field to make the plan
    assert panel.adopt_throughput_button.isVisibleTo(panel)
    assert panel.table_row("Throughput, whole job (median)")[1] == \
        units.format_quantity(predict(DEFAULT_PLAN).tokens_per_s, "")
    json.loads(panel.scenario_json())
