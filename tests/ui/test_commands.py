"""The undo machinery: one command per edit, readable labels, merging of repeated edits."""

from __future__ import annotations

import dataclasses
import json

from PySide6.QtGui import QUndoStack

from ui.commands import ScenarioCommand, changed_fields, describe, push_scenario_edit


@dataclasses.dataclass(frozen=True)
class Toy:
    gpu_count: int = 8
    precision: str = "bf16"

    def with_changes(self, **changes):
        return dataclasses.replace(self, **changes)

    def to_json(self):
        return json.dumps(dataclasses.asdict(self))


class Target:
    """The smallest thing a command can edit."""

    def __init__(self, scenario):
        self._scenario = scenario
        self.shown = []

    def scenario(self):
        return self._scenario

    def set_scenario(self, scenario):
        self._scenario = scenario
        self.shown.append(scenario)


def test_push_applies_and_undo_restores(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    push_scenario_edit(stack, target, Toy(gpu_count=512))
    assert target.scenario().gpu_count == 512
    assert stack.count() == 1
    assert "gpu count" in stack.undoText().lower() and "512" in stack.undoText()
    stack.undo()
    assert target.scenario() == Toy()
    stack.redo()
    assert target.scenario().gpu_count == 512


def test_no_command_when_nothing_changes(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    assert push_scenario_edit(stack, target, Toy()) is None
    assert stack.count() == 0 and target.shown == []


def test_consecutive_edits_of_one_field_merge(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    for n in (16, 32, 64, 128):  # a slider drag
        push_scenario_edit(stack, target, target.scenario().with_changes(gpu_count=n))
    assert stack.count() == 1
    assert "128" in stack.undoText()
    stack.undo()
    assert target.scenario().gpu_count == 8


def test_edits_of_different_fields_or_targets_do_not_merge(qapp):
    stack = QUndoStack()
    a, b = Target(Toy()), Target(Toy())
    push_scenario_edit(stack, a, Toy(gpu_count=16))
    push_scenario_edit(stack, a, Toy(gpu_count=16, precision="fp8"))
    push_scenario_edit(stack, b, Toy(gpu_count=16))
    assert stack.count() == 3


def test_no_merge_across_a_save(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    push_scenario_edit(stack, target, Toy(gpu_count=16))
    stack.setClean()
    push_scenario_edit(stack, target, Toy(gpu_count=32))
    assert stack.count() == 2


def test_dragging_back_to_the_start_leaves_no_step(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    push_scenario_edit(stack, target, Toy(gpu_count=16))
    push_scenario_edit(stack, target, Toy(gpu_count=8))
    assert stack.count() == 0
    assert target.scenario() == Toy()


def test_explicit_text_and_non_mergeable(qapp):
    stack = QUndoStack()
    target = Target(Toy())
    push_scenario_edit(stack, target, Toy(gpu_count=16), "Apply preset", mergeable=False)
    push_scenario_edit(stack, target, Toy(gpu_count=32))
    assert stack.count() == 2
    assert stack.text(0) == "Apply preset"


def test_labels_for_real_scenarios_come_from_the_model(qapp):
    from workbench import scenarios

    cls = scenarios.SCENARIO_TYPES["scaling"]
    old = cls()
    name = "n_gpus"
    new = old.with_changes(**{name: 512})
    command = ScenarioCommand(Target(old), old, new)
    assert command.text() == scenarios.describe_change(old, new)
    assert changed_fields(old, new) == [name]
    assert "512" in command.text()


def test_generic_label_for_other_values(qapp):
    text = describe(Toy(), Toy(gpu_count=3, precision="fp8")).lower()
    assert text.startswith("change") and "gpu count" in text and "precision" in text
    assert describe(Toy(), Toy(precision="fp8")) == "Change precision to fp8"
