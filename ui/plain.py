"""Text from a project, a log or a file name is data: these helpers keep Qt from reading it as
markup. Qt renders a label, tooltip or message box text as rich text whenever it looks like HTML,
and rich text loads the images it names (a preset called ``<img src="/dev/zero">`` hangs the app)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox


def tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally (tooltips have no plain-text mode: escape it and
    mark it as rich text so Qt does not guess)."""
    if "<" not in text:  # Qt only takes a text for markup when it holds a tag
        return text
    return "<qt>" + html.escape(text).replace("\n", "<br>") + "</qt>"


def without_mnemonic(text: str) -> str:
    """A menu or label text as read aloud or shown in a tooltip: "&Undo" -> "Undo", "&&" -> "&"."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def plain_labels(box: QMessageBox) -> QMessageBox:
    """Show every text of a message box (text and informative text) as plain text."""
    box.setTextFormat(Qt.TextFormat.PlainText)
    for label in box.findChildren(QLabel):
        label.setTextFormat(Qt.TextFormat.PlainText)
    return box
