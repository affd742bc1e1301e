"""A PNG encoder for opaque chart images: the export's largest cost, made smaller.

Qt's PNG writer (libpng) un-premultiplies every pixel, tries five row filters on every row
and deflates 4 bytes a pixel: about half a second for a 3840 px chart on a 2-core laptop,
eight times the rendering. A chart exported on an opaque background has no use for alpha:
here its pixels go out as 8-bit RGB rows, unfiltered, deflated at zlib's default level in
independent pieces on the machine's cores (deflate releases the GIL), then joined into one
zlib stream. Files come out about as large as libpng's (mostly smaller: three bytes a pixel,
not four) in a third to a half of the time. The text chunks (the scenario JSON, title, software) and the resolution
(pHYs) are written as Qt writes them, so ``QImageReader`` reads them back the same.
"""

from __future__ import annotations

import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PySide6.QtGui import QImage

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the deflate level (zlib's default, as Qt's writer uses)
_LEVEL = 6
#: pieces smaller than this are not worth a thread of their own
_MIN_PIECE = 4 * 2**20
#: beyond this many bytes of scanlines (a 10,000 x 8,000 px export) Qt's writer, which works a
#: row at a time, is used: this one holds the rows and their deflated copy in memory
_MAX_ROWS_BYTES = 256 * 2**20


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _text_chunk(key: str, value: str) -> bytes | None:
    """A tEXt chunk (Latin-1) or, for other characters, an iTXt chunk (UTF-8); None for a
    key PNG does not allow (1 to 79 Latin-1 characters)."""
    try:
        keyword = key.encode("latin-1")
    except UnicodeEncodeError:
        return None
    if not 1 <= len(keyword) <= 79 or b"\0" in keyword:
        return None
    try:
        return _chunk(b"tEXt", keyword + b"\0" + value.encode("latin-1"))
    except UnicodeEncodeError:
        # no compression, no language tag, no translated keyword
        return _chunk(b"iTXt", keyword + b"\0\0\0\0\0" + value.encode("utf-8"))


def _rgb_rows(image: QImage) -> np.ndarray | None:
    """The image's rows as PNG scanlines (filter byte 0, then R, G, B per pixel), or None
    when a pixel is not opaque (or the format is not one of Qt's 32-bit ARGB/RGB ones)."""
    formats = (QImage.Format.Format_ARGB32_Premultiplied, QImage.Format.Format_ARGB32, QImage.Format.Format_RGB32)
    if image.format() not in formats or image.isNull():
        return None
    height, width = image.height(), image.width()
    if height * (1 + 3 * width) > _MAX_ROWS_BYTES:
        return None
    stride = image.bytesPerLine()
    pixels = np.frombuffer(image.constBits(), dtype=np.uint8, count=stride * height)
    # Qt's 32-bit formats are 0xAARRGGBB words in the machine's own byte order
    pixels = pixels.reshape(height, stride)[:, :width * 4].view(np.uint32)
    if image.format() != QImage.Format.Format_RGB32 and (pixels >> 24).min() != 255:
        return None  # see-through pixels: libpng writes them (RGBA, un-premultiplied)
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0  # filter: none
    rgb = rows[:, 1:].reshape(height, width, 3)
    rgb[:, :, 0] = pixels >> 16
    rgb[:, :, 1] = pixels >> 8
    rgb[:, :, 2] = pixels
    return rows


def _deflate(data: memoryview) -> bytes:
    """One zlib stream of ``data``: pieces deflated side by side (each a raw deflate stream
    ending on a byte boundary, the last one final), behind one header and Adler-32."""
    workers = max(1, min(os.cpu_count() or 1, 4, len(data) // _MIN_PIECE))
    size = -(-len(data) // workers)
    pieces = [data[i:i + size] for i in range(0, len(data), size)] or [data]

    def deflate(index: int) -> bytes:
        packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15)
        last = index == len(pieces) - 1
        return packer.compress(pieces[index]) + packer.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    if len(pieces) == 1:
        body = [deflate(0)]
    else:
        with ThreadPoolExecutor(max_workers=len(pieces)) as pool:
            body = list(pool.map(deflate, range(len(pieces))))
    return b"\x78\x9c" + b"".join(body) + struct.pack(">I", zlib.adler32(data))


def encode_opaque(image: QImage) -> bytes | None:
    """The PNG file of ``image`` as 8-bit RGB, with its text chunks and resolution; None
    when this encoder does not apply (pixels that are not opaque, another pixel format, a
    text key PNG does not allow): the caller then uses Qt's writer."""
    texts = []
    for key in image.textKeys():
        chunk = _text_chunk(key, image.text(key))
        if chunk is None:
            return None
        texts.append(chunk)
    rows = _rgb_rows(image)
    if rows is None:
        return None
    header = struct.pack(">IIBBBBB", image.width(), image.height(), 8, 2, 0, 0, 0)
    parts = [_SIGNATURE, _chunk(b"IHDR", header)]
    x, y = image.dotsPerMeterX(), image.dotsPerMeterY()
    if x > 0 and y > 0:
        parts.append(_chunk(b"pHYs", struct.pack(">IIB", x, y, 1)))  # 1: per metre
    parts += texts
    parts.append(_chunk(b"IDAT", _deflate(memoryview(rows).cast("B"))))
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)
