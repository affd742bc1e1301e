"""A label whose new text does not lay its window out again."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel

#: Qt's largest widget size (QWIDGETSIZE_MAX): a size that is not fixed
_UNFIXED = (1 << 24) - 1


class SteadyLabel(QLabel):
    """A QLabel for a line of figures that changes on every edit (the status bar's run summary).

    QLabel asks its layout again on every new text, and in a status bar that lays the bar and
    then the window out again and repaints them: a second and third repaint after each edit.
    This label keeps a fixed size, so Qt skips that; the size only grows, when a longer text
    needs it, and is measured afresh when the font changes (presentation mode, a theme)."""

    #: characters of room left when it grows
    SPARE_CHARS = 4

    def show_text(self, text: str) -> None:
        if text == self.text():
            return
        self.setText(text)
        hint = self.sizeHint()
        fixed = self._fixed()
        width = self.width() if fixed else 0
        if hint.width() > width:
            # grown with room to spare: the next figures a digit or two longer (512 GPUs
            # after 64) then fit, instead of laying the status bar out again
            width = hint.width() + self.SPARE_CHARS * self.fontMetrics().averageCharWidth()
        if not fixed or (width, hint.height()) != (self.width(), self.height()):
            self.setFixedSize(width, hint.height())

    def _fixed(self) -> bool:
        return self.minimumSize() == self.maximumSize()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and self._fixed():
            # laid out for the new font by its layout, then held again at the next text
            self.setMinimumSize(0, 0)
            self.setMaximumSize(_UNFIXED, _UNFIXED)
