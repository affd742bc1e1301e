"""Export files as a user meets them: their mode, their physical size, a slide caption,
numbers without float noise, and a full disk that keeps the previous file and says so.

The command line runs in process (``ui.cli.main``), the GUI through the panel's Export
menu with the dialogs answered; a full disk is simulated where the atomic write meets it
(``os.fsync`` or the write itself failing with ENOSPC for files in the export folder).
"""

from __future__ import annotations

import errno
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import run
from PySide6.QtGui import QImage

from storage import Project
from ui import dialogs, export
from ui import theme as th
from ui.charts import Chart
from ui.cli import main

POWER = "Power cap sweep, 8 H100"
ALLREDUCE = "All-reduce 1 GiB over NVLink 4"


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


@pytest.fixture
def umask():
    """Set the process umask for one test, restored after."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(saved)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _fd_path(fd: int) -> Path:
    return Path(os.readlink(f"/proc/self/fd/{fd}"))


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(folder)``: from now on the disk holding ``folder`` is full. Files written
    there fail where a full disk fails them: the fsync (delayed allocation) or, with
    ``at="write"``, the write itself; other files (the project) are untouched."""

    def fill(folder: Path, at: str = "fsync") -> None:
        folder = folder.resolve()
        if at == "fsync":
            real_fsync = os.fsync

            def fsync(fd):
                if _fd_path(fd).parent == folder and _fd_path(fd).is_file():
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real_fsync(fd)

            monkeypatch.setattr(os, "fsync", fsync)
        else:
            real_write = Path.write_bytes

            def write_bytes(self, data):
                if Path(self).resolve().parent == folder:
                    with open(self, "wb") as fh:
                        fh.write(data[: len(data) // 3])  # some of it fits, then the disk is full
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
                return real_write(self, data)

            monkeypatch.setattr(Path, "write_bytes", write_bytes)

    return fill


# -- file mode and durability ------------------------------------------------------------------
def test_exports_get_the_users_normal_file_mode(project, tmp_path, umask):
    umask(0o027)
    png, svg, table = tmp_path / "a.png", tmp_path / "a.svg", tmp_path / "a.csv"
    code, _, err = run("export", project, "--scenario", POWER, "--png", png, "--width", 640, "--svg", svg,
                       "--csv", table)
    assert code == 0, err
    assert [_mode(p) for p in (png, svg, table)] == [0o640] * 3  # 0o666 less the umask, not 0600

    umask(0o022)
    png.chmod(0o600)  # a file the user made private stays private when it is replaced
    code, _, err = run("export", project, "--scenario", POWER, "--png", png, "--width", 640, "--svg", svg)
    assert code == 0, err
    assert _mode(png) == 0o600 and _mode(svg) == 0o640


def test_each_export_is_fsynced_before_it_replaces_the_file(project, tmp_path, monkeypatch):
    synced: list[Path] = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(_fd_path(fd))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "chart.svg"
    code, _, err = run("export", project, "--scenario", POWER, "--svg", target)
    assert code == 0, err
    # a temporary file beside the target was synced (then renamed over it), and the folder
    temps = [p for p in synced if p.parent == tmp_path.resolve() and p.name.startswith("chart.svg")]
    assert temps and all(p.name != "chart.svg" for p in temps)
    assert tmp_path.resolve() in synced
    assert [p.name for p in tmp_path.iterdir()] == ["chart.svg"]


# -- full disk ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["svg", "png", "csv"])
def test_a_full_disk_fails_in_one_line_and_keeps_the_previous_file(fmt, project, tmp_path, full_disk):
    target = tmp_path / f"chart.{fmt}"
    code, _, err = run("export", project, "--scenario", POWER, f"--{fmt}", target, "--width", 640)
    assert code == 0, err
    good = target.read_bytes()
    assert len(good) > 100

    full_disk(tmp_path)
    code, out, err = run("export", project, "--scenario", ALLREDUCE, f"--{fmt}", target, "--width", 640)
    assert code == 1
    assert "wrote" not in out
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"scaling-workbench: {target}: ")
    assert "disk full" in err and "libpng" not in err and "unchanged" in err
    assert target.read_bytes() == good  # the good file is still there, whole
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left


def test_a_write_that_hits_a_full_disk_leaves_no_cut_file(project, tmp_path, full_disk):
    full_disk(tmp_path, at="write")
    target = tmp_path / "new.png"
    code, out, err = run("export", project, "--scenario", POWER, "--png", target, "--width", 640)
    assert code == 1 and out == ""
    assert "disk full" in err and "nothing was written" in err
    assert list(tmp_path.iterdir()) == []


def test_the_gui_export_reports_a_full_disk_and_keeps_the_file(qtbot, project, tmp_path, full_disk,
                                                                monkeypatch, umask):
    from ui.main_window import MainWindow

    messages = []
    target = tmp_path / "power.svg"
    monkeypatch.setattr(dialogs, "get_export_options",
                        lambda parent, fmt, **k: dialogs.ExportOptions(fmt, 1200, "white"))
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a, **k: str(target))
    monkeypatch.setattr(dialogs, "show_message", lambda parent, title, text, **k: messages.append((title, text)))
    monkeypatch.setattr(dialogs, "ask_save_changes", lambda *a, **k: dialogs.DISCARD)
    umask(0o022)
    window = MainWindow(Project.open(project))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    window.raise_panel("power")
    panel = window.panel("power")
    shown = [c.size() for c in (panel.chart, panel.rate_chart)]
    panel.action_export_svg.trigger()  # the panel's Export menu, SVG drawing…
    assert not messages
    root = ET.parse(target).getroot()
    assert root.get("width").endswith("mm") and _mode(target) == 0o644
    # however small the dock, the drawing is a chart's size, and the panel is as it was
    assert float(root.get("viewBox").split()[2]) >= export.MIN_EXPORT_SIZE.width()
    assert [c.size() for c in (panel.chart, panel.rate_chart)] == shown
    good = target.read_bytes()

    full_disk(tmp_path)
    window.panel("power").action_export_svg.trigger()
    assert len(messages) == 1
    title, text = messages[0]
    assert title == "Export failed" and str(target) in text and "disk full" in text
    assert target.read_bytes() == good


def test_a_chart_squeezed_in_its_dock_exports_at_a_readable_size(qtbot, project, tmp_path):
    from ui.main_window import MainWindow

    window = MainWindow(Project.open(project))
    qtbot.addWidget(window)
    window.resize(1600, 900)
    window.show()
    qtbot.waitExposed(window)
    chart = window.panel("scaling").chart_for_export()
    shown = chart.size()
    assert min(shown.width(), shown.height()) < 200  # docks share the window: this one is a sliver
    png = window.export_active("png", tmp_path / "scaling.png", 1600, kind="scaling")
    image = QImage(str(png))
    assert image.width() == 1600
    # laid out at least 400 x 240 for the export: a chart, not its axis titles magnified
    assert 1600 / image.dotsPerMeterX() / 0.0254 * 96 >= export.MIN_EXPORT_SIZE.width() - 1
    colours = {image.pixelColor(x, y).name() for x in range(0, 1600, 3) for y in range(0, image.height(), 3)}
    assert "#0072b2" in colours and len(colours) > 30  # the Amdahl curve, in colour
    assert chart.size() == shown  # and the dock is as it was


# -- physical size -----------------------------------------------------------------------------
def test_svg_is_96_dpi_and_png_says_its_resolution(qtbot, tmp_path):
    chart = Chart(title="Throughput", x_label="GPUs", y_label="Tokens", y_unit="tokens/s")
    qtbot.addWidget(chart)
    chart.resize(1022, 500)
    chart.add_series("rate", [1, 2, 4, 8], [1e3, 1.9e3, 3.6e3, 6.8e3])
    svg = export.export_svg(chart, tmp_path / "c.svg")
    root = ET.parse(svg).getroot()
    assert root.get("viewBox").split()[2:] == ["1022", "500"]
    assert float(root.get("width").removesuffix("mm")) == pytest.approx(1022 / 96 * 25.4, abs=0.01)  # 270 mm, not 360
    assert float(root.get("height").removesuffix("mm")) == pytest.approx(500 / 96 * 25.4, abs=0.01)

    png = export.export_png(chart, tmp_path / "c.png", 2044)
    image = QImage(str(png))
    assert image.width() == 2044
    assert image.dotsPerMeterX() * 0.0254 == pytest.approx(192, abs=0.1)  # twice the pixels: 2 x 96 dpi
    assert image.dotsPerMeterY() == image.dotsPerMeterX()


# -- slide caption -----------------------------------------------------------------------------
def test_a_caption_takes_a_band_above_the_chart_at_the_size_asked(qtbot, tmp_path):
    chart = Chart(title="Speedup", x_label="GPUs", y_label="Speedup")
    qtbot.addWidget(chart)
    chart.resize(800, 450)
    chart.add_series("Amdahl", [1, 2, 4, 8], [1, 1.9, 3.5, 5.9])
    caption = export.Caption("Eight GPUs are enough", "NVIDIA H100 SXM · 8 GPUs · BF16")
    plain = QImage(str(export.export_png(chart, tmp_path / "plain.png", 1600)))
    slide = QImage(str(export.export_png(chart, tmp_path / "slide.png", 1600, caption=caption)))
    assert plain.height() == 900 and slide.height() > 960  # the chart keeps its height, the band adds
    assert slide.text("Title") == "Eight GPUs are enough"
    assert slide.text("Description") == "NVIDIA H100 SXM · 8 GPUs · BF16"
    fixed = QImage(str(export.export_png(chart, tmp_path / "fixed.png", 1920, height_px=1080, caption=caption)))
    assert (fixed.width(), fixed.height()) == (1920, 1080)  # a slide's size, caption included
    assert chart.size().height() == 450  # and the chart is as it was
    svg = export.export_svg(chart, tmp_path / "slide.svg", caption=caption)
    texts = ["".join(e.itertext()) for e in ET.parse(svg).getroot().iter() if e.tag.endswith("}text")]
    assert "Eight GPUs are enough" in texts and any("8 GPUs" in t for t in texts)


def test_default_assumptions_read_like_a_slide_footnote():
    from workbench.plan import RunPlan
    from workbench.scenarios import AllReduceScenario, RooflineScenario

    plan = RunPlan(n_params=70.6e9, n_layers=80, d_model=8192, n_heads=64, seq_len=8192, hardware="h100-sxm",
                   n_gpus=1024, global_batch=1024, train_tokens=15e12)
    assert export.default_assumptions(plan, {"h100-sxm": "NVIDIA H100 SXM"}.get) == (
        "NVIDIA H100 SXM · 1,024 GPUs · BF16 · 70.6B parameters · 15T tokens")
    line = export.default_assumptions(AllReduceScenario(n_ranks=16, link_bw=50e9))
    assert line.startswith("All-reduce of 1 GiB") and "16 ranks" in line and "50 GB/s" in line
    assert export.default_assumptions(RooflineScenario(hardware=("h100-sxm", "b200"), sparse=True)) == (
        "h100-sxm vs b200 · BF16, 2:4 sparse")


# -- CSV numbers -------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "text"), [
    (424.9999999999999, "425"),
    (0.1 + 0.2, "0.3"),
    (2.0**40, "1099511627776"),  # a whole number stays exact
    (1e-7, "1e-07"),
    (989e12, "989000000000000"),
    (1 / 3, "0.333333333333"),
    (-2.5, "-2.5"),
    (float("nan"), ""),
])
def test_csv_numbers_are_short_and_exact_enough(value, text):
    assert export.format_number(value) == text


def test_a_panel_csv_starts_with_its_results_table(project, tmp_path):
    table = tmp_path / "power.csv"
    code, _, err = run("export", project, "--scenario", POWER, "--csv", table)
    assert code == 0, err
    lines = table.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "quantity,value,unit"
    results = dict((row.split(",")[0], row.split(",")[1:]) for row in lines[1:lines.index("")])
    assert results["Best cap for efficiency"] == ["425", "W"]  # what the panel's table shows
    assert results["Average GPU power"] == ["700", "W"]
    sweep = lines[lines.index("") + 1:]
    assert sweep[0].startswith("power cap (W),tokens per joule (tokens/J)")
    assert "425," in "\n".join(sweep) and "424.99" not in "\n".join(sweep)
