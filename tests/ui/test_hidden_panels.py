"""A panel hidden behind another tab draws when it is shown, not on every edit (issue 15):
an edit in the toolbar redraws the panel on show only, and once shown it has the new numbers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


@pytest.fixture
def window(new_window):
    return new_window()


def _count_draws(panel, monkeypatch) -> list[int]:
    drawn = [0]
    real = panel.results.set_rows

    def set_rows(rows):
        drawn[0] += 1
        return real(rows)

    monkeypatch.setattr(panel.results, "set_rows", set_rows)
    return drawn


def test_an_edit_redraws_only_the_visible_panel_and_a_hidden_one_on_show(qtbot, window, monkeypatch):
    window.raise_panel("run_plan")
    qtbot.waitUntil(lambda: window.panel("run_plan").on_screen())
    hidden = [k for k in ("power", "scaling", "allreduce", "roofline") if not window.panel(k).on_screen()]
    assert hidden == ["power", "scaling", "allreduce", "roofline"]
    draws = {k: _count_draws(window.panel(k), monkeypatch) for k in [*hidden, "run_plan"]}

    edit = window.context_toolbar.gpu_field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "64")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.document.plan().n_gpus == 64
    assert draws["run_plan"][0] == 1
    assert {k: draws[k][0] for k in hidden} == dict.fromkeys(hidden, 0)
    # the panels whose numbers depend on the GPU count owe a redraw (the roofline does not)
    assert window.panel("power").is_stale() and window.panel("scaling").is_stale()

    window.raise_panel("power")
    qtbot.waitUntil(lambda: window.panel("power").on_screen())
    assert draws["power"][0] == 1
    assert not window.panel("power").is_stale()
    assert window.panel("power").scenario().n_gpus == 64
    gpus = dict((q, v) for q, v, _u in window.panel("power").results.rows())
    assert "Throughput, all GPUs" in gpus
