"""Undo machinery: every user edit of a scenario is one ``QUndoCommand``.

A command holds its target (anything with ``scenario()`` and ``set_scenario(s)``, usually a
panel) and the old and new scenario values; undo and redo just put one of them back.
Consecutive edits of the same single field on the same target merge into one step (a
slider drag, spin-box steps), the way orange-canvas-core does it, through ``id()`` and
``mergeWith()``. Qt never merges into the command at the clean index, so "Save" always
starts a new step.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from PySide6.QtGui import QUndoCommand, QUndoStack

#: id() of mergeable scenario edits (any constant other than -1).
SCENARIO_EDIT_ID = 0x5343  # "SC"


class ScenarioTarget(Protocol):
    def scenario(self) -> Any: ...

    def set_scenario(self, scenario: Any) -> None: ...


def _fields(scenario: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(scenario) and not isinstance(scenario, type):
        return {f.name: getattr(scenario, f.name) for f in dataclasses.fields(scenario)}
    if hasattr(scenario, "to_dict"):
        try:
            return dict(scenario.to_dict())
        except Exception:  # noqa: BLE001 - a label must never break an edit
            return {}
    return {}


def changed_fields(old: Any, new: Any) -> list[str]:
    """Names of the fields that differ between two scenarios of the same type."""
    if type(old) is not type(new):
        return []
    a, b = _fields(old), _fields(new)
    return [name for name in a if name in b and a[name] != b[name]]


def _field_label(name: str) -> str:
    try:
        from workbench.scenarios import FIELD_LABELS

        label = FIELD_LABELS.get(name)
        if label:
            label = label.split(" (", 1)[0]
            first = label.split(" ", 1)[0]
            # "Precision" -> "precision" mid-sentence, but "GPU count" keeps its acronym
            return label[0].lower() + label[1:] if first[1:].islower() or len(first) == 1 else label
    except ImportError:
        pass
    return name.replace("_", " ")


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def describe(old: Any, new: Any) -> str:
    """The undo label: ``workbench.scenarios.describe_change`` when it knows the scenario,
    else a generic "Change <field> to <value>"."""
    try:
        from workbench.scenarios import describe_change

        text = describe_change(old, new)
        if text:
            return str(text)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):
        pass
    names = changed_fields(old, new)
    if len(names) == 1:
        return f"Change {_field_label(names[0])} to {_value_text(getattr(new, names[0], ''))}"
    if names:
        return "Change " + ", ".join(_field_label(n) for n in names)
    return "Change scenario"


class ScenarioCommand(QUndoCommand):
    """Replace ``target``'s scenario ``old`` by ``new`` (undo puts ``old`` back)."""

    def __init__(self, target: ScenarioTarget, old: Any, new: Any, text: str | None = None,
                 *, mergeable: bool = True, parent: QUndoCommand | None = None):
        super().__init__(parent)
        self.target = target
        self.old = old
        self.new = new
        fields = changed_fields(old, new)
        #: the one field this edit changes, or None (then it never merges)
        self.field = fields[0] if len(fields) == 1 and mergeable else None
        self._custom_text = text is not None
        self.setText(text if text is not None else describe(old, new))

    def redo(self) -> None:
        self.target.set_scenario(self.new)

    def undo(self) -> None:
        self.target.set_scenario(self.old)

    def id(self) -> int:
        return SCENARIO_EDIT_ID if self.field is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt naming
        if not isinstance(other, ScenarioCommand):
            return False
        if other.target is not self.target or other.field is None or other.field != self.field:
            return False
        self.new = other.new
        if not self._custom_text:
            self.setText(describe(self.old, self.new))
        if self.new == self.old:
            self.setObsolete(True)  # dragged back to where it started: no step at all
        return True


def push_scenario_edit(stack: QUndoStack, target: ScenarioTarget, new_scenario: Any, text: str | None = None,
                       *, mergeable: bool = True) -> ScenarioCommand | None:
    """Push an edit of ``target`` to ``new_scenario`` (applied at once by ``redo``).
    Nothing happens when the scenario does not change. Returns the command now holding the
    edit (an earlier one if it merged), or None."""
    old = target.scenario()
    if new_scenario == old:
        return None
    command = ScenarioCommand(target, old, new_scenario, text, mergeable=mergeable)
    stack.push(command)
    # After a merge Qt has deleted ``command``; the step holding this edit is the current one.
    index = stack.index()
    return stack.command(index - 1) if index > 0 else None


class OverrideCommand(QUndoCommand):
    """Turn a panel's Local override on or off (undo puts it back, and a panel back on the plan
    follows it again)."""

    def __init__(self, panel: Any, on: bool, text: str | None = None, parent: QUndoCommand | None = None,
                 note: str = ""):
        super().__init__(text or ("Local override" if on else "Follow the run plan"), parent)
        self.panel = panel
        self.on = bool(on)
        self.note = note  # what the panel's plan note says of this override ("" for its usual words)
        self.before = panel.scenario()  # following the plan again replaces it: undo brings it back

    def redo(self) -> None:
        self.panel.set_override_context(self.on, follow=not self.on)
        if self.on and self.note:
            self.panel.set_override_note(self.note)  # a redo says again why the panel went local

    def undo(self) -> None:
        self.panel.set_override_context(not self.on, follow=self.on)
        if not self.on and self.panel.scenario() != self.before:
            self.panel.set_scenario(self.before)


def push_override(stack: QUndoStack, panel: Any, on: bool, text: str | None = None, note: str = "") -> bool:
    """Push a change of ``panel``'s Local override (nothing when it already is ``on``); ``note``:
    what its plan note then says."""
    if bool(panel.override_context()) == bool(on):
        return False
    stack.push(OverrideCommand(panel, on, text, note=note))
    return True
