"""One line of plain text that is cut short with "…" where it has no room, instead of widening
the row it sits in."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QWidget


class ElidedLabel(QLabel):
    """A plain-text QLabel on one line. Its preferred width is its whole text; given less it
    shows as much as fits, ending in "…", and its tooltip then holds the whole text.
    ``text()`` is always the whole text."""

    #: the narrowest it gets, in average characters: a few words stay readable
    MIN_CHARS = 16

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # text from files and presets is data, not markup
        self.setWordWrap(False)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        super().setText(text)
        self._update_tip()

    def clear(self) -> None:
        self.setText("")  # through setText: the tooltip follows

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        hint = super().minimumSizeHint()
        least = self.MIN_CHARS * self.fontMetrics().averageCharWidth()
        return QSize(min(hint.width(), least), hint.height())

    def _text_rect(self):
        m = self.margin()
        return self.contentsRect().adjusted(m, m, -m, -m)

    def shown_text(self) -> str:
        """The text as drawn at the present width (the whole text, or its start and "…")."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self._text_rect().width())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt naming
        painter = QPainter(self)
        self.style().drawItemText(painter, self._text_rect(), int(self.alignment()), self.palette(),
                                  self.isEnabled(), self.shown_text(), self.foregroundRole())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        self._update_tip()

    def _update_tip(self) -> None:
        tip = self.text() if self.shown_text() != self.text() else ""
        if self.toolTip() != tip:
            self.setToolTip(tip)
