"""The project file: SQLite via SQLAlchemy 2.x, with atomic save and schema migrations.

A project is one SQLite file (``.swbproj``) holding hardware presets, saved scenarios and
metadata. :class:`Project` is the working copy (in memory) of such a file:

    project = Project.open(path)          # or Project.create(path), open_or_create_default()
    project.save_scenario("My run", scenario, notes="...")
    project.dirty                         # True until saved
    project.save()                        # atomic: temp file, fsync, rename

Errors are :class:`ProjectError` subclasses whose one-line message names the file, the
problem and what to do. See :mod:`storage.recovery` for crash recovery files and
:mod:`storage.migrations` for schema versions.
"""

from storage.constants import APPLICATION_ID, FILE_SUFFIX, SCHEMA_VERSION
from storage.errors import (
    BuiltinPresetError,
    CorruptProjectError,
    InvalidItemError,
    ItemNotFoundError,
    NameConflictError,
    NewerVersionError,
    NotAProjectError,
    ProjectChangedOnDiskError,
    ProjectError,
    ProjectExistsError,
    ProjectLockedError,
    ProjectNotFoundError,
    ProjectSaveError,
    ReadOnlyProjectError,
)

#: Names that need the database layer (SQLAlchemy, a quarter of a second to import): loaded on
#: first use, so that the window can show itself before it opens a project.
_FROM_PROJECT = ("SCENARIO_FILE_FORMAT", "PresetRecord", "Project", "ScenarioRecord", "default_project_path",
                 "open_or_create_default", "read_scenario_file")


def __getattr__(name: str):
    if name in _FROM_PROJECT:
        from storage import project

        return getattr(project, name)
    raise AttributeError(f"module 'storage' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_PROJECT))


__all__ = [
    "Project",
    "ScenarioRecord",
    "PresetRecord",
    "default_project_path",
    "open_or_create_default",
    "read_scenario_file",
    "APPLICATION_ID",
    "FILE_SUFFIX",
    "SCHEMA_VERSION",
    "SCENARIO_FILE_FORMAT",
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
