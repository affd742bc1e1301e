"""A chart repaints the rectangle around what an edit changed, not its whole view (issue 15).

An All-reduce size change moves a point and its label: the charts repaint around those, and
what the screen then shows of every chart is what painting it whole shows. Checked by the
painted rectangles and by pixels, never by timing.
"""

from __future__ import annotations

import numpy as np
import pytest
from chart_items import deliver_events, on_screen, pixels
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtWidgets import QGraphicsView, QTabWidget
from window_helpers import dark_theme, in_front

from workbench.kernels import Kernel

MIB = 2**20
#: kernels with names and measured times (the chart names them, clear of the roofs)
KERNELS = (Kernel("gemm_large", 2e12, 4e9, 3e-3), Kernel("layernorm", 1e9, 8e8, 4e-4),
           Kernel("attention", 5e11, 2e9), Kernel("softmax", 2e9, 1e9, 9e-4))
#: per panel, edits that move a marker only, move a range, change nothing, redraw the lines
EDITS = {
    "allreduce": [dict(size_bytes=1024 * MIB), dict(size_bytes=64 * MIB), dict(size_bytes=64 * MIB),
                  dict(n_ranks=16), dict(size_bytes=2 * MIB), dict(n_ranks=8)],
    "scaling": [dict(serial_fraction=0.05), dict(serial_fraction=0.02), dict(serial_fraction=0.2),
                dict(serial_fraction=0.2), dict(mode="weak"), dict(n_gpus=64), dict(mode="strong")],
    "power": [dict(static_fraction=0.4), dict(static_fraction=0.3), dict(static_fraction=0.3)],
    "roofline": [dict(show_precision_ceilings=True), dict(sparse=True), dict(precision="fp8"),
                 dict(kernels=KERNELS), dict(show_precision_ceilings=False), dict(hardware=("h100-sxm", "b200")),
                 dict(show_l2=True), dict(kernels=KERNELS[:2]), dict(hardware=("h100-sxm",))],
    # the plan itself: every chart of the Run plan redraws (the toolbar's GPU count does this)
    "run_plan": [dict(n_gpus=64), dict(n_gpus=512), dict(n_gpus=512), dict(global_batch=1024), dict(n_gpus=8)],
}


def _stale_pixels(window) -> list[tuple[str, int]]:
    """(chart, pixels that differ from painting it whole) for each chart shown in ``window``:
    what the screen shows of the chart, then the chart repainted whole on the screen."""
    out = []
    for view in window.findChildren(QGraphicsView):
        if not view.isVisible() or view.scene() is None:
            continue
        port = view.viewport()
        shown = pixels(on_screen(port))
        port.repaint()  # the whole view, now, into the same backing store with the same kept pixmaps
        whole = pixels(on_screen(port))
        out.append((type(view).__name__, int((np.abs(shown - whole).max(axis=2) > 2).sum())))
    return out


class _PaintedRects(QObject):
    """The rectangles the charts' viewports are asked to paint."""

    def __init__(self, charts):
        super().__init__()
        self.rects = {id(c): [] for c in charts}
        self._of = {id(c.viewport()): c for c in charts}
        for c in charts:
            c.viewport().installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.Paint:
            chart = self._of.get(id(obj))
            if chart is not None:
                self.rects[id(chart)].append(event.rect())
        return False


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_after_each_edit_the_screen_shows_what_painting_each_chart_whole_shows(qtbot, new_window, kind):
    window = new_window()
    in_front(qtbot, window, kind)
    compared = 0

    def edit_and_compare(theme: str) -> None:
        nonlocal compared
        for values in EDITS[kind]:
            window.document.edit_scenario(kind, **values)
            deliver_events()
            stale = _stale_pixels(window)
            assert stale and all(n == 0 for _name, n in stale), (theme, values, stale)
            compared += len(stale)

    edit_and_compare("light")
    # every tab of the panel's charts (All-reduce against ranks, Power's energy and places)
    panel = window.panel(kind)
    for tabs in panel.findChildren(QTabWidget):
        for index in range(tabs.count()):
            tabs.setCurrentIndex(index)
            deliver_events()
            for values in EDITS[kind][-3:]:
                window.document.edit_scenario(kind, **values)
                deliver_events()
                stale = _stale_pixels(window)
                assert stale and all(n == 0 for _name, n in stale), (tabs.tabText(index), values, stale)
        tabs.setCurrentIndex(0)
    with dark_theme(window):
        deliver_events()
        assert all(n == 0 for _name, n in _stale_pixels(window))
        edit_and_compare("dark")
    deliver_events()
    assert all(n == 0 for _name, n in _stale_pixels(window))
    assert compared >= 2 * len(EDITS[kind])


def test_an_allreduce_size_change_repaints_around_the_point_and_its_label_only(qtbot, new_window):
    window = new_window()
    in_front(qtbot, window, "allreduce")
    panel = window.panel("allreduce")
    charts = [panel.chart, panel.busbw_chart]
    for size in (256 * MIB, 1024 * MIB):  # the first edits fit the ranges and start keeping paintings
        window.document.edit_scenario("allreduce", size_bytes=size)
        deliver_events()
    painted = _PaintedRects(charts)
    for size in (512 * MIB, 256 * MIB, 128 * MIB, 256 * MIB):
        for rects in painted.rects.values():
            rects.clear()
        window.document.edit_scenario("allreduce", size_bytes=size)
        deliver_events()
        for chart in charts:
            rects = painted.rects[id(chart)]
            assert len(rects) == 1, (size, rects)  # painted, once
            view = chart.viewport().size()
            # the point and its label, where they were and where they are: a part of the view
            assert rects[0].width() * rects[0].height() < 0.25 * view.width() * view.height(), (size, rects)
            assert chart.operating_point()[0] == size


def test_the_hover_readout_leaves_nothing_behind_as_the_mouse_moves(qtbot, new_window):
    window = new_window()
    in_front(qtbot, window, "allreduce")
    chart = window.panel("allreduce").chart
    window.document.edit_scenario("allreduce", size_bytes=1024 * MIB)
    deliver_events()
    plot = chart.mapFromScene(chart.getPlotItem().getViewBox().sceneBoundingRect()).boundingRect()
    for fx, fy in ((0.2, 0.3), (0.5, 0.6), (0.8, 0.2), (0.3, 0.9), (0.6, 0.4)):
        spot = QPoint(plot.left() + int(fx * plot.width()), plot.top() + int(fy * plot.height()))
        with qtbot.waitSignal(chart.hovered, timeout=1000):
            qtbot.mouseMove(chart.viewport(), spot)
        deliver_events()
        stale = _stale_pixels(window)
        assert stale and all(n == 0 for _name, n in stale), (fx, fy, stale)


def test_in_presentation_mode_the_screen_shows_what_painting_each_chart_whole_shows(qtbot, new_window):
    window = new_window()
    in_front(qtbot, window, "allreduce")
    presentation = window.enter_presentation("allreduce")
    try:
        qtbot.waitExposed(presentation)
        deliver_events()
        for values in EDITS["allreduce"]:
            window.document.edit_scenario("allreduce", **values)
            deliver_events()
            stale = _stale_pixels(presentation)
            assert stale and all(n == 0 for _name, n in stale), (values, stale)
    finally:
        window.exit_presentation()
    deliver_events()
    window.document.edit_scenario("allreduce", size_bytes=4 * MIB)
    deliver_events()
    assert all(n == 0 for _name, n in _stale_pixels(window))


def test_the_measured_panel_shows_what_painting_each_chart_whole_shows_as_logs_come_and_go(qtbot, monkeypatch):
    """Training logs opened one after another (each widens the charts' ranges), the warm-up
    moved, a log removed: the panel's charts on screen are as painted whole."""
    from pathlib import Path

    from PySide6.QtCore import Qt

    from ui import dialogs
    from ui.catalog import HardwareCatalog
    from ui.panels.measured import MeasuredPanel

    logs = Path(__file__).resolve().parent.parent / "fixtures" / "trainlogs"
    panel = MeasuredPanel(HardwareCatalog())
    qtbot.addWidget(panel)
    panel.resize(1400, 850)
    panel.show()
    qtbot.waitExposed(panel)

    def checked(what: str) -> None:
        deliver_events()
        stale = _stale_pixels(panel)
        assert stale and all(n == 0 for _name, n in stale), (what, stale)

    for name in ("plan_vs_actual_a.log", "plan_vs_actual_b_torchtitan.log"):
        monkeypatch.setattr(dialogs, "ask_open_path", lambda *_args, name=name, **_kw: str(logs / name))
        qtbot.mouseClick(panel.open_log_button, Qt.MouseButton.LeftButton)
        checked(name)
    panel.auto_warmup.click()
    checked("warm-up set by hand")
    panel.run_list.setCurrentRow(0)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    checked("a log removed")
    assert len(panel.scenario().runs) == 1
