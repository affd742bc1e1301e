"""What the speed tests look at: the events a change posted, the objects a chart draws with,
and the pixels on screen.

A test keeps :func:`item_ids` before a value change and compares after: equal lists say no
plot item was made again and none was left over."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QCoreApplication, QPoint
from PySide6.QtGui import QGuiApplication, QImage


def deliver_events() -> None:
    """Deliver what a change posted (the charts' settle, the scene's update, the paint)."""
    for _ in range(3):
        QCoreApplication.processEvents()


def pixels(image: QImage) -> np.ndarray:
    """(height, width, 3) RGB of ``image``, as ints (a difference of two does not wrap)."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, : image.width(), :3].astype(int)


def on_screen(widget) -> QImage:
    """What the window's backing store holds of ``widget``: what was painted, as it was."""
    window = widget.window()
    corner = widget.mapTo(window, QPoint(0, 0))
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.grabWindow(window.winId(), corner.x(), corner.y(), widget.width(), widget.height()).toImage()


def item_ids(chart) -> list[int]:
    """The ids of every object the chart draws a change with: series, reference lines and
    their labels, the legends and their entries, the operating point, and the scene's items."""
    plot = chart.getPlotItem()
    ids = [id(s.item) for s in chart.series()]
    ids += [id(line) for line, *_ in chart._lines] + [id(getattr(line, "label", None)) for line, *_ in chart._lines]
    for legend in (plot.legend, getattr(chart, "_side_legend", None)):
        ids.append(id(legend))
        if legend is not None:
            ids += [id(x) for entry in legend.items for x in entry]
    ids += [id(chart._op_item), id(chart._op_label)]
    return ids + sorted(id(item) for item in chart.scene().items())


def assert_draws_as(chart, fresh, names: list[str]) -> list:
    """``chart`` draws the series ``names`` exactly as ``fresh`` (the same calls on a chart
    cleared first) does: names in order, items named so, pens, values, the legend and its
    labels; returns ``chart``'s plotted items (one per name)."""
    import numpy as np
    import pyqtgraph as pg

    assert [s.name for s in chart.series()] == [s.name for s in fresh.series()] == names
    for a, b in zip(fresh.series(), chart.series(), strict=True):
        assert a.item.name() == b.item.name() == a.name
        assert a.item.opts["pen"] == b.item.opts["pen"]
        np.testing.assert_array_equal(a.item.getData()[1], b.item.getData()[1])
    assert chart.legend_visible() == fresh.legend_visible()
    if fresh.legend_visible():
        assert ([label.text for _s, label in chart.getPlotItem().legend.items]
                == [label.text for _s, label in fresh.getPlotItem().legend.items])
    plotted = [i for i in chart.getPlotItem().items if isinstance(i, pg.PlotDataItem)]
    assert len(plotted) == len(names)
    return plotted
