"""Headless exports for the command line: render a saved scenario's chart without a window.

``export_scenario`` opens the project (never modifying it), loads the scenario by name,
builds the matching panel on a :class:`~ui.catalog.HardwareCatalog` of the project, and
writes the requested files through :func:`ui.export.export_panel` (the panel's own
``export_to``, as the GUI's Export menu uses it): the chart as the panel shows it, with an
optional slide caption, and the numbers headed by the panel's results table. Every file is
written atomically; every failure is a :class:`HeadlessError` whose message is one line
naming the file and the problem, and a file that could not be written keeps its old content.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


class HeadlessError(Exception):
    """A headless export failed; ``str()`` is one line for stderr."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


@dataclass(frozen=True)
class ExportRequest:
    project: Path
    scenario: str
    kind: str | None = None
    png: Path | None = None
    width_px: int = 1920
    svg: Path | None = None
    csv: Path | None = None
    background: str = "white"
    #: a title above the chart (PNG/SVG): None for none, "" for the scenario's name
    title: str | None = None
    #: one line of assumptions under the title: None for none, "" for the scenario's own
    assumptions: str | None = None

    def outputs(self) -> list[tuple[str, Path]]:
        return [(fmt, path) for fmt, path in (("png", self.png), ("svg", self.svg), ("csv", self.csv))
                if path is not None]


def ensure_platform() -> None:
    """Use Qt's offscreen platform when there is no display (before Qt is imported)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def _check_output(path: Path) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise HeadlessError(f"{path}: is a folder, not a file name")
    if not folder.is_dir():
        raise HeadlessError(f"{path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise HeadlessError(f"{path}: the folder {folder} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise HeadlessError(f"{path}: the file exists and is not writable")


def _pick_record(project, request: ExportRequest):
    records = project.list_scenarios(request.kind)
    matches = [r for r in records if r.name == request.scenario]
    if not matches:
        names = sorted({r.name for r in records})
        have = ", ".join(names) if names else "no scenarios"
        where = f" of kind '{request.kind}'" if request.kind else ""
        raise HeadlessError(f"{request.project}: no scenario named '{request.scenario}'{where} (have: {have})")
    if len(matches) > 1:
        kinds = ", ".join(sorted(r.kind for r in matches))
        raise HeadlessError(f"{request.project}: scenario '{request.scenario}' exists for several panels "
                            f"({kinds}); choose one with --kind")
    return matches[0]


def export_scenario(request: ExportRequest) -> list[Path]:
    """Write the files of ``request``; returns their paths. Raises :class:`HeadlessError`."""
    outputs = request.outputs()
    if not outputs:
        raise HeadlessError(f"{request.project}: nothing to export; give --png, --svg and/or --csv")
    if not 16 <= request.width_px <= 16384:
        raise HeadlessError(f"--width must be between 16 and 16384 pixels, got {request.width_px}")
    for _fmt, path in outputs:
        _check_output(path)

    from storage import Project, ProjectError

    try:
        project = Project.open(request.project, read_only=True)  # export never changes the project
    except ProjectError as exc:
        raise HeadlessError(str(exc)) from None
    try:
        record = _pick_record(project, request)
        try:
            scenario = project.load_scenario(record.id)
        except ProjectError as exc:
            raise HeadlessError(str(exc)) from None
        return _render(project, scenario, request, outputs)
    finally:
        project.close(discard_recovery=False)


def _render(project, scenario, request: ExportRequest, outputs: list[tuple[str, Path]]) -> list[Path]:
    ensure_platform()
    from ui.app import create_application

    create_application([sys.argv[0] if sys.argv else "scaling-workbench"])
    from ui import theme
    from ui.catalog import HardwareCatalog
    from ui.export import Caption, ExportError, default_assumptions, export_panel
    from ui.panels import panel_by_kind

    cls = panel_by_kind().get(scenario.kind)
    if cls is None:
        raise HeadlessError(f"{request.project}: no panel shows scenarios of kind '{scenario.kind}'")
    from PySide6.QtWidgets import QApplication

    theme.apply_theme(QApplication.instance(), "light")
    catalog = HardwareCatalog(project)
    panel = cls(catalog, scenario)
    panel.resize(1600, 900)
    caption = None
    if request.title is not None or request.assumptions is not None:
        title = request.scenario if request.title == "" else (request.title or "")
        assumptions = request.assumptions
        if assumptions == "":
            assumptions = default_assumptions(scenario, catalog.name)
        caption = Caption(title, assumptions or "")
    written = []
    try:
        problem = panel.blocking_problem()
        if problem:
            raise HeadlessError(f"{request.project}: scenario '{request.scenario}' cannot be drawn: {problem}")
        for fmt, path in outputs:
            try:
                written.append(export_panel(panel, fmt, path, width_px=request.width_px,
                                            background=request.background, caption=caption))
            except ExportError as exc:
                raise HeadlessError(str(exc)) from None
            except OSError as exc:
                raise HeadlessError(f"{path}: could not write ({exc.strerror or exc})") from None
            except ValueError as exc:
                raise HeadlessError(f"{path}: {exc}") from None
    finally:
        panel.close()
        panel.deleteLater()
        catalog.deleteLater()
    return written
