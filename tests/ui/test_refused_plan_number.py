"""A number the plan computes, typed in a panel and refused by the panel's scenario, leaves the
panel following the plan: no Local override, no undo step, the reason next to the field.

Typing such a number turns Local override on and makes the edit, as one step. When the edit
was refused (a throughput past what the model takes), the override was left on by itself:
the panel stopped following the plan for a number it never took.
"""

from __future__ import annotations

from window_helpers import type_in


def test_a_refused_throughput_leaves_the_panel_on_the_plan(qtbot, new_window):
    window = new_window()
    scaling = window.panel("scaling")
    window.raise_panel("scaling")
    field = scaling.field("tokens_per_s")
    steps, before = window.undo_stack.count(), scaling.scenario()
    type_in(qtbot, field.edit, "1e300")
    assert scaling.follows_plan() and not scaling.override_context()
    assert window.undo_stack.count() == steps and scaling.scenario() == before
    assert field.message_text() or scaling.status_text()  # it says why
    assert not scaling.plan_banner.isVisibleTo(scaling)
    type_in(qtbot, field.edit, "100k")  # a number it takes: local, in one step
    assert scaling.override_context() and window.undo_stack.count() == steps + 1
