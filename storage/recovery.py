"""Crash recovery files for unsaved work.

``Project.write_recovery()`` copies the working copy, atomically, to a recovery file:
``.NAME.swbproj.recovery`` beside the project when its folder is writable, otherwise
``recovery/`` under the data directory (named after a hash of the project's absolute
path). A recovery file is a complete project database, opened with the same checks as any
project. Saving or closing the project cleanly deletes it; after a crash it is still there
and newer than the project, which :func:`find_recovery` reports.

The timer lives in the UI: every few minutes (and before anything risky), while the project
is dirty, call ``project.write_recovery()``; on start-up, for the project about to open, call
``Project.recovery_for(path)`` and, if it returns a path, ask the user whether to restore it
(``Project.open(path, use_recovery=True)``) or discard it (``Project.discard_recovery(path)``).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

RECOVERY_SUFFIX = ".recovery"


def data_dir() -> Path:
    """The user data directory: $SCALING_WORKBENCH_DATA_DIR, else platformdirs' choice."""
    override = os.environ.get("SCALING_WORKBENCH_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("scaling-workbench", appauthor=False))


def _real(project_path: Path) -> Path:
    # Recovery files belong to the file a symbolic link points to, not to the link.
    return Path(os.path.realpath(project_path))


def _beside(project_path: Path) -> Path:
    project_path = _real(project_path)
    return project_path.with_name(f".{project_path.name}{RECOVERY_SUFFIX}")


def _in_data_dir(project_path: Path) -> Path:
    project_path = _real(project_path)
    digest = hashlib.sha256(str(project_path).encode("utf-8")).hexdigest()[:16]
    return data_dir() / "recovery" / f"{digest}-{project_path.name}{RECOVERY_SUFFIX}"


def candidates(project_path: Path) -> tuple[Path, Path]:
    """Where a recovery file for ``project_path`` may be, in order of preference."""
    return _beside(project_path), _in_data_dir(project_path)


def recovery_target(project_path: Path) -> Path:
    """Where to write the recovery file now (beside the project if the folder is writable)."""
    beside = _beside(project_path)
    if os.access(beside.parent, os.W_OK | os.X_OK):
        return beside
    target = _in_data_dir(project_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def find_recovery(project_path: Path) -> Path | None:
    """The newest recovery file that is newer than the project file, or None."""
    try:
        project_mtime = project_path.stat().st_mtime_ns
    except OSError:
        project_mtime = -1
    best: tuple[int, Path] | None = None
    for candidate in candidates(project_path):
        try:
            st = candidate.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # a folder or a named pipe by that name was never written by the app
        mtime = st.st_mtime_ns
        if mtime > project_mtime and (best is None or mtime > best[0]):
            best = (mtime, candidate)
    return best[1] if best else None


def discard_recovery(project_path: Path) -> None:
    """Delete any recovery file of ``project_path``."""
    for candidate in candidates(project_path):
        try:
            candidate.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass


__all__ = ["data_dir", "candidates", "recovery_target", "find_recovery", "discard_recovery"]
