"""The main window: docked panels around a shared context."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow


class MainWindow(QMainWindow):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.setWindowTitle("Scaling Workbench")
        self.resize(1280, 800)
        self.setCentralWidget(QLabel("Scaling Workbench"))
