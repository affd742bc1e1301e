"""Help: the user guide (the README that ships with the app) in a window of its own.

The guide is read from the checkout or the bundle when the README is there (with its pictures),
else from the installed package's metadata, which carries the README as its description."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

DIST_NAME = "scaling-workbench"


def _readme_candidates() -> list[Path]:
    here = Path(__file__).resolve().parent.parent  # the folder holding ui/, workbench/, ...
    found = [here / "README.md"]
    bundle = getattr(sys, "_MEIPASS", None)  # PyInstaller unpacks data files here
    if bundle:
        found.insert(0, Path(bundle) / "README.md")
    return found


def user_guide() -> tuple[str, Path | None]:
    """The guide as Markdown, and the folder its relative links (pictures) resolve against."""
    for path in _readme_candidates():
        try:
            return path.read_text(encoding="utf-8"), path.parent
        except OSError:
            continue
    try:
        text = metadata.metadata(DIST_NAME).get_payload() or ""
    except metadata.PackageNotFoundError:
        text = ""
    if not text.strip():
        text = ("# Scaling Workbench\n\nThe user guide (README.md) was not found beside this "
                "installation. Every panel's toolbar has **Explain** (F1) for its formulas.")
    return text, None


class UserGuideDialog(QDialog):
    """The README, rendered; links inside it stay in the window (the app works offline)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("userGuide")
        self.setWindowTitle("Scaling Workbench user guide")
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("userGuideText")
        self.browser.setAccessibleName("User guide")
        self.browser.setOpenExternalLinks(False)
        self.browser.setOpenLinks(False)  # anchors are followed by hand: no network, no file opening
        self.browser.anchorClicked.connect(self._follow)
        text, base = user_guide()
        if base is not None:
            self.browser.setSearchPaths([str(base)])
            self.browser.document().setBaseUrl(QUrl.fromLocalFile(str(base) + "/"))
        self.browser.setMarkdown(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(900, 760)

    def _follow(self, url: QUrl) -> None:
        if url.hasFragment() and (not url.path() or url.path().endswith("README.md")):
            self.browser.scrollToAnchor(url.fragment())

    def text(self) -> str:
        return self.browser.toPlainText()
