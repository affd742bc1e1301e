"""A project: the working copy of one ``.swbproj`` file and every operation on it.

The file on disk is only ever read by :meth:`Project.open` and replaced, atomically, by
:meth:`Project.save` / :meth:`Project.save_as`. Opening copies the database into an
in-memory SQLite (sqlite3's backup API); every edit goes there and sets :attr:`dirty`.
Saving writes the working copy to ``NAME.tmp-XXXXXXXX`` beside the file, fsyncs it, renames
it over the file (``os.replace``) and fsyncs the folder: a crash or a full disk leaves the
previous file intact and readable. A project opened through a symbolic link is saved to the
file the link points to (resolved at each save); the link stays.

Opening also removes temporary files left beside the file by a killed save, and records
the file's fingerprint (mtime, size, content hash): :meth:`Project.changed_on_disk` tells
whether another program (a second copy of the app, a sync tool) replaced it since, and
:meth:`Project.save` then refuses with :class:`ProjectChangedOnDiskError` unless told to
overwrite. :attr:`Project.notices` lists what the user should hear about how the file was
opened (read-only and why, migrated and where the backup is, leftovers removed).

Payloads are JSON parsed by ``workbench`` (no pickle, no eval). A stored scenario or preset
that does not parse or validate does not stop the project from opening: it is listed in
:attr:`Project.problems`, and loading it raises :class:`InvalidItemError`.

Not thread-safe: use a project from one thread at a time.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, delete, func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

import workbench
from storage import fileio, migrations, recovery
from storage.errors import (
    BuiltinPresetError,
    CorruptProjectError,
    InvalidItemError,
    ItemNotFoundError,
    NameConflictError,
    ProjectChangedOnDiskError,
    ProjectError,
    ProjectExistsError,
    ProjectSaveError,
    ReadOnlyProjectError,
)
from storage.models import (
    FILE_SUFFIX,
    REQUIRED_COLUMNS,
    SCHEMA_VERSION,
    Base,
    HardwarePreset,
    MetadataEntry,
    SavedScenario,
    utcnow,
)
from workbench.hardware import Hardware, slug

if TYPE_CHECKING:  # pragma: no cover
    from workbench.scenarios import Scenario

SCENARIO_FILE_FORMAT = "scaling-workbench-scenario"
SCENARIO_FILE_VERSION = 1
MAX_NAME_LENGTH = 200
MAX_SCENARIO_FILE_BYTES = 16 * 2**20

@dataclass(frozen=True, slots=True)
class ScenarioRecord:
    """A saved scenario as listed, without its payload parsed (see ``Project.problem_of``)."""

    id: int
    kind: str
    name: str
    notes: str
    modified: datetime


@dataclass(frozen=True, slots=True)
class PresetRecord:
    """A hardware preset as listed, without its payload parsed."""

    key: str
    name: str
    vendor: str
    builtin: bool
    modified: datetime


def _scenarios_module():
    from workbench import scenarios  # imported late: the CLI's `list` needs no model code

    return scenarios


def _scenario_errors() -> tuple[type[BaseException], ...]:
    module = _scenarios_module()
    extra = getattr(module, "ScenarioVersionError", None)
    errors: tuple[type[BaseException], ...] = (ValueError, TypeError, KeyError, RecursionError)
    if isinstance(extra, type) and issubclass(extra, BaseException):
        errors += (extra,)
    return errors


def _clean_name(name: object, what: str = "name") -> str:
    if not isinstance(name, str):
        raise workbench.InputError(what, f"must be text, got {type(name).__name__}")
    cleaned = " ".join(name.split()) if any(ch in name for ch in "\t\n\r") else name.strip()
    if not cleaned:
        raise workbench.InputError(what, "must not be empty")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise workbench.InputError(what, f"must be at most {MAX_NAME_LENGTH} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in cleaned):
        raise workbench.InputError(what, "must not contain control characters")
    return cleaned


def _clean_notes(notes: object) -> str:
    if not isinstance(notes, str):
        raise workbench.InputError("notes", f"must be text, got {type(notes).__name__}")
    return notes


def default_project_path() -> Path:
    """The default project, ``default.swbproj`` in the user data directory.

    The directory is ``$SCALING_WORKBENCH_DATA_DIR`` when set, else platformdirs'
    user data dir for "scaling-workbench".
    """
    return recovery.data_dir() / f"default{FILE_SUFFIX}"


def open_or_create_default() -> Project:
    """Open the default project, creating it (seeded with presets and samples) on first start."""
    path = default_project_path()
    if path.exists():
        return Project.open(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProjectSaveError(path, f"could not create the folder {path.parent} ({exc.strerror})",
                               "set SCALING_WORKBENCH_DATA_DIR to a writable folder") from exc
    return Project.create(path)


class Project:
    """The working copy of a project file. Create with :meth:`create` or :meth:`open`."""

    def __init__(self, path: Path, memory: sqlite3.Connection) -> None:
        # Use Project.create / Project.open.
        self._path = Path(path)
        self._memory = memory
        self._engine = create_engine("sqlite://", creator=lambda: memory, poolclass=StaticPool)
        self._session = Session(self._engine, expire_on_commit=False, autoflush=False)
        self._dirty = False
        self._closed = False
        self._read_only_reason: str | None = None
        # id -> (kind, name, problem) of stored scenarios that do not parse or validate
        self._invalid_scenarios: dict[int, tuple[str, str, str]] = {}
        self._invalid_presets: dict[str, tuple[str, str]] = {}  # key -> (name, problem)
        self._checked = False  # payloads are parsed on the first look at problems
        self.migrated_from: int | None = None
        self.backup_path: Path | None = None
        self.recovered = False
        #: One line each, for the status bar: how the file was opened and what was done
        #: beside it (read-only and why, migration backup, leftover files removed).
        self.notices: list[str] = []
        # What the file looked like when opened or last saved (see changed_on_disk).
        self._fingerprint: fileio.Fingerprint | None = None
        # Recovery files this working copy wrote or came from: deleted by a clean close.
        self._recovery_files: set[Path] = set()

    # -- life cycle ------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        overwrite: bool = False,
        seed: bool = True,
        hardware: Iterable[Hardware] | None = None,
        samples: Iterable[tuple[str, Scenario]] | None = None,
    ) -> Project:
        """Create a new project file at ``path``; it is written at once, atomically.

        With ``seed`` it holds the built-in presets (``presets.load_hardware()``, stored as
        built-in) and the sample scenarios (``presets.sample_scenarios()``); ``hardware`` and
        ``samples`` replace those sources. Refuses an existing file unless ``overwrite``.
        """
        path = Path(path)
        if path.exists() and not overwrite:
            raise ProjectExistsError(path, "already exists", "choose another name or delete it first")
        memory = sqlite3.connect(":memory:", check_same_thread=False)
        project = cls(path, memory)
        try:
            Base.metadata.create_all(project._engine)
            project._session.add_all([
                MetadataEntry(key="schema_version", value=str(SCHEMA_VERSION)),
                MetadataEntry(key="app_version", value=workbench.__version__),
                MetadataEntry(key="created", value=utcnow().isoformat(timespec="seconds")),
            ])
            project._session.commit()
            project._raw_commit()
            migrations.stamp(memory, SCHEMA_VERSION)
            memory.commit()
            if seed:
                project._seed(hardware, samples)
            project._write(path, "create the project")
        except BaseException:
            project._dispose()
            raise
        project._dirty = False
        project._fingerprint = fileio.fingerprint(fileio.real_path(path))
        return project

    def _seed(self, hardware: Iterable[Hardware] | None, samples: Iterable[tuple[str, Scenario]] | None) -> None:
        if hardware is None or samples is None:
            import presets

            hardware = presets.load_hardware() if hardware is None else hardware
            samples = presets.sample_scenarios() if samples is None else samples
        now = utcnow()
        rows: list[Any] = []
        for hw in hardware:
            rows.append(HardwarePreset(
                key=hw.key, name=hw.name, vendor=hw.vendor, builtin=True,
                payload=json.dumps(hw.with_changes(builtin=True).to_dict()), created=now, modified=now,
            ))
        for name, scenario in samples:
            rows.append(SavedScenario(kind=scenario.kind, name=_clean_name(name), notes="",
                                      payload=scenario.to_json(), created=now, modified=now))
        self._session.add_all(rows)
        self._session.commit()

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, use_recovery: bool = False) -> Project:
        """Open ``path``; never modifies it. Raises a :class:`ProjectError` subclass.

        An older schema is migrated in the working copy, after a backup copy
        ``NAME.bak-v{old}`` is written beside the file. With ``use_recovery`` and a recovery
        file newer than the project, the working copy comes from it (``dirty`` and
        ``recovered`` are then True); without one the file itself is opened.
        """
        path = Path(path)
        real = fileio.real_path(path)
        source = path
        recovered = None
        if use_recovery:
            recovered = recovery.find_recovery(path)
            if recovered is not None:
                source = recovered
        # Taken before reading: a change while we read then shows as a change, never the reverse.
        fingerprint = fileio.fingerprint(real)
        loaded = fileio.load(source)
        project = cls(path, loaded.memory)
        project._fingerprint = fingerprint
        try:
            if loaded.header.user_version < SCHEMA_VERSION:
                project._migrate(source, loaded.header.user_version)
            project._check_layout(source)
            if project.migrated_from is not None and recovered is None:
                project._write_backup(source, project.migrated_from)
        except BaseException:
            project._dispose()
            raise
        notices = project.notices
        if loaded.notice:
            notices.append(loaded.notice)
        if path.exists():
            project._read_only_reason = fileio.read_only_reason(real)
        journals = fileio.leftover_journals(real)
        if journals and project._read_only_reason is None:
            # Saving over the file would leave the journal to be applied to the new file.
            project._read_only_reason = (
                f"{fileio._describe_journals(journals)} (or another program still writing it) sits beside it")
        if project.migrated_from is not None and recovered is None and project.backup_path is None:
            # Saving would replace the only copy of the old-schema file: Save As instead.
            project._read_only_reason = project._read_only_reason or (
                f"no backup copy of the schema-{project.migrated_from} file could be written beside it")
        if project._read_only_reason is not None:
            notices.append(f"opened read-only because {project._read_only_reason}; "
                           "use Save As to save a copy elsewhere")
        if project.migrated_from is not None:
            if project.backup_path is not None:
                notices.append(f"migrated from schema {project.migrated_from}; backup at {project.backup_path}")
            else:
                notices.append(f"migrated from schema {project.migrated_from}; no backup of the old file "
                               "was written")
        if recovered is not None:
            project._dirty = True
            project.recovered = True
            project._recovery_files.add(recovered)
            notices.append(f"restored unsaved changes from the recovery file {recovered}; save to keep them")
        if path.exists():
            names = [real.name, recovery.candidates(real)[0].name]
            for removed in fileio.remove_stale_temps(real, names):
                notices.append(f"removed {removed.name}, a temporary file left beside the project "
                               "by an interrupted save")
        return project

    def _write_backup(self, source: Path, version: int) -> None:
        """Copy the old-schema file to ``NAME.bak-v{version}`` (never over an existing backup).

        Beside the real file when ``source`` is a symbolic link.
        """
        real = fileio.real_path(source)
        target = real.with_name(f"{real.name}.bak-v{version}")
        n = 2
        while target.exists():
            target = real.with_name(f"{real.name}.bak-v{version}-{n}")
            n += 1
        try:
            fileio.atomic_copy_file(source, target)
            self.backup_path = target
        except ProjectError:
            self.backup_path = None

    def _migrate(self, source: Path, version: int) -> None:
        self._raw_commit()
        try:
            migrations.migrate(self._memory, version)
        except sqlite3.Error as exc:
            raise CorruptProjectError(source, f"could not be upgraded from schema {version} ({exc})",
                                      "the file was not changed; report this with the file attached") from exc
        self.migrated_from = version

    def _check_layout(self, source: Path) -> None:
        for table, columns in REQUIRED_COLUMNS.items():
            have = {row[1] for row in self._memory.execute(f'PRAGMA table_info("{table}")')}
            if not have:
                raise CorruptProjectError(source, f"is damaged: the table '{table}' is missing",
                                          fileio._CORRUPT_ADVICE)
            missing = columns - have
            if missing:
                raise CorruptProjectError(
                    source, f"is damaged: the table '{table}' lacks column(s) {', '.join(sorted(missing))}",
                    fileio._CORRUPT_ADVICE)

    def _validate_items(self) -> None:
        """Parse every stored payload once (on the first look at problems), recording failures.

        Deferred from open so that a project of 10,000 scenarios opens and lists at once;
        afterwards every mutation keeps the record up to date.
        """
        if self._checked:
            return
        self._checked = True
        self._raw_commit()
        scenarios = _scenarios_module()
        errors = _scenario_errors()
        for sid, kind, name, payload in self._memory.execute(
                "SELECT id, kind, name, payload FROM scenarios"):
            problem = None
            try:
                scenario = scenarios.scenario_from_json(payload)
                if scenario.kind != kind:
                    problem = f"stored as {kind!r} but holds a {scenario.kind!r} scenario"
            except errors as exc:
                problem = str(exc) or type(exc).__name__
            if problem:
                self._invalid_scenarios[sid] = (kind, name, problem)
        for key, name, payload in self._memory.execute("SELECT key, name, payload FROM hardware_presets"):
            try:
                Hardware.from_dict(json.loads(payload))
            except (ValueError, TypeError, KeyError, RecursionError) as exc:
                self._invalid_presets[key] = (name, str(exc))

    def close(self, *, discard_recovery: bool = True) -> None:
        """Drop the working copy (unsaved edits are lost) and delete its recovery file.

        Only a recovery file this project wrote or was restored from is deleted: one left by
        another session stays until the user is asked (``Project.recovery_for``).
        """
        if self._closed:
            return
        if discard_recovery:
            self._delete_recovery_files()
        self._dispose()

    def discard_written_recovery(self) -> None:
        """Delete the recovery files this project wrote (its changes were undone: a crash now
        must not offer to restore them). Nothing else is touched."""
        self._check_open()
        if not self._dirty:
            self._delete_recovery_files()

    def _delete_recovery_files(self) -> None:
        for path in self._recovery_files:
            try:
                path.unlink()
            except OSError:
                pass
        self._recovery_files.clear()

    def _dispose(self) -> None:
        self._closed = True
        try:
            self._session.close()
            self._engine.dispose()
        finally:
            self._memory.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # After an exception keep the recovery file: that is what it is for.
        self.close(discard_recovery=exc_type is None)

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("dirty" if self._dirty else "clean")
        return f"<Project {str(self._path)!r} {state}>"

    # -- state -------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self._path

    @property
    def name(self) -> str:
        """The file name without the extension, for a window title."""
        return self._path.stem if self._path.suffix == FILE_SUFFIX else self._path.name

    @property
    def dirty(self) -> bool:
        """True when the working copy has changes not yet saved."""
        return self._dirty

    @property
    def read_only(self) -> bool:
        """True when :meth:`save` cannot write the file in place (use :meth:`save_as`)."""
        return self._read_only_reason is not None

    @property
    def read_only_reason(self) -> str | None:
        return self._read_only_reason

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def problems(self) -> list[str]:
        """One line per stored scenario or preset that does not parse or validate.

        The first access parses every payload (about 50 us each); later ones are free.
        """
        self._check_open()
        self._validate_items()
        scenarios = sorted(
            f"scenario {name!r} ({kind}): {problem}" for kind, name, problem in self._invalid_scenarios.values()
        )
        presets = sorted(f"preset {name!r} ({key}): {problem}"
                         for key, (name, problem) in self._invalid_presets.items())
        return presets + scenarios

    @property
    def info(self) -> dict[str, str]:
        """The metadata table: schema_version, app_version (last written by), created."""
        self._check_open()
        rows = self._session.execute(select(MetadataEntry.key, MetadataEntry.value)).all()
        self._session.rollback()
        return {k: v for k, v in rows}

    #: Metadata keys the file manages itself; :meth:`set_meta` refuses them.
    RESERVED_META_KEYS = frozenset({"schema_version", "app_version", "created"})

    def get_meta(self, key: str) -> str | None:
        """The metadata value stored under ``key`` (e.g. "workspace"), or None."""
        self._check_open()
        value = self._session.execute(
            select(MetadataEntry.value).where(MetadataEntry.key == key)).scalar_one_or_none()
        self._session.rollback()
        return value

    def set_meta(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` in the metadata table (marks the project dirty).

        For application state that belongs to the document, such as the window's workspace
        JSON. The file's own keys (schema_version, app_version, created) are refused.
        """
        self._check_open()
        self._check_meta(key, value)
        row = self._session.get(MetadataEntry, key)
        if row is not None and row.value == value:
            self._session.rollback()
            return
        if row is None:
            self._session.add(MetadataEntry(key=key, value=value))
        else:
            row.value = value
        self._mutated()

    def _check_meta(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not key.strip() or len(key) > 64:
            raise ValueError(f"metadata key must be 1 to 64 characters, got {key!r}")
        if key in self.RESERVED_META_KEYS:
            raise ValueError(f"metadata key {key!r} is managed by the project file")
        if not isinstance(value, str):
            raise TypeError(f"metadata value must be text, got {type(value).__name__}")

    def _check_open(self) -> None:
        if self._closed:
            raise ProjectError(self._path, "the project is closed", "open it again")

    def _raw_commit(self) -> None:
        """End any ORM transaction so the raw connection can be copied or migrated."""
        self._session.commit()
        self._memory.commit()

    def _mutated(self) -> None:
        self._session.commit()
        self._dirty = True

    # -- saving ------------------------------------------------------------------------------
    def _write(self, target: Path, what: str) -> None:
        self._session.execute(
            update(MetadataEntry).where(MetadataEntry.key == "app_version").values(value=workbench.__version__)
        )
        self._raw_commit()
        fileio.atomic_write_database(self._memory, target, what)

    def changed_on_disk(self) -> bool:
        """True when the file is no longer what this project opened or last saved.

        Another copy of the app, a sync tool or an editor replaced, changed or removed it
        (compared by size and content hash, and modification time for large files).
        """
        self._check_open()
        if self._fingerprint is None:
            return False
        return self._fingerprint.differs_from(fileio.fingerprint(fileio.real_path(self._path)))

    def save(self, *, overwrite_external: bool = False) -> None:
        """Write the working copy over the file, atomically. Clears :attr:`dirty`.

        Through a symbolic link, the file it points to is written and the link stays.
        When :meth:`changed_on_disk`, raises :class:`ProjectChangedOnDiskError` and writes
        nothing, unless ``overwrite_external`` (the user chose to overwrite the other change).
        """
        self._check_open()
        if self._read_only_reason is not None:
            raise ReadOnlyProjectError(self._path, f"cannot be saved: {self._read_only_reason}",
                                       "use Save As to save a copy elsewhere")
        target = fileio.real_path(self._path)  # resolved now: the link may have been retargeted
        reason = fileio.read_only_reason(target)  # it may have changed since open
        if reason is not None:
            self._read_only_reason = reason
            raise ReadOnlyProjectError(self._path, f"cannot be saved: {reason}",
                                       "use Save As to save a copy elsewhere")
        if not overwrite_external and self.changed_on_disk():
            if target.exists():
                problem = "not saved: it was changed by another program since you opened it"
                advice = "use Save As to keep both, or save again to overwrite"
            else:
                problem = "not saved: it was moved or deleted by another program since you opened it"
                advice = "use Save As to save it elsewhere, or save again to write it back here"
            raise ProjectChangedOnDiskError(self._path, problem, advice)
        self._write(self._path, "save")  # errors name the path the user knows; fileio follows links
        self._fingerprint = fileio.fingerprint(target)
        self._dirty = False
        # Any recovery file is now older than the file, so stale: remove it.
        self._delete_recovery_files()
        recovery.discard_recovery(self._path)

    def save_as(self, new_path: str | os.PathLike[str]) -> None:
        """Write a complete new file at ``new_path`` (atomically); the old file stays as it was.

        The project then points at ``new_path``. An existing ``new_path`` is replaced
        (the UI asks first) unless it is marked read-only.
        """
        self._check_open()
        new_path = Path(new_path)
        if new_path.exists():
            reason = fileio.read_only_reason(new_path)
            if reason is not None:
                raise ReadOnlyProjectError(new_path, f"cannot be replaced: {reason}",
                                           "choose another name or folder")
        self._write(new_path, "save")
        self._fingerprint = fileio.fingerprint(fileio.real_path(new_path))
        self._path = new_path
        self._read_only_reason = None
        self._dirty = False
        self.recovered = False
        self._delete_recovery_files()
        recovery.discard_recovery(new_path)

    def write_recovery(self, meta: Mapping[str, str] | None = None) -> Path | None:
        """Write the working copy to the recovery file, atomically, if there are unsaved changes.

        ``meta``: metadata entries (as :meth:`set_meta` takes them, e.g. the window's
        workspace) that go into the recovery file only: the working copy and :attr:`dirty`
        stay as they were, so a user who undoes back to the saved state has nothing unsaved.
        Entries that differ from the working copy's count as unsaved changes.

        Returns the recovery file's path, or None when there was nothing to recover. The UI
        calls this from a timer every few minutes (see :mod:`storage.recovery`).
        """
        self._check_open()
        changed: dict[str, str] = {}
        for key, value in (meta or {}).items():
            self._check_meta(key, value)
            row = self._session.get(MetadataEntry, key)
            if row is None or row.value != value:
                changed[key] = value
        self._session.rollback()
        if not self._dirty and not changed:
            return None
        target = recovery.recovery_target(self._path)
        previous = {}
        try:
            for key, value in changed.items():
                row = self._session.get(MetadataEntry, key)
                previous[key] = row.value if row is not None else None
                if row is None:
                    self._session.add(MetadataEntry(key=key, value=value))
                else:
                    row.value = value
            self._raw_commit()
            fileio.atomic_write_database(self._memory, target, "write the recovery file")
        finally:
            if previous:
                for key, value in previous.items():
                    row = self._session.get(MetadataEntry, key)
                    if value is None:
                        self._session.delete(row)
                    else:
                        row.value = value
                self._raw_commit()
        self._recovery_files.add(target)
        return target

    @staticmethod
    def recovery_for(path: str | os.PathLike[str]) -> Path | None:
        """The recovery file of ``path`` if it holds unsaved work newer than the file, else None."""
        return recovery.find_recovery(Path(path))

    @staticmethod
    def discard_recovery(path: str | os.PathLike[str]) -> None:
        """Delete the recovery file of ``path`` (the user chose not to restore it)."""
        recovery.discard_recovery(Path(path))

    # -- scenarios ---------------------------------------------------------------------------
    def list_scenarios(self, kind: str | None = None) -> list[ScenarioRecord]:
        """Saved scenarios ordered by kind and name, without parsing their payloads."""
        self._check_open()
        query = "SELECT id, kind, name, notes, modified FROM scenarios"
        params: tuple[Any, ...] = ()
        if kind is not None:
            query += " WHERE kind = ?"
            params = (kind,)
        query += " ORDER BY kind, name"
        self._raw_commit()
        return [
            ScenarioRecord(sid, k, name, notes, _parse_time(modified))
            for sid, k, name, notes, modified in self._memory.execute(query, params)
        ]

    def problem_of(self, ref: Any) -> str | None:
        """Why the scenario ``ref`` (id, (kind, name) or record) cannot be loaded, or None."""
        row = self._scenario_row(ref)
        sid = row.id
        self._session.rollback()
        self._validate_items()
        entry = self._invalid_scenarios.get(sid)
        return entry[2] if entry else None

    def preset_problem(self, key: str) -> str | None:
        """Why the preset ``key`` cannot be loaded, or None."""
        self._preset_row(key)
        self._session.rollback()
        self._validate_items()
        entry = self._invalid_presets.get(key)
        return entry[1] if entry else None

    def scenario_count(self, kind: str | None = None) -> int:
        self._check_open()
        query = select(func.count()).select_from(SavedScenario)
        if kind is not None:
            query = query.where(SavedScenario.kind == kind)
        result = int(self._session.execute(query).scalar_one())
        self._session.rollback()
        return result

    def _scenario_row(self, ref: Any) -> SavedScenario:
        self._check_open()
        if isinstance(ref, ScenarioRecord):
            ref = ref.id
        if isinstance(ref, bool):
            raise TypeError("a scenario is referred to by id or (kind, name)")
        if isinstance(ref, int):
            row = self._session.get(SavedScenario, ref)
            where = f"scenario {ref}"
        elif isinstance(ref, tuple) and len(ref) == 2:
            kind, name = ref
            row = self._session.execute(
                select(SavedScenario).where(SavedScenario.kind == kind, SavedScenario.name == name)
            ).scalar_one_or_none()
            where = f"scenario {name!r} ({kind})"
        else:
            raise TypeError("a scenario is referred to by id or (kind, name)")
        if row is None:
            raise ItemNotFoundError(self._path, f"there is no {where}", "it may have been deleted or renamed")
        return row

    def _name_taken(self, kind: str, name: str, except_id: int | None = None) -> bool:
        query = select(SavedScenario.id).where(SavedScenario.kind == kind, SavedScenario.name == name)
        found = self._session.execute(query).scalar_one_or_none()
        return found is not None and found != except_id

    def _unique_name(self, kind: str, base: str, suffix: Callable[[int], str]) -> str:
        """The first of ``base + suffix(0)``, ``base + suffix(1)``, ... not used by ``kind``."""
        taken = set(self._session.execute(
            select(SavedScenario.name).where(SavedScenario.kind == kind)).scalars())
        n = 0
        while True:
            end = suffix(n)
            candidate = base[: MAX_NAME_LENGTH - len(end)].rstrip() + end
            if candidate not in taken:
                return candidate
            n += 1

    def load_scenario(self, ref: Any) -> Scenario:
        """The scenario ``ref`` (an id, a ``(kind, name)`` pair or a record), parsed and validated."""
        row = self._scenario_row(ref)
        sid, kind, name, payload = row.id, row.kind, row.name, row.payload
        self._session.rollback()
        scenarios = _scenarios_module()
        try:
            scenario = scenarios.scenario_from_json(payload)
        except _scenario_errors() as exc:
            raise InvalidItemError(self._path, f"scenario {name!r} ({kind}) cannot be loaded: {exc}",
                                   "fix its values and save it again, or delete it") from exc
        if scenario.kind != kind:
            raise InvalidItemError(self._path, f"scenario {name!r} is stored as {kind!r} but holds "
                                   f"a {scenario.kind!r} scenario", "delete it")
        self._invalid_scenarios.pop(sid, None)
        return scenario

    def save_scenario(self, name: str, scenario: Scenario, notes: str | None = None) -> int:
        """Save ``scenario`` under ``name`` (new, or replacing the one of that kind and name).

        ``notes=None`` keeps the notes of a replaced scenario (empty for a new one).
        Returns the scenario's id.
        """
        self._check_open()
        name = _clean_name(name)
        if notes is not None:
            notes = _clean_notes(notes)
        kind = scenario.kind
        payload = scenario.to_json()
        now = utcnow()
        row = self._session.execute(
            select(SavedScenario).where(SavedScenario.kind == kind, SavedScenario.name == name)
        ).scalar_one_or_none()
        if row is None:
            row = SavedScenario(kind=kind, name=name, notes=notes or "", payload=payload, created=now, modified=now)
            self._session.add(row)
        else:
            row.payload = payload
            row.modified = now
            if notes is not None:
                row.notes = notes
        self._session.flush()
        sid = row.id
        self._mutated()
        self._invalid_scenarios.pop(sid, None)
        return sid

    def rename_scenario(self, ref: Any, new_name: str) -> None:
        row = self._scenario_row(ref)
        new_name = _clean_name(new_name)
        if new_name == row.name:
            self._session.rollback()
            return
        if self._name_taken(row.kind, new_name, except_id=row.id):
            kind = row.kind
            self._session.rollback()
            raise NameConflictError(self._path, f"a {kind} scenario named {new_name!r} already exists",
                                    "choose another name")
        row.name = new_name
        row.modified = utcnow()
        self._mutated()
        if row.id in self._invalid_scenarios:
            kind, _, problem = self._invalid_scenarios[row.id]
            self._invalid_scenarios[row.id] = (kind, new_name, problem)

    def duplicate_scenario(self, ref: Any, new_name: str | None = None) -> int:
        """Copy a scenario; without ``new_name`` the copy is called "NAME copy" ("NAME copy 2", ...)."""
        row = self._scenario_row(ref)
        if new_name is None:
            name = self._unique_name(row.kind, row.name, lambda n: " copy" if n == 0 else f" copy {n + 1}")
        else:
            name = _clean_name(new_name)
            if self._name_taken(row.kind, name):
                self._session.rollback()
                raise NameConflictError(self._path, f"a {row.kind} scenario named {name!r} already exists",
                                        "choose another name")
        now = utcnow()
        copy = SavedScenario(kind=row.kind, name=name, notes=row.notes, payload=row.payload,
                             created=now, modified=now)
        self._session.add(copy)
        self._session.flush()
        new_id = copy.id
        if row.id in self._invalid_scenarios:
            self._invalid_scenarios[new_id] = (row.kind, name, self._invalid_scenarios[row.id][2])
        self._mutated()
        return new_id

    def delete_scenario(self, ref: Any) -> None:
        row = self._scenario_row(ref)
        sid = row.id
        self._session.execute(delete(SavedScenario).where(SavedScenario.id == sid))
        self._session.expunge_all()
        self._mutated()
        self._invalid_scenarios.pop(sid, None)

    def set_notes(self, ref: Any, notes: str) -> None:
        row = self._scenario_row(ref)
        notes = _clean_notes(notes)
        if row.notes == notes:
            self._session.rollback()
            return
        row.notes = notes
        row.modified = utcnow()
        self._mutated()

    def export_scenario(self, ref: Any, path: str | os.PathLike[str]) -> Path:
        """Write a scenario to a small JSON file (format "scaling-workbench-scenario")."""
        row = self._scenario_row(ref)
        name, notes = row.name, row.notes
        scenario = self.load_scenario(row.id)
        document = {
            "format": SCENARIO_FILE_FORMAT,
            "format_version": SCENARIO_FILE_VERSION,
            "app_version": workbench.__version__,
            "name": name,
            "notes": notes,
            "scenario": json.loads(scenario.to_json()),
        }
        path = Path(path)
        if not path.parent.is_dir():
            raise ProjectSaveError(path, f"could not export: the folder {path.parent} does not exist",
                                   "choose an existing folder")
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        fileio.atomic_write_bytes(data, path, "export the scenario")
        return path

    def import_scenario(self, path: str | os.PathLike[str], name: str | None = None) -> int:
        """Add the scenario of a file written by :meth:`export_scenario`; returns its id.

        A name already used for that kind gets " (imported)" ("(imported 2)", ...) appended.
        """
        self._check_open()
        path = Path(path)
        scenario, file_name, notes = read_scenario_file(path)
        base = _clean_name(name) if name is not None else file_name
        unique = self._unique_name(
            scenario.kind, base, lambda n: "" if n == 0 else " (imported)" if n == 1 else f" (imported {n})")
        self._session.rollback()
        return self.save_scenario(unique, scenario, notes)

    # -- hardware presets --------------------------------------------------------------------
    def list_presets(self) -> list[PresetRecord]:
        """Presets, built-in first, then by name, without parsing their payloads."""
        self._check_open()
        self._raw_commit()
        return [
            PresetRecord(key, name, vendor, bool(builtin), _parse_time(modified))
            for key, name, vendor, builtin, modified in self._memory.execute(
                "SELECT key, name, vendor, builtin, modified FROM hardware_presets "
                "ORDER BY builtin DESC, name, key")
        ]

    def _preset_row(self, key: str) -> HardwarePreset:
        self._check_open()
        row = self._session.get(HardwarePreset, key)
        if row is None:
            raise ItemNotFoundError(self._path, f"there is no hardware preset {key!r}",
                                    "it may have been deleted")
        return row

    def get_preset(self, key: str) -> Hardware:
        row = self._preset_row(key)
        payload, builtin, name = row.payload, row.builtin, row.name
        self._session.rollback()
        try:
            hw = Hardware.from_dict(json.loads(payload))
            return hw.with_changes(key=key, builtin=bool(builtin))
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise InvalidItemError(self._path, f"preset {name!r} ({key}) cannot be loaded: {exc}",
                                   "delete it or fix it and save it again") from exc

    def add_preset(self, hw: Hardware) -> str:
        """Add a user preset (stored with builtin=False); returns its key."""
        self._check_open()
        if self._session.get(HardwarePreset, hw.key) is not None:
            self._session.rollback()
            raise NameConflictError(self._path, f"a hardware preset with key {hw.key!r} already exists",
                                    "use another name, or update_preset to change it")
        hw = hw.with_changes(builtin=False)
        now = utcnow()
        self._session.add(HardwarePreset(key=hw.key, name=hw.name, vendor=hw.vendor, builtin=False,
                                         payload=json.dumps(hw.to_dict()), created=now, modified=now))
        self._mutated()
        self._invalid_presets.pop(hw.key, None)
        return hw.key

    def update_preset(self, key: str, hw: Hardware) -> None:
        """Replace the user preset ``key`` with ``hw`` (its key stays ``key``)."""
        row = self._preset_row(key)
        if row.builtin:
            name = row.name
            self._session.rollback()
            raise BuiltinPresetError(self._path, f"the built-in preset {name!r} is read-only",
                                     "duplicate it first and edit the copy")
        hw = hw.with_changes(key=key, builtin=False)
        row.name = hw.name
        row.vendor = hw.vendor
        row.payload = json.dumps(hw.to_dict())
        row.modified = utcnow()
        self._mutated()
        self._invalid_presets.pop(key, None)

    def duplicate_preset(self, key: str, new_name: str) -> str:
        """Copy any preset (built-in or not) as a user preset called ``new_name``; returns its key."""
        new_name = _clean_name(new_name)
        hw = self.get_preset(key)
        base = slug(new_name) or "preset"
        new_key, n = base, 2
        while self._session.get(HardwarePreset, new_key) is not None:
            new_key, n = f"{base}-{n}", n + 1
        self._session.rollback()
        return self.add_preset(hw.with_changes(name=new_name, key=new_key, builtin=False))

    def delete_preset(self, key: str) -> None:
        row = self._preset_row(key)
        if row.builtin:
            name = row.name
            self._session.rollback()
            raise BuiltinPresetError(self._path, f"the built-in preset {name!r} cannot be deleted",
                                     "only your own presets can be deleted")
        self._session.execute(delete(HardwarePreset).where(HardwarePreset.key == key))
        self._session.expunge_all()
        self._mutated()
        self._invalid_presets.pop(key, None)


def _parse_time(value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return datetime(1970, 1, 1)


def read_scenario_file(path: Path) -> tuple[Scenario, str, str]:
    """Parse a scenario file: returns (scenario, name, notes) or raises InvalidItemError."""
    advice = "choose a file exported by Scaling Workbench"
    try:
        size = path.stat().st_size
        if size > MAX_SCENARIO_FILE_BYTES:
            raise InvalidItemError(path, f"is too large for a scenario file ({size} bytes)", advice)
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InvalidItemError(path, "no such file", "check the path") from None
    except UnicodeDecodeError:
        raise InvalidItemError(path, "is not a scenario file (not UTF-8 text)", advice) from None
    except OSError as exc:
        raise InvalidItemError(path, f"cannot be read ({exc.strerror})", "check the permissions") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidItemError(path, f"is not a scenario file (not JSON: {exc})", advice) from None
    if not isinstance(document, dict) or document.get("format") != SCENARIO_FILE_FORMAT:
        raise InvalidItemError(path, "is not a Scaling Workbench scenario file (no \"format\": "
                               f"\"{SCENARIO_FILE_FORMAT}\")", advice)
    version = document.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version > SCENARIO_FILE_VERSION:
        raise InvalidItemError(path, f"was written in scenario file format {version}; this version reads "
                               f"up to {SCENARIO_FILE_VERSION}", "use a newer Scaling Workbench")
    body = document.get("scenario")
    if not isinstance(body, dict):
        raise InvalidItemError(path, "has no \"scenario\" object", advice)
    try:
        name = _clean_name(document.get("name", ""), "name")
        notes = _clean_notes(document.get("notes", ""))
        scenario = _scenarios_module().scenario_from_json(json.dumps(body))
    except _scenario_errors() as exc:
        raise InvalidItemError(path, f"holds an invalid scenario: {exc}", "fix the file and import it again") from None
    return scenario, name, notes


__all__ = [
    "Project",
    "ScenarioRecord",
    "PresetRecord",
    "default_project_path",
    "open_or_create_default",
    "read_scenario_file",
    "SCENARIO_FILE_FORMAT",
]
