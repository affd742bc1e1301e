"""The status bar's run summary: a new text does not lay the status bar and the window out."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QMainWindow

from ui.widgets.steady_label import SteadyLabel


class _Layouts(QObject):
    def __init__(self):
        super().__init__()
        self.requests = 0

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.LayoutRequest:
            self.requests += 1
        return False


def test_new_figures_keep_the_status_bar_laid_out_and_a_longer_text_gets_its_room(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    label = SteadyLabel()
    window.statusBar().addPermanentWidget(label)
    window.resize(1200, 300)
    window.show()
    qtbot.waitExposed(window)
    label.show_text("64 × H100 | 12.3 days")
    QCoreApplication.processEvents()
    width = label.width()
    watch = _Layouts()
    window.statusBar().installEventFilter(watch)
    window.installEventFilter(watch)
    for text in ("512 × H100 | 1.5 days", "64 × H100 | 12.3 days", "8 × H100 | 98 days"):
        label.show_text(text)
        QCoreApplication.processEvents()
        assert label.text() == text
    assert watch.requests == 0 and label.width() == width  # a digit less or more: no relayout
    label.show_text("4,096 × H100 | 0.25 days")  # two characters longer: the spare room holds them
    QCoreApplication.processEvents()
    assert watch.requests == 0 and label.width() == width >= label.sizeHint().width()
    longer = "64 × H100 | 12.3 days | 4,466 USD (energy only; GPU-hour price not set)"
    label.show_text(longer)
    QCoreApplication.processEvents()
    assert label.width() >= label.sizeHint().width() > width  # it grew to show the whole line
    bigger = QFont(label.font())
    bigger.setPointSizeF(label.font().pointSizeF() * 2)
    label.setFont(bigger)  # presentation mode: measured again, then held at its new size
    label.show_text(longer + " ")
    QCoreApplication.processEvents()
    assert label.height() == label.sizeHint().height() and label.width() >= label.sizeHint().width()


def test_runs_are_painted_as_text_and_read_back_as_the_rich_text_they_show(qtbot):
    """The run summary is styled runs of plain text, laid out and painted directly (not a
    rich-text document parsed on every edit): markup in a run is shown as it is."""
    from PySide6.QtCore import Qt

    from ui.widgets.steady_label import Run

    label = SteadyLabel()
    qtbot.addWidget(label)
    label.show()
    label.show_runs([Run("512 × GPU", bold=True), Run(" \u00a0│\u00a0 "), Run("MFU 41%"), Run(" "),
                     Run("measured", italic=True)])
    assert label.text() == "<b>512 × GPU</b> &nbsp;│&nbsp; MFU 41% <i>measured</i>"
    assert label.textFormat() == Qt.TextFormat.RichText
    plain_width = label.sizeHint().width()
    label.show_runs([Run("512 × GPU"), Run(" \u00a0│\u00a0 "), Run("MFU 41%"), Run(" "), Run("measured")])
    assert label.sizeHint().width() < plain_width  # bold and italic runs are set in their style
    label.show_runs([Run("<b>x</b>")])
    assert label.text() == "&lt;b&gt;x&lt;/b&gt;" and label.accessibleName() == "<b>x</b>"
    literal = label.sizeHint().width()
    label.show_runs([Run("x", bold=True)])
    assert label.sizeHint().width() < literal  # the tags were drawn as characters
    image = label.grab().toImage()
    assert any(image.pixelColor(x, y) != image.pixelColor(0, 0)
               for x in range(image.width()) for y in range(image.height()))  # something painted
    label.clear()
    assert label.text() == ""
