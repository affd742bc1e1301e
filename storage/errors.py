"""Errors raised by the project file layer.

Every message is one line that names the file, says what is wrong and what to do, so the
UI can show it in a dialog and the command line can print it as is. ``path`` holds the file.
"""

from __future__ import annotations

from pathlib import Path


class ProjectError(Exception):
    """Base class: something is wrong with a project file or an operation on it."""

    def __init__(self, path: str | Path | None, problem: str, advice: str = ""):
        self.path = Path(path) if path is not None else None
        self.problem = problem
        self.advice = advice
        where = f"{self.path}: " if self.path is not None else ""
        text = f"{where}{problem}"
        if advice:
            text = f"{text}; {advice}"
        # One line, always: a hostile name or message must not break the CLI's contract.
        super().__init__(" ".join(text.split()))


class ProjectNotFoundError(ProjectError):
    """The file (or its folder) does not exist."""


class ProjectExistsError(ProjectError):
    """Creating a project would overwrite an existing file."""


class NotAProjectError(ProjectError):
    """The file is not a Scaling Workbench project (empty, text, image, foreign SQLite ...)."""


class CorruptProjectError(ProjectError):
    """The file looks like a project but its database is damaged (truncated, malformed)."""


class NewerVersionError(ProjectError):
    """The file was written by a newer schema than this version of the app can read."""

    def __init__(self, path: str | Path | None, found: int, supported: int):
        self.found = found
        self.supported = supported
        super().__init__(
            path,
            f"written by schema {found}; this version reads up to {supported}",
            "open it with a newer Scaling Workbench (the file was not changed)",
        )


class ProjectLockedError(ProjectError):
    """Another process holds a lock on the file."""


class ReadOnlyProjectError(ProjectError):
    """The project cannot be saved in place (file or folder not writable)."""


class ProjectChangedOnDiskError(ProjectError):
    """The file was changed (or removed) by another program since it was opened or last saved.

    ``Project.save(overwrite_external=True)`` overwrites it anyway; Save As keeps both.
    """


class ProjectSaveError(ProjectError):
    """Writing the project (or a copy of it) failed; the previous file is unchanged."""


class ItemNotFoundError(ProjectError):
    """No scenario or preset with that id, name or key."""


class NameConflictError(ProjectError):
    """A scenario of that kind, or a preset with that key, already exists."""


class BuiltinPresetError(ProjectError):
    """Built-in presets are read-only."""


class InvalidItemError(ProjectError):
    """A stored scenario or preset, or an imported scenario file, does not parse or validate."""


__all__ = [
    "ProjectError",
    "ProjectNotFoundError",
    "ProjectExistsError",
    "NotAProjectError",
    "CorruptProjectError",
    "NewerVersionError",
    "ProjectLockedError",
    "ReadOnlyProjectError",
    "ProjectSaveError",
    "ProjectChangedOnDiskError",
    "ItemNotFoundError",
    "NameConflictError",
    "BuiltinPresetError",
    "InvalidItemError",
]
