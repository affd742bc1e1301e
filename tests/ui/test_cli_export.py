"""``scaling-workbench export``: headless rendering from the command line, in a subprocess
exactly as a script or CI job would run it."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from storage import Project
from workbench.scenarios import PowerScenario, ScalingScenario

ROOT = Path(__file__).resolve().parents[2]
SCALING_NAME = "70B on 1,024 H100"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "ui.cli", *map(str, args)], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def project_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "plan.swbproj"
    with Project.create(path) as project:
        # the same name for two panels: needs --kind
        project.save_scenario("Shared name", ScalingScenario(n_gpus=64))
        project.save_scenario("Shared name", PowerScenario(n_gpus=32))
        project.save()
    return path


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "propagateSizeHints" not in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("scaling-workbench: ")
    return lines[0]


def test_export_writes_png_svg_csv_and_leaves_the_project_alone(project_path, tmp_path):
    before = _digest(project_path)
    png, svg, table = tmp_path / "chart.png", tmp_path / "chart.svg", tmp_path / "numbers.csv"
    result = run_cli("export", project_path, "--scenario", SCALING_NAME, "--png", png, "--width", "1000",
                     "--svg", svg, "--csv", table)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"wrote {png}", f"wrote {svg}", f"wrote {table}"]

    from PySide6.QtGui import QImage

    from ui.export import read_png_scenario

    image = QImage(str(png))
    assert not image.isNull() and image.width() == 1000
    scenario = json.loads(read_png_scenario(png))
    assert scenario["kind"] == "scaling" and scenario["n_gpus"] == 1024

    assert ET.parse(svg).getroot().tag.endswith("svg")

    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    # the panel's results table, an empty line, then the chart's numbers with units in the headers
    assert rows[0] == ["quantity", "value", "unit"]
    assert ["Amdahl speedup at 1,024 GPUs", "994", "×"] in rows[1:rows.index([])]
    header = rows[rows.index([]) + 1]
    numeric = [h for h in header if h != "series"]
    assert numeric and all(h.endswith(")") and "(" in h for h in numeric)
    assert len(rows) > rows.index([]) + 2

    assert _digest(project_path) == before  # opened read-only, never written
    assert not list(project_path.parent.glob("*.recovery"))


def test_default_width_is_1920_and_kind_picks_between_equal_names(project_path, tmp_path):
    png = tmp_path / "power.png"
    result = run_cli("export", project_path, "--scenario", "Shared name", "--kind", "power", "--png", png)
    assert result.returncode == 0, result.stderr
    from PySide6.QtGui import QImage

    from ui.export import read_png_scenario

    image = QImage(str(png))
    assert image.width() == 1920
    # the two charts, not a blank page: many colours, and the efficiency curve's blue
    sample = {image.pixelColor(x, y).name() for x in range(0, 1920, 4) for y in range(0, image.height(), 4)}
    assert len(sample) > 50 and "#0072b2" in sample
    assert json.loads(read_png_scenario(png))["kind"] == "power"


def test_ambiguous_name_asks_for_kind(project_path, tmp_path):
    line = _one_error_line(run_cli("export", project_path, "--scenario", "Shared name", "--csv",
                                   tmp_path / "x.csv"))
    assert "--kind" in line and "power" in line and "scaling" in line
    assert not (tmp_path / "x.csv").exists()


def test_unknown_scenario_lists_the_names(project_path, tmp_path):
    line = _one_error_line(run_cli("export", project_path, "--scenario", "Nope", "--png", tmp_path / "x.png"))
    assert f"{project_path}: no scenario named 'Nope' (have: " in line
    assert SCALING_NAME in line


def test_missing_file_not_a_project_no_output_unwritable(project_path, tmp_path):
    missing = tmp_path / "missing.swbproj"
    line = _one_error_line(run_cli("export", missing, "--scenario", SCALING_NAME, "--png", tmp_path / "a.png"))
    assert str(missing) in line

    text = tmp_path / "notes.swbproj"
    text.write_text("just some text\n")
    line = _one_error_line(run_cli("export", text, "--scenario", SCALING_NAME, "--png", tmp_path / "a.png"))
    assert str(text) in line and "not a Scaling Workbench project" in line

    line = _one_error_line(run_cli("export", project_path, "--scenario", SCALING_NAME))
    assert "--png" in line and "--csv" in line

    nowhere = tmp_path / "no-such-folder" / "a.png"
    line = _one_error_line(run_cli("export", project_path, "--scenario", SCALING_NAME, "--png", nowhere))
    assert str(nowhere) in line and "does not exist" in line
    assert not list(tmp_path.glob("*.png"))


def test_help_lists_export():
    result = run_cli("export", "--help")
    assert result.returncode == 0
    assert "--scenario" in result.stdout and "--width" in result.stdout


def test_a_scenario_that_cannot_be_drawn_fails_with_the_reason_and_writes_nothing(tmp_path):
    path = tmp_path / "plan.swbproj"
    with Project.create(path) as project:
        # a V100 has no BF16 rate for the 40% MFU to refer to
        project.save_scenario("V100 plan", PowerScenario(hardware="v100-sxm2", precision="bf16", throughput_mfu=0.4))
        project.save()
    png = tmp_path / "chart.png"
    line = _one_error_line(run_cli("export", path, "--scenario", "V100 plan", "--png", png))
    assert "V100 plan" in line and "cannot be drawn" in line and "no BF16 rate" in line
    assert not png.exists()
