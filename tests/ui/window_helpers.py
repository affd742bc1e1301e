"""What the window tests of each panel's analysis do to a main window: count the analyses the
document computed, bring a panel to the front, type as a user does, switch the theme, and read
what the panel lists and exports.

A panel behind another tab draws nothing until it is shown, so a test reads a panel only after
:func:`in_front`, which waits until it is on screen and has drawn every edit it was owed."""

from __future__ import annotations

import csv
from contextlib import contextmanager

from PySide6.QtCore import Qt


def computed(window, kind: str) -> int:
    """How often the document has computed the analysis of ``kind``: a test compares it before
    and after a change to see that the change computed it once, and a read or redraw never."""
    return window.document.analyses.computed[kind]


def in_front(qtbot, window, kind: str):
    """Raise the tab of panel ``kind`` and wait until it is on screen and not stale: only then
    has it drawn what the window's edits owed it, and its numbers are the ones to check."""
    window.raise_panel(kind)
    panel = window.panel(kind)
    qtbot.waitUntil(lambda: panel.on_screen() and not panel.is_stale())
    return panel


def type_in(qtbot, edit, text: str) -> None:
    """Type ``text`` over what the field shows and press Return, as a user does: the field
    commits on Return, so this is one edit."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def analyses_read(monkeypatch, panel) -> list:
    """From now on, every analysis ``panel`` reads is listed (in the list returned): a test
    checks that what the panel drew is the very object the document hands out."""
    seen = []
    real = panel.analysis
    monkeypatch.setattr(panel, "analysis", lambda: seen.append(real()) or seen[-1])
    return seen


@contextmanager
def dark_theme(window):
    """The window in the dark theme for the ``with`` block, light again after it even when an
    assertion in the block fails (the next test expects the light theme)."""
    try:
        window.apply_theme_mode("dark", store=False)
        yield
    finally:
        window.apply_theme_mode("light", store=False)


def result_rows(panel) -> dict[str, tuple[str, str]]:
    """The panel's results table, quantity to (value, unit) as the table shows them."""
    return {q: (value, unit) for q, value, unit in panel.results.rows()}


def result_values(panel) -> dict[str, str]:
    """The panel's results table, quantity to value, where a test does not look at the units."""
    return {q: value for q, value, _unit in panel.results.rows()}


def csv_rows(path) -> list[list[str]]:
    """The rows of an exported CSV file, read as the export wrote it (UTF-8, its own newlines)
    and closed again."""
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def csv_table(path, *header: str) -> list[dict[str, str]]:
    """The table in an exported CSV file below the first row that begins with ``header`` (an
    export writes the results table's rows first), each non-empty row as a dict keyed by that
    row's names."""
    rows = csv_rows(path)
    at = rows.index(next(r for r in rows if r[:len(header)] == list(header)))
    return [dict(zip(rows[at], row, strict=True)) for row in rows[at + 1:] if row]
