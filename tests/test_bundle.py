"""Smoke test of the bundled build (PyInstaller, one folder), run as a user runs it.

The bundle is built by the README's command (``.ci/run`` builds it and sets
``SCALING_WORKBENCH_BUNDLE`` to its executable). Without it the tests are skipped with the
reason, except where ``SCALING_WORKBENCH_REQUIRE_REFERENCES`` is set (CI), where they fail.
Each command runs in a throw-away HOME, so the bundle never touches the user's files.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import workbench
from ui.app import APP_ID, QUIT_AFTER_START_ENV

TIMEOUT_S = 180


@pytest.fixture(scope="module")
def bundle() -> Path:
    value = os.environ.get("SCALING_WORKBENCH_BUNDLE", "")
    if not value:
        why = ("no bundle to test: build it with 'pyinstaller packaging/scaling-workbench.spec' and set "
               "SCALING_WORKBENCH_BUNDLE=dist/scaling-workbench/scaling-workbench")
        if os.environ.get("SCALING_WORKBENCH_REQUIRE_REFERENCES"):
            pytest.fail(f"the bundle is required in CI: {why}")
        pytest.skip(why)
    path = Path(value).resolve()
    assert path.is_file() and os.access(path, os.X_OK), f"{path} is not an executable"
    return path


@pytest.fixture
def run(bundle, tmp_path):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "QT_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               XDG_CACHE_HOME=str(home / "cache"), SCALING_WORKBENCH_DATA_DIR=str(home / "data" / "sw"))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)

    def run(*args: str, **extra_env: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bundle), *args], cwd=tmp_path, env={**env, **extra_env},
                              capture_output=True, text=True, timeout=TIMEOUT_S)

    return run


def test_version(run):
    done = run("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"scaling-workbench {workbench.__version__}"


def test_new_list_export(run, tmp_path, qapp):
    from PySide6.QtGui import QImage

    from ui.export import SCENARIO_KEY

    done = run("new", "plan.swbproj")
    assert done.returncode == 0, done.stderr
    assert "hardware presets" in done.stdout
    done = run("list", "plan.swbproj")
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert all(len(row) == 2 for row in rows) and len(rows) >= 5
    kind, name = next(row for row in rows if row[0] == "roofline")
    done = run("export", "plan.swbproj", "--scenario", name, "--kind", kind,
               "--png", "chart.png", "--width", "1600", "--svg", "chart.svg", "--csv", "chart.csv")
    assert done.returncode == 0, done.stderr
    image = QImage(str(tmp_path / "chart.png"))
    assert image.width() == 1600 and image.height() > 400
    colours = {image.pixel(x, y) for x in range(0, image.width(), 16) for y in range(0, image.height(), 16)}
    assert len(colours) > 8  # a chart, not a blank page
    assert json.loads(image.text(SCENARIO_KEY))["kind"] == "roofline"
    assert "<svg" in (tmp_path / "chart.svg").read_text(encoding="utf-8")[:2000]
    header = (tmp_path / "chart.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "," in header


def test_a_bad_file_is_one_line_on_stderr(run, tmp_path):
    (tmp_path / "junk.swbproj").write_text("not a project")
    done = run("list", "junk.swbproj")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "junk.swbproj" in done.stderr


def test_gui_starts_offscreen_and_quits_cleanly(run):
    done = run(**{QUIT_AFTER_START_ENV: "0", "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert "main window shown on the offscreen platform" in done.stderr
    for bad in ("Traceback", "Error", "QObject::", "QThread", "Segmentation", "Fatal Python"):
        assert bad not in done.stderr, done.stderr


def test_install_desktop_points_at_the_bundle(run, bundle, tmp_path):
    done = run("install-desktop")
    assert done.returncode == 0, done.stderr
    entry = (tmp_path / "home/data/applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    assert f"\nExec={bundle} %f\n" in entry or f'\nExec="{bundle}" %f\n' in entry
    png = tmp_path / "home/data/icons/hicolor/256x256/apps" / f"{APP_ID}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # QtSvg and the PNG writer are bundled


def test_bundle_carries_the_licences(bundle):
    internal = bundle.parent / "_internal"
    for distribution in ("pyside6_essentials", "pyqtgraph", "numpy", "sqlalchemy"):
        assert list(internal.glob(f"{distribution}-*.dist-info/METADATA")), distribution
    if Path("/usr/share/common-licenses/LGPL-3").is_file():  # what the spec copies in
        assert (internal / "licenses/LGPL-3").is_file() and (internal / "licenses/GPL-3").is_file()
