"""Plan vs actual reads a long log on a thread of its own: the window stays usable meanwhile.

A 20 MB training log took seconds on the window's thread, with nothing but a wait cursor.
Here the reading is held at its start (a threading.Event the test sets), so what the window
does meanwhile is seen without any timing: the event loop turns, the form says what is read,
and the log is taken, one undo step, when the reading ends; the same as a short log gives.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from ui.catalog import HardwareCatalog
from ui.panels import measured as measured_view
from ui.panels.measured import READ_IN_BACKGROUND_CHARS, MeasuredPanel
from workbench import measured

LOG_A = Path(__file__).resolve().parent.parent / "fixtures" / "trainlogs" / "plan_vs_actual_a.log"


def _long(text: str) -> str:
    """The log, then debug chatter until it is long enough to be read on a thread."""
    chatter = "[rank0]:DEBUG still here, nothing to read on this line\n"
    return text + chatter * (READ_IN_BACKGROUND_CHARS // len(chatter) + 1)


@pytest.fixture
def panel(qtbot):
    p = MeasuredPanel(HardwareCatalog())
    qtbot.addWidget(p)
    p.resize(1400, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


@pytest.fixture
def held(monkeypatch):
    """Readings wait for ``held.set()`` before they start."""
    gate = threading.Event()
    real = measured_view.read_measurement_text

    def waiting(name, text, expect):
        if threading.current_thread() is not threading.main_thread():
            assert gate.wait(30), "the test never let the reading go"
        return real(name, text, expect)

    monkeypatch.setattr(measured_view, "read_measurement_text", waiting)
    yield gate
    gate.set()


def _reading_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"read {name}"]


def test_a_long_log_is_read_while_the_window_goes_on(qtbot, panel, held):
    text = _long(LOG_A.read_text(encoding="utf-8"))
    stack = panel.undo_stack()
    assert panel.load_text("long.log", text, expect="run")  # accepted for reading
    assert panel.reading() == ["long.log"] and panel.scenario().runs == ()
    assert panel.reading_label.isVisible() and "Reading long.log" in panel.reading_label.text()
    ticked = []
    QTimer.singleShot(0, lambda: ticked.append(True))
    qtbot.waitUntil(lambda: ticked == [True])  # the event loop turns while the log is read
    held.set()
    qtbot.waitUntil(lambda: not panel.reading())
    assert not panel.reading_label.isVisible()
    assert panel.scenario().runs == (measured.run_from_text("long.log", text),)  # as a short read gives
    assert stack.count() == 1 and "long.log" in stack.undoText()
    assert panel.run_list.currentRow() == 0


def test_long_files_are_read_in_turn_and_a_bad_one_says_why(qtbot, panel, held):
    good = _long(LOG_A.read_text(encoding="utf-8"))
    bad = "x" * READ_IN_BACKGROUND_CHARS
    assert panel.load_text("first.log", good, expect="run")
    assert panel.load_text("second.log", bad, expect="run")
    assert panel.reading() == ["first.log", "second.log"] and "(then 1 more)" in panel.reading_label.text()
    assert len(_reading_threads("first.log")) == 1 and not _reading_threads("second.log")  # one at a time
    held.set()
    qtbot.waitUntil(lambda: not panel.reading())
    assert [r.name for r in panel.scenario().runs] == ["first.log"]
    assert panel.status_text().startswith("second.log is not a training log this app reads")
    assert panel.status_text().endswith("Nothing was changed.")


def test_another_project_opened_meanwhile_drops_the_reading(qtbot, new_window, held, tmp_path):
    from storage import Project

    window = new_window()
    other = tmp_path / "other.swbproj"
    Project.create(other).close()
    panel = window.panel("measured")
    assert panel.load_text("long.log", _long(LOG_A.read_text(encoding="utf-8")), expect="run")
    threads = _reading_threads("long.log")
    assert window.open_path(other, confirm=False)
    assert panel.reading() == [] and not panel.reading_label.isVisible()
    held.set()
    for thread in threads:
        thread.join(30)
    assert not any(t.is_alive() for t in threads)
    delivered = []
    QTimer.singleShot(0, lambda: delivered.append(True))  # after the reading's queued result, if any
    qtbot.waitUntil(lambda: delivered == [True])
    assert window.panel("measured") is panel and panel.scenario().runs == ()


def test_a_panel_closed_meanwhile_drops_the_reading_quietly(qtbot, held, monkeypatch):
    failures = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args))
    panel = MeasuredPanel(HardwareCatalog())
    assert panel.load_text("long.log", _long(LOG_A.read_text(encoding="utf-8")), expect="run")
    threads = _reading_threads("long.log")
    panel.deleteLater()
    qtbot.waitUntil(lambda: _deleted(panel))
    held.set()
    for thread in threads:
        thread.join(30)
    assert not any(t.is_alive() for t in threads) and failures == []


def _deleted(widget) -> bool:
    from shiboken6 import isValid

    return not isValid(widget)
