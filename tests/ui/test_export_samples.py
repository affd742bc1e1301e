"""``scaling-workbench export`` of every sample scenario, checked by what the files show.

A user makes a project with ``new``, reads the scenario names from ``list`` and exports each
one. The PNG must show the panel's chart (not a blank page, not one giant glyph): the
panel's series colours are there in quantity, the picture is as wide as asked and says its
resolution; the SVG carries the axis titles as text and says its physical size at 96 dpi;
the CSV starts with the panel's results table and holds numbers without float noise.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from ui import theme as th
from ui.cli import main
from ui.export import read_png_scenario
from workbench.scenarios import SCENARIO_TYPES

WIDTH = 1280

#: What each panel draws: words its SVG must hold as text (axis titles, or the animator's
#: labels), and palette colours its PNG must show, with how many pixels at least (at 1280 px:
#: a curve gives about a thousand, a marker about a hundred; a blank page or a lone glyph none).
EXPECTED = {
    "allreduce": (("Message size (B)", "Time (s)", "busbw"),
                  {th.BLUE: 800, th.ORANGE: 800, th.OPERATING_POINT: 50}),
    "power": (("Power cap (W)", "Tokens per joule", "Throughput (tokens/s)"),
              {th.BLUE: 500, th.ORANGE: 400, th.GREEN: 300, th.OPERATING_POINT: 80}),
    "roofline": (("Arithmetic intensity (FLOP/B)", "Attainable (FLOP/s)"), {th.GREEN: 900, th.BLUE: 60}),
    "scaling": (("GPUs (count)", "Speedup"), {th.BLUE: 400, th.GREEN: 600, th.OPERATING_POINT: 40}),
    "run_plan": (("Time in the step (s)",), {th.BLUE: 20000, th.ORANGE: 150}),
    "collective": (("rank 1", "slot 0"), {th.BLUE: 500, th.ORANGE: 400}),
    "measured": (("Step (count)", "Per GPU (tokens/s)", "MFU (%)"), {th.BLUE: 800, th.ORANGE: 600}),
}


def _run(*args) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(a) for a in args])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> tuple[Path, list[tuple[str, str]]]:
    """A project made by ``new`` and its scenarios as ``list`` prints them."""
    path = tmp_path_factory.mktemp("samples") / "samples.swbproj"
    code, _ = _run("new", path)
    assert code == 0
    code, listing = _run("list", path)
    assert code == 0
    rows = [tuple(line.split("\t", 1)) for line in listing.splitlines()]
    return path, rows


def _pixels(image: QImage) -> np.ndarray:
    """(height, width, 3) RGB of ``image``."""
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    raw = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    rows = raw.reshape(image.height(), image.bytesPerLine())
    # a copy: the buffer belongs to the converted image, freed when this function returns
    return rows[:, : image.width() * 3].reshape(image.height(), image.width(), 3).copy()


def _near(pixels: np.ndarray, colour: str, tolerance: int = 28) -> int:
    c = QColor(colour)
    target = np.array([c.red(), c.green(), c.blue()], dtype=np.int16)
    return int(np.count_nonzero(np.abs(pixels.astype(np.int16) - target).max(axis=2) <= tolerance))


def _hues(pixels: np.ndarray, least: int = 40) -> int:
    """How many of twelve hue sectors hold ``least`` strongly coloured pixels (saturated, not pale)."""
    rgb = pixels.reshape(-1, 3).astype(np.float64) / 255.0
    top, low = rgb.max(axis=1), rgb.min(axis=1)
    vivid = (top - low > 0.35) & (top > 0.3)
    r, g, b = rgb[vivid].T
    hue = (np.degrees(np.arctan2(np.sqrt(3) * (g - b), 2 * r - g - b)) + 360.0) % 360.0
    counts = np.bincount((hue // 30).astype(int), minlength=12)
    return int(np.count_nonzero(counts >= least))


def _svg_texts(root: ET.Element) -> list[str]:
    return [" ".join("".join(e.itertext()).split()) for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "text"]


_NUMBER = re.compile(r"^-?(\d+)(?:\.(\d+))?(?:e[-+]?\d+)?$")


def _significant_digits(text: str) -> int:
    """Significant digits of a number with a fraction or an exponent (0.30000000000000004: 17)."""
    m = _NUMBER.match(text)
    return len((m.group(1) + (m.group(2) or "")).lstrip("0"))


def _float_noise(text: str) -> bool:
    """A number that is a float's rounding error away from a short one: 424.9999999999999,
    0.30000000000000004, 1.2000000001e-05. Whole numbers (counts, byte sizes) are exact."""
    m = _NUMBER.match(text)
    if m is None or (m.group(2) is None and "e" not in text):
        return False
    return _significant_digits(text) > 12 or re.search(r"(0{6,}|9{6,})\d", m.group(2) or "") is not None


@pytest.mark.parametrize("kind", list(SCENARIO_TYPES))
def test_every_sample_exports_what_its_panel_shows(kind, samples, tmp_path):
    project, rows = samples
    names = [name for k, name in rows if k == kind]
    assert names, f"no sample scenario of kind {kind}"
    words, colours = EXPECTED[kind]
    for i, name in enumerate(names):
        png, svg, table = tmp_path / f"{i}.png", tmp_path / f"{i}.svg", tmp_path / f"{i}.csv"
        code, out = _run("export", project, "--scenario", name, "--kind", kind, "--png", png,
                         "--width", WIDTH, "--svg", svg, "--csv", table)
        assert code == 0, name
        assert out.splitlines() == [f"wrote {png}", f"wrote {svg}", f"wrote {table}"]

        # -- the SVG: the chart's text, its size in millimetres at 96 dpi
        root = ET.parse(svg).getroot()
        texts = _svg_texts(root)
        for word in words:
            assert any(word in t for t in texts), (name, word, texts)
        _, _, view_w, view_h = (float(v) for v in root.get("viewBox").split())
        assert view_w > 400 and view_h > 150, (name, view_w, view_h)  # a chart, not a 59 x 37 glyph
        width_mm = float(root.get("width").removesuffix("mm"))
        height_mm = float(root.get("height").removesuffix("mm"))
        assert width_mm == pytest.approx(view_w / 96 * 25.4, rel=1e-3), name
        assert height_mm == pytest.approx(view_h / 96 * 25.4, rel=1e-3), name

        # -- the PNG: as wide as asked, the chart's shape, its colours, its resolution
        image = QImage(str(png))
        assert image.width() == WIDTH, name
        assert image.height() == pytest.approx(WIDTH * view_h / view_w, abs=2), name
        pixels = _pixels(image)
        white = np.all(pixels >= 250, axis=2)
        assert 0.02 < 1 - white.mean() < 0.9, (name, 1 - white.mean())  # drawn on, and not a black page
        for colour, least in colours.items():
            assert _near(pixels, colour) >= least, (name, colour, _near(pixels, colour))
        assert _hues(pixels) >= 2, name  # in colour, not black on white
        dpi = image.dotsPerMeterX() * 0.0254
        assert dpi == pytest.approx(96 * WIDTH / view_w, rel=0.01), name  # pHYs: 96 dpi x the scale
        assert read_png_scenario(png) is not None

        # -- the CSV: the results table, then the data; no float noise
        with open(table, newline="", encoding="utf-8") as fh:
            lines = list(csv.reader(fh))
        assert lines[0] == ["quantity", "value", "unit"], name
        blank = lines.index([])
        results = lines[1:blank]
        assert len(results) >= 3, name
        assert any(_NUMBER.match(value.replace(",", "")) and unit for _, value, unit in results), name
        header, data = lines[blank + 1], lines[blank + 2:]
        assert data, name
        for h, column in zip(header, zip(*data, strict=True), strict=True):
            numbers = [v for v in column if _NUMBER.match(v)]
            if numbers:
                assert "(" in h and h.endswith(")"), (name, h)  # a numeric column names its unit
            noisy = [v for v in numbers if _float_noise(v)]
            assert not noisy, (name, h, noisy[:3])
