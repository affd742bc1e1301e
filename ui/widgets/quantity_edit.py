"""Input fields for physical quantities: "3.35 TB/s", "989 TFLOP/s", "700 W", "256 MiB".

The rules every field follows:

- never accept silently: the text is parsed by ``workbench.units.parse_quantity`` and checked
  against the field's bounds; a bad entry gets a red border and a message saying what to fix;
- never lose anything: the last good value stays the field's value until a new one parses,
  and Escape puts its text back;
- never crash: any parse failure becomes a message.

``valueEdited(float)`` fires once per committed change (Enter or leaving the field), in SI
units, and only when the value really changed.
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import QLabel, QLineEdit, QSizePolicy, QVBoxLayout, QWidget

from ui import theme
from workbench import units

# "1,024" / "1 024" / "1_024" / "1'024": digit groups people type for counts.
_GROUPED = re.compile(r"^\s*([+-]?\d{1,3}(?:[,_ '\u202f]\d{3})+)(\.\d+)?\s*(.*)$")
# "1k", "1.5 M", "2Ki": count multipliers, for fields without a unit.
_COUNT_SUFFIX = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(k|K|M|G|Ki|Mi|Gi)\s*$")
_COUNT_FACTORS = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3}
# "12x", "8 ×": workbench reads a trailing times sign as a dimensionless factor (a speedup
# "7x"); in a count or plain-number field it is a typo, never a value to take silently.
_TIMES_SUFFIX = re.compile(r"^\s*[+-]?(?:\d[\d,_ '\u202f]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*[xX×]\s*$")
# How each unit's field may be typed, for the tooltip ("SI prefixes" means nothing for %).
_UNIT_FORMS = {
    "%": "percent, with or without the sign, e.g. {example} or 2.5",
    "s": "s, ms, µs, min or h, e.g. {example}",
    "B": "bytes with decimal (kB, MB, GB) or binary (KiB, MiB, GiB) prefixes, e.g. {example}",
}


def _fmt_bound(value: float, unit: str, integer: bool) -> str:
    if integer:
        return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"
    if not unit:
        return f"{value:g}"
    try:
        return units.format_quantity(value, unit)
    except Exception:  # noqa: BLE001 - a message must never crash the field
        return f"{value:g} {unit}"


class QuantityEdit(QLineEdit):
    """A line edit holding one quantity in SI units.

    ``value()`` is the last good value (``None`` before the first one); ``pending_value()``
    parses the text as it stands now (``None`` if it does not parse or breaks a bound).
    """

    valueEdited = Signal(float)
    #: (valid, message): message is "" when valid, else what the user must fix.
    validityChanged = Signal(bool, str)

    def __init__(
        self,
        unit: str = "",
        parent: QWidget | None = None,
        *,
        label: str = "",
        description: str = "",
        value: float | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
        min_inclusive: bool = True,
        max_inclusive: bool = True,
        integer: bool = False,
        digits: int = 4,
        binary: bool = False,
    ):
        super().__init__(parent)
        self._unit = unit
        self._label = label or "Value"
        self._description = description
        self._digits = digits
        self._binary = binary
        self._minimum = minimum
        self._maximum = maximum
        self._min_inclusive = min_inclusive
        self._max_inclusive = max_inclusive
        self._integer = integer
        self._value: float | None = None
        self._shown_text = ""  # the text we displayed for _value
        self._formatted: tuple[tuple, str] | None = None  # the last value formatted, and its text
        self._error = ""
        self.setClearButtonEnabled(False)
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.returnPressed.connect(self.commit)
        self.editingFinished.connect(self.commit)
        self.textEdited.connect(self._on_text_edited)
        self._update_hints()
        if value is not None:
            self.setValue(value)

    # -- configuration -----------------------------------------------------------------
    def unit(self) -> str:
        return self._unit

    def label(self) -> str:
        return self._label

    def set_bounds(
        self,
        minimum: float | None = None,
        maximum: float | None = None,
        *,
        min_inclusive: bool = True,
        max_inclusive: bool = True,
        integer: bool | None = None,
    ) -> None:
        self._minimum, self._maximum = minimum, maximum
        self._min_inclusive, self._max_inclusive = min_inclusive, max_inclusive
        if integer is not None:
            self._integer = integer
        self._update_hints()

    def bounds_text(self) -> str:
        """The rule in words, e.g. "a whole number >= 1" or "> 0 B/s"."""
        parts = []
        if self._minimum is not None:
            op = ">=" if self._min_inclusive else ">"
            parts.append(f"{op} {_fmt_bound(self._minimum, self._unit, self._integer)}")
        if self._maximum is not None:
            op = "<=" if self._max_inclusive else "<"
            parts.append(f"{op} {_fmt_bound(self._maximum, self._unit, self._integer)}")
        rule = " and ".join(parts)
        if self._integer:
            return f"a whole number {rule}".strip()
        return rule

    def _example(self) -> str:
        if self._integer and not self._unit:
            return "1,024"
        return units.EXAMPLES.get(self._unit, "")

    def _update_hints(self) -> None:
        example = self._example()
        if example:
            self.setPlaceholderText(f"e.g. {example}")
        lines = [f"<b>{self._label}</b>" if self._label else ""]
        if self._description:
            lines.append(self._description)
        rule = self.bounds_text()
        if rule:
            lines.append(f"Must be {rule}.")
        if self._unit:
            form = _UNIT_FORMS.get(self._unit, "SI prefixes accepted (k, M, G, T, P), e.g. {example}")
            lines.append(f"Unit: {self._unit}; " + form.format(example=example) + ".")
        elif example:
            lines.append(f"For example {example}" + (" or 1k." if self._integer else "."))
        self.setToolTip("<br>".join(line for line in lines if line))
        self.setAccessibleName(self._label)
        self.setAccessibleDescription(self._description)

    # -- value ---------------------------------------------------------------------------
    def value(self) -> float | None:
        """The last good value in SI units, kept while the text is invalid."""
        return self._value

    def setValue(self, value: float | None) -> None:  # noqa: N802 - Qt naming
        """Show ``value`` (SI units) without emitting ``valueEdited``; clears any error."""
        if value is None:
            self._value = None
            self._shown_text = ""
        else:
            value = float(value)
            self._value = int(round(value)) if self._integer and value.is_integer() else value
            # a redraw shows most fields their same value again: format it only when it (or
            # how it is formatted) changed
            key = (value, math.copysign(1.0, value), self._integer, self._digits, self._binary)
            formatted = self._formatted
            if formatted is None or formatted[0] != key:
                formatted = self._formatted = (key, self.format_value(value))
            self._shown_text = formatted[1]
        if self.text() != self._shown_text:  # setText repaints the field even with the same text
            self.setText(self._shown_text)
        self._set_error("")

    def format_value(self, value: float) -> str:
        if self._integer and float(value).is_integer():
            text = f"{int(value):,}"
            return f"{text} {self._unit}".strip()
        try:
            return units.format_quantity(value, self._unit, digits=self._digits, binary=self._binary)
        except Exception:  # noqa: BLE001 - formatting must never crash the field
            return f"{value:.{self._digits}g} {self._unit}".strip()

    def parse(self, text: str) -> float:
        """Parse ``text`` and check the bounds; raises ``ValueError`` saying what to fix."""
        stripped = text.strip()
        if not stripped:
            example = self._example()
            raise ValueError(f"{self._label} is empty: enter a value" + (f", e.g. {example}" if example else ""))
        value = self._parse_number(stripped)
        if not math.isfinite(value):
            raise ValueError(f"{self._label} must be a finite number")
        self._check_bounds(value)
        return float(value)

    def _parse_number(self, text: str) -> float:
        if not self._unit and _TIMES_SUFFIX.match(text):
            number = re.sub(r"\s*[xX×]\s*$", "", text)
            raise ValueError(f"{self._label} takes a plain number, without 'x': enter {number}")
        grouped = _GROUPED.match(text)
        if grouped:  # "1,024" -> "1024"
            text = re.sub(r"[,_ '\u202f]", "", grouped.group(1)) + (grouped.group(2) or "")
            text = f"{text} {grouped.group(3)}".strip()
        try:
            return float(units.parse_quantity(text, self._unit, name=self._label))
        except units.UnitError as exc:
            if not self._unit:
                suffix = _COUNT_SUFFIX.match(text)
                if suffix:
                    return float(suffix.group(1)) * _COUNT_FACTORS[suffix.group(2)]
            if self._integer and not self._unit:
                # workbench's hint for a plain number ("such as '0.4', '40%' or '8B'") suggests
                # fractions and percentages, which no count accepts
                lead = re.match(r"^\s*[+-]?[\d.,_ ]*\d[\d.,_ ]*\s*([^\d.,_\s].*)$", text)
                bad = lead.group(1) if lead else text.strip()
                what = "a count suffix" if lead else "a number"
                raise ValueError(f"{bad!r} is not {what}: enter a whole number such as 1,024 or 16k") from None
            # the hint is the message without the field name: the field is right there
            hint = getattr(exc, "hint", "") or str(exc)
            raise ValueError(hint[:1].upper() + hint[1:]) from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(f"{self._label}: could not read {text!r} ({exc})") from None

    def _check_bounds(self, value: float) -> None:
        bad = False
        if self._integer and not float(value).is_integer():
            bad = True
        if self._minimum is not None:
            bad |= value < self._minimum if self._min_inclusive else value <= self._minimum
        if self._maximum is not None:
            bad |= value > self._maximum if self._max_inclusive else value >= self._maximum
        if bad:
            raise ValueError(f"{self._label} must be {self.bounds_text()}")

    def pending_value(self) -> float | None:
        """The value the current text would commit, or ``None`` if it would be rejected."""
        try:
            return self.parse(self.text())
        except ValueError:
            return None

    # -- committing ----------------------------------------------------------------------
    def commit(self) -> bool:
        """Take the text as the user's entry. Returns whether it was accepted."""
        text = self.text()
        if self._value is not None and text == self._shown_text:
            self._set_error("")
            return True  # nothing typed since the last good value
        try:
            value = self.parse(text)
        except ValueError as exc:
            self._set_error(str(exc))
            return False
        changed = self._value is None or value != self._value
        self.setValue(value)
        if changed:
            self.valueEdited.emit(float(value))
        return True

    def revert(self) -> None:
        """Back to the last good value; the error goes away."""
        self.setText(self._shown_text)
        self._set_error("")

    def show_error(self, message: str, value: float | None = None) -> None:
        """Mark the field invalid with ``message`` (e.g. a model validation error), keeping
        the typed text. ``value`` (if given) becomes the kept good value."""
        if value is not None:
            self._value = float(value)
            self._shown_text = self.format_value(float(value))
        self._set_error(message)

    def error(self) -> str:
        return self._error

    def is_valid(self) -> bool:
        return not self._error

    def _set_error(self, message: str) -> None:
        message = message or ""
        if message == self._error:
            return
        self._error = message
        self.setProperty("invalid", bool(message))
        self.setStyleSheet(theme.error_style_sheet() if message else "")
        self.validityChanged.emit(not message, message)

    def _on_text_edited(self, text: str) -> None:
        if self._error and self.pending_value() is not None:
            self._set_error("")

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt naming
        if event.key() == Qt.Key.Key_Escape and (self._error or self.text() != self._shown_text):
            self.revert()
            event.accept()
            return
        super().keyPressEvent(event)


class QuantityField(QWidget):
    """A :class:`QuantityEdit` with a small message line under it that says what to fix."""

    valueEdited = Signal(float)

    def __init__(self, unit: str = "", parent: QWidget | None = None, **kwargs):
        super().__init__(parent)
        self.edit = QuantityEdit(unit, self, **kwargs)
        self.message = QLabel(self)
        self.message.setObjectName("fieldMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        font = QFont(self.message.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        self.message.setFont(font)
        self.message.setVisible(False)
        self.message.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.message)
        self.setFocusProxy(self.edit)
        self.edit.valueEdited.connect(self.valueEdited)
        self.edit.validityChanged.connect(self._on_validity)

    def _on_validity(self, valid: bool, message: str) -> None:
        self.message.setText(message)
        self.message.setStyleSheet(f"color: {theme.current_theme().error};")
        self.message.setVisible(not valid)
        self.edit.setAccessibleDescription(message or self.edit.accessibleDescription())

    # delegation, so a field can stand where an edit would
    def value(self) -> float | None:
        return self.edit.value()

    def setValue(self, value: float | None) -> None:  # noqa: N802 - Qt naming
        self.edit.setValue(value)

    def pending_value(self) -> float | None:
        return self.edit.pending_value()

    def show_error(self, message: str, value: float | None = None) -> None:
        self.edit.show_error(message, value)

    def error(self) -> str:
        return self.edit.error()

    def message_text(self) -> str:
        return self.message.text() if not self.message.isHidden() else ""

    def set_bounds(self, *args, **kwargs) -> None:
        self.edit.set_bounds(*args, **kwargs)


class IntField(QuantityField):
    """A whole-number field for counts (GPUs, layers, steps): accepts "1024", "1,024", "1k"."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        label: str = "Count",
        minimum: int | None = 1,
        maximum: int | None = None,
        unit: str = "",
        **kwargs,
    ):
        super().__init__(unit, parent, label=label, minimum=minimum, maximum=maximum, integer=True, **kwargs)

    def value(self) -> int | None:  # type: ignore[override]
        v = self.edit.value()
        return None if v is None else int(v)
