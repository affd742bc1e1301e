"""The Collectives panel's animation as files: an animated GIF or APNG, or numbered PNGs.

Every frame of the schedule (the start, then each step) is drawn by a view of its own, off
screen and the size of the one on screen, so what is exported looks like what the panel
shows, whatever step the panel is on. The frame is rendered to the chosen pixel width with
:func:`ui.export.render_image` (fonts and lines scaled together, as the PNG export does) on
the chosen background, under the slide caption when there is one (:class:`ui.export.Caption`:
a title and one line of assumptions, as on the other exports).

- GIF and APNG are written to disk only once complete (a cancelled or failed export leaves no
  file behind). The start and the last step are held longer than the others, so a looping
  animation can be read. A GIF is encoded by Pillow (an adaptive palette per frame, no
  dithering: flat colours and text stay crisp). An APNG is assembled here from frames Pillow
  encodes as PNGs, so only compressed frames are held (Pillow's own APNG writer keeps every
  full-size frame in memory: hundreds of MB for 127 steps at 1920 px).
- A PNG sequence is ``name_000.png``, ``name_001.png`` ... beside the path given; each file
  carries the scenario (on its step) like a single PNG export, so dropping one on the window
  reopens that step.

:func:`export_animation` runs without a dialog (tests, scripts, headless);
:func:`export_animation_interactive` asks for the options and the file, with a progress
dialog that can cancel. The asking goes through :func:`ask_animation_options` and
:func:`ui.dialogs.ask_save_path`, which tests replace.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QVBoxLayout,
    QWidget,
)

from ui import theme as th
from ui.export import (
    SCENARIO_KEY,
    SOFTWARE,
    Caption,
    ExportError,
    encode_png,
    render_image,
    write_export,
)
from ui.widgets.quantity_edit import IntField

if TYPE_CHECKING:
    from ui.panels.collective import CollectivePanel

#: Format key -> file-dialog filter.
FORMATS: dict[str, str] = {
    "gif": "Animated GIF (*.gif)",
    "apng": "Animated PNG (*.png *.apng)",
    "png_sequence": "Numbered PNG images (*.png)",
}
FORMAT_LABELS: dict[str, str] = {
    "gif": "Animated GIF",
    "apng": "Animated PNG (APNG)",
    "png_sequence": "PNG sequence (one file per step)",
}
SUFFIXES: dict[str, str] = {"gif": ".gif", "apng": ".png", "png_sequence": ".png"}
BACKGROUNDS: tuple[tuple[str, str], ...] = (("White", "white"), ("Theme background", "theme"))

MIN_WIDTH, MAX_WIDTH = 160, 7680
#: Size of the off-screen view when the panel's own is not on screen (a 16:9 slide).
FALLBACK_VIEW_SIZE = (1280, 720)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The start and the last step stay up this many step times (a loop has to be readable).
HOLD_STEPS = 2


class AnimationCancelled(Exception):
    """The user cancelled an export; nothing was written."""


@dataclass(frozen=True)
class AnimationOptions:
    """What to export: ``fmt`` (a key of :data:`FORMATS`), the pixel ``width_px``, the slide
    ``caption`` over every frame (an empty one for none), ``step_ms`` per step and the
    ``background`` ("white" or "theme")."""

    fmt: str = "gif"
    width_px: int = 1280
    caption: Caption = Caption()
    step_ms: int = 1000
    background: str = "white"

    def checked(self) -> AnimationOptions:
        if self.fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {self.fmt!r}")
        if not isinstance(self.width_px, int) or isinstance(self.width_px, bool) or not (
            MIN_WIDTH <= self.width_px <= MAX_WIDTH
        ):
            raise ValueError(f"width must be a whole number of pixels, {MIN_WIDTH} to {MAX_WIDTH}, "
                             f"got {self.width_px!r}")
        if not isinstance(self.step_ms, int) or isinstance(self.step_ms, bool) or not 20 <= self.step_ms <= 30_000:
            raise ValueError(f"time per step must be 20 to 30000 ms, got {self.step_ms!r}")
        if self.background not in dict((v, t) for t, v in BACKGROUNDS):
            raise ValueError(f"background must be 'white' or 'theme', got {self.background!r}")
        if not isinstance(self.caption, Caption):
            raise ValueError("caption must be an export Caption (title and assumptions)")
        return self


# -- rendering ----------------------------------------------------------------------------------
def _background(name: str) -> QColor:
    return QColor(th.current_theme().background if name == "theme" else "#FFFFFF")


def to_pil(image: QImage) -> Image.Image:
    """A Pillow RGB image of ``image`` (the exports are opaque)."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    return Image.frombytes("RGB", (rgb.width(), rgb.height()), bytes(rgb.constBits()),
                           "raw", "RGB", rgb.bytesPerLine())


def render_frames(panel: CollectivePanel, options: AnimationOptions,
                  progress: Callable[[int, int], bool] | None = None) -> Iterator[QImage]:
    """Every frame of ``panel``'s schedule as an image ``options.width_px`` wide, captioned.

    ``progress(done, total)`` is called before each frame; returning False cancels
    (:class:`AnimationCancelled`)."""
    from ui.panels.collective_view import CollectiveView

    options = options.checked()
    frames = panel.frames()
    total = len(frames)
    background = _background(options.background)
    shown = panel.view
    width, height = FALLBACK_VIEW_SIZE
    if shown.isVisible() and shown.width() >= shown.minimumWidth() and shown.height() >= shown.minimumHeight():
        width, height = shown.width(), shown.height()
    if options.width_px < width:
        # narrower than the screen: lay the drawing out at that width (labels shorten or
        # thin out) rather than shrink every text below the drawing's smallest size
        height = round(height * options.width_px / width)
        width = options.width_px
    view = CollectiveView()
    # "shown" without a window: laid out and painted like the panel's, never on screen
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.resize(max(width, view.minimumWidth()), max(height, view.minimumHeight()))
    view.set_presentation(shown.presentation())
    view.show()
    try:
        with view.export_style(background):
            for k, frame in enumerate(frames):
                if progress is not None and progress(k, total) is False:
                    raise AnimationCancelled("export cancelled")
                panel.show_frame_in(view, frame)
                yield render_image(view, options.width_px, background=background, caption=options.caption)
        if progress is not None:
            progress(total, total)
    finally:
        view.close()
        view.deleteLater()


def durations(count: int, step_ms: int) -> list[int]:
    """Milliseconds each frame stays up: the start and the last step :data:`HOLD_STEPS` times
    as long as the others."""
    out = [step_ms] * count
    if count:
        out[0] = out[-1] = step_ms * HOLD_STEPS
    return out


def sequence_paths(path, count: int) -> list[Path]:
    """``dir/name.png`` -> ``dir/name_000.png`` ... (at least three digits, as many as needed)."""
    path = Path(path)
    stem = path.stem if path.suffix.lower() == ".png" else path.name
    digits = max(3, len(str(max(0, count - 1))))
    return [path.with_name(f"{stem}_{k:0{digits}d}.png") for k in range(count)]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _chunks(png: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(type, data) of every chunk of a PNG file."""
    if png[:8] != PNG_SIGNATURE:
        raise ExportError("a frame did not encode as PNG")
    at = 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        yield png[at + 4:at + 8], png[at + 8:at + 8 + length]
        at += 12 + length


def _text_chunk(key: str, value: str) -> bytes:
    try:
        return _chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1"))
    except UnicodeEncodeError:  # international text: iTXt, UTF-8, uncompressed
        return _chunk(b"iTXt", key.encode("latin-1") + b"\0\0\0\0\0" + value.encode("utf-8"))


def write_apng(frames: Iterator[Image.Image], count: int, delays_ms: list[int],
               texts: dict[str, str]) -> bytes:
    """An animated PNG of ``count`` same-size frames, looping, each up ``delays_ms[k]``.

    Each frame is a whole image (no deltas; blend "source", dispose "none"); the first is
    also the still image a viewer without APNG support shows. ``texts`` go in text chunks."""
    out = bytearray(PNG_SIGNATURE)
    sequence = 0
    size = None
    written = 0
    for k, image in enumerate(frames):
        encoded = io.BytesIO()
        image.convert("RGB").save(encoded, format="PNG", compress_level=6)
        chunks = list(_chunks(encoded.getvalue()))
        header = next(data for kind, data in chunks if kind == b"IHDR")
        if size is None:
            size = header
            out += _chunk(b"IHDR", header)
            out += _chunk(b"acTL", struct.pack(">II", count, 0))
            for key, value in texts.items():
                out += _text_chunk(key, value)
        elif header != size:
            raise ExportError("the frames of an animation must all have the same size")
        width, height = struct.unpack(">II", header[:8])
        # the delay as a fraction of seconds: centiseconds, as GIF counts them
        control = struct.pack(">IIIIIHHBB", sequence, width, height, 0, 0, round(delays_ms[k] / 10), 100, 0, 0)
        out += _chunk(b"fcTL", control)
        sequence += 1
        for kind, data in chunks:
            if kind != b"IDAT":
                continue
            if k == 0:
                out += _chunk(b"IDAT", data)
            else:
                out += _chunk(b"fdAT", struct.pack(">I", sequence) + data)
                sequence += 1
        written += 1
    if written != count:
        raise ExportError(f"expected {count} frames, drew {written}")
    out += _chunk(b"IEND", b"")
    return bytes(out)


def export_animation(panel: CollectivePanel, path, options: AnimationOptions | None = None, *,
                     progress: Callable[[int, int], bool] | None = None, **changes) -> list[Path]:
    """Write ``panel``'s animation to ``path`` (no dialog) and return the files written: one
    for GIF and APNG, one per frame for a PNG sequence (``path`` names the first: ``x.png``
    gives ``x_000.png``, ``x_001.png`` ...). ``changes`` override fields of ``options``
    (``fmt="gif", width_px=800``). Raises ``ValueError`` for bad options,
    :class:`ui.export.ExportError` when a file cannot be written, :class:`AnimationCancelled`
    when ``progress`` returns False."""
    options = replace(options or AnimationOptions(), **changes).checked()
    path = Path(path)
    if not path.parent.is_dir():
        raise ExportError(f"{path}: folder {path.parent} does not exist")
    count = len(panel.frames())
    texts = {"Software": SOFTWARE, "Title": f"{panel.title}: {panel.collective().label}",
             "scaling-workbench-kind": panel.kind}
    images = render_frames(panel, options, progress)
    if options.fmt == "png_sequence":
        paths = sequence_paths(path, count)
        encoded = []
        for k, image in enumerate(images):
            scenario = panel.scenario().with_changes(step=k)
            for key, value in {**texts, SCENARIO_KEY: scenario.to_json()}.items():
                image.setText(key, value)
            encoded.append(encode_png(image))
        for target, data in zip(paths, encoded, strict=True):
            write_export(target, data, "animation frame")
        return paths
    pil_frames = (to_pil(image) for image in images)
    delays = durations(count, options.step_ms)
    if options.fmt == "apng":
        texts[SCENARIO_KEY] = panel.scenario().with_changes(step=0).to_json()
        write_export(path, write_apng(pil_frames, count, delays, texts), "animation")
        return [path]
    # flat colours and text: an adaptive palette per frame, no dithering
    quantized = (im.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
                 for im in pil_frames)
    first = next(quantized)
    buffer = io.BytesIO()
    first.save(buffer, format="GIF", save_all=True, append_images=quantized, duration=delays, loop=0,
               disposal=1, optimize=False, comment=f"{texts['Title']} ({SOFTWARE})")
    write_export(path, buffer.getvalue(), "animation")
    return [path]


# -- the dialog ---------------------------------------------------------------------------------
class AnimationExportDialog(QDialog):
    """Format, pixel width, time per step, caption (title and assumptions) and background of
    an animation export."""

    def __init__(self, parent: QWidget | None = None, options: AnimationOptions | None = None,
                 steps: int = 0):
        super().__init__(parent)
        options = options or AnimationOptions()
        self.setWindowTitle("Export animation")
        self.setObjectName("animationExportDialog")
        self.format_combo = QComboBox(self)
        self.format_combo.setObjectName("animationFormat")
        for key, text in FORMAT_LABELS.items():
            self.format_combo.addItem(text, key)
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData(options.fmt)))
        self.width_field = IntField(self, label="Width", minimum=MIN_WIDTH, maximum=MAX_WIDTH, unit="")
        self.width_field.setObjectName("animationWidth")
        self.width_field.setValue(options.width_px)
        self.width_field.edit.setToolTip("Pixel width of every frame; slides want 1920")
        self.step_field = IntField(self, label="Time per step", minimum=20, maximum=30_000, unit="")
        self.step_field.setObjectName("animationStepMs")
        self.step_field.setValue(options.step_ms)
        self.step_field.edit.setToolTip("How long each step stays up (the start and the last step twice as long)")
        self.title_edit = QLineEdit(options.caption.title, self)
        self.title_edit.setObjectName("animationTitle")
        self.title_edit.setToolTip("The slide title over every frame; leave both lines empty for no caption")
        self.assumptions_edit = QLineEdit(options.caption.assumptions, self)
        self.assumptions_edit.setObjectName("animationAssumptions")
        self.assumptions_edit.setToolTip("One line of what the animation assumes, under the title")
        self.background_combo = QComboBox(self)
        self.background_combo.setObjectName("animationBackground")
        for text, key in BACKGROUNDS:
            self.background_combo.addItem(text, key)
        self.background_combo.setCurrentIndex(max(0, self.background_combo.findData(options.background)))
        form = QFormLayout()
        form.addRow("Format", self.format_combo)
        form.addRow("Width (px)", self.width_field)
        form.addRow("Time per step (ms)", self.step_field)
        form.addRow("Title", self.title_edit)
        form.addRow("Assumptions", self.assumptions_edit)
        form.addRow("Background", self.background_combo)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self._steps = steps
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.export_button.setText("Export…")  # a file chooser follows
        self.export_button.setObjectName("animationExport")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.format_combo.currentIndexChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        frames = self._steps + 1
        if self.format_combo.currentData() == "png_sequence":
            self.note.setText(f"{frames} files, the start and one per step, numbered from 000; each "
                              "carries the scenario on its step.")
        else:
            self.note.setText(f"{frames} frames: the start and one per step, looping.")

    def _accept(self) -> None:
        if self.width_field.edit.commit() and self.step_field.edit.commit():
            self.accept()

    def options(self) -> AnimationOptions:
        return AnimationOptions(
            fmt=self.format_combo.currentData(),
            width_px=int(self.width_field.value() or MIN_WIDTH),
            caption=Caption(self.title_edit.text(), self.assumptions_edit.text()),
            step_ms=int(self.step_field.value() or 1000),
            background=self.background_combo.currentData(),
        )


def ask_animation_options(parent: QWidget | None, options: AnimationOptions, steps: int = 0) -> AnimationOptions | None:
    """The options the user picks (None when cancelled). Tests replace this function."""
    dialog = AnimationExportDialog(parent, options, steps)
    try:
        return dialog.options() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def export_animation_interactive(panel: CollectivePanel, defaults: AnimationOptions) -> list[Path] | None:
    """Ask for the options and the file, export with a progress dialog; the files written,
    or None (cancelled, or failed: the reason is shown in a message)."""
    from ui import dialogs

    options = ask_animation_options(panel, defaults, len(panel.frames()) - 1)
    if options is None:
        return None
    suggested = f"{panel.kind}-{panel.collective().value}{SUFFIXES[options.fmt]}"
    path = dialogs.ask_save_path(panel, "Export animation", FORMATS[options.fmt], suggested)
    if not path:
        return None
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(SUFFIXES[options.fmt])
    count = len(panel.frames())
    progress = QProgressDialog("Drawing the frames…", "Cancel", 0, count, panel)
    progress.setObjectName("animationProgress")
    progress.setWindowTitle("Export animation")
    progress.setWindowModality(Qt.WindowModality.WindowModal)
    progress.setMinimumDuration(400)

    def report(done: int, total: int) -> bool:
        progress.setValue(done)
        return not progress.wasCanceled()

    try:
        return export_animation(panel, path, options, progress=report)
    except AnimationCancelled:
        return None
    except (OSError, ValueError) as exc:
        dialogs.show_message(panel, "Export failed", str(exc))
        return None
    finally:
        progress.reset()
        progress.deleteLater()


__all__ = [
    "AnimationCancelled", "AnimationExportDialog", "AnimationOptions", "FORMATS", "ask_animation_options",
    "durations", "export_animation", "export_animation_interactive", "render_frames", "sequence_paths",
    "to_pil", "write_apng",
]
