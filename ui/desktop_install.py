"""``scaling-workbench install-desktop``: put the app in the user's menus and file manager.

Installs, for the current user only (the XDG data directory, ``~/.local/share`` unless
``XDG_DATA_HOME`` says otherwise):

- ``applications/<APP_ID>.desktop``, its ``Exec`` and ``TryExec`` pointing at the program
  that runs this command (the bundle's executable, or the virtual environment's
  ``scaling-workbench``), so the launcher works without the environment on ``PATH``;
- ``mime/packages/<APP_ID>.xml``, the project file's MIME type (by name and by content);
- ``icons/hicolor/scalable/apps/<APP_ID>.svg`` and PNG renderings of it at the usual sizes;
- ``metainfo/<APP_ID>.metainfo.xml``, the AppStream description.

It then refreshes the desktop's caches with ``update-mime-database``,
``update-desktop-database`` and ``gtk-update-icon-cache`` where they are installed (a missing
tool is skipped quietly: desktops also rescan at the next login). ``--uninstall`` removes the
same files. The source files are the ones under ``packaging/`` (or inside the bundle).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ui.app import APP_ID, packaging_dir

PNG_SIZES = (16, 24, 32, 48, 64, 128, 256)
TOOL_TIMEOUT_S = 60

# Characters that make an Exec argument need double quotes (Desktop Entry spec, "The Exec key").
_EXEC_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")


class InstallError(Exception):
    """Installing failed; ``str()`` is one line naming the file and the problem."""


@dataclass
class Report:
    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)  # the cache tools that ran


def data_home() -> Path:
    """``$XDG_DATA_HOME`` when it is an absolute path (the spec ignores a relative one)."""
    value = os.environ.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".local" / "share"


def launcher_command() -> list[str]:
    """The command that starts this same installation of the app."""
    if getattr(sys, "frozen", False):  # the PyInstaller bundle
        return [os.path.abspath(sys.executable)]
    # not resolve(): a virtual environment's python is a symlink to the base interpreter
    script = Path(os.path.abspath(sys.executable)).with_name("scaling-workbench")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [os.path.abspath(sys.executable), "-m", "ui.cli"]


def exec_value(command: list[str]) -> str:
    """``command`` as the value of a desktop entry's ``Exec`` key (quoted, escaped, then ``%f``)."""
    parts = []
    for arg in command:
        if "\n" in arg or "\r" in arg:
            raise InstallError(f"{arg!r}: a line break cannot be written in a desktop entry's Exec key")
        arg = arg.replace("%", "%%")
        if any(ch in _EXEC_RESERVED for ch in arg):
            arg = '"' + "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg) + '"'
        parts.append(arg)
    # the desktop file's own string escapes come on top of the Exec quoting
    return " ".join(parts).replace("\\", "\\\\") + " %f"


def desktop_entry(template: str, command: list[str]) -> str:
    """The packaged desktop entry with ``Exec``/``TryExec`` set to ``command``."""
    lines = []
    group = ""
    for line in template.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            group = stripped
        elif group == "[Desktop Entry]" and stripped.startswith("Exec="):
            line = "Exec=" + exec_value(command)
        elif group == "[Desktop Entry]" and stripped.startswith("TryExec="):
            line = "TryExec=" + command[0].replace("\\", "\\\\")
        lines.append(line)
    return "\n".join(lines) + "\n"


def _targets(home: Path) -> dict[str, Path]:
    icons = home / "icons" / "hicolor"
    targets = {
        "desktop": home / "applications" / f"{APP_ID}.desktop",
        "mime": home / "mime" / "packages" / f"{APP_ID}.xml",
        "metainfo": home / "metainfo" / f"{APP_ID}.metainfo.xml",
        "svg": icons / "scalable" / "apps" / f"{APP_ID}.svg",
    }
    for size in PNG_SIZES:
        targets[f"png{size}"] = icons / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    return targets


def _source_dir() -> Path:
    folder = packaging_dir()
    if folder is None:
        raise InstallError("the desktop files were not found: install-desktop runs from a clone of "
                           "the repository (packaging/) or from the bundled build")
    return folder


def _write(path: Path, data: bytes, report: Report) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise InstallError(f"{path}: {exc.strerror or exc}") from exc
    report.written.append(path)


def render_png(svg: Path, size: int) -> bytes:
    """The SVG icon drawn at ``size`` x ``size`` pixels, as PNG bytes (Qt, no window needed)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    if QGuiApplication.instance() is None:  # fonts and image plugins want one; never a window
        _keep.append(QGuiApplication(["scaling-workbench", "-platform", "offscreen"]))
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise InstallError(f"{svg}: not a readable SVG icon")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


_keep: list[object] = []  # the QGuiApplication render_png made, alive until the process ends


def _refresh(home: Path, report: Report) -> None:
    """Run the cache tools that are installed; a missing one is skipped without a word."""
    hicolor = home / "icons" / "hicolor"
    if hicolor.is_dir():
        os.utime(hicolor)  # the icon theme spec's signal that the folder changed
    steps = [
        (["update-mime-database", str(home / "mime")], home / "mime"),
        (["update-desktop-database", "-q", str(home / "applications")], home / "applications"),
    ]
    if (hicolor / "icon-theme.cache").exists():  # refresh a cache; never create one that goes stale
        steps.append((["gtk-update-icon-cache", "-q", "-t", "-f", str(hicolor)], hicolor))
    for command, folder in steps:
        tool = shutil.which(command[0])
        if tool is None or not folder.is_dir():
            continue
        try:
            done = subprocess.run([tool, *command[1:]], capture_output=True, text=True,
                                  timeout=TOOL_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InstallError(f"{folder}: {command[0]} did not run ({exc})") from exc
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise InstallError(f"{folder}: {command[0]} failed" + (f": {detail[-1]}" if detail else ""))
        report.refreshed.append(command[0])


def install(home: Path | None = None, command: list[str] | None = None) -> Report:
    """Install the launcher, MIME type, icons and metainfo under ``home`` (the XDG data dir)."""
    home = home if home is not None else data_home()
    command = command if command is not None else launcher_command()
    source = _source_dir()
    targets = _targets(home)
    report = Report()
    svg = source / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    try:
        template = (source / f"{APP_ID}.desktop").read_text(encoding="utf-8")
        files = {
            "desktop": desktop_entry(template, command).encode("utf-8"),
            "mime": (source / f"{APP_ID}.mime.xml").read_bytes(),
            "metainfo": (source / f"{APP_ID}.metainfo.xml").read_bytes(),
            "svg": svg.read_bytes(),
        }
    except OSError as exc:
        raise InstallError(f"{exc.filename or source}: {exc.strerror or exc}") from exc
    for size in PNG_SIZES:
        files[f"png{size}"] = render_png(svg, size)
    for key, data in files.items():
        _write(targets[key], data, report)
    _refresh(home, report)
    return report


def uninstall(home: Path | None = None) -> Report:
    """Remove what :func:`install` wrote under ``home``; files already gone are fine."""
    home = home if home is not None else data_home()
    report = Report()
    for path in _targets(home).values():
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InstallError(f"{path}: {exc.strerror or exc}") from exc
        report.removed.append(path)
    _refresh(home, report)
    return report


def run(args: argparse.Namespace) -> int:
    """The command line's handler: one line per file, one line on stderr for a failure."""
    try:
        report = uninstall() if args.uninstall else install()
    except InstallError as exc:
        print("scaling-workbench: " + " ".join(str(exc).split()), file=sys.stderr)
        return 1
    for path in report.written:
        print(f"installed {path}")
    for path in report.removed:
        print(f"removed {path}")
    if report.refreshed:
        print("refreshed with " + ", ".join(report.refreshed))
    return 0
