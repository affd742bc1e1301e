"""The Collectives animator renders the analysis the document keeps (``window.document.analyses``),
driven as a user does: a plan edit in the toolbar computes it once and the panel shows its
schedule; stepping the animation (keys, the slider, playing) computes nothing, nor do a theme
switch, a second read or a CSV export; an edit of the panel's own field computes once; a panel
behind another tab computes nothing until it is shown."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from window_helpers import (
    analyses_read,
    computed,
    csv_rows,
    dark_theme,
    in_front,
    result_values,
    type_in,
)

from workbench import collectives, units
from workbench.collectives import Collective

KIND = "collective"


@pytest.fixture
def window(new_window):
    return new_window()


def _press(qtbot, panel, key, times: int = 1) -> None:
    panel.view.setFocus()
    for _ in range(times):
        qtbot.keyClick(panel.view, key)


def _shows(panel, analysis) -> None:
    """What the panel draws and lists is ``analysis``, the schedule of its scenario."""
    sc = panel.scenario()
    c = Collective(sc.collective)
    frames = collectives.frames(c, sc.n_ranks, sc.schedule, sc.root,
                                collectives.chunk_size(sc.message_bytes, sc.n_ranks))
    times = collectives.step_times(c, sc.n_ranks, sc.schedule, sc.message_bytes, sc.link_bw, sc.alpha,
                                   root=sc.root)
    assert analysis.frames == tuple(frames) and analysis.times == tuple(times)
    assert panel.view.frame() is analysis.frames[panel.current_step()]
    assert result_values(panel)["Steps"] == str(len(frames) - 1)
    assert result_values(panel)["Time, whole collective (ring model)"] == units.format_quantity(
        collectives.total_time(times), "s").split(" ")[0]
    assert panel.step_slider.maximum() == len(frames) - 1


def test_a_toolbar_edit_computes_the_analysis_once_and_the_panel_shows_it(qtbot, window, monkeypatch):
    panel = in_front(qtbot, window, KIND)
    seen = analyses_read(monkeypatch, panel)
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "16")
    assert window.document.plan().n_gpus == 16 and panel.scenario().n_ranks == 16
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)  # what the panel drew is what the document hands out
    assert computed(window, KIND) == before + 1
    assert analysis.last_step == 2 * 15  # a ring all-reduce on 16 ranks
    assert analysis.plan_link is not None and panel.link_source() == "plan"
    _shows(panel, analysis)


def test_stepping_the_animation_computes_nothing(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "8")  # 14 steps to walk through
    analysis = window.document.analysis(KIND)
    before = computed(window, KIND)
    _press(qtbot, panel, Qt.Key.Key_Right, 3)
    assert panel.current_step() == 3 and panel.scenario().step == 3  # kept in the scenario
    assert panel.view.frame() is analysis.frames[3]
    panel.step_slider.setValue(9)
    assert panel.view.frame() is analysis.frames[9]
    _press(qtbot, panel, Qt.Key.Key_End)
    _press(qtbot, panel, Qt.Key.Key_Left, 2)
    assert panel.current_step() == analysis.last_step - 2
    panel.speed_combo.setCurrentIndex(panel.speed_combo.count() - 1)  # the quickest
    _press(qtbot, panel, Qt.Key.Key_Space)  # play to the end
    qtbot.waitUntil(lambda: not panel.is_playing(), timeout=5000)
    assert panel.current_step() == analysis.last_step
    assert computed(window, KIND) == before  # every step drew a frame of the one analysis
    assert window.document.analysis(KIND) is analysis and computed(window, KIND) == before
    _shows(panel, analysis)


def test_a_theme_switch_a_second_read_and_an_export_compute_nothing_more(qtbot, window, tmp_path):
    panel = in_front(qtbot, window, KIND)
    analysis = window.document.analysis(KIND)
    before = computed(window, KIND)
    with dark_theme(window):
        assert panel.view._theme.name == "dark"
    assert window.document.analysis(KIND) is analysis
    rows = csv_rows(panel.export_to("csv", tmp_path / "collective.csv"))
    assert computed(window, KIND) == before
    assert len(rows) - 1 == len(analysis.frames)
    assert float(rows[-1][-1]) == pytest.approx(analysis.total_time, rel=1e-6)  # elapsed ends at the whole time
    assert panel.animation_caption().assumptions.endswith("(alpha-beta model)")
    assert computed(window, KIND) == before
    _shows(panel, analysis)


def test_an_edit_of_the_panel_s_own_field_computes_once(qtbot, window, monkeypatch):
    panel = in_front(qtbot, window, KIND)
    _press(qtbot, panel, Qt.Key.Key_Right, 2)  # a step, then an edit: the edit computes
    seen = analyses_read(monkeypatch, panel)
    before = computed(window, KIND)
    type_in(qtbot, panel.size_field.edit, "64 MiB")
    assert panel.scenario().message_bytes == 64 * 2**20
    assert computed(window, KIND) == before + 1
    analysis = window.document.analysis(KIND)
    assert seen and all(a is analysis for a in seen)
    assert analysis.chunk_bytes == 64 * 2**20 / panel.scenario().n_ranks
    _shows(panel, analysis)


def test_a_built_panel_behind_another_tab_computes_nothing_until_it_is_shown(qtbot, window):
    panel = in_front(qtbot, window, KIND)
    in_front(qtbot, window, "allreduce")
    qtbot.waitUntil(lambda: not panel.on_screen())
    before = computed(window, KIND)
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "32")
    assert window.document.plan().n_gpus == 32
    assert computed(window, KIND) == before and panel.is_stale()
    in_front(qtbot, window, KIND)
    assert computed(window, KIND) == before + 1
    assert panel.scenario().n_ranks == 32
    _shows(panel, window.document.analysis(KIND))
    assert computed(window, KIND) == before + 1
