"""The Collectives panel, driven as a person would: pick from combos, type, press keys, click."""

from __future__ import annotations

import csv
import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from ui.panels.collective import CollectivePanel
from ui.panels.collective_view import ArrowItem
from workbench import units
from workbench.collectives import Collective, expected_final_state
from workbench.context import RunContext
from workbench.scenarios import AllReduceScenario, CollectiveScenario


@pytest.fixture
def panel(qtbot):
    p = CollectivePanel(None)
    qtbot.addWidget(p)
    p.resize(1100, 700)
    p.show()
    qtbot.waitExposed(p)
    return p


def choose(qtbot, combo, value) -> None:
    """Pick the item holding ``value`` with the keyboard, as a user would (emits activated)."""
    target = combo.findData(value)
    assert target >= 0, value
    combo.setFocus()
    while combo.currentIndex() != target:
        key = Qt.Key.Key_Down if combo.currentIndex() < target else Qt.Key.Key_Up
        qtbot.keyClick(combo, key)


def type_into(qtbot, field, text: str) -> None:
    edit = field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def press(qtbot, panel, key, times: int = 1) -> None:
    panel.view.setFocus()
    for _ in range(times):
        qtbot.keyClick(panel.view, key)


def result(panel, quantity: str) -> str:
    for name, value, _unit in panel.results.rows():
        if name == quantity:
            return value
    raise AssertionError(f"no result row {quantity!r} in {panel.results.rows()}")


def test_ring_all_reduce_on_four_ranks_has_six_steps_and_a_start(panel):
    sc = panel.scenario()
    assert (sc.collective, sc.n_ranks, sc.schedule) == ("all_reduce", 4, "ring")
    assert len(panel.frames()) == 7
    assert panel.step_slider.maximum() == 6
    assert panel.step_total.text() == "of 6"
    assert result(panel, "Steps") == "6"
    assert result(panel, "Bus factor (nccl-tests)") == "1.5"
    assert panel.view.frame().title.startswith("Step 0 of 6")


def test_end_shows_the_expected_final_state_and_arrows_per_step(qtbot, panel):
    press(qtbot, panel, Qt.Key.Key_End)
    assert panel.current_step() == 6
    frame = panel.view.frame()
    assert frame is panel.current_frame()
    assert panel.view.displayed_buffers() == expected_final_state("all_reduce", 4)
    assert result(panel, "Every rank holds") == "the sum of every chunk over all ranks"

    press(qtbot, panel, Qt.Key.Key_Home)
    press(qtbot, panel, Qt.Key.Key_Right)
    arrows = panel.view.arrow_items()
    assert len(arrows) == 4  # one chunk per ring link
    assert all(isinstance(a, ArrowItem) for a in arrows)
    assert all(a.reduce for a in arrows)
    assert {(a.src, a.dst) for a in arrows} == {(0, 1), (1, 2), (2, 3), (3, 0)}
    assert "reduce-scatter" in panel.view.frame().title
    press(qtbot, panel, Qt.Key.Key_Right, 3)  # step 4: the all-gather phase copies
    arrows = panel.view.arrow_items()
    assert len(arrows) == 4 and not any(a.reduce for a in arrows)
    assert "all-gather" in panel.view.frame().title
    press(qtbot, panel, Qt.Key.Key_Left)
    assert panel.current_step() == 3

    choose(qtbot, panel.schedule_combo, "conceptual")
    press(qtbot, panel, Qt.Key.Key_End)
    assert len(panel.view.arrow_items()) == 12  # every ordered pair of 4 ranks
    assert panel.view.displayed_buffers() == expected_final_state("all_reduce", 4)


@pytest.mark.parametrize("schedule", ["ring", "conceptual"])
@pytest.mark.parametrize("collective", [c.value for c in Collective])
def test_every_collective_ends_in_its_definition(qtbot, panel, collective, schedule):
    type_into(qtbot, panel.ranks_field, "5")
    choose(qtbot, panel.collective_combo, collective)
    choose(qtbot, panel.schedule_combo, schedule)
    root = 0
    if Collective(collective).has_root:
        type_into(qtbot, panel.root_field, "3")
        root = 3
    press(qtbot, panel, Qt.Key.Key_End)
    assert panel.view.displayed_buffers() == expected_final_state(collective, 5, root)
    assert panel.view.frame() is panel.frames()[-1]


def test_stepping_is_navigation_not_an_undo_step(qtbot, panel):
    stack = panel.undo_stack()
    press(qtbot, panel, Qt.Key.Key_Right, 2)
    assert panel.current_step() == 2
    qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    assert panel.current_step() == 3
    assert panel.step_slider.value() == 3 and panel.step_spin.value() == 3
    qtbot.mouseClick(panel.prev_button, Qt.MouseButton.LeftButton)
    assert panel.scenario().step == 2  # kept in the scenario, for saving
    press(qtbot, panel, Qt.Key.Key_Home)
    assert panel.current_step() == 0
    assert not panel.prev_button.isEnabled() and panel.next_button.isEnabled()
    panel.step_slider.setValue(5)  # a drag of the slider
    assert panel.view.frame().step == 5
    assert stack.count() == 0


def test_broadcast_enables_the_root(qtbot, panel):
    assert not panel.root_field.isEnabled()
    choose(qtbot, panel.collective_combo, "broadcast")
    assert panel.root_field.isEnabled()
    assert panel.undo_stack().undoText() == "Change collective to broadcast"
    choose(qtbot, panel.collective_combo, "all_gather")
    assert not panel.root_field.isEnabled()


def test_fewer_ranks_than_the_root_clamps_it_in_one_undo_step(qtbot, panel):
    stack = panel.undo_stack()
    choose(qtbot, panel.collective_combo, "reduce")
    type_into(qtbot, panel.ranks_field, "8")
    type_into(qtbot, panel.root_field, "6")
    assert panel.scenario().root == 6
    before = stack.count()
    type_into(qtbot, panel.ranks_field, "4")
    assert (panel.scenario().n_ranks, panel.scenario().root) == (4, 3)
    assert stack.count() == before + 1
    assert stack.undoText().startswith("Change ranks to 4")
    assert panel.root_field.value() == 3
    stack.undo()
    assert (panel.scenario().n_ranks, panel.scenario().root) == (8, 6)
    assert panel.ranks_field.value() == 8 and panel.root_field.value() == 6


def test_play_advances_and_stops_at_the_last_step(qtbot, panel):
    choose(qtbot, panel.speed_combo, 250)
    assert panel._timer.interval() == 250
    panel._timer.setInterval(10)  # the test need not wait for a person's pace
    press(qtbot, panel, Qt.Key.Key_Space)
    assert panel.is_playing() and panel.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: panel.current_step() >= 1, timeout=2000)
    qtbot.waitUntil(lambda: not panel.is_playing(), timeout=3000)
    assert panel.current_step() == panel.last_step() == 6
    assert panel.play_button.text() == "Play"
    assert panel.undo_stack().count() == 0


def test_space_pauses_and_hiding_stops_the_timer(qtbot, panel):
    press(qtbot, panel, Qt.Key.Key_Space)
    assert panel.is_playing()
    press(qtbot, panel, Qt.Key.Key_Space)
    assert not panel.is_playing()
    qtbot.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    assert panel.is_playing()
    panel.hide()
    assert not panel.is_playing()


def test_undo_restores_a_collective_change(qtbot, panel):
    choose(qtbot, panel.collective_combo, "reduce_scatter")
    assert len(panel.frames()) == 4
    assert result(panel, "Every rank r holds") == "the sum of chunk r over all ranks"
    panel.undo_stack().undo()
    assert panel.scenario().collective == "all_reduce"
    assert panel.collective_combo.currentData() == "all_reduce"
    assert len(panel.frames()) == 7
    panel.undo_stack().redo()
    assert panel.scenario().collective == "reduce_scatter"


def test_sixty_four_ranks_render(qtbot, panel):
    type_into(qtbot, panel.ranks_field, "64")
    assert panel.scenario().n_ranks == 64
    press(qtbot, panel, Qt.Key.Key_Right)
    assert len(panel.view.arrow_items()) == 64
    assert not panel.grab().isNull()
    choose(qtbot, panel.schedule_combo, "conceptual")
    press(qtbot, panel, Qt.Key.Key_End)
    assert panel.view.arrows_omitted() and panel.view.arrow_items() == []
    assert "too many links" in " ".join(
        item.text() for item in panel.view.scene().items() if hasattr(item, "text")
    )
    assert not panel.grab().isNull()
    assert panel.view.displayed_buffers() == expected_final_state("all_reduce", 64)


def test_shared_gpu_count_sets_the_ranks_without_undo(panel):
    panel.apply_context(RunContext(n_gpus=512))
    assert panel.scenario().n_ranks == 64
    panel.apply_context(RunContext(n_gpus=1))
    assert panel.scenario().n_ranks == 2
    assert panel.undo_stack().count() == 0
    assert panel.ranks_field.value() == 2


def test_explain_opens_without_blocking(qtbot, panel):
    text = panel.explanation()
    assert "reduce-scatter" in text and "all-gather" in text and "S/n" in text
    panel.action_explain.trigger()
    box = panel._explain_box
    assert box is not None and box.isVisible()
    box.close()


def test_comparison_is_a_note(panel):
    panel.set_comparison([CollectiveScenario(collective="broadcast")])
    assert "one scenario at a time" in panel.status_text()
    panel.clear_comparison()
    assert panel.status_text() == ""


def test_exports_the_current_frame_on_white(qtbot, panel, tmp_path):
    press(qtbot, panel, Qt.Key.Key_Right, 2)
    assert panel.chart_for_export() is panel.view
    png = panel.export_to("png", tmp_path / "c.png", width_px=1600)
    image = QImage(str(png))
    assert image.width() == 1600
    assert image.pixelColor(2, 2).name() == "#ffffff"
    colours = {
        image.pixelColor(x, y).name()
        for x in range(0, 1600, 37)
        for y in range(0, image.height(), 23)
    }
    assert len(colours) > 5  # cells, arrows, text: not blank
    svg = panel.export_to("svg", tmp_path / "c.svg")
    assert "<svg" in svg.read_text()
    rows = list(csv.reader(open(panel.export_to("csv", tmp_path / "c.csv"), newline="")))
    assert rows[0] == ["step (1)", "title", "transfers (1)", "bytes per link (B)", "latency (s)",
                       "transfer time (s)", "step time (s)", "elapsed (s)"]
    assert len(rows) == 8
    assert rows[2][1] == "Step 1 of 6: reduce-scatter"
    assert float(rows[2][3]) == 64 * 2**20
    assert float(rows[-1][7]) == pytest.approx(panel.total_time(), rel=1e-12)
    assert sum(float(row[6]) for row in rows[1:]) == pytest.approx(panel.total_time(), rel=1e-12)


def test_dark_theme_still_exports_on_white(qtbot, qapp, panel, tmp_path):
    from ui import theme as th

    th.apply_theme(qapp, "dark")
    try:
        assert panel.view.scene().backgroundBrush().color().name() == th.DARK.background.lower()
        image = QImage(str(panel.export_to("png", tmp_path / "d.png", width_px=800)))
        assert image.pixelColor(2, 2).name() == "#ffffff"
        # the title is drawn in the light theme's ink for the export, then the view goes back
        assert panel.view.scene().backgroundBrush().color().name() == th.DARK.background.lower()
    finally:
        th.apply_theme(qapp, "light")


# -- time per step: the alpha-beta model, as the All-reduce calculator has it -----------------


@pytest.fixture
def calculator(qtbot):
    from ui.catalog import HardwareCatalog
    from ui.panels.allreduce import AllReducePanel

    p = AllReducePanel(HardwareCatalog())
    qtbot.addWidget(p)
    p.resize(1400, 800)
    p.show()
    qtbot.waitExposed(p)
    return p


def pick(combo, value) -> None:
    """Pick ``value`` in a combo's popup (what choosing an entry with the mouse emits)."""
    index = combo.findData(value)
    assert index >= 0, value
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


@pytest.mark.parametrize(
    ("collective", "schedule"),
    [("all_reduce", "ring"), ("all_reduce", "conceptual"), ("reduce_scatter", "ring"),
     ("all_gather", "ring"), ("broadcast", "ring"), ("reduce", "ring"), ("scatter", "ring"),
     ("all_to_all", "conceptual")],
)
def test_step_times_add_up_to_the_calculator_time(qtbot, panel, calculator, collective, schedule):
    from workbench import comms_sweep

    # the same inputs, typed into both panels
    choose(qtbot, panel.collective_combo, collective)
    choose(qtbot, panel.schedule_combo, schedule)
    type_into(qtbot, panel.ranks_field, "16")
    type_into(qtbot, panel.size_field, "1 GiB")
    type_into(qtbot, panel.link_field, "450 GB/s")
    type_into(qtbot, panel.alpha_field, "3 us")
    pick(calculator.field("collective"), collective)
    for name, text in (("size_bytes", "1 GiB"), ("n_ranks", "16"), ("link_bw", "450 GB/s"), ("alpha", "3 us")):
        type_into(qtbot, calculator.field(name), text)
    s = calculator.scenario()
    assert (s.collective, s.size_bytes, s.n_ranks, s.link_bw, s.alpha) == (collective, 2**30, 16, 450e9, 3e-6)
    assert (panel.scenario().link_bw, panel.scenario().alpha) == (450e9, 3e-6)

    times = panel.step_times()
    assert len(times) == len(panel.frames())
    ring = comms_sweep.operating_point(s.collective, s.size_bytes, s.n_ranks, s.link_bw, s.alpha).ring_time
    assert sum(t.seconds for t in times) == pytest.approx(ring, rel=1e-12)
    # and both panels print the same number
    assert result(panel, "Time, whole collective (ring model)") == result(calculator, "Ring time")

    # every step shows its time, and the last one the whole time so far
    press(qtbot, panel, Qt.Key.Key_End)
    line = next(i.text() for i in panel.view.text_items("timing"))
    total = units.format_quantity(panel.total_time(), "s")
    assert line.startswith(f"This step {units.format_quantity(times[-1].seconds, 's')}")
    assert line.endswith(f"{total} of {total} so far")


def test_the_time_strip_marks_the_step_and_sizes_segments_by_time(qtbot, panel):
    choose(qtbot, panel.collective_combo, "broadcast")
    type_into(qtbot, panel.ranks_field, "4")
    press(qtbot, panel, Qt.Key.Key_Right, 2)
    strip = panel.view.time_strip()
    times = [t.seconds for t in panel.step_times()[1:]]
    widths = [r.width() for r in strip.segments()]
    assert len(widths) == len(times) == 6
    assert widths == pytest.approx([sum(widths) * t / sum(times) for t in times])
    assert len(set(widths)) > 1
    # a pipeline pays latency while it fills and bandwidth while it streams: steps differ
    assert result(panel, "Longest step") == units.format_quantity(max(times), "s").split(" ")[0]


def _link(panel) -> tuple[float, float]:
    s = panel.scenario()
    return s.link_bw, s.alpha


def test_the_link_follows_the_plan_like_the_calculator(qtbot, panel, calculator):
    stack = panel.undo_stack()
    assert panel.link_source() == "default" and "defaults" in panel.link_note.text()
    assert _link(panel) == (AllReduceScenario().link_bw, AllReduceScenario().alpha)
    context = RunContext(n_gpus=64, interconnect="nvlink-4")
    panel.apply_context(context)
    calculator.apply_context(context)
    c = calculator.scenario()
    # 64 GPUs on 8 nodes: the ring crosses the NICs, at the rate the calculator shows
    assert _link(panel) == (c.link_bw, c.alpha) and panel.scenario().interconnect == c.interconnect == "nic-400g"
    assert panel.link_source() == "plan" and "run plan" in panel.link_note.text()
    assert panel.link_field.value() == c.link_bw and stack.count() == 0  # the plan's edit is the step
    assert panel.step_times()[1].latency_s == c.alpha


def test_a_typed_link_is_one_undo_step_and_undo_restores_it(qtbot, panel):
    stack = panel.undo_stack()
    type_into(qtbot, panel.alpha_field, "20 us")
    assert panel.scenario().alpha == pytest.approx(20e-6, rel=1e-12)
    assert stack.undoText() == "Change latency per step to 20 µs"
    assert panel.link_source() == "own" and "own link" in panel.link_note.text()
    assert panel.step_times()[1].latency_s == panel.scenario().alpha
    type_into(qtbot, panel.link_field, "450 GB/s")
    assert _link(panel) == pytest.approx((450e9, 20e-6))
    stack.undo()
    assert _link(panel) == pytest.approx((360e9, 20e-6))
    assert panel.link_field.value() == 360e9
    stack.undo()
    assert _link(panel) == (360e9, 5e-6) and panel.link_source() == "default"
    assert panel.alpha_field.value() == 5e-6 and panel.step_times()[1].latency_s == 5e-6
    stack.redo()
    assert panel.scenario().alpha == pytest.approx(20e-6, rel=1e-12)


def test_typing_over_the_plan_s_preset_link_clears_it_in_the_same_step(qtbot, panel):
    panel.set_scenario(CollectiveScenario(link_bw=48e9, alpha=6e-6, interconnect="nic-400g"))
    import presets

    assert panel.link_note.text() == f"This panel's own link, on {presets.interconnect_by_key('nic-400g').name}."
    type_into(qtbot, panel.link_field, "40 GB/s")
    s = panel.scenario()
    assert (s.link_bw, s.interconnect) == (40e9, "")
    assert panel.undo_stack().undoText() == "Change link bandwidth to 40 GB/s"
    panel.undo_stack().undo()
    assert panel.scenario().interconnect == "nic-400g" and panel.scenario().link_bw == 48e9


def test_a_bad_link_is_refused_next_to_the_field(qtbot, panel):
    before = panel.scenario()
    type_into(qtbot, panel.link_field, "0 GB/s")
    assert panel.scenario() == before
    assert panel.link_field.message_text()
    type_into(qtbot, panel.alpha_field, "1 min")  # past the calculator's 10 s bound
    assert panel.scenario() == before
    assert panel.alpha_field.message_text()
    assert panel.undo_stack().count() == 0


# -- many ranks stay readable -----------------------------------------------------------------


def _texts_ok(view) -> None:
    smallest = min(item.font().pixelSize() for item in view.text_items())
    assert smallest >= view.min_font_px()


def test_sixteen_ranks_keep_labelled_cells_and_rank_labels(qtbot, panel):
    type_into(qtbot, panel.ranks_field, "16")
    press(qtbot, panel, Qt.Key.Key_Right, 3)
    view = panel.view
    assert view.cell_label_mode() in ("full", "short", "tiny")
    assert view.cell_font_px() >= view.min_font_px()
    _texts_ok(view)
    ranks = {item.text().removeprefix("rank ") for item in view.text_items("rank")}
    assert ranks == {str(r) for r in range(16)}
    assert len(view.text_items("slot")) >= 8  # every slot, or every other one
    # what a cell says, and what its tooltip says under the pointer
    from ui.panels.collective_view import cell_texts

    frame = view.frame()
    lines = cell_texts(frame.buffers[4][0], 0, 16, True, view.cell_label_mode())
    assert lines and lines[-1].endswith(("4/16", "4"))
    grid = view.grid_item()
    qtbot.mouseMove(view.viewport(), view.mapFromScene(view.cell_rect(4, 0).center()))
    qtbot.waitUntil(lambda: grid.toolTip() != "")
    # after three ring steps rank 4 holds chunk 0 of ranks 1 to 4
    assert grid.toolTip() == "rank 4, slot 0: chunk 0 summed over 4 of 16 ranks (1, 2, 3, 4)"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_sixteen_ranks_in_presentation_mode_keep_large_labels(qtbot, qapp, panel, theme):
    from ui import theme as th

    th.apply_theme(qapp, theme)
    th.set_presentation(True)
    try:
        panel.resize(1920, 1080)
        type_into(qtbot, panel.ranks_field, "16")
        view = panel.view
        qtbot.waitUntil(lambda: view.viewport().width() > 1200)  # the inputs column widens with its fonts
        assert view.min_font_px() == 16
        assert view.cell_label_mode() != "none" and view.cell_font_px() >= 16
        _texts_ok(view)
        assert {i.text().removeprefix("rank ") for i in view.text_items("rank")} == {str(r) for r in range(16)}
    finally:
        th.set_presentation(False)
        th.apply_theme(qapp, "light")


def test_sixty_four_ranks_are_colour_cells_with_a_legend_that_says_so(qtbot, panel):
    type_into(qtbot, panel.ranks_field, "64")
    press(qtbot, panel, Qt.Key.Key_Right)
    view = panel.view
    assert view.cell_label_mode() == "none"
    assert "colour: chunk j, in slot j" in view.legend_texts()
    _texts_ok(view)
    assert len(view.text_items("slot")) >= 8  # thinned, not dropped
    choose(qtbot, panel.collective_combo, "all_to_all")
    choose(qtbot, panel.schedule_combo, "conceptual")
    press(qtbot, panel, Qt.Key.Key_End)
    assert "colours repeat every 8 chunks" in view.legend_texts()


def test_the_slowest_link_is_refused_below_its_bound_and_costed_at_it(qtbot, panel):
    before = panel.scenario()
    type_into(qtbot, panel.link_field, "1e-300 B/s")  # 256 MiB at that rate: no float holds the time
    assert panel.scenario() == before and "between 1 and" in panel.link_field.message_text()
    assert panel.undo_stack().count() == 0
    # the slowest link allowed, under the largest message: still a finite time for every step
    type_into(qtbot, panel.link_field, "1 B/s")
    type_into(qtbot, panel.size_field, "1e18 B")
    assert (panel.scenario().link_bw, panel.scenario().message_bytes) == (1.0, 1e18)
    times = panel.step_times()
    assert len(times) == len(panel.frames()) and all(math.isfinite(t.seconds) for t in times)
    assert result(panel, "Time, whole collective (ring model)") != "–"


def test_steps_that_cannot_be_costed_leave_the_drawing_without_times(qtbot, panel, tmp_path, monkeypatch):
    from workbench import collectives

    def overflow(*_args, **_kwargs):
        raise ValueError("link_bw: the time overflows")

    monkeypatch.setattr(collectives, "step_times", overflow)
    type_into(qtbot, panel.size_field, "1 MiB")
    assert panel.step_times() == [] and "No step times" in panel.status_text()
    assert result(panel, "Time, whole collective (ring model)") == "–"
    assert panel.view.time_strip() is None and panel.view.frame() is panel.current_frame()
    press(qtbot, panel, Qt.Key.Key_Right)
    assert panel.current_step() == 1
    rows = list(csv.reader(open(panel.export_to("csv", tmp_path / "c.csv"), newline="")))
    assert rows[0] == ["step (1)", "title", "transfers (1)", "bytes per link (B)"]  # no times to write


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from storage import Project
    from ui import dialogs
    from ui.main_window import MainWindow

    # closing the window at the end must not wait on "Save the changes?"
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda *a, **k: dialogs.DISCARD)
    monkeypatch.setattr(dialogs, "ask_recover", lambda *a, **k: False)
    path = tmp_path / "p.swbproj"
    Project.create(path).close()
    w = MainWindow(Project.open(path))
    qtbot.addWidget(w)
    w.resize(1600, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


def set_gpus(qtbot, window, text: str) -> None:
    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_in_the_window_the_plan_s_link_is_followed_until_one_is_typed(qtbot, window):
    window.raise_panel("collective")
    panel, calculator = window.panels["collective"], window.panels["allreduce"]
    qtbot.waitUntil(panel.on_screen)
    stack = window.undo_stack
    c = calculator.scenario()
    assert _link(panel) == (c.link_bw, c.alpha) and panel.link_source() == "plan"
    assert "run plan" in panel.link_note.text()
    node_link = _link(panel)

    set_gpus(qtbot, window, "64")  # eight nodes: the ring now crosses the NICs
    c = calculator.scenario()
    assert panel.scenario().n_ranks == 64 and _link(panel) == (c.link_bw, c.alpha) != node_link
    assert panel.scenario().interconnect == c.interconnect == "nic-400g"
    assert not panel.override_context() and not panel.plan_banner.isVisible()
    plan_link = _link(panel)

    type_into(qtbot, panel.alpha_field, "20 us")  # the user's own link: Local override, one step
    assert panel.override_context() and panel.link_source() == "own"
    assert panel.scenario().alpha == pytest.approx(20e-6, rel=1e-12) and panel.scenario().interconnect == ""
    assert stack.undoText() == "Change latency per step to 20 µs (Local override)"
    assert window.action_undo.text() == "&Undo Change latency per step to 20 µs (Local override)"
    qtbot.waitUntil(lambda: panel.plan_banner.isVisible())
    assert "The run plan's ring: " in panel.link_note.text()
    typed = panel.scenario()

    set_gpus(qtbot, window, "8")  # the plan changes: the typed link stays
    assert panel.scenario() == typed and calculator.scenario().link_bw == pytest.approx(node_link[0])

    stack.undo()  # the plan back on 64 GPUs
    stack.undo()  # the typed latency and its override: the plan's link again
    assert not panel.override_context() and _link(panel) == plan_link and panel.link_source() == "plan"
    assert panel.alpha_field.value() == plan_link[1]
    stack.redo()
    assert panel.override_context() and panel.scenario() == typed


def test_in_the_window_the_banner_leads_back_to_the_plan_s_link(qtbot, window):
    window.raise_panel("collective")
    panel, calculator = window.panels["collective"], window.panels["allreduce"]
    qtbot.waitUntil(panel.on_screen)
    plan_link = _link(panel)
    assert plan_link == (calculator.scenario().link_bw, calculator.scenario().alpha)

    type_into(qtbot, panel.alpha_field, "20 us")
    assert panel.link_source() == "own"
    qtbot.waitUntil(lambda: panel.plan_banner.isVisible())
    qtbot.mouseClick(panel.follow_button, Qt.MouseButton.LeftButton)
    assert _link(panel) == plan_link and not panel.plan_banner.isVisible()
    window.undo_stack.undo()  # "Follow the run plan" is one step
    assert panel.link_source() == "own" and panel.plan_banner.isVisible()
    assert panel.scenario().alpha == pytest.approx(20e-6, rel=1e-12)


def test_a_typed_link_survives_saving_and_reopening_the_project(qtbot, window, tmp_path):
    from storage import Project
    from ui.main_window import MainWindow

    window.raise_panel("collective")
    panel = window.panels["collective"]
    qtbot.waitUntil(panel.on_screen)
    type_into(qtbot, panel.link_field, "123 GB/s")
    type_into(qtbot, panel.alpha_field, "7 us")
    typed = panel.scenario()
    assert (typed.link_bw, typed.alpha) == pytest.approx((123e9, 7e-6)) and panel.override_context()
    # saved as a named scenario too
    window.project.save_scenario("my link", typed)
    assert window.save()
    path = window.project.path
    window.close()

    with Project.open(path) as project:  # the stored scenario, read back by storage
        record = next(r for r in project.list_scenarios("collective") if r.name == "my link")
        assert project.load_scenario(record.id) == typed
    again = MainWindow(Project.open(path))
    qtbot.addWidget(again)
    again.show()
    again.raise_panel("collective")
    reopened = again.panels["collective"]
    qtbot.waitUntil(reopened.on_screen)
    assert reopened.scenario() == typed and reopened.override_context()
    assert reopened.link_field.value() == typed.link_bw and reopened.alpha_field.value() == typed.alpha
    assert reopened.step_times()[1].latency_s == typed.alpha
    assert reopened.link_source() == "own" and reopened.plan_banner.isVisible()


def test_a_version_1_collective_scenario_opens_on_the_default_link(qtbot, window, tmp_path):
    import json

    from storage.project import SCENARIO_FILE_FORMAT

    # a scenario file exported by a version whose collective scenarios held no link
    v1 = {"kind": "collective", "schema_version": 1, "collective": "reduce_scatter", "n_ranks": 8,
          "schedule": "ring", "message_bytes": 1073741824, "root": 0, "step": 3}
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": SCENARIO_FILE_FORMAT, "format_version": 1, "app_version": "0.1.0",
                               "name": "from version 1", "notes": "", "scenario": v1}))
    scenario_id = window.project.import_scenario(old, "from version 1")
    assert window.open_saved_scenario(scenario_id)
    panel = window.panels["collective"]
    qtbot.waitUntil(panel.on_screen)
    s = panel.scenario()
    assert (s.collective, s.n_ranks, s.step) == ("reduce_scatter", 8, 3)
    assert _link(panel) == (AllReduceScenario().link_bw, AllReduceScenario().alpha) and s.interconnect == ""
    assert panel.override_context() and panel.link_field.value() == 360e9
    assert panel.step_times()[1].latency_s == 5e-6
    qtbot.mouseClick(panel.follow_button, Qt.MouseButton.LeftButton)
    calculator = window.panels["allreduce"].scenario()
    assert _link(panel) == (calculator.link_bw, calculator.alpha) and panel.link_source() == "plan"


def test_a_panel_behind_another_tab_exports_the_plan_it_has_not_drawn_yet(qtbot, window, tmp_path):
    from PIL import Image

    window.raise_panel("run_plan")
    panel = window.panels["collective"]
    qtbot.waitUntil(lambda: not panel.on_screen())
    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "16")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert panel.scenario().n_ranks == 16 and panel.is_stale()
    # read or exported while hidden, the panel draws the new plan first
    assert len(panel.frames()) == 2 * 15 + 1 and len(panel.step_times()) == 31
    path = panel.export_animation(tmp_path / "hidden.gif", "gif", width_px=320)[0]
    with Image.open(path) as im:
        assert im.n_frames == 31
