"""Measure this machine in the background: a QThread running :func:`workbench.measure.measure_machine`.

:class:`MachineMeasurement` owns one thread at a time. ``start(size)`` runs the micro-benchmarks
(numpy STREAM triad and matmul, float32 and float64) off the GUI thread; progress, the measured
:class:`~workbench.hardware.Hardware`, a failure or a cancellation come back as queued signals,
so the UI stays responsive. ``cancel()`` asks the worker to stop at its next check;
``shutdown()`` cancels and waits, so no thread outlives the panel (or a test).
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from workbench.measure import MeasurementCancelled, measure_machine


class MeasureWorker(QObject):
    """Runs one measurement in the thread it was moved to. Not parented (it is moved)."""

    progress = Signal(float, str)  # fraction in [0, 1], what is being measured
    succeeded = Signal(object)  # the measured Hardware
    failed = Signal(str)
    cancelled = Signal()
    done = Signal()  # after any of the three above

    def __init__(self, size: str):
        super().__init__()
        self.size = size
        self._stop = threading.Event()

    def request_cancel(self) -> None:
        self._stop.set()

    @Slot()
    def run(self) -> None:
        try:
            hardware = measure_machine(self.size, progress=self.progress.emit, cancelled=self._stop.is_set)
        except MeasurementCancelled:
            self.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - reported to the user, never lost in a thread
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            if self._stop.is_set():
                self.cancelled.emit()
            else:
                self.succeeded.emit(hardware)
        finally:
            # Hand ourselves back to the GUI thread (only the owning thread may do this), so
            # the controller can delete us there once the thread has stopped.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())
            self.done.emit()


class MachineMeasurement(QObject):
    """Start, cancel and wait for a background measurement; re-emits the worker's signals
    in the GUI thread."""

    started = Signal()
    progress = Signal(float, str)
    succeeded = Signal(object)  # Hardware
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()  # the thread has stopped (after succeeded / failed / cancelled)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: MeasureWorker | None = None

    def is_running(self) -> bool:
        return self._thread is not None

    def start(self, size: str = "normal") -> bool:
        """Begin measuring; returns False when a measurement is already running."""
        if self._thread is not None:
            return False
        thread = QThread()  # not parented: we own it and always wait for it
        thread.setObjectName("measureThread")
        worker = MeasureWorker(size)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.progress.connect(self.progress)
        worker.succeeded.connect(self.succeeded)
        worker.failed.connect(self.failed)
        worker.cancelled.connect(self.cancelled)
        worker.done.connect(thread.quit)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        thread.start()
        self.started.emit()
        return True

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.request_cancel()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the thread stops (True) or ``msecs`` pass (False)."""
        thread = self._thread
        if thread is None:
            return True
        ok = thread.wait(msecs)
        if ok:
            self._on_thread_finished()
        return ok

    def shutdown(self) -> None:
        """Cancel and wait: call before the owner goes away."""
        self.cancel()
        self.wait()

    @Slot()
    def _on_thread_finished(self) -> None:
        if self._thread is None:
            return
        thread = self._thread
        thread.wait()  # ``finished`` comes just before the thread really stops
        self._thread = self._worker = None  # both live in the GUI thread now; Python frees them
        self.finished.emit()
