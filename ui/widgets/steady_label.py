"""A label whose new text does not lay its window out again, painted as plain runs."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import NamedTuple

from PySide6.QtCore import QEvent, QPointF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPalette, QTextCharFormat, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel

#: Qt's largest widget size (QWIDGETSIZE_MAX): a size that is not fixed
_UNFIXED = (1 << 24) - 1
#: px around the text (left and right, top and bottom)
_MARGIN = 1


class Run(NamedTuple):
    """Text in one style. Whatever it holds is shown as it is, never as markup."""

    text: str
    bold: bool = False
    italic: bool = False


def runs_html(runs: Sequence[Run]) -> str:
    """The runs as the rich text a QLabel would show the same way (``text()`` gives it)."""
    parts = []
    for run in runs:
        text = html.escape(run.text).replace("\u00a0", "&nbsp;")
        if run.italic:
            text = f"<i>{text}</i>"
        if run.bold:
            text = f"<b>{text}</b>"
        parts.append(text)
    return "".join(parts)


class SteadyLabel(QLabel):
    """A line of figures that changes on every edit (the status bar's run summary).

    QLabel asks its layout again on every new text, and in a status bar that lays the bar and
    then the window out again and repaints them: a second and third repaint after each edit.
    This label keeps a fixed size, so Qt skips that; the size only grows, when a longer text
    needs it, and is measured afresh when the font changes (presentation mode, a theme).

    The text is laid out as one ``QTextLayout`` of styled runs and painted directly: a QLabel
    given rich text parsed it into a text document and laid that out on every edit (about
    0.5 ms of a GPU count typed in the toolbar). ``text()`` gives the runs as the rich text
    they show (bold and italic runs in ``<b>`` and ``<i>``, the rest escaped)."""

    #: characters of room left when it grows
    SPARE_CHARS = 4

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)  # what text() holds (it is never parsed)
        self._runs: tuple[Run, ...] = ()
        self._html = ""
        self._layout: QTextLayout | None = None
        self._text_size = QSize(0, 0)

    # -- content ---------------------------------------------------------------------------
    def show_text(self, text: str) -> None:
        """Show ``text`` as it is (plain text)."""
        self.show_runs((Run(text),))

    def show_runs(self, runs: Sequence[Run]) -> None:
        runs = tuple(Run(*run) for run in runs if run[0])
        if runs == self._runs:
            return
        self._runs = runs
        self._html = runs_html(runs)
        self.setAccessibleName("".join(run.text for run in runs))
        self._lay_out()
        hint = self.sizeHint()
        fixed = self._fixed()
        width = self.width() if fixed else 0
        if hint.width() > width:
            # grown with room to spare: the next figures a digit or two longer (512 GPUs
            # after 64) then fit, instead of laying the status bar out again
            width = hint.width() + self.SPARE_CHARS * self.fontMetrics().averageCharWidth()
        if not fixed or (width, hint.height()) != (self.width(), self.height()):
            self.setFixedSize(width, hint.height())
        self.update()

    def text(self) -> str:  # noqa: D102 - QLabel's
        return self._html

    def clear(self) -> None:
        self._runs, self._html, self._layout = (), "", None
        self._text_size = QSize(0, 0)
        self.setAccessibleName("")
        self.update()

    # -- layout and size -------------------------------------------------------------------
    def _lay_out(self) -> None:
        if not self._runs:
            self._layout, self._text_size = None, QSize(0, 0)
            return
        ranges = []
        at = 0
        for run in self._runs:
            if run.bold or run.italic:
                fmt = QTextCharFormat()
                if run.bold:
                    fmt.setFontWeight(QFont.Weight.Bold)
                if run.italic:
                    fmt.setFontItalic(True)
                span = QTextLayout.FormatRange()
                span.start, span.length, span.format = at, len(run.text), fmt
                ranges.append(span)
            at += len(run.text)
        layout = QTextLayout("".join(run.text for run in self._runs), self.font())
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.NoWrap)
        layout.setTextOption(option)
        layout.setFormats(ranges)
        layout.beginLayout()
        line = layout.createLine()
        line.setPosition(QPointF(0.0, 0.0))
        layout.endLayout()
        self._layout = layout
        self._text_size = QSize(math.ceil(line.naturalTextWidth()), math.ceil(line.height()))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        margins = self.contentsMargins()
        height = max(self._text_size.height(), math.ceil(self.fontMetrics().height()))
        return QSize(self._text_size.width() + 2 * _MARGIN + margins.left() + margins.right(),
                     height + 2 * _MARGIN + margins.top() + margins.bottom())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return self.sizeHint()

    def _fixed(self) -> bool:
        return self.minimumSize() == self.maximumSize()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._lay_out()  # in the new font
            if self._fixed():
                # laid out for the new font by its layout, then held again at the next text
                self.setMinimumSize(0, 0)
                self.setMaximumSize(_UNFIXED, _UNFIXED)
            self.updateGeometry()

    # -- painting --------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 - Qt naming
        layout = self._layout
        if layout is None:
            return
        rect = self.contentsRect().adjusted(_MARGIN, _MARGIN, -_MARGIN, -_MARGIN)
        size = self._text_size
        align = self.alignment()
        if align & Qt.AlignmentFlag.AlignRight:
            x = rect.right() + 1 - size.width()
        elif align & Qt.AlignmentFlag.AlignHCenter:
            x = rect.left() + (rect.width() - size.width()) / 2.0
        else:
            x = rect.left()
        y = rect.top() + (rect.height() - size.height()) / 2.0
        painter = QPainter(self)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        layout.draw(painter, QPointF(x, round(y)))
        painter.end()


__all__ = ["Run", "SteadyLabel", "runs_html"]
