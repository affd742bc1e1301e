"""Horizontal bars for the Power panel's comparisons (the run on every grid, the footprint by
source): a :class:`~ui.charts.Chart` whose rows are named on the left axis, each bar with its
value at its end. The bars are drawn by one :class:`~ui.charts.BarsItem` (as the Run plan's),
the values by a text item per row, all restyled with the chart (theme, presentation, export)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from ui import theme as th
from ui.charts import BarRect, BarsItem, Chart
from ui.plain_text_item import PlainTextItem

#: A bar in the theme's ink (black on white, light on dark): for totals.
INK = "ink"


@dataclass(frozen=True)
class Bar:
    label: str  # on the left axis
    value: float  # in the chart's x unit
    color: str  # a palette colour, or INK
    text: str = ""  # at the bar's end
    bold: bool = False  # the row this scenario is about


class HBarChart(Chart):
    """One bar per row, top to bottom, from 0 to its value."""

    BAR_HEIGHT = 0.66  # of a row

    def __init__(self, parent=None, **kwargs):
        self._bars: list[Bar] = []
        #: one value text per row drawn so far; rows beyond the bars shown are hidden and taken
        #: again when rows come back (a value change updates them in place)
        self._texts: list[pg.TextItem] = []
        #: what each row's text was last given, so an unchanged row costs nothing
        self._applied: list[tuple | None] = []
        #: called before :meth:`bars` is read (a panel that draws a hidden tab when it is shown)
        self.before_read: Callable[[], None] | None = None
        super().__init__(parent, **kwargs)
        plot = self.getPlotItem()
        #: every row's bar, drawn by one item (a change sets its arrays once)
        self.bar_item = BarsItem.added_to(plot)
        plot.getViewBox().setMouseEnabled(x=False, y=False)
        self.axis("x").setStyle(maxTickLevel=0)  # whole ticks only behind the bars
        self.axis("x").enableAutoSIPrefix(False)
        self.axis("left").setStyle(tickLength=0)
        plot.getViewBox().sigResized.connect(self._fit_range)

    def set_bars(self, bars: Sequence[Bar], formatter: Callable[[float], str] | None = None) -> None:
        """Draw ``bars`` (replacing what was drawn); x from 0 to the largest value, with room
        for the value texts."""
        self._bars = list(bars)
        self._formatter = formatter
        self._draw()

    def bars(self) -> list[Bar]:
        if self.before_read is not None:
            self.before_read()  # its panel draws what it put off while the tab was hidden
        return list(self._bars)

    def clear_bars(self) -> None:
        self.set_bars([])

    def _row_text(self, i: int) -> pg.TextItem:
        if i < len(self._texts):
            return self._texts[i]
        text = PlainTextItem("", anchor=(-0.04, 0.5))
        text.setZValue(30)
        self.getPlotItem().addItem(text, ignoreBounds=True)
        self._texts.append(text)
        self._applied.append(None)
        return text

    def _draw(self) -> None:
        bars = self._bars
        self.axis("left").setTicks([[(-i, bar.label) for i, bar in enumerate(bars)], []])
        for text in self._texts[len(bars):]:
            text.setVisible(False)
        s = th.scale_factor(self.presentation())
        theme = self.theme()
        rects = []
        for i, bar in enumerate(bars):
            color = QColor(theme.ink) if bar.color == INK else theme.tone(bar.color)
            edge = QColor(theme.ink) if bar.bold else QColor(theme.background)
            width = max(bar.value, 0.0)
            rects.append(BarRect(0.0, width, -i - self.BAR_HEIGHT / 2, self.BAR_HEIGHT, color, edge,
                                 (1.5 if bar.bold else 1.0) * s))
        self.bar_item.show_rects(rects)
        if not bars:
            self.setMinimumHeight(0)
            return
        size = th.BASE_TICK_FONT_PT * s
        ink = QColor(theme.ink)
        for i, (bar, rect) in enumerate(zip(bars, rects, strict=True)):
            text = self._row_text(i)
            state = (rect.width, bar.bold, s, bar.text, ink.rgba())
            if bar.text and state != self._applied[i]:
                if text.toPlainText() != bar.text:
                    text.setText(bar.text)
                font = text.textItem.font()
                if font.pointSizeF() != size or font.bold() != bar.bold:
                    font = QFont()
                    font.setPointSizeF(size)
                    font.setBold(bar.bold)
                    text.setFont(font)
                if text.color != ink:
                    text.setColor(ink)
                pos = QPointF(rect.width, -i)
                if text.pos() != pos:
                    text.setPos(pos)
                self._applied[i] = state
            text.setVisible(bool(bar.text))
        self.setMinimumHeight(self.minimum_height_for_rows())  # a scroll area around it scrolls instead
        self._fit_range()

    def _fit_range(self, *_args) -> None:
        """x from 0 to just past the longest bar with its text: each text's width in pixels is
        turned into data units at the plot's width, so no text runs past the right edge."""
        bars = self._bars
        if not bars:
            return
        vb = self.getPlotItem().getViewBox()
        plot_px = vb.width() if vb.width() > 100 else 400.0
        font = QFont()
        font.setPointSizeF(th.BASE_TICK_FONT_PT * th.scale_factor(self.presentation()))
        bold = QFont(font)
        bold.setBold(True)
        top = max((b.value for b in bars), default=0.0) or 1.0
        need = top * 1.02
        for bar in bars:
            width = QFontMetricsF(bold if bar.bold else font).horizontalAdvance(bar.text) + 16.0 if bar.text else 0.0
            share = min(width / plot_px, 0.8)
            need = max(need, max(bar.value, 0.0) / (1.0 - share))
        vb.setRange(xRange=(0.0, need), yRange=(-(len(bars) - 1) - 0.6, 0.6), padding=0.0)

    def minimum_height_for_rows(self) -> int:
        """Height (px) at which every row's label has room: a line of tick text and a gap per row,
        plus the title and the x axis."""
        s = th.scale_factor(self.presentation())
        font = QFont()
        font.setPointSizeF(th.BASE_TICK_FONT_PT * s)
        line = QFontMetricsF(font).height()
        return int(len(self._bars) * line * 1.08 + 80 * s)

    def _restyle(self) -> None:
        super()._restyle()
        self.axis("left").setGrid(False)  # no row lines through the bars; the x grid stays
        if getattr(self, "_bars", None):
            self._draw()


__all__ = ["Bar", "HBarChart", "INK"]
