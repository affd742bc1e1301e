"""The window's small dialogs, each behind one function so tests can replace the asking.

Functions that wait for an answer (``ask_*``, ``get_export_options``, the file choosers) run
a modal dialog; tests monkeypatch them (``monkeypatch.setattr(dialogs, "ask_save_changes",
...)``) and never block on ``exec()``. Messages that need no answer (:func:`show_message`,
:class:`ExplanationDialog`) are non-blocking (``open()``/``show()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QRadioButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ui import plain
from ui.widgets.quantity_edit import IntField

PROJECT_FILTER = "Scaling Workbench projects (*.swbproj);;All files (*)"
OPEN_FILTER = ("Projects and exported charts (*.swbproj *.png);;Scaling Workbench projects (*.swbproj);;"
               "Exported charts with a scenario (*.png);;All files (*)")
SCENARIO_FILTER = "Scenario files (*.swbscenario *.json);;Exported charts with a scenario (*.png);;All files (*)"
EXPORT_FILTERS = {
    "png": "PNG image (*.png)",
    "svg": "SVG drawing (*.svg)",
    "csv": "CSV numbers (*.csv)",
}

SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


# -- unsaved changes, recovery, messages -------------------------------------------------------
def build_save_prompt(parent: QWidget | None, name: str) -> QMessageBox:
    """The Save / Discard / Cancel question for project ``name`` (not yet shown)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unsaved changes")
    box.setText(f"Save the changes to “{name}” before closing it?")
    box.setInformativeText("Your changes are lost if you don't save them.")
    box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                           | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    return plain.plain_labels(box)


def ask_save_changes(parent: QWidget | None, name: str) -> str:
    """Ask whether to save ``name``: returns "save", "discard" or "cancel"."""
    box = build_save_prompt(parent, name)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return SAVE
    if answer == QMessageBox.StandardButton.Discard:
        return DISCARD
    return CANCEL


def ask_recover(parent: QWidget | None, project_path: Path, recovery_path: Path) -> bool:
    """Offer the recovery file of ``project_path``; True to restore the unsaved work."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Recover unsaved work?")
    box.setText(f"“{Path(project_path).name}” has unsaved work from a session that did not end normally.")
    box.setInformativeText(f"Restore it? (Recovery file: {recovery_path})\n"
                           "Choosing Discard deletes the recovery file and opens the file as last saved.")
    restore = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Discard)
    box.setDefaultButton(restore)
    plain.plain_labels(box)
    box.exec()
    return box.clickedButton() is restore


OVERWRITE, SAVE_AS = "overwrite", "save_as"


def ask_overwrite_external(parent: QWidget | None, name: str, detail: str) -> str:
    """The file was changed by another program since it was opened: "overwrite", "save_as" or
    "cancel"."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Project changed on disk")
    box.setText(f"“{name}” was changed by another program since you opened it.")
    box.setInformativeText(f"{detail}\nSave As keeps both versions; Overwrite replaces the other "
                           "program's version with yours.")
    save_as = box.addButton("Save As…", QMessageBox.ButtonRole.AcceptRole)
    overwrite = box.addButton("Overwrite", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(save_as)
    plain.plain_labels(box)
    box.exec()
    clicked = box.clickedButton()
    return SAVE_AS if clicked is save_as else OVERWRITE if clicked is overwrite else CANCEL


def ask_replace(parent: QWidget | None, name: str) -> bool:
    """A scenario called ``name`` exists: replace it?"""
    return ask_yes(parent, "Replace scenario?", f"A scenario named “{name}” already exists. Replace it?",
                   no=QMessageBox.StandardButton.Cancel)


def ask_yes(parent: QWidget | None, title: str, text: str,
            no: QMessageBox.StandardButton = QMessageBox.StandardButton.No) -> bool:
    """A Yes / No (or Cancel) question whose text is shown as plain text; the safe answer is the
    default, so Enter never destroys anything."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.Yes | no, parent)
    box.setDefaultButton(no)
    plain.plain_labels(box)
    return box.exec() == QMessageBox.StandardButton.Yes


def show_message(parent: QWidget | None, title: str, text: str, *, error: bool = True) -> QMessageBox:
    """A non-blocking message (window-modal sheet): the caller goes on at once."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Critical if error else QMessageBox.Icon.Information)
    box.setWindowTitle(title)
    box.setText(text)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setObjectName("messageBox")
    plain.plain_labels(box)
    box.open()
    return box


def ask_text(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    """One line of text (a scenario name), or None when cancelled or empty."""
    value, ok = QInputDialog.getText(parent, title, label, text=text)
    value = value.strip()
    return value if ok and value else None


def ask_multiline(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    value, ok = QInputDialog.getMultiLineText(parent, title, label, text)
    return value if ok else None


def ask_item(parent: QWidget | None, title: str, label: str, items: list[str]) -> str | None:
    """One of ``items``, or None."""
    if not items:
        return None
    value, ok = QInputDialog.getItem(parent, title, label, items, 0, False)
    return value if ok else None


# -- files -------------------------------------------------------------------------------------
def ask_open_path(parent: QWidget | None, caption: str, filters: str, directory: str = "") -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, caption, directory, filters)
    return path or None


def ask_save_path(parent: QWidget | None, caption: str, filters: str, directory: str = "") -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, caption, directory, filters)
    return path or None


# -- export options ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportOptions:
    fmt: str  # "png", "svg" or "csv"
    width_px: int = 1920
    background: str = "white"  # "white", "transparent" or "theme"
    # a slide caption above the chart (PNG/SVG): empty strings leave it out
    caption_title: str = ""
    caption_assumptions: str = ""


class ExportOptionsDialog(QDialog):
    """Format, pixel width (PNG) and background (PNG/SVG) of a chart export."""

    BACKGROUNDS = (("White", "white"), ("Transparent", "transparent"), ("Theme background", "theme"))

    def __init__(self, parent: QWidget | None = None, fmt: str = "png", width_px: int = 1920,
                 background: str = "white", title: str = "chart", caption_title: str = "",
                 caption_assumptions: str = ""):
        super().__init__(parent)
        self.setWindowTitle(f"Export {title}")
        self.setObjectName("exportDialog")
        self.format_combo = QComboBox(self)
        for key, text in EXPORT_FILTERS.items():
            self.format_combo.addItem(text.split(" (")[0], key)
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData(fmt)))
        self.width_field = IntField(self, label="Width", minimum=16, maximum=16384, unit="")
        self.width_field.setValue(width_px)
        self.width_field.edit.setToolTip("Pixel width of the PNG; slides want 1920 or more")
        self.background_group = QButtonGroup(self)
        backgrounds = QWidget(self)
        column = QVBoxLayout(backgrounds)
        column.setContentsMargins(0, 0, 0, 0)
        for i, (text, key) in enumerate(self.BACKGROUNDS):
            button = QRadioButton(text, backgrounds)
            button.setProperty("background", key)
            button.setChecked(key == background)
            self.background_group.addButton(button, i)
            column.addWidget(button)
        form = QFormLayout()
        form.addRow("Format", self.format_combo)
        form.addRow("Width (px)", self.width_field)
        form.addRow("Background", backgrounds)
        # for a slide: a title and one line of what the chart assumes, drawn above it
        self.caption_check = QCheckBox("Title and assumptions above the chart", self)
        self.caption_check.setObjectName("exportDialog.caption")
        self.caption_title = QLineEdit(caption_title, self)
        self.caption_title.setObjectName("exportDialog.captionTitle")
        self.caption_title.setAccessibleName("Slide title")
        self.caption_assumptions = QLineEdit(caption_assumptions, self)
        self.caption_assumptions.setObjectName("exportDialog.captionAssumptions")
        self.caption_assumptions.setAccessibleName("Assumptions line")
        self.caption_assumptions.setToolTip("One line of what the numbers assume (hardware, GPUs, precision, "
                                            "model, tokens); edit it as you like")
        self.caption_check.toggled.connect(self._update)
        form.addRow("Caption", self.caption_check)
        form.addRow("Title", self.caption_title)
        form.addRow("Assumptions", self.caption_assumptions)
        self.note = QLabel("The PNG carries the scenario: drop it on the window to reopen it.", self)
        self.note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        # say what the button does (a file chooser follows, hence the ellipsis), not "OK"
        self.export_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.export_button.setText("Export…")
        self.export_button.setObjectName("exportDialog.export")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.format_combo.currentIndexChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        fmt = self.format_combo.currentData()
        self.width_field.setEnabled(fmt == "png")
        for button in self.background_group.buttons():
            button.setEnabled(fmt != "csv")
        self.caption_check.setEnabled(fmt != "csv")
        captioned = fmt != "csv" and self.caption_check.isChecked()
        self.caption_title.setEnabled(captioned)
        self.caption_assumptions.setEnabled(captioned)
        self.note.setVisible(fmt == "png")

    def _accept(self) -> None:
        if self.format_combo.currentData() == "png" and not self.width_field.edit.commit():
            return
        self.accept()

    def options(self) -> ExportOptions:
        button = self.background_group.checkedButton()
        return ExportOptions(
            fmt=self.format_combo.currentData(),
            width_px=int(self.width_field.value() or 1920),
            background=button.property("background") if button is not None else "white",
            caption_title=self.caption_title.text().strip() if self.caption_check.isChecked() else "",
            caption_assumptions=(self.caption_assumptions.text().strip()
                                 if self.caption_check.isChecked() else ""),
        )


def get_export_options(parent: QWidget | None, fmt: str, width_px: int = 1920, background: str = "white",
                       title: str = "chart", caption_title: str = "",
                       caption_assumptions: str = "") -> ExportOptions | None:
    dialog = ExportOptionsDialog(parent, fmt, width_px, background, title, caption_title, caption_assumptions)
    try:
        return dialog.options() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


# -- explanation -------------------------------------------------------------------------------
class ExplanationDialog(QDialog):
    """What a panel computes and from which formulas (non-modal; rich text or Markdown).

    One per panel, reused: Explain again brings it to the front with the current text.
    """

    def __init__(self, parent: QWidget | None, title: str, text: str):
        super().__init__(parent)
        self.setObjectName("explainDialog")
        self.setModal(False)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(640, 520)
        self.set_text(title, text)

    def set_text(self, title: str, text: str) -> None:
        from PySide6.QtGui import Qt as QtGuiNamespace  # mightBeRichText lives in QtGui's Qt

        self.setWindowTitle(f"{title}: how it is computed")
        if QtGuiNamespace.mightBeRichText(text):
            self.browser.setHtml(text)
        else:
            self.browser.setMarkdown(text)

    def text(self) -> str:
        """The explanation as plain text (what a reader sees)."""
        return self.browser.toPlainText()


def show_explanation(parent: QWidget | None, title: str, text: str) -> ExplanationDialog:
    dialog = ExplanationDialog(parent, title, text)
    dialog.show()
    return dialog
