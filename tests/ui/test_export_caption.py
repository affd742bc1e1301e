"""A slide caption on an export: a title and one line of assumptions above the chart,
asked for with ``--title`` and ``--assumptions`` (the scenario's own when given no text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run
from PySide6.QtGui import QImage

from ui import theme as th
from ui.cli import main

POWER = "Power cap sweep, 8 H100"


@pytest.fixture(autouse=True)
def _light_theme(qapp):
    th.apply_theme(qapp, "light")
    yield
    th.apply_theme(qapp, "light")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("project") / "samples.swbproj"
    assert main(["new", str(path)]) == 0
    return path


def _dark_rows(image: QImage) -> np.ndarray:
    """Per row of the image, whether it holds dark (text) pixels."""
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    raw = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).reshape(image.height(), -1)
    return (raw[:, : image.width()] < 100).any(axis=1).copy()


def test_a_slide_caption_names_the_run_above_the_chart(project, tmp_path):
    plain, slide = tmp_path / "plain.png", tmp_path / "slide.png"
    svg = tmp_path / "slide.svg"
    assert run("export", project, "--scenario", POWER, "--png", plain, "--width", 1280)[0] == 0
    code, _, err = run("export", project, "--scenario", POWER, "--png", slide, "--svg", svg, "--width", 1280,
                       "--title", "--assumptions")
    assert code == 0, err
    a, b = QImage(str(plain)), QImage(str(slide))
    assert b.width() == 1280 and b.height() > a.height() + 40  # a band above the same chart
    band = b.height() - a.height()
    assert _dark_rows(b)[:band].sum() > 20 and not _dark_rows(a)[:8].any()  # text in the band
    # the defaults: the scenario's name, and what it assumes
    assert b.text("Title") == POWER
    line = b.text("Description")
    for part in ("NVIDIA H100 SXM", "8 GPUs", "BF16", "parameters", "tokens"):
        assert part in line, line
    texts = ["".join(e.itertext()) for e in ET.parse(svg).getroot().iter() if e.tag.endswith("}text")]
    assert any(POWER in t for t in texts) and any("8 GPUs" in t for t in texts)

    custom = tmp_path / "custom.png"
    code, _, err = run("export", project, "--scenario", POWER, "--png", custom, "--width", 1280,
                       "--title", "Cap the fleet at 425 W?")
    assert code == 0, err
    image = QImage(str(custom))
    assert image.text("Title") == "Cap the fleet at 425 W?" and image.text("Description") == ""
    assert a.height() < image.height() < b.height()  # a title alone takes less room
