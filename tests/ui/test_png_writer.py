"""The PNG encoder for opaque exports (ui.png_writer): what Qt reads back is what was drawn,
with every text chunk and the resolution; anything it does not handle goes to Qt's writer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPen

from ui import export, png_writer


def _drawn(width: int, height: int, fmt=QImage.Format.Format_ARGB32_Premultiplied) -> QImage:
    """An opaque picture with every kind of pixel a chart has: flat fill, antialiased lines
    and text, and a noisy band (incompressible rows)."""
    image = QImage(width, height, fmt)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    for i in range(12):
        painter.setPen(QPen(QColor.fromHsv(i * 30, 200, 180), 1.5 + i / 4))
        painter.drawLine(0, i * height // 12, width, height - i * height // 24)
    painter.drawText(20, 40, "ring ≥ tree, 1 KiB … 32 GiB")
    painter.end()
    noise = np.random.default_rng(7).integers(0, 256, size=(height // 8, width, 3), dtype=np.uint8)
    for y in range(noise.shape[0]):
        for x in range(0, width, max(1, width // 64)):
            r, g, b = (int(v) for v in noise[y, x])
            image.setPixelColor(x, height // 2 + y, QColor(r, g, b))
    return image


def _read(data: bytes) -> tuple[QImage, QImageReader]:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer, b"png")
    texts = {key: reader.text(key) for key in reader.textKeys()}  # read before the pixels
    image = reader.read()
    assert not image.isNull(), reader.errorString()
    return image, texts


@pytest.mark.parametrize("fmt", [QImage.Format.Format_ARGB32_Premultiplied, QImage.Format.Format_RGB32,
                                 QImage.Format.Format_ARGB32])
@pytest.mark.parametrize("size", [(1, 1), (37, 23), (2000, 1500)])
def test_an_opaque_picture_reads_back_pixel_for_pixel_with_its_texts_and_resolution(qapp, monkeypatch, fmt, size):
    monkeypatch.setattr(png_writer.os, "cpu_count", lambda: 4)  # a big one is deflated in pieces
    image = _drawn(*size, fmt)
    image.setDotsPerMeterX(7559)
    image.setDotsPerMeterY(7560)
    scenario = json.dumps({"name": "Größe ∑ 8×H100", "size_bytes": 2**30, "note": "a\nb"})
    texts = {"Software": "Scaling Workbench", "Title": "Bus bandwidth: 8 ranks", export.SCENARIO_KEY: scenario,
             "Description": "Ränge, ≥ 5 µs"}
    for key, value in texts.items():
        image.setText(key, value)
    data = png_writer.encode_opaque(image)
    assert data is not None and data[:8] == b"\x89PNG\r\n\x1a\n"
    back, read = _read(data)
    assert read == texts
    assert back.convertToFormat(QImage.Format.Format_RGB32) == image.convertToFormat(QImage.Format.Format_RGB32)
    assert (back.dotsPerMeterX(), back.dotsPerMeterY()) == (7559, 7560)
    assert not back.hasAlphaChannel()  # RGB: three bytes a pixel


def test_a_picture_with_see_through_pixels_or_a_key_png_cannot_hold_goes_to_qts_writer(qapp):
    clear = _drawn(40, 30)
    clear.setPixelColor(3, 4, QColor(10, 20, 30, 128))
    assert png_writer.encode_opaque(clear) is None
    back, _texts = _read(export.encode_png(clear))
    assert back.pixelColor(3, 4).alpha() == 128  # Qt's writer kept it
    odd_key = _drawn(40, 30)
    odd_key.setText("Schlüssel ∑", "value")
    assert png_writer.encode_opaque(odd_key) is None
    assert png_writer.encode_opaque(QImage(8, 8, QImage.Format.Format_Indexed8)) is None


def test_a_picture_too_big_to_hold_twice_in_memory_goes_to_qts_writer(qapp, monkeypatch):
    image = _drawn(300, 200)
    monkeypatch.setattr(png_writer, "_MAX_ROWS_BYTES", 200 * (1 + 3 * 300) - 1)
    assert png_writer.encode_opaque(image) is None
    back, _texts = _read(export.encode_png(image))  # Qt's writer, a row at a time
    assert back.convertToFormat(QImage.Format.Format_RGB32) == image.convertToFormat(QImage.Format.Format_RGB32)


def test_a_chart_export_is_written_by_the_fast_encoder_and_reads_as_drawn(chart, tmp_path):
    chart.add_series("ring", [1, 10, 100, 1000], [2, 20, 200, 2000])
    chart.set_operating_point(30.0, 60.0, "here")
    path = export.export_png(chart, tmp_path / "chart.png", 1280, scenario_json='{"k": 1}')
    image = export.render_image(chart, 1280)  # drawn as the export drew it
    data = path.read_bytes()
    assert data[12:16] == b"IHDR" and data[25] == 2  # 8-bit RGB: this encoder (Qt's writes RGBA)
    back, texts = _read(data)
    assert back.convertToFormat(QImage.Format.Format_RGB32) == image.convertToFormat(QImage.Format.Format_RGB32)
    assert export.read_png_scenario(path) == '{"k": 1}' and texts["Software"] == export.SOFTWARE
