"""The All-reduce calculator renders the analysis the document keeps (``window.document.analyses``),
driven as a user does: a plan edit in the toolbar computes it once and the panel shows its
numbers; a theme switch, a second read or a CSV export computes nothing more; an edit of the
panel's own field computes once; a panel behind another tab computes nothing until it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from window_helpers import (
    analyses_read,
    computed,
    csv_rows,
    dark_theme,
    in_front,
    result_rows,
    type_in,
)

from workbench import comms_sweep, units

KIND = "allreduce"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
HEALTHY = "h100-node-healthy-allreduce.txt"


@pytest.fixture
def window(new_window):
    return new_window()


def _shown(value: float, unit: str) -> tuple[str, str]:
    return tuple(units.format_quantity(value, unit).split(" ", 1))


def _shows(panel, analysis) -> None:
    """What the panel draws and lists is ``analysis``, which is the model of its scenario."""
    s = panel.scenario()
    point = comms_sweep.operating_point(s.collective, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)
    assert analysis.point == point
    rows = result_rows(panel)
    assert rows["Ring time"] == _shown(point.ring_time, "s")
    assert rows[f"Bus bandwidth ({point.best_algorithm})"] == _shown(point.busbw, "B/s")
    assert rows["Latency takes over from"] == (f"{analysis.latency_from:,} ranks", "")
    x, y, _label = panel.chart.operating_point()
    assert (x, y) == (point.size_bytes, point.best_time)
    ring = next(c for c in panel.chart.series() if c.name == "ring")
    assert ring.y.tolist() == analysis.sweep.ring.tolist()


def test_a_toolbar_edit_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window, monkeypatch):
    panel = in_front(qtbot, window, KIND)
    seen = analyses_read(monkeypatch, panel)
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "512")
    assert window.document.plan().n_gpus == 512 and panel.scenario().n_ranks == window.document.plan().replicas
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)  # what the panel drew is what the document hands out
    assert computed(window, KIND) == before + 1
    _shows(panel, analysis)
    assert analysis.point.n_ranks == 512 // (window.document.plan().tp * window.document.plan().pp)


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = in_front(qtbot, window, KIND)
    assert panel.load_log_from(FIXTURES / HEALTHY)  # a log too: its list and its points are redrawn
    analysis = window.document.analysis(KIND)
    before = computed(window, KIND)
    with dark_theme(window):
        assert panel.chart.theme().name == "dark"
    panel.chart_tabs.setCurrentIndex(1)  # the other tab draws from the same analysis
    assert panel.ranks_chart.operating_point()[:2] == (panel.scenario().n_ranks, analysis.rank_point_time)
    panel.chart_tabs.setCurrentIndex(0)
    assert window.document.analysis(KIND) is analysis
    rows = csv_rows(panel.export_to("csv", tmp_path / "allreduce.csv"))
    assert computed(window, KIND) == before
    assert rows[0][0] == "source" and len(rows) - 1 == len(analysis.sweep.sizes) + len(analysis.logs[0].log.sizes)
    assert float(rows[1][1]) == analysis.sweep.sizes[0]
    _shows(panel, analysis)


def test_an_edit_of_the_panel_s_own_field_computes_once(qtbot, window, monkeypatch):
    panel = in_front(qtbot, window, KIND)
    seen = analyses_read(monkeypatch, panel)
    before = computed(window, KIND)
    type_in(qtbot, panel.field("size_min").edit, "4 KiB")
    assert panel.scenario().size_min == 4096
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)
    assert analysis.sweep.sizes[0] == 4096
    _shows(panel, analysis)
    # a field the plan sets: the panel goes local, in one step, and computes once more
    type_in(qtbot, panel.field("n_ranks").edit, "24")
    assert panel.override_context() and panel.scenario().n_ranks == 24
    assert computed(window, KIND) == before + 2
    _shows(panel, window.document.analysis(KIND))


def test_a_built_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    in_front(qtbot, window, "collective")
    qtbot.waitUntil(lambda: not panel.on_screen())
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    assert computed(window, KIND) == before and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == before + 1
    assert panel.scenario().n_ranks == window.document.plan().replicas
    _shows(panel, window.document.analysis(KIND))
    assert computed(window, KIND) == before + 1
