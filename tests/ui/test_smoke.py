"""Smoke-run the real entry point the way a user starts it."""

from __future__ import annotations

import subprocess
import sys

import workbench


def test_version_flag_prints_version():
    result = subprocess.run([sys.executable, "-m", "ui.cli", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"scaling-workbench {workbench.__version__}"


def test_main_window_shows(qtbot):
    from ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert "Scaling Workbench" in window.windowTitle()
