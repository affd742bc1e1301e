"""Fields of the Power panel that may be left empty: "not set" (an idle power or an embodied
figure nobody has given) or "all" (every GPU under the cap). Empty text, or one of the
field's words, means ``None``; anything else is a quantity as in any other field."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from ui.widgets.quantity_edit import QuantityEdit, QuantityField

#: What empty means, and the words a person may type for it, by field kind.
NOT_SET = ("not set", frozenset({"", "not set", "unset", "none", "unknown", "-", "–"}))
ALL_GPUS = ("all", frozenset({"", "all", "every", "all gpus", "none"}))


class OptionalEdit(QuantityEdit):
    """A quantity edit where empty text or one of ``words`` means no value (``value()`` None)."""

    cleared = Signal()

    def __init__(self, unit: str = "", parent: QWidget | None = None, *, empty=NOT_SET, **kwargs):
        self._empty_text, self._empty_words = empty
        super().__init__(unit, parent, **kwargs)

    def setValue(self, value: float | None) -> None:  # noqa: N802 - Qt naming
        if value is None:
            self._value = None
            self._shown_text = self._empty_text
            self.setText(self._shown_text)
            self._set_error("")
        else:
            super().setValue(value)

    def commit(self) -> bool:
        if self.text().strip().lower() in self._empty_words:
            had_value = self._value is not None
            self.setValue(None)
            if had_value:
                self.cleared.emit()
            return True
        return super().commit()


class OptionalField(QuantityField):
    """:class:`QuantityField` around an :class:`OptionalEdit`; ``cleared`` when set to none."""

    cleared = Signal()

    def __init__(self, unit: str = "", parent: QWidget | None = None, *, empty=NOT_SET, integer: bool = False,
                 **kwargs):
        super().__init__(unit, parent, integer=integer, **kwargs)
        old = self.edit
        self.edit = OptionalEdit(unit, self, empty=empty, integer=integer, **kwargs)
        self.layout().replaceWidget(old, self.edit)
        old.hide()
        old.deleteLater()
        self.setFocusProxy(self.edit)
        self.edit.valueEdited.connect(self.valueEdited)
        self.edit.validityChanged.connect(self._on_validity)
        self.edit.cleared.connect(self.cleared)
        self.edit.setPlaceholderText(empty[0])
        self._integer = integer

    def value(self):  # an int for a count field, as IntField gives
        value = self.edit.value()
        return None if value is None else (int(value) if self._integer else value)

    def show_error(self, message: str, value: float | None = None) -> None:
        if value is None:  # the kept good value is "none"; the typed text stays to be fixed
            typed = self.edit.text()
            self.edit.setValue(None)
            self.edit.setText(typed)
        self.edit.show_error(message, value)


__all__ = ["ALL_GPUS", "NOT_SET", "OptionalEdit", "OptionalField"]
