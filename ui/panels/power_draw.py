"""Redrawing the Power panel's line charts in place: a value change (a new static share, a
new cap) moves the same curves and reference lines, it does not clear and add them again.

:class:`SeriesSet` and :class:`LineSet` remember what they last drew on one
:class:`~ui.charts.Chart`. When the names and styles asked for are the ones drawn, only the
data changes (``Chart.set_series_data``); otherwise the chart redraws them as one
replacement (its items are reused in order, the legend renamed in place)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ui.charts import Chart


@dataclass(frozen=True)
class Curve:
    """One series: its name (the legend's), values and ``Chart.add_series`` style options."""

    name: str
    x: Any
    y: Any
    style: dict[str, Any] = field(default_factory=dict)

    def key(self) -> tuple:
        return self.name, tuple(sorted((k, str(v)) for k, v in self.style.items()))


class SeriesSet:
    """The series of one chart, kept between redraws."""

    def __init__(self, chart: Chart):
        self.chart = chart
        self._keys: list[tuple] | None = None

    def draw(self, curves: Sequence[Curve]) -> None:
        chart = self.chart
        keys = [c.key() for c in curves]
        drawn = chart.series()
        if keys == self._keys and [s.name for s in drawn] == [c.name for c in curves]:
            for c, s in zip(curves, drawn, strict=True):  # the same curves, with new values or not
                x, y = np.asarray(c.x, dtype=float), np.asarray(c.y, dtype=float)
                if not (np.array_equal(x, s.x) and np.array_equal(y, s.y)):  # unchanged: not even a repaint
                    chart.set_series_data(c.name, x, y)
            return
        with chart.replacing_series():
            for c in curves:
                chart.add_series(c.name, c.x, c.y, **c.style)
        self._keys = keys

    def clear(self) -> None:
        self.chart.clear_series()
        self._keys = None


class LineSet:
    """The vertical reference lines of one chart, kept between redraws: unchanged lines are
    left alone; a moved one is put back through the chart (which reuses its line item)."""

    def __init__(self, chart: Chart):
        self.chart = chart
        self._drawn: list[tuple] | None = None

    def draw(self, lines: Sequence[tuple[float, str, Any]]) -> None:
        """``lines``: (value, label, colour) each."""
        wanted = [(float(v), label, str(color)) for v, label, color in lines]
        if wanted == self._drawn:
            return
        self.chart.clear_reference_lines()
        for (value, label, _c), (_v, _l, color) in zip(wanted, lines, strict=True):
            self.chart.add_reference_line(value, label=label, color=color)
        self._drawn = wanted

    def clear(self) -> None:
        self.chart.clear_reference_lines()
        self._drawn = None


def move_operating_point(chart: Chart, x: float, y: float, label: str = "") -> None:
    """``chart.set_operating_point`` unless the point is already there (no repaint then)."""
    if chart.operating_point() != (float(x), float(y), label):
        chart.set_operating_point(x, y, label)


__all__ = ["Curve", "LineSet", "SeriesSet", "move_operating_point"]
