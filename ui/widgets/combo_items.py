"""Give a combo box its list of choices, leaving it alone when the list is the one it shows.

A refilled combo box asks its layout again and repaints (and its popup lays itself out later,
which asks again): reopening a project with the same presets, or syncing a form after every
edit, would otherwise repaint the toolbar and forms a frame after the change itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

_TIP = Qt.ItemDataRole.ToolTipRole

#: one choice: (text, data) or (text, data, tooltip)
Choice = tuple[str, Any] | tuple[str, Any, str | None]


def set_choices(combo: QComboBox, choices: Iterable[Choice]) -> bool:
    """Make ``combo`` list ``choices`` (text, data and, if given, tooltip each), without
    emitting its signals. Returns whether it was refilled: not when it already lists exactly
    these (its current item then stays as it was; a refill leaves the caller to set it).

    What it gave a combo box last is remembered until its items change in any way, so asking
    again with the same list (every sync of a form) reads nothing back from the combo box."""
    wanted = [(c[0], c[1], c[2] if len(c) > 2 else None) for c in choices]
    if getattr(combo, "_choices_set", None) == wanted and combo.model() is getattr(combo, "_choices_model", None):
        return False
    shown = [(combo.itemText(i), combo.itemData(i), combo.itemData(i, _TIP)) for i in range(combo.count())]
    if shown != wanted:
        blocked = combo.blockSignals(True)
        try:
            combo.clear()
            for text, data, tip in wanted:
                combo.addItem(text, data)
                if tip is not None:
                    combo.setItemData(combo.count() - 1, tip, _TIP)
        finally:
            combo.blockSignals(blocked)
    _remember(combo, wanted)
    return shown != wanted


def _remember(combo: QComboBox, wanted: list[tuple[str, Any, str | None]]) -> None:
    """Keep ``wanted`` as what ``combo`` lists until any change of its items (by anyone)."""
    model = combo.model()
    if getattr(combo, "_choices_model", None) is not model:
        combo._choices_model = model
        held = weakref.ref(combo)  # the model's connection must not keep the combo box alive

        def forget(*_args) -> None:
            owner = held()
            if owner is not None:
                owner._choices_set = None

        for signal in (model.rowsInserted, model.rowsRemoved, model.rowsMoved, model.dataChanged,
                       model.modelReset, model.layoutChanged):
            signal.connect(forget)
    combo._choices_set = wanted
