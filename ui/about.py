"""What the About box says: the app's version and home, and the libraries it runs on with their
licences (the bundled build ships them all, so it must name them).

``about_text()`` is plain text (no markup: show it with ``Qt.PlainText``). Versions come from
the installed distributions' metadata, which the bundle carries too, so they are the versions
actually running. The licence texts of the libraries are in their metadata folders (in the
bundle under ``_internal/*.dist-info``); Qt's LGPL and the GPL it builds on are in
``licenses/`` beside them when the build machine had Debian's copies.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import workbench
from ui.app import APP_NAME, HOMEPAGE

APP_LICENCE = "MIT"


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    licence: str  # SPDX expression of the terms the app uses it under


# (shown name, distribution, licence). PySide6 and shiboken6 are offered under LGPL-3.0 or
# the GPL; the app uses them, and the Qt libraries inside the PySide6 wheel, under LGPL-3.0.
LIBRARIES: tuple[tuple[str, str, str], ...] = (
    ("PySide6", "PySide6-Essentials", "LGPL-3.0-only"),
    ("shiboken6", "shiboken6", "LGPL-3.0-only"),
    ("pyqtgraph", "pyqtgraph", "MIT"),
    ("numpy", "numpy", "BSD-3-Clause"),
    ("SQLAlchemy", "SQLAlchemy", "MIT"),
    ("platformdirs", "platformdirs", "MIT"),
    ("Pillow", "Pillow", "MIT-CMU"),
)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def components() -> list[Component]:
    """Qt, Python and each library that is installed, with its version and licence."""
    from PySide6.QtCore import qVersion

    found = [Component("Qt", qVersion(), "LGPL-3.0-only"),
             Component("Python", platform.python_version(), "PSF-2.0")]
    for name, distribution, licence in LIBRARIES:
        version = _version(distribution)
        if version is not None:
            found.append(Component(name, version, licence))
    return found


def licence_dir() -> Path | None:
    """The bundle's folder of licence texts (Qt's LGPL-3.0 and the GPL-3.0 it adds to)."""
    bundle = getattr(sys, "_MEIPASS", None)
    folder = Path(bundle) / "licenses" if bundle else None
    return folder if folder is not None and folder.is_dir() else None


def about_text() -> str:
    lines = [
        f"{APP_NAME} {workbench.__version__}",
        "Plan, measure and explain the performance of large GPU training runs.",
        HOMEPAGE,
        f"Licence: {APP_LICENCE}",
        "",
        "Built with:",
    ]
    lines += [f"  {c.name} {c.version} ({c.licence})" for c in components()]
    folder = licence_dir()
    if folder is not None:
        lines += ["", f"Licence texts: {folder}"]
    return "\n".join(lines)


__all__ = ["Component", "LIBRARIES", "about_text", "components", "licence_dir"]
