"""The export dialog offers a slide caption: a title and one line of assumptions, pre-filled
from the panel and its scenario, drawn above the chart in the PNG."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from ui import dialogs


@pytest.fixture
def window(new_window):
    return new_window()


def test_the_dialog_prefills_the_caption_and_returns_it_only_when_asked(qtbot):
    dialog = dialogs.ExportOptionsDialog(None, "png", caption_title="Roofline",
                                         caption_assumptions="NVIDIA H100 SXM · 8 GPUs · BF16")
    qtbot.addWidget(dialog)
    assert dialog.options().caption_title == ""  # off by default: a chart as the panel shows it
    assert not dialog.caption_title.isEnabled()
    dialog.caption_check.setChecked(True)
    assert dialog.caption_title.isEnabled()
    options = dialog.options()
    assert (options.caption_title, options.caption_assumptions) == ("Roofline", "NVIDIA H100 SXM · 8 GPUs · BF16")
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("csv"))
    assert not dialog.caption_check.isEnabled()


def test_a_captioned_png_is_taller_than_the_plain_one_by_its_caption(qtbot, window, tmp_path, monkeypatch):
    asked = {}

    def options(parent, fmt, **kwargs):
        asked.update(kwargs)
        return dialogs.ExportOptions("png", 1600, "white", caption_title=kwargs["caption_title"],
                                     caption_assumptions=kwargs["caption_assumptions"])

    plain_png, captioned_png = tmp_path / "plain.png", tmp_path / "captioned.png"
    window.raise_panel("roofline")
    window.export_active("png", plain_png, 1600)
    monkeypatch.setattr(dialogs, "get_export_options", options)
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(captioned_png))
    window.action_export_png.trigger()
    assert asked["caption_title"] == "Roofline"
    assert "NVIDIA H100 SXM" in asked["caption_assumptions"]
    plain, captioned = QImage(str(plain_png)), QImage(str(captioned_png))
    assert plain.width() == captioned.width() == 1600
    assert captioned.height() > plain.height()
