"""Guard against a Qt binding that corrupts the interpreter.

PySide6 6.12.0 under CPython 3.11 returns None/True/False from wrapped calls without taking
a reference; after a few thousand calls the interpreter aborts (none_dealloc). pyproject.toml
pins below it; this test fails if a broken build comes back.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget


class _Emitter(QObject):
    fired = Signal(object)


def test_wrapped_calls_keep_singleton_refcounts(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    emitter = _Emitter()
    before = (sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False))
    for _ in range(200):
        widget.setEnabled(True)  # void method returning None
        widget.isVisible()  # returns a bool
        emitter.fired.emit(None)
    after = (sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False))
    # Other code may take or drop a few references meanwhile; a leak per call would be >= 200.
    assert all(abs(a - b) < 50 for a, b in zip(after, before, strict=True)), (before, after)
