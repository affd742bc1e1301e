"""The power-cap field: a watt field that also takes "uncapped" (the Power and Run plan panels)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from ui.widgets.quantity_edit import QuantityEdit, QuantityField

#: What a user may type in the power-cap field to remove the cap.
UNCAPPED_WORDS = frozenset({"", "uncapped", "none", "no cap", "tdp", "off"})


class CapEdit(QuantityEdit):
    """A watt field where empty text or "uncapped" means no cap (``value()`` is None)."""

    uncapped = Signal()

    def setValue(self, value: float | None) -> None:  # noqa: N802 - Qt naming
        if value is None:
            self._value = None
            self._shown_text = "uncapped"
            self.setText(self._shown_text)
            self._set_error("")
        else:
            super().setValue(value)

    def commit(self) -> bool:
        if self.text().strip().lower() in UNCAPPED_WORDS:
            was_capped = self._value is not None
            self.setValue(None)
            if was_capped:
                self.uncapped.emit()
            return True
        return super().commit()


class CapField(QuantityField):
    """:class:`QuantityField` around a :class:`CapEdit`."""

    uncapped = Signal()

    def __init__(self, parent: QWidget | None = None, **kwargs):
        super().__init__("W", parent, **kwargs)
        old = self.edit
        self.edit = CapEdit("W", self, **kwargs)
        self.layout().replaceWidget(old, self.edit)
        old.hide()
        old.deleteLater()
        self.setFocusProxy(self.edit)
        self.edit.valueEdited.connect(self.valueEdited)
        self.edit.validityChanged.connect(self._on_validity)
        self.edit.uncapped.connect(self.uncapped)
        self.edit.setPlaceholderText("uncapped, or e.g. 450 W")

    def show_error(self, message: str, value: float | None = None) -> None:
        if value is None:  # the kept good value is "uncapped"; the typed text stays to be fixed
            typed = self.edit.text()
            self.edit.setValue(None)
            self.edit.setText(typed)
        self.edit.show_error(message, value)


__all__ = ["CapEdit", "CapField", "UNCAPPED_WORDS"]
