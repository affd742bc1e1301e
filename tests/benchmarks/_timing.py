"""Timing helpers for the benchmark children: when has a change finished painting?

A change (an edit, a key press, a filled browser) counts as finished when its last repaint has
been flushed and the window then stays quiet: no update request and no paint for
``QUIET_MS``. The end of a repaint is taken precisely: :class:`PaintWatch` delivers each
top-level window's ``UpdateRequest`` (the event, posted to the top-level widget, during which
Qt paints every dirty widget of that window and flushes it) itself and notes the time when it
returns. Waiting for the quiet
time runs the event loop (timers fire, posted events are delivered); nothing sleeps.

Imported only by the benchmark children (Qt must not be imported by the driver).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QObject, QTimer
from PySide6.QtGui import QGuiApplication, QImage, QWindow

from tests.benchmarks._stats import machine_probe, stats_ms

QUIET_MS = 60
TIMEOUT_S = 20.0
#: the short machine probe taken just before each figure: runs of the fixed work, pause between
FIGURE_PROBE_RUNS = 10
FIGURE_PROBE_PAUSE_S = 0.01

_PAINT = QEvent.Type.Paint
_UPDATE = QEvent.Type.UpdateRequest


class PaintWatch(QObject):
    """An application-wide event filter counting paints and timing the end of each repaint."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0
        self.syncs = 0
        #: perf_counter() when the last repaint (an UpdateRequest that painted) returned
        self.last_paint_end: float | None = None
        self._loop: QEventLoop | None = None
        self._quiet = QTimer(self)
        self._quiet.setSingleShot(True)
        self._quiet.timeout.connect(self._stop)
        self._delivering = False

    def install(self) -> PaintWatch:
        QCoreApplication.instance().installEventFilter(self)
        return self

    def remove(self) -> None:
        QCoreApplication.instance().removeEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        kind = event.type()
        if kind == _PAINT:
            self.paints += 1
            self._activity()
            return False
        if kind == _UPDATE and not self._delivering and (
                isinstance(obj, QWindow) or (obj.isWidgetType() and obj.isWindow())):
            before = self.paints
            self._delivering = True
            try:
                obj.event(event)  # the repaint happens here
            finally:
                self._delivering = False
            self.syncs += 1
            if self.paints != before:
                self.last_paint_end = time.perf_counter()
            self._activity()
            return True
        return False

    def _activity(self) -> None:
        if self._loop is not None:
            self._quiet.start(QUIET_MS)

    def _stop(self) -> None:
        if self._loop is not None:
            self._loop.quit()

    def settle(self, quiet_ms: int = QUIET_MS) -> None:
        """Run the event loop until nothing updates or paints for ``quiet_ms``."""
        loop = QEventLoop()
        self._loop = loop
        guard = QTimer()
        guard.setSingleShot(True)
        guard.timeout.connect(loop.quit)
        guard.start(int(TIMEOUT_S * 1000))
        self._quiet.start(quiet_ms)
        try:
            loop.exec()
        finally:
            self._loop = None
            self._quiet.stop()
            guard.stop()

    def time_change(self, change) -> tuple[float, float, int]:
        """Run ``change()`` and wait until its repaint is finished.

        Returns (wall seconds from the call to the end of the last repaint, this process's CPU
        seconds over the same span plus the quiet wait's share (the wait costs ~nothing),
        paints). Wall is 0-based at the call; if nothing painted the wall is the time the
        change itself took and paints is 0 (the caller reports that).
        """
        self.settle(15)  # nothing left over from before
        self.last_paint_end = None
        paints = self.paints
        cpu0 = time.process_time()
        start = time.perf_counter()
        change()
        returned = time.perf_counter()
        self.settle()
        cpu = time.process_time() - cpu0
        end = self.last_paint_end if self.last_paint_end is not None else returned
        return end - start, cpu, self.paints - paints


def grab(widget) -> QImage:
    """What the screen shows of ``widget`` now (the window's flushed backing store)."""
    window = widget.window()
    top_left = widget.mapTo(window, widget.rect().topLeft())
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.grabWindow(window.winId(), top_left.x(), top_left.y(), widget.width(),
                             widget.height()).toImage()


def measure(watch: PaintWatch, changes, widget, *, check_pixels: bool = True) -> dict:
    """Time each change of ``changes`` (callables, alternating values) to its finished repaint,
    checking after each that ``widget``'s pixels on screen changed."""
    probe = probe_now()
    walls, cpus, painted, unchanged = [], [], [], 0
    before = grab(widget) if check_pixels else None
    for change in changes:
        wall, cpu, paints = watch.time_change(change)
        walls.append(wall)
        cpus.append(cpu)
        painted.append(paints)
        if check_pixels:
            after = grab(widget)
            if after == before:
                unchanged += 1
            before = after
    out = stats_ms(walls)
    out["cpu_median"] = stats_ms(cpus)["median"]
    out["unpainted"] = sum(1 for p in painted if p == 0)
    out["pixels_unchanged"] = unchanged
    out["probe"] = probe
    return out


def probe_now() -> dict[str, float]:
    """The machine's speed just before a figure is taken (the fixed work of the run's probe,
    fewer times): the machine may change speed between the run's start and that figure."""
    return machine_probe(FIGURE_PROBE_RUNS, FIGURE_PROBE_PAUSE_S)
