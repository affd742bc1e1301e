"""The All-reduce calculator renders the analysis the document keeps (``window.document.analyses``),
driven as a user does: a plan edit in the toolbar computes it once and the panel shows its
numbers; a theme switch, a second read or a CSV export computes nothing more; an edit of the
panel's own field computes once; a panel behind another tab computes nothing until it is shown."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from ui import theme as th
from workbench import comms_sweep, units

KIND = "allreduce"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
HEALTHY = "h100-node-healthy-allreduce.txt"


@pytest.fixture
def window(new_window):
    return new_window()


@pytest.fixture
def rendered(monkeypatch):
    """``rendered(panel)``: from now on, every analysis the panel reads is listed."""
    seen = []

    def spy(panel):
        real = panel.analysis
        monkeypatch.setattr(panel, "analysis", lambda: seen.append(real()) or seen[-1])
        return seen

    return spy


def _computed(window) -> int:
    return window.document.analyses.computed[KIND]


def _in_front(qtbot, window, kind: str = KIND):
    window.raise_panel(kind)
    panel = window.panel(kind)
    qtbot.waitUntil(lambda: panel.on_screen() and not panel.is_stale())
    return panel


def _type(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def _row(panel, quantity: str) -> tuple[str, str]:
    return {q: (value, unit) for q, value, unit in panel.results.rows()}[quantity]


def _shown(value: float, unit: str) -> tuple[str, str]:
    return tuple(units.format_quantity(value, unit).split(" ", 1))


def _shows(panel, analysis) -> None:
    """What the panel draws and lists is ``analysis``, which is the model of its scenario."""
    s = panel.scenario()
    point = comms_sweep.operating_point(s.collective, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)
    assert analysis.point == point
    assert _row(panel, "Ring time") == _shown(point.ring_time, "s")
    assert _row(panel, f"Bus bandwidth ({point.best_algorithm})") == _shown(point.busbw, "B/s")
    assert _row(panel, "Latency takes over from") == (f"{analysis.latency_from:,} ranks", "")
    x, y, _label = panel.chart.operating_point()
    assert (x, y) == (point.size_bytes, point.best_time)
    ring = next(c for c in panel.chart.series() if c.name == "ring")
    assert ring.y.tolist() == analysis.sweep.ring.tolist()


def test_a_toolbar_edit_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window, rendered):
    panel = _in_front(qtbot, window)
    seen = rendered(panel)
    before = _computed(window)
    _type(qtbot, window.context_toolbar.gpu_field.edit, "512")
    assert window.document.plan().n_gpus == 512 and panel.scenario().n_ranks == window.document.plan().replicas
    assert _computed(window) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)  # what the panel drew is what the document hands out
    assert _computed(window) == before + 1
    _shows(panel, analysis)
    assert analysis.point.n_ranks == 512 // (window.document.plan().tp * window.document.plan().pp)


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, qapp, window, tmp_path):
    panel = _in_front(qtbot, window)
    assert panel.load_log_from(FIXTURES / HEALTHY)  # a log too: its list and its points are redrawn
    analysis = window.document.analysis(KIND)
    before = _computed(window)
    try:
        th.apply_theme(qapp, "dark")
        assert panel.chart.theme().name == "dark"
    finally:
        th.apply_theme(qapp, "light")
    panel.chart_tabs.setCurrentIndex(1)  # the other tab draws from the same analysis
    assert panel.ranks_chart.operating_point()[:2] == (panel.scenario().n_ranks, analysis.rank_point_time)
    panel.chart_tabs.setCurrentIndex(0)
    assert window.document.analysis(KIND) is analysis
    rows = list(csv.reader(open(panel.export_to("csv", tmp_path / "allreduce.csv"), newline="")))
    assert _computed(window) == before
    assert rows[0][0] == "source" and len(rows) - 1 == len(analysis.sweep.sizes) + len(analysis.logs[0].log.sizes)
    assert float(rows[1][1]) == analysis.sweep.sizes[0]
    _shows(panel, analysis)


def test_an_edit_of_the_panel_s_own_field_computes_once(qtbot, window, rendered):
    panel = _in_front(qtbot, window)
    seen = rendered(panel)
    before = _computed(window)
    _type(qtbot, panel.field("size_min").edit, "4 KiB")
    assert panel.scenario().size_min == 4096
    assert _computed(window) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)
    assert analysis.sweep.sizes[0] == 4096
    _shows(panel, analysis)
    # a field the plan sets: the panel goes local, in one step, and computes once more
    _type(qtbot, panel.field("n_ranks").edit, "24")
    assert panel.override_context() and panel.scenario().n_ranks == 24
    assert _computed(window) == before + 2
    _shows(panel, window.document.analysis(KIND))


def test_a_built_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = _in_front(qtbot, window)
    _in_front(qtbot, window, "collective")
    qtbot.waitUntil(lambda: not panel.on_screen())
    before = _computed(window)
    _type(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    assert _computed(window) == before and panel.is_stale()
    _in_front(qtbot, window)
    assert _computed(window) == before + 1
    assert panel.scenario().n_ranks == window.document.plan().replicas
    _shows(panel, window.document.analysis(KIND))
    assert _computed(window) == before + 1
