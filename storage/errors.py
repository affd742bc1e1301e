"""Errors raised by the project file layer.

Every message is one line that names the file, says what is wrong and what to do, so the
UI can show it in a dialog and the command line can print it as is. ``path`` holds the file.
"""

from __future__ import annotations

from pathlib import Path

# Names, kinds and other text taken from a file are shown up to this many characters.
SHOWN_CHARACTERS = 60
# The problem part of a message is cut at this many characters (a hostile file's text
# must not make a message of megabytes).
MAX_PROBLEM_CHARACTERS = 1000


def shorten(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was: "abc…(100000 characters)"."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text)} characters)"


def shown(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """A name or kind from a file, quoted and escaped for a one-line message, long ones cut.

    Text is quoted with ``repr`` (so control characters show as escapes such as ``\\x1b``);
    anything else a damaged file may hold (NULL, a BLOB, a number) is described instead.
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}…({len(value)} characters)"
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"a {len(value)}-byte BLOB"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"a {value.bit_length()}-bit number"  # repr() of a huge int fails or is huge
    try:
        return shorten(repr(value), limit)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__}"


class ProjectError(Exception):
    """Base class: something is wrong with a project file or an operation on it."""

    def __init__(self, path: str | Path | None, problem: str, advice: str = ""):
        self.path = Path(path) if path is not None else None
        problem = shorten(problem, MAX_PROBLEM_CHARACTERS)
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
    """Another program (or another copy of the app) holds a lock on the file: it is being
    written, or saved, right now. Nothing was written; trying again later may succeed."""


class ReadOnlyProjectError(ProjectError):
    """The project cannot be saved in place (file or folder not writable)."""


class ProjectChangedOnDiskError(ProjectError):
    """The file was changed (or removed) by another program since it was opened or last saved.

    ``Project.save(overwrite_external=True)`` overwrites it anyway; Save As keeps both.
    """


class ProjectSaveError(ProjectError):
    """Writing the project (or a copy of it) failed; a file that was there is unchanged."""


class ItemNotFoundError(ProjectError):
    """No scenario or preset with that id, name or key."""


class NameConflictError(ProjectError):
    """A scenario of that kind, or a preset with that key, already exists."""


class BuiltinPresetError(ProjectError):
    """Built-in presets are read-only."""


class InvalidItemError(ProjectError):
    """A stored scenario or preset, or an imported scenario file, does not parse or validate."""


__all__ = [
    "shorten",
    "shown",
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
