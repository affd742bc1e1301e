"""The Collectives animation as files: GIF, APNG and PNG sequences, from the menu and headless."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from ui import animation_export, dialogs
from ui.animation_export import AnimationCancelled, AnimationExportDialog, AnimationOptions
from ui.export import Caption, read_png_scenario
from ui.panels.collective import CollectivePanel
from workbench.scenarios import CollectiveScenario


@pytest.fixture
def panel(qtbot):
    p = CollectivePanel(None, CollectiveScenario(n_ranks=4))  # ring all-reduce: 6 steps
    qtbot.addWidget(p)
    p.resize(1100, 700)
    p.show()
    qtbot.waitExposed(p)
    return p


def type_into(qtbot, field, text: str) -> None:
    edit = field.edit
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def steps_shown(panel) -> int:
    return int(dict((q, v) for q, v, _ in panel.results.rows())["Steps"])


def gif_frames(path) -> list[Image.Image]:
    with Image.open(path) as im:
        frames = []
        for k in range(im.n_frames):
            im.seek(k)
            frames.append(im.convert("RGB"))  # decodes the frame
        return frames


def test_the_menu_exports_a_gif_with_one_frame_per_step(qtbot, panel, tmp_path, monkeypatch):
    target = tmp_path / "ring.gif"
    asked = {}

    def ask(parent, options, steps):
        asked.update(options=options, steps=steps)
        return AnimationOptions(fmt="gif", width_px=640, caption=Caption("Ring all-reduce on four GPUs"),
                                step_ms=500)

    monkeypatch.setattr(animation_export, "ask_animation_options", ask)
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(target))
    assert panel.action_export_animation in panel.export_menu.actions()
    panel.action_export_animation.trigger()

    assert asked["steps"] == steps_shown(panel) == 6
    caption = asked["options"].caption
    assert caption.title == "All-reduce on 4 ranks, ring schedule"
    assert "360 GB/s per link" in caption.assumptions and " in 6 steps" in caption.assumptions
    frames = gif_frames(target)
    # one frame per step of the schedule, and the start (step 0) before them
    assert len(frames) == steps_shown(panel) + 1 == len(panel.frames())
    assert {f.size[0] for f in frames} == {640}
    with Image.open(target) as im:
        im.seek(1)
        assert im.info["duration"] == 500
        assert im.info["loop"] == 0
    assert len({f.tobytes() for f in frames}) == len(frames)  # every step looks different
    assert f"Exported the animation: {target}" == panel.status_text()
    assert panel.current_step() == 0  # the panel stays where it was


def test_a_png_sequence_has_one_file_per_step_at_the_asked_width(qtbot, panel, tmp_path):
    qtbot.keyClick(panel.view, Qt.Key.Key_Right)
    files = panel.export_animation(tmp_path / "step.png", "png_sequence", width_px=777, caption=Caption())
    assert [f.name for f in files] == [f"step_{k:03d}.png" for k in range(len(panel.frames()))]
    assert len(files) == steps_shown(panel) + 1
    for k, path in enumerate(files):
        image = QImage(str(path))
        assert image.width() == 777 and image.height() > 300
        # each file reopens the scenario on its own step
        assert json.loads(read_png_scenario(path))["step"] == k
    assert panel.current_step() == 1


def test_an_apng_decodes_to_every_step(panel, tmp_path):
    path = panel.export_animation(tmp_path / "ring.png", "apng", width_px=500, step_ms=250)[0]
    with Image.open(path) as im:
        assert im.format == "PNG" and im.is_animated
        assert im.n_frames == len(panel.frames())
        sizes = set()
        for k in range(im.n_frames):
            im.seek(k)
            im.load()
            sizes.add(im.size)
            assert im.info["duration"] == (500 if k in (0, im.n_frames - 1) else 250)
        assert sizes == {(500, im.height)}
    assert json.loads(read_png_scenario(path))["collective"] == "all_reduce"


def test_the_caption_is_a_band_over_each_frame(panel, tmp_path):
    bare = panel.export_animation(tmp_path / "a.png", "png_sequence", width_px=600, caption=Caption())
    captioned = panel.export_animation(tmp_path / "b.png", "png_sequence", width_px=600,
                                       caption=Caption("Figure 3: ring all-reduce", "4 GPUs on NVLink"))
    for k in (0, len(bare) - 1):
        plain, slide = QImage(str(bare[k])), QImage(str(captioned[k]))
        assert slide.width() == plain.width() == 600
        band = slide.height() - plain.height()
        assert band > 30  # two lines of text
        # the frame is the same picture, moved down under the band
        assert slide.copy(0, band, 600, plain.height()) == plain.convertToFormat(slide.format())
        dark = {(x, y) for x in range(0, 600, 2) for y in range(band)
                if slide.pixelColor(x, y).lightness() < 100}
        assert dark  # text in the band


def test_sixty_four_ranks_export_with_every_step(qtbot, panel, tmp_path):
    type_into(qtbot, panel.ranks_field, "64")
    combo = panel.collective_combo
    combo.setFocus()
    while combo.currentData() != "reduce_scatter":
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert panel.scenario().collective == "reduce_scatter"
    files = panel.export_animation(tmp_path / "rs.gif", "gif", width_px=480)
    assert len(gif_frames(files[0])) == 64  # 63 steps and the start


def test_the_dialog_is_driven_by_keys_and_clicks(qtbot):
    dialog = AnimationExportDialog(None, AnimationOptions(caption=Caption("old")), steps=6)
    qtbot.addWidget(dialog)
    dialog.show()
    assert "7 frames" in dialog.note.text()
    dialog.format_combo.setFocus()
    qtbot.keyClick(dialog.format_combo, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.format_combo, Qt.Key.Key_Down)
    assert dialog.format_combo.currentData() == "png_sequence"
    assert "7 files" in dialog.note.text()
    type_into(qtbot, dialog.width_field, "1920")
    dialog.title_edit.selectAll()
    qtbot.keyClicks(dialog.title_edit, "Ring all-reduce")
    qtbot.keyClicks(dialog.assumptions_edit, "8 H100, NVLink")
    with qtbot.waitSignal(dialog.accepted):
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.options() == AnimationOptions(fmt="png_sequence", width_px=1920,
                                                caption=Caption("Ring all-reduce", "8 H100, NVLink"))


def test_the_dialog_refuses_a_width_out_of_range(qtbot):
    dialog = AnimationExportDialog(None, AnimationOptions(), steps=6)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.width_field.edit.setFocus()
    dialog.width_field.edit.selectAll()
    qtbot.keyClicks(dialog.width_field.edit, "12")
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.result() == 0
    assert dialog.width_field.message_text()


def test_a_cancelled_export_writes_nothing(panel, tmp_path):
    calls = []

    def progress(done, total):
        calls.append((done, total))
        return done < 3

    for fmt in ("gif", "apng", "png_sequence"):
        with pytest.raises(AnimationCancelled):
            panel.export_animation(tmp_path / f"x.{fmt}.png", fmt, width_px=400, progress=progress)
    assert list(tmp_path.iterdir()) == []
    assert calls[:4] == [(0, 7), (1, 7), (2, 7), (3, 7)]


def test_bad_options_and_folders_are_refused(panel, tmp_path):
    with pytest.raises(ValueError, match="format"):
        panel.export_animation(tmp_path / "a.mp4", "mp4")
    with pytest.raises(ValueError, match="width"):
        panel.export_animation(tmp_path / "a.gif", "gif", width_px=10)
    with pytest.raises(OSError, match="does not exist"):
        panel.export_animation(tmp_path / "missing" / "a.gif", "gif", width_px=400)


def test_a_dark_theme_still_exports_on_white(qtbot, qapp, panel, tmp_path):
    from ui import theme as th

    th.apply_theme(qapp, "dark")
    try:
        path = panel.export_animation(tmp_path / "d.gif", "gif", width_px=400, caption=Caption())[0]
        first = gif_frames(path)[0]
        assert first.getpixel((2, 2)) == (255, 255, 255)
        assert panel.view.scene().backgroundBrush().color().name() == th.DARK.background.lower()
    finally:
        th.apply_theme(qapp, "light")


def test_sequence_paths_number_the_files():
    assert [p.name for p in animation_export.sequence_paths("out/x.png", 3)] == ["x_000.png", "x_001.png",
                                                                                   "x_002.png"]
    assert animation_export.sequence_paths("out/frames", 1001)[-1].name == "frames_1000.png"
    assert animation_export.durations(4, 100) == [200, 100, 100, 200]
