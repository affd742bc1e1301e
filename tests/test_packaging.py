"""Desktop integration: the files under packaging/ agree with the code, pass the freedesktop
validators, and ``install-desktop`` puts a working launcher, MIME type and icons in place."""

from __future__ import annotations

import configparser
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.models import APPLICATION_ID, FILE_SUFFIX
from ui.app import APP_ID, APP_NAME, HOMEPAGE, PROJECT_MIME_TYPE
from ui.desktop_install import PNG_SIZES, desktop_entry, exec_value, install, uninstall

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
MIME = PACKAGING / f"{APP_ID}.mime.xml"
ICON = PACKAGING / "icons/hicolor/scalable/apps" / f"{APP_ID}.svg"
MIME_NS = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}


def tool_or_skip(name: str, package: str) -> str:
    """A command-line tool from Debian: skipped with the reason where it is not installed;
    .ci/run installs it and sets SCALING_WORKBENCH_REQUIRE_REFERENCES, so there it must be."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("SCALING_WORKBENCH_REQUIRE_REFERENCES"):
            pytest.fail(f"{name} is required in CI and is missing (Debian package {package})")
        pytest.skip(f"{name} is not installed (Debian package {package}; .ci/run installs it)")
    return path


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _unescape_string(value: str) -> str:
    """The desktop entry spec's escapes of a string value (\\s \\n \\t \\r \\\\)."""
    out, i = [], 0
    table = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in table:
            out.append(table[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def _split_exec(value: str) -> list[str]:
    """An Exec value split into arguments as a launcher does it (quotes, escapes, %%)."""
    text = _unescape_string(value)
    args, current, quoted, started, i = [], [], False, False, 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
                current.append(text[i + 1])
                i += 1
            elif ch == '"':
                quoted = False
            else:
                current.append(ch)
        elif ch == '"':
            quoted = started = True
        elif ch == " ":
            if started:
                args.append("".join(current))
            current, started = [], False
        else:
            current.append(ch)
            started = True
        i += 1
    assert not quoted, f"unterminated quote in {value!r}"
    if started:
        args.append("".join(current))
    return [arg.replace("%%", "%") if arg != "%f" else arg for arg in args]


# -- the files agree with the code -----------------------------------------------------------
def test_packaging_is_data_only():
    # An __init__.py here would shadow PyPA's `packaging` when run from the repository root.
    assert not list(PACKAGING.rglob("__init__.py"))


def test_one_application_id_everywhere(qapp):
    from PySide6.QtGui import QGuiApplication

    from ui.app import create_application

    assert APP_ID == APP_ID.lower() and all(part.isalnum() and not part[0].isdigit()
                                             for part in APP_ID.split("."))
    assert len(APP_ID.split(".")) >= 3
    entry = _desktop_entry(DESKTOP)
    assert entry["Icon"] == APP_ID
    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    launchable = component.find("launchable")
    assert launchable.get("type") == "desktop-id" and launchable.text == DESKTOP.name
    assert ICON.is_file()
    mime_icon = ET.parse(MIME).getroot().find("m:mime-type/m:icon", MIME_NS)
    assert mime_icon.get("name") == APP_ID
    names = (qapp.applicationName(), qapp.organizationName(), qapp.desktopFileName())
    try:
        app = create_application()
        assert QGuiApplication.desktopFileName() == APP_ID
        assert app.applicationName() == APP_NAME == entry["Name"] == component.findtext("name")
        # Qt's X11 WM_CLASS class is the application name: the launcher finds its windows by it
        assert entry["StartupWMClass"] == APP_NAME
        assert not app.windowIcon().isNull()
        assert not app.windowIcon().pixmap(64, 64).isNull()
    finally:
        qapp.setApplicationName(names[0])
        qapp.setOrganizationName(names[1])
        qapp.setDesktopFileName(names[2])


def test_desktop_entry_is_complete():
    entry = _desktop_entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "scaling-workbench %f"
    assert entry["TryExec"] == "scaling-workbench"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")
    assert entry["MimeType"].split(";")[:-1] == [PROJECT_MIME_TYPE]


def test_metainfo_names_developer_homepage_binary_and_mime_type():
    component = ET.parse(METAINFO).getroot()
    assert component.get("type") == "desktop-application"
    assert component.find("developer").findtext("name").strip()
    assert component.find("url[@type='homepage']").text == HOMEPAGE
    assert component.findtext("provides/binary") == "scaling-workbench"
    assert component.findtext("provides/mediatype") == PROJECT_MIME_TYPE
    import workbench

    assert component.find("releases/release").get("version") == workbench.__version__


def _c_unescape(value: str) -> bytes:
    """shared-mime-info's string values: C escapes (octal, \\xNN) over ASCII text."""
    return value.encode("latin-1").decode("unicode_escape").encode("latin-1")


def test_mime_type_by_name_and_by_content():
    mime_type = ET.parse(MIME).getroot().find("m:mime-type", MIME_NS)
    assert mime_type.get("type") == PROJECT_MIME_TYPE
    assert mime_type.find("m:sub-class-of", MIME_NS).get("type") == "application/vnd.sqlite3"
    assert [g.get("pattern") for g in mime_type.findall("m:glob", MIME_NS)] == [f"*{FILE_SUFFIX}"]
    magic = mime_type.find("m:magic", MIME_NS)
    assert int(magic.get("priority")) > 50  # above application/vnd.sqlite3's own rule
    header = magic.find("m:match", MIME_NS)
    assert (header.get("type"), header.get("offset")) == ("string", "0")
    assert _c_unescape(header.get("value")) == b"SQLite format 3\0"
    app_id = header.find("m:match", MIME_NS)  # nested: both must hold
    assert (app_id.get("type"), app_id.get("offset")) == ("big32", "68")
    assert int(app_id.get("value"), 0) == APPLICATION_ID


def test_a_project_carries_what_the_magic_rule_looks_for(tmp_path):
    from storage import Project

    path = tmp_path / f"plan{FILE_SUFFIX}"
    Project.create(path).close()
    head = path.read_bytes()[:100]
    assert head[:16] == b"SQLite format 3\0"
    assert struct.unpack(">I", head[68:72])[0] == APPLICATION_ID


def test_icon_is_a_square_svg():
    root = ET.parse(ICON).getroot()
    assert root.tag.endswith("svg")
    assert root.get("width") == root.get("height")


# -- install-desktop ----------------------------------------------------------------------------
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1), min_size=1,
                max_size=4))
def test_exec_value_round_trips_any_command(command):
    assert _split_exec(exec_value(command)) == [*command, "%f"]


def test_exec_value_quotes_a_path_with_spaces():
    value = exec_value(["/home/a b/.venv/bin/scaling-workbench"])
    assert value == '"/home/a b/.venv/bin/scaling-workbench" %f'
    assert _split_exec(value) == ["/home/a b/.venv/bin/scaling-workbench", "%f"]


def test_installed_entry_points_at_this_installation(tmp_path):
    launcher = ["/opt/my apps/scaling-workbench"]
    text = desktop_entry(DESKTOP.read_text(encoding="utf-8"), launcher)
    path = tmp_path / DESKTOP.name
    path.write_text(text, encoding="utf-8")
    entry = _desktop_entry(path)
    assert _split_exec(entry["Exec"]) == [*launcher, "%f"]
    assert entry["TryExec"] == launcher[0]
    # everything else as packaged
    packaged = _desktop_entry(DESKTOP)
    assert {k: v for k, v in entry.items() if k not in ("Exec", "TryExec")} == \
           {k: v for k, v in packaged.items() if k not in ("Exec", "TryExec")}


def test_install_and_uninstall_for_the_user(tmp_path):
    from PySide6.QtGui import QImage

    home = tmp_path / "share"
    report = install(home, ["/usr/bin/scaling-workbench"])
    expected = {
        home / "applications" / f"{APP_ID}.desktop",
        home / "mime/packages" / f"{APP_ID}.xml",
        home / "metainfo" / f"{APP_ID}.metainfo.xml",
        home / "icons/hicolor/scalable/apps" / f"{APP_ID}.svg",
        *(home / f"icons/hicolor/{n}x{n}/apps" / f"{APP_ID}.png" for n in PNG_SIZES),
    }
    assert set(report.written) == expected
    assert all(path.is_file() for path in expected)
    for size in PNG_SIZES:
        image = QImage(str(home / f"icons/hicolor/{size}x{size}/apps" / f"{APP_ID}.png"))
        assert (image.width(), image.height()) == (size, size)
        assert image.pixelColor(size // 2, size // 2).alpha() > 0  # drawn, not transparent
    assert (home / "mime/packages" / f"{APP_ID}.xml").read_bytes() == MIME.read_bytes()
    if shutil.which("update-mime-database"):
        assert "update-mime-database" in report.refreshed
        assert (home / "mime/mime.cache").is_file()
    removed = uninstall(home)
    assert set(removed.removed) == expected
    assert not any(path.exists() for path in expected)


def _mime_of(files: list[Path], data_home: Path) -> list[str]:
    """Qt's MIME database in a fresh process that sees only ``data_home`` and the system's."""
    code = ("import sys\nfrom PySide6.QtCore import QMimeDatabase\ndb = QMimeDatabase()\n"
            "print('\\n'.join(db.mimeTypeForFile(f).name() for f in sys.argv[1:]))")
    env = dict(os.environ, XDG_DATA_HOME=str(data_home), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", code, *map(str, files)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_installed_mime_type_recognises_a_renamed_project(tmp_path):
    from storage import Project

    project = tmp_path / f"plan{FILE_SUFFIX}"
    Project.create(project).close()
    renamed = tmp_path / "plan-backup"
    shutil.copy(project, renamed)
    plain = tmp_path / "other.db"
    sqlite3.connect(plain).execute("CREATE TABLE t (x)").connection.close()
    home = tmp_path / "share"
    assert _mime_of([renamed], home)[0] != PROJECT_MIME_TYPE  # not before the install
    install(home, ["/usr/bin/scaling-workbench"])
    types = _mime_of([project, renamed, plain], home)
    assert types[:2] == [PROJECT_MIME_TYPE, PROJECT_MIME_TYPE]
    assert types[2] != PROJECT_MIME_TYPE  # an SQLite file that is not a project is not one


def test_install_desktop_command(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "ui.cli", "install-desktop"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    installed = tmp_path / "share/applications" / f"{APP_ID}.desktop"
    assert f"installed {installed}" in done.stdout.splitlines()
    command = _split_exec(_desktop_entry(installed)["Exec"])[:-1]
    # the environment's own launcher, or this interpreter running the module
    assert command in ([str(Path(sys.executable).with_name("scaling-workbench"))],
                       [sys.executable, "-m", "ui.cli"])
    done = subprocess.run([sys.executable, "-m", "ui.cli", "install-desktop", "--uninstall"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not installed.exists()


def test_install_desktop_failure_is_one_line(tmp_path):
    blocker = tmp_path / "share"
    blocker.write_text("a file where the data directory should be")
    env = dict(os.environ, XDG_DATA_HOME=str(blocker), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "ui.cli", "install-desktop"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scaling-workbench: ") and str(blocker) in lines[0]


# -- the freedesktop validators ------------------------------------------------------------------
def test_desktop_files_pass_desktop_file_validate(tmp_path):
    validate = tool_or_skip("desktop-file-validate", "desktop-file-utils")
    installed = tmp_path / DESKTOP.name
    installed.write_text(desktop_entry(DESKTOP.read_text(encoding="utf-8"), ["/opt/a b/scaling-workbench"]),
                         encoding="utf-8")
    for path in (DESKTOP, installed):
        done = subprocess.run([validate, str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        # hints are advice; errors and warnings are not allowed
        assert not [line for line in done.stdout.splitlines() if ": error:" in line or ": warning:" in line]


def test_metainfo_passes_appstreamcli_validate():
    appstreamcli = tool_or_skip("appstreamcli", "appstream")
    done = subprocess.run([appstreamcli, "validate", "--no-net", "--pedantic", "--no-color", str(METAINFO)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    issues = [line for line in done.stdout.splitlines() if line[:2] in ("E:", "W:", "P:")]
    assert not issues, done.stdout


def test_mime_xml_compiles_with_update_mime_database(tmp_path):
    update = tool_or_skip("update-mime-database", "shared-mime-info")
    (tmp_path / "mime/packages").mkdir(parents=True)
    shutil.copy(MIME, tmp_path / "mime/packages" / f"{APP_ID}.xml")
    done = subprocess.run([update, "-V", str(tmp_path / "mime")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Unknown" not in done.stderr and "Error" not in done.stderr, done.stderr
    compiled = (tmp_path / "mime/magic").read_bytes()
    assert b"[60:" + PROJECT_MIME_TYPE.encode() + b"]" in compiled
    assert b"SQLite format 3\0" in compiled and struct.pack(">I", APPLICATION_ID) in compiled


# -- About: what the app ships and under which licences ------------------------------------------
def test_about_text_names_the_version_and_every_bundled_licence():
    from importlib import metadata

    from PySide6.QtCore import qVersion

    import workbench
    from ui.about import LIBRARIES, about_text

    text = about_text()
    lines = text.splitlines()
    assert lines[0] == f"{APP_NAME} {workbench.__version__}"
    assert HOMEPAGE in lines
    assert f"  Qt {qVersion()} (LGPL-3.0-only)" in lines
    for name, distribution, licence in LIBRARIES:
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            assert f"  {name} " not in text
            continue
        assert f"  {name} {version} ({licence})" in lines
    for required in ("PySide6", "pyqtgraph", "numpy", "SQLAlchemy"):
        assert any(line.startswith(f"  {required} ") for line in lines), required
