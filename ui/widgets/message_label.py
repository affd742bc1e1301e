"""A one-paragraph message line under a field or list: hidden when empty, red for errors."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from ui import theme


class MessageLabel(QLabel):
    """Plain-text, word-wrapped, hidden until there is something to say."""

    def __init__(self, parent: QWidget | None = None, object_name: str = ""):
        super().__init__(parent)
        if object_name:
            self.setObjectName(object_name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setVisible(False)

    def show_message(self, text: str, error: bool = True) -> None:
        current = theme.current_theme()
        self.setStyleSheet(f"color: {current.error if error else current.muted};")
        self.setText(text)
        self.setVisible(bool(text))

    def clear_message(self) -> None:
        self.clear()
        self.setVisible(False)

    def message_text(self) -> str:
        return self.text() if not self.isHidden() else ""
