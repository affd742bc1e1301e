"""All-reduce in a window: a link typed or picked by hand stays the panel's own when the plan changes.

The panel follows the run plan's gradient sync: its ranks, size, link and latency come from
the plan. Typing one of them turns Local override on, in the same undo step, so that the next
plan edit does not overwrite it. The link bandwidth, the latency and the interconnect choice
went around that rule when an interconnect preset was selected (they also clear the preset):
the panel then differed from the plan without keeping its inputs, and the next toolbar edit
put the plan's link back over the user's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from window_helpers import type_in


@pytest.fixture
def window(new_window):
    w = new_window()
    w.raise_panel("allreduce")
    return w


def _panel(window):
    panel = window.panel("allreduce")
    assert panel.follows_plan() and panel.scenario().interconnect  # the plan's link preset
    return panel


@pytest.mark.parametrize("name, text, value", [("link_bw", "100 GB/s", 100e9), ("alpha", "9 µs", 9e-6)])
def test_a_typed_link_is_kept_when_the_plan_changes(qtbot, window, name, text, value):
    panel = _panel(window)
    steps = window.undo_stack.count()
    type_in(qtbot, panel.field(name).edit, text)
    assert panel.override_context() and getattr(panel.scenario(), name) == pytest.approx(value)
    assert panel.scenario().interconnect == ""  # no longer the preset: the combo says Custom
    assert "Local override" in panel.plan_banner_label.text()
    assert window.undo_stack.count() == steps + 1  # override and edit: one step
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    assert getattr(panel.scenario(), name) == pytest.approx(value)  # the user's, not the plan's
    window.undo_stack.undo()  # the GPU count
    window.undo_stack.undo()  # the typed link and the override, together
    assert panel.follows_plan() and panel.scenario().interconnect


def test_an_interconnect_picked_by_hand_is_kept_when_the_plan_changes(qtbot, window):
    panel = _panel(window)
    combo = panel.field("interconnect")
    planned = panel.scenario().interconnect
    other = next(combo.itemData(i) for i in range(combo.count()) if combo.itemData(i) not in ("", planned))
    combo.setFocus()  # as a user picks: the popup, the item, Enter
    combo.showPopup()
    combo.view().setCurrentIndex(combo.model().index(combo.findData(other), 0))
    qtbot.keyClick(combo.view(), Qt.Key.Key_Return)
    assert panel.override_context() and panel.scenario().interconnect == other
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert panel.scenario().interconnect == other


NCCL = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"


def test_a_log_and_its_fitted_link_are_kept_when_the_plan_changes(qtbot, window):
    """Loading a 16-rank log sets the model's ranks to the log's, and "Use fitted ..." sets its
    link: both are the panel's own from then on, as a typed number is."""
    panel = _panel(window)
    steps = window.undo_stack.count()
    assert panel.load_log_from(NCCL / "h100-2node-nic400-allreduce.txt")
    assert panel.override_context() and panel.scenario().n_ranks == 16
    assert window.undo_stack.count() == steps + 1  # the log and the override: one step
    assert window.undo_stack.undoText() == "Load nccl-tests log h100-2node-nic400-allreduce.txt (Local override)"
    assert "Ranks" in panel.plan_banner_label.text() or "ranks" in panel.plan_banner_label.text()
    qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    fitted = (panel.scenario().link_bw, panel.scenario().alpha)
    assert panel.scenario().interconnect == ""
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert window.document.plan().n_gpus == 64
    s = panel.scenario()
    assert (s.n_ranks, s.link_bw, s.alpha) == (16, *fitted)  # the plan's edit left them alone


def test_a_fit_while_following_the_plan_goes_local_in_one_step(qtbot, window):
    panel = _panel(window)
    assert panel.load_log_from(NCCL / "h100-2node-nic400-allreduce.txt")
    panel.return_to_plan()  # following the plan again, the log still loaded
    assert panel.follows_plan() and panel.scenario().logs
    steps = window.undo_stack.count()
    assert panel.use_fit()
    assert panel.override_context() and window.undo_stack.count() == steps + 1
    assert "link" in panel.plan_banner_label.text().lower()  # names the number, not the preset
    fitted = panel.scenario().link_bw
    type_in(qtbot, window.context_toolbar.gpu_field.edit, "64")
    assert panel.scenario().link_bw == fitted


def test_a_log_the_panel_refuses_leaves_local_override_as_it_was(qtbot, window, tmp_path):
    panel = _panel(window)
    text = (NCCL / "h100-2node-nic400-allreduce.txt").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.startswith("#  Rank ")]  # the ranks from mpirun alone
    huge = tmp_path / "huge-ranks.txt"
    huge.write_text("\n".join(ln.replace("-np 16 ", "-np 2000000 ") for ln in lines), encoding="utf-8")
    steps = window.undo_stack.count()
    assert not panel.load_log_from(huge)
    assert panel.follows_plan() and not panel.scenario().logs
    assert window.undo_stack.count() == steps  # no "Local override" step left behind
    assert panel.status_text() or panel.field("n_ranks").message_text()  # it says why
