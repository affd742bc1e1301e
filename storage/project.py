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
overwrite. A save holds a lock on the file (see :func:`storage.fileio.locked_for_saving`)
from that check to the rename, so two copies of the app saving the same project take
turns and the second refuses instead of overwriting the first; a save while another
program holds an SQLite write transaction on the file is refused with
:class:`ProjectLockedError`, and a file opened while one does opens read-only.
:attr:`Project.notices` lists what the user should hear about how the file was opened
(read-only and why, migrated and where the backup is, leftovers removed).
``Project.open(path, read_only=True)`` (the command line's ``list`` and ``export``) writes
and removes nothing anywhere: an old schema is migrated in memory only.

A file from a stranger is data: text that is not valid UTF-8, names or kinds that are
NULL or BLOBs, times that are not times, triggers and views give one-line errors or
:attr:`Project.problems` entries, never a traceback; triggers (SQL that would run on the
app's own edits) are dropped from the working copy.

Payloads are JSON parsed by ``workbench`` (no pickle, no eval). A stored scenario or preset
that does not parse or validate does not stop the project from opening: it is listed in
:attr:`Project.problems`, and loading it raises :class:`InvalidItemError`.

Not thread-safe: use a project from one thread at a time.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, delete, func, select, update
from sqlalchemy.exc import SQLAlchemyError
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
    shorten,
    shown,
)
from storage.models import (
    FILE_SUFFIX,
    REQUIRED_COLUMNS,
    SCHEMA_VERSION,
    UNKNOWN_TIME,
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
# A problem text from the model (it may quote a stored value) is cut to this length.
MAX_PROBLEM_DETAIL = 300
_READ_ONLY_REQUESTED = "it was opened for reading only"
# Text columns as the app stores them; a damaged file may hold other types there.
_DECODE = functools.partial(bytes.decode, encoding="utf-8", errors="replace")

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


class ScenarioListing(Sequence[ScenarioRecord]):
    """The saved scenarios as :meth:`Project.list_scenarios` lists them, read by one query
    (:meth:`Project.list_scenarios_with_problems`), with each one's problem on demand.

    A record is made when it is first asked for: a browser of 10,000 scenarios needs only
    their ids, kinds and names (:meth:`summaries`) to fill, and the rest of the rows it shows."""

    def __init__(self, project: Project, rows: list[tuple[Any, ...]]) -> None:
        self._project = project
        # (id, kind, name, notes, modified, payload) as read
        self._rows = rows
        self._records: list[ScenarioRecord | None] = [None] * len(rows)
        self._index: dict[int, int] | None = None  # id -> row, made on the first look-up by id
        self._all_made = False  # every record made (records)
        self._problems: dict[int, str | None] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self._rows)))]
        if index < 0:
            index += len(self._rows)
        if not 0 <= index < len(self._rows):
            raise IndexError("listing index out of range")
        return self._record(index)

    def __iter__(self) -> Iterator[ScenarioRecord]:
        return (self._record(i) for i in range(len(self._rows)))

    def _record(self, i: int) -> ScenarioRecord:
        record = self._records[i]
        if record is None:
            sid, kind, name, notes, modified, _payload = self._rows[i]
            record = self._records[i] = ScenarioRecord(sid, kind, name, _as_text(notes), _parse_time(modified))
        return record

    @property
    def records(self) -> list[ScenarioRecord]:
        """Every listed scenario's record (those not asked for yet are made now, once)."""
        if not self._all_made:
            for i in range(len(self._rows)):
                self._record(i)
            self._all_made = True
        return self._records  # type: ignore[return-value] - none is None now

    def summaries(self) -> Iterator[tuple[int, str, str]]:
        """(id, kind, name) of each listed scenario, in order, without making its record."""
        return ((row[0], row[1], row[2]) for row in self._rows)

    def problem(self, ref: int | ScenarioRecord) -> str | None:
        """Why the listed scenario ``ref`` (id or record) cannot be loaded, or None: what
        :meth:`Project.problem_of` says. The first ask about a scenario parses its payload
        (~40 us); an id that was not listed gives None."""
        return self._problem(ref.id if isinstance(ref, ScenarioRecord) else ref, None)

    def problem_at(self, index: int) -> str | None:
        """:meth:`problem` of the scenario listed at ``index`` (no look-up of its id)."""
        return self._problem(self._rows[index][0], index)

    def _problem(self, sid: int, index: int | None) -> str | None:
        project = self._project
        if project.closed:
            return self._problems.get(sid)
        if project._checked:  # the project has looked at every payload: its record holds
            entry = project._invalid_scenarios.get(sid)
            return entry[2] if entry else None
        if sid in self._problems:
            return self._problems[sid]
        if index is None:
            if self._index is None:
                self._index = {row[0]: i for i, row in enumerate(self._rows)}
            index = self._index.get(sid)
            if index is None:
                return None
        _sid, kind, name, notes, _modified, payload = self._rows[index]
        problem = self._problems[sid] = self._check(sid, kind, name, notes, payload)
        return problem

    def _check(self, sid: int, kind: str, name: str, notes: object, payload: object) -> str | None:
        # Text is read leniently (U+FFFD for bytes that are not UTF-8); only a value that shows
        # U+FFFD needs its stored bytes looked at, as Project.problems does for every row.
        if any(isinstance(v, str) and "\ufffd" in v for v in (kind, name, notes, payload)):
            raw = ", ".join(_RAW_COLUMNS.format(c) for c in ("kind", "name", "notes", "payload"))
            self._project._raw_commit()
            columns = self._project._memory.execute(f"SELECT {raw} FROM scenarios WHERE id = ?", (sid,)).fetchone()
            return _stored_scenario_problem(kind, list(columns)) if columns is not None else None
        if isinstance(payload, bytes):  # a BLOB of UTF-8 JSON is read
            text, problem = _payload_text("blob", payload)
        elif isinstance(payload, str):
            text, problem = payload, None
        else:
            text, problem = _payload_text("null" if payload is None else "integer", None)
        return problem or _scenario_problem(kind, text)


def _stored_scenario_problem(kind: str, columns: list[Any]) -> str | None:
    """The problem ``Project.check_items_step`` records for one scenario row, from its stored
    types and bytes (typeof and raw bytes of kind, name, notes and payload)."""
    kind_type, kind_raw, name_type, name_raw, notes_type, notes_raw, payload_type, payload_raw = columns
    problem = (_text_problem(kind_type, kind_raw, "kind") or _text_problem(name_type, name_raw, "name")
               or (_text_problem(notes_type, notes_raw, "notes") if notes_type == "text" else None))
    if problem is None:
        payload, problem = _payload_text(payload_type, payload_raw)
    if problem is None:
        problem = _scenario_problem(kind, payload)
    return problem or None


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
    try:
        return Project.create(path)
    except ProjectExistsError:  # another copy of the app, starting at the same moment, made it
        return Project.open(path)


def _database_error(path: Path, exc: BaseException) -> CorruptProjectError:
    detail = getattr(exc, "orig", None) or exc
    text = str(detail).splitlines()[0] if str(detail) else type(detail).__name__
    return CorruptProjectError(
        path, f"its database refused the operation ({shorten(text, 200)})",
        "the file may be damaged or altered by another program; use Save As to keep your work, "
        "and restore the file from a backup")


def _guarded(method):
    """For public methods: an SQLite error that a damaged or altered file causes (a CHECK or
    a column type of its own that refuses the app's rows, a missing index ...) becomes one
    :class:`CorruptProjectError` line, never a traceback; the failed change is rolled back."""

    @functools.wraps(method)
    def wrapper(self: Project, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, SQLAlchemyError) as exc:
            try:
                self._session.rollback()
                self._memory.rollback()
            except (sqlite3.Error, SQLAlchemyError):
                pass
            raise _database_error(self._path, exc) from exc

    return wrapper


class Project:
    """The working copy of a project file. Create with :meth:`create` or :meth:`open`."""

    def __init__(self, path: Path, memory: sqlite3.Connection) -> None:
        # Use Project.create / Project.open.
        self._path = Path(path)
        # Text that is not valid UTF-8 (bit flips that pass quick_check) must not make every
        # query that touches it fail: it reads with U+FFFD in place of the bad bytes, and
        # ``problems`` (which checks the raw bytes) reports the row.
        memory.text_factory = _DECODE
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
        self._check_after: int | None = None  # the last scenario id check_items_step looked at
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
            # Without overwrite a file that appears meanwhile (another `new`) is never replaced.
            project._fingerprint = project._write(path, "create the project", lock=overwrite,
                                                  no_clobber=not overwrite)
        except BaseException:
            project._dispose()
            raise
        project._dirty = False
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
    def open(cls, path: str | os.PathLike[str], *, use_recovery: bool = False,
             read_only: bool = False) -> Project:
        """Open ``path``; never modifies it. Raises a :class:`ProjectError` subclass.

        An older schema is migrated in the working copy, after a backup copy
        ``NAME.bak-v{old}`` is written beside the file (an identical backup already there is
        reused). With ``use_recovery`` and a recovery file newer than the project, the
        working copy comes from it (``dirty`` and ``recovered`` are then True); without one
        the file itself is opened.

        ``read_only``: for looking only (the command line's ``list`` and ``export``):
        nothing is written or removed anywhere (no migration backup, leftovers of killed
        saves are left alone), and the project cannot be saved in place.

        The file opens read-only when another program is writing it through SQLite (its
        change is not in what was read, and saving over the file would lose it).
        """
        path = Path(path)
        real = fileio.real_path(path)
        source = path
        recovered = None
        if use_recovery:
            recovered = recovery.find_recovery(path)
            if recovered is not None:
                source = recovered
        # A save by another copy of the app waits until this has read the file.
        with fileio.locked_for_reading(real):
            # Taken before reading: a change while we read (by a program that ignores the
            # lock) then shows as a change, never the reverse.
            fingerprint = fileio.fingerprint(real)
            loaded = fileio.load(source)
            activity = fileio.sqlite_activity(real) if recovered is None else None
        project = cls(path, loaded.memory)
        project._fingerprint = fingerprint
        try:
            if loaded.header.user_version < SCHEMA_VERSION:
                project._migrate(source, loaded.header.user_version)
            project._check_layout(source)
            dropped = project._drop_triggers()
            if project.migrated_from is not None and recovered is None and not read_only and activity is None:
                project._write_backup(source, project.migrated_from)
        except (sqlite3.Error, SQLAlchemyError) as exc:
            project._dispose()
            raise _database_error(source, exc) from exc
        except BaseException:
            project._dispose()
            raise
        notices = project.notices
        if loaded.notice and activity is None:  # with a program at work, the read-only notice says why
            notices.append(loaded.notice)
        notices.extend(dropped)
        if read_only:
            project._read_only_reason = _READ_ONLY_REQUESTED
        elif activity is not None:
            project._read_only_reason = activity
        elif path.exists():
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
        if project._read_only_reason is not None and not read_only:
            notices.append(f"opened read-only because {project._read_only_reason}; "
                           "use Save As to save a copy elsewhere")
        if project.migrated_from is not None:
            if project.backup_path is not None:
                notices.append(f"migrated from schema {project.migrated_from}; backup at {project.backup_path}")
            elif read_only:
                notices.append(f"migrated from schema {project.migrated_from} in memory only; the file was "
                               "not changed")
            else:
                notices.append(f"migrated from schema {project.migrated_from}; no backup of the old file "
                               "was written")
        if recovered is not None:
            project._dirty = True
            project.recovered = True
            project._recovery_files.add(recovered)
            notices.append(f"restored unsaved changes from the recovery file {recovered}; save to keep them")
        if path.exists() and not read_only:
            names = [real.name, recovery.candidates(real)[0].name]
            for removed in fileio.remove_stale_temps(real, names):
                notices.append(f"removed {removed.name}, a temporary file left beside the project "
                               "by an interrupted save")
        return project

    def _write_backup(self, source: Path, version: int) -> None:
        """Copy the old-schema file to ``NAME.bak-v{version}`` (never over an existing backup).

        A backup already there with the same bytes (the file was opened before and not
        saved) is used instead of writing another one. Beside the real file when
        ``source`` is a symbolic link.
        """
        real = fileio.real_path(source)
        mine = fileio.fingerprint(real)
        self.backup_path = None
        for n in range(1, 1000):
            target = real.with_name(f"{real.name}.bak-v{version}" + ("" if n == 1 else f"-{n}"))
            if os.path.lexists(target):
                theirs = fileio.fingerprint(target)
                if mine is not None and mine.whole and theirs is not None and not mine.differs_from(theirs):
                    self.backup_path = target
                    return
                continue
            try:
                fileio.atomic_copy_file(source, target, no_clobber=True)
            except ProjectExistsError:
                continue  # another copy of the app wrote it just now: look at it
            except ProjectError:
                return
            self.backup_path = target
            return

    def _migrate(self, source: Path, version: int) -> None:
        self._raw_commit()
        try:
            migrations.migrate(self._memory, version)
        except sqlite3.Error as exc:
            raise CorruptProjectError(source, f"could not be upgraded from schema {version} ({exc})",
                                      "the file was not changed; report this with the file attached") from exc
        self.migrated_from = version

    def _check_layout(self, source: Path) -> None:
        kinds = {}
        for name, kind, sql in self._memory.execute(
                "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')"):
            if isinstance(name, str):
                virtual = isinstance(sql, str) and sql.lstrip()[:14].upper() == "CREATE VIRTUAL"
                kinds[name.lower()] = "virtual table" if virtual else kind
        for table in REQUIRED_COLUMNS:
            kind = kinds.get(table)
            if kind is not None and kind != "table":
                raise CorruptProjectError(
                    source, f"is not a project as Scaling Workbench writes it: '{table}' is a {kind}, not a "
                    "table (another program changed the file)", fileio._CORRUPT_ADVICE)
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

    def _drop_triggers(self) -> list[str]:
        """Remove triggers from the working copy; returns a notice for each.

        A project never has triggers: one in a file is SQL from someone else that would run
        on the app's own edits (and could refuse or change them). Saving writes the file
        without them.
        """
        self._raw_commit()
        names = [name for (name,) in self._memory.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
        notices = []
        for name in names:
            try:
                self._memory.execute('DROP TRIGGER "{}"'.format(str(name).replace('"', '""')))
            except sqlite3.Error as exc:
                self._memory.rollback()
                raise CorruptProjectError(self._path, f"holds a trigger {shown(name)} that cannot be removed "
                                          f"({exc})", fileio._CORRUPT_ADVICE) from None
            notices.append(f"removed the trigger {shown(name)} from the working copy (project files hold no "
                           "triggers; it would have run on your edits)")
        self._memory.commit()
        return notices

    def _validate_items(self) -> None:
        """Parse every stored payload once (on the first look at problems), recording failures.

        Deferred from open so that a project of 10,000 scenarios opens and lists at once;
        afterwards every mutation keeps the record up to date.
        """
        while not self.check_items_step(batch=0):
            pass

    #: Scenarios parsed per :meth:`check_items_step` by default (a caller in an event loop
    #: passes a smaller batch and stops after a time: the window does, see MainWindow)
    CHECK_BATCH = 250

    @_guarded
    def check_items_step(self, batch: int = CHECK_BATCH) -> bool:
        """Parse the next ``batch`` stored scenarios (all of them for 0) for :attr:`problems`;
        True once every payload has been looked at. A window calls this from its event loop
        so that counting the items a large project cannot load never holds up an edit.

        Each step reads the rows as they are now (by id, after the last one checked): a row
        edited between steps is checked as edited, one edited before its step by the edit."""
        self._check_open()
        if self._checked:
            return True
        self._raw_commit()
        if self._check_after is None:  # presets first: a few dozen at most
            self._check_after = -1
            for key, name, *raw in self._memory.execute(
                    f"SELECT key, name, {_RAW_COLUMNS.format('key')}, {_RAW_COLUMNS.format('name')}, "
                    f"{_RAW_COLUMNS.format('payload')} FROM hardware_presets"):
                key_type, key_raw, name_type, name_raw, payload_type, payload_raw = raw
                problem = _text_problem(key_type, key_raw, "key") or _text_problem(name_type, name_raw, "name")
                if problem is None:
                    payload, problem = _payload_text(payload_type, payload_raw)
                if problem is None:
                    problem = _preset_problem(payload)
                if problem:
                    self._invalid_presets[key] = (name, problem)
        query = (f"SELECT id, kind, name, {_RAW_COLUMNS.format('kind')}, {_RAW_COLUMNS.format('name')}, "
                 f"{_RAW_COLUMNS.format('notes')}, {_RAW_COLUMNS.format('payload')} FROM scenarios "
                 "WHERE id > ? ORDER BY id" + (f" LIMIT {int(batch)}" if batch > 0 else ""))
        seen = 0
        for sid, kind, name, *raw in self._memory.execute(query, (self._check_after,)).fetchall():
            seen += 1
            self._check_after = sid
            problem = _stored_scenario_problem(kind, raw)
            if problem:
                self._invalid_scenarios[sid] = (kind, name, problem)
            else:
                self._invalid_scenarios.pop(sid, None)
        if batch <= 0 or seen < batch:
            self._checked = True
        return self._checked

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
    @_guarded
    def problems(self) -> list[str]:
        """One line per stored scenario or preset that does not parse or validate.

        The first access parses every payload (about 50 us each); later ones are free.
        """
        self._check_open()
        self._validate_items()
        scenarios = sorted(
            f"scenario {_label(name, sid)} ({_kind_label(kind)}): {problem}{_unlisted(kind, name)}"
            for sid, (kind, name, problem) in self._invalid_scenarios.items()
        )
        presets = sorted(f"preset {_label(name, key)} ({_kind_label(key, 'key')}): {problem}{_unlisted(key, name)}"
                         for key, (name, problem) in self._invalid_presets.items())
        return presets + scenarios

    @property
    @_guarded
    def info(self) -> dict[str, str]:
        """The metadata table: schema_version, app_version (last written by), created."""
        self._check_open()
        rows = self._session.execute(select(MetadataEntry.key, MetadataEntry.value)).all()
        self._session.rollback()
        return {k: v for k, v in rows if isinstance(k, str) and isinstance(v, str)}

    #: Metadata keys the file manages itself; :meth:`set_meta` refuses them.
    RESERVED_META_KEYS = frozenset({"schema_version", "app_version", "created"})

    @_guarded
    def get_meta(self, key: str) -> str | None:
        """The metadata value stored under ``key`` (e.g. "workspace"), or None."""
        self._check_open()
        value = self._session.execute(
            select(MetadataEntry.value).where(MetadataEntry.key == key)).scalars().first()
        self._session.rollback()
        return value if isinstance(value, str) else None  # a damaged file may hold a NULL or a BLOB

    @_guarded
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
    def _write(self, target: Path, what: str, *, lock: bool = True, check: Callable[[bool], None] | None = None,
               no_clobber: bool = False) -> fileio.Fingerprint | None:
        """Write the working copy to ``target`` atomically; returns the written file's fingerprint.

        ``lock``: under :func:`fileio.locked_for_saving` (the file may be another copy's
        project, or another program's database); ``check``: see fileio._atomic_replace.
        """
        self._session.execute(
            update(MetadataEntry).where(MetadataEntry.key == "app_version").values(value=workbench.__version__)
        )
        self._raw_commit()
        return fileio.atomic_write_database(self._memory, target, what, lock=lock, check=check,
                                            no_clobber=no_clobber)

    def changed_on_disk(self) -> bool:
        """True when the file is no longer what this project opened or last saved.

        Another copy of the app, a sync tool or an editor replaced, changed or removed it
        (compared by size and content hash, and modification time for large files).
        """
        self._check_open()
        if self._fingerprint is None:
            return False
        return self._fingerprint.differs_from(fileio.fingerprint(fileio.real_path(self._path)))

    @_guarded
    def save(self, *, overwrite_external: bool = False) -> None:
        """Write the working copy over the file, atomically. Clears :attr:`dirty`.

        Through a symbolic link, the file it points to is written and the link stays.
        When :meth:`changed_on_disk`, raises :class:`ProjectChangedOnDiskError` and writes
        nothing, unless ``overwrite_external`` (the user chose to overwrite the other change).

        The check, the write and the rename happen under a lock on the file shared by every
        copy of the app (see :func:`storage.fileio.locked_for_saving`): of two copies saving
        the same project at once, one saves and the other, seeing that save, refuses with
        :class:`ProjectChangedOnDiskError`; never do both succeed. While another program
        holds an SQLite write lock on the file (or has it open in WAL mode), raises
        :class:`ProjectLockedError` and writes nothing.
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
        def unchanged_since_opened(exists: bool) -> None:
            # Run under the save lock (before writing and again just before the rename).
            if overwrite_external or not self.changed_on_disk():
                return
            if exists:
                problem = "not saved: it was changed by another program since you opened it"
                advice = "use Save As to keep both, or save again to overwrite"
            else:
                problem = "not saved: it was moved or deleted by another program since you opened it"
                advice = "use Save As to save it elsewhere, or save again to write it back here"
            raise ProjectChangedOnDiskError(self._path, problem, advice)

        # Errors name the path the user knows; fileio follows links.
        self._fingerprint = self._write(self._path, "save", check=unchanged_since_opened)
        self._dirty = False
        # Any recovery file is now older than the file, so stale: remove it.
        self._delete_recovery_files()
        recovery.discard_recovery(self._path)

    @_guarded
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
        self._fingerprint = self._write(new_path, "save")
        self._path = new_path
        self._read_only_reason = None
        self._dirty = False
        self.recovered = False
        self._delete_recovery_files()
        recovery.discard_recovery(new_path)

    @_guarded
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
            fileio.atomic_write_database(self._memory, target, "write the recovery file")  # ours alone: no lock
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
    @_guarded
    def list_scenarios(self, kind: str | None = None) -> list[ScenarioRecord]:
        """Saved scenarios ordered by kind and name, without parsing their payloads."""
        self._check_open()
        return [
            ScenarioRecord(sid, k, name, _as_text(notes), _parse_time(modified))
            for sid, k, name, notes, modified in self._listed_rows("id, kind, name, notes, modified", kind)
        ]

    def _listed_rows(self, columns: str, kind: str | None):
        """``columns`` of the listable scenarios (of ``kind``), ordered by kind and name. A
        damaged file's rows whose kind or name is not text (NULL, a BLOB, a number) are left
        out; ``problems`` names them."""
        query = f"SELECT {columns} FROM scenarios WHERE typeof(kind) = 'text' AND typeof(name) = 'text'"
        params: tuple[Any, ...] = ()
        if kind is not None:
            query += " AND kind = ?"
            params = (kind,)
        self._raw_commit()
        return self._rows_utf8_first(query + " ORDER BY kind, name", params)

    def _rows_utf8_first(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of ``query`` on the raw connection, text decoded by sqlite3 itself when all
        of it is UTF-8 (every file the app wrote): the lenient decoder the connection keeps for
        damaged files is a Python call per text value, half the time of a 10,000-row listing."""
        memory = self._memory
        memory.text_factory = str
        try:
            return memory.execute(query, params).fetchall()
        except sqlite3.OperationalError as exc:  # "Could not decode to UTF-8 column ..."
            if "decode" not in str(exc):
                raise
        finally:
            memory.text_factory = _DECODE
        return memory.execute(query, params).fetchall()

    @_guarded
    def list_scenarios_with_problems(self, kind: str | None = None) -> ScenarioListing:
        """:meth:`list_scenarios` and each scenario's problem, from one query.

        The problems are found lazily: :meth:`ScenarioListing.problem` parses a scenario's
        payload (read by the same query) the first time it is asked about, so a browser of
        10,000 scenarios fills at once and checks only the rows it shows. Once the project
        has looked at every payload (:attr:`problems`), its record is used and nothing is
        parsed. The listing is a snapshot: list again after changing the project.
        """
        self._check_open()
        return ScenarioListing(self, self._listed_rows("id, kind, name, notes, modified, payload", kind))

    @_guarded
    def problem_of(self, ref: Any) -> str | None:
        """Why the scenario ``ref`` (id, (kind, name) or record) cannot be loaded, or None."""
        row = self._scenario_row(ref)
        sid = row.id
        self._session.rollback()
        self._validate_items()
        entry = self._invalid_scenarios.get(sid)
        return entry[2] if entry else None

    @_guarded
    def preset_problem(self, key: str) -> str | None:
        """Why the preset ``key`` cannot be loaded, or None."""
        self._preset_row(key)
        self._session.rollback()
        self._validate_items()
        entry = self._invalid_presets.get(key)
        return entry[1] if entry else None

    @_guarded
    def scenario_count(self, kind: str | None = None) -> int:
        self._check_open()
        query = select(func.count()).select_from(SavedScenario)
        if kind is not None:
            query = query.where(SavedScenario.kind == kind)
        result = int(self._session.execute(query).scalar_one())
        self._session.rollback()
        return result

    def _scenario_row(self, ref: Any, *, usable: bool = True) -> SavedScenario:
        """The row of ``ref``; with ``usable``, refused (InvalidItemError) when a damaged file
        left it without a text kind or name (it can still be deleted)."""
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
                .order_by(SavedScenario.id)
            ).scalars().first()
            where = f"scenario {shown(name)} ({_kind_label(kind)})"
        else:
            raise TypeError("a scenario is referred to by id or (kind, name)")
        if row is None:
            raise ItemNotFoundError(self._path, f"there is no {where}", "it may have been deleted or renamed")
        if usable and not (isinstance(row.kind, str) and isinstance(row.name, str)):
            sid, what = row.id, "kind" if not isinstance(row.kind, str) else "name"
            self._session.rollback()
            raise InvalidItemError(self._path, f"scenario #{sid} is damaged: its {what} is not text",
                                   "delete it")
        return row

    def _name_taken(self, kind: str, name: str, except_id: int | None = None) -> bool:
        query = select(SavedScenario.id).where(SavedScenario.kind == kind, SavedScenario.name == name)
        return any(found != except_id for found in self._session.execute(query).scalars())

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

    @_guarded
    def load_scenario(self, ref: Any) -> Scenario:
        """The scenario ``ref`` (an id, a ``(kind, name)`` pair or a record), parsed and validated."""
        row = self._scenario_row(ref)
        sid, kind, name = row.id, row.kind, row.name
        self._session.rollback()
        self._raw_commit()
        # The stored bytes, not the leniently decoded text: damaged text must not load as data.
        payload, problem = _payload_text(*self._memory.execute(
            f"SELECT {_RAW_COLUMNS.format('payload')} FROM scenarios WHERE id = ?", (sid,)).fetchone())
        if problem is not None:
            raise InvalidItemError(self._path, f"scenario {shown(name)} ({_kind_label(kind)}) cannot be loaded: "
                                   f"{problem}", "delete it, or restore the file from a backup")
        scenarios = _scenarios_module()
        try:
            scenario = scenarios.scenario_from_json(payload)
        except _scenario_errors() as exc:
            raise InvalidItemError(self._path, f"scenario {shown(name)} ({_kind_label(kind)}) cannot be loaded: "
                                   f"{shorten(str(exc), MAX_PROBLEM_DETAIL)}",
                                   "fix its values and save it again, or delete it") from exc
        if scenario.kind != kind:
            raise InvalidItemError(self._path, f"scenario {shown(name)} is stored as {shown(kind)} but holds "
                                   f"a {shown(scenario.kind)} scenario", "delete it")
        self._invalid_scenarios.pop(sid, None)
        return scenario

    @_guarded
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
            .order_by(SavedScenario.id)
        ).scalars().first()
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

    @_guarded
    def rename_scenario(self, ref: Any, new_name: str) -> None:
        row = self._scenario_row(ref)
        new_name = _clean_name(new_name)
        if new_name == row.name:
            self._session.rollback()
            return
        if self._name_taken(row.kind, new_name, except_id=row.id):
            kind = row.kind
            self._session.rollback()
            raise NameConflictError(self._path, f"a {_kind_label(kind)} scenario named {shown(new_name)} already "
                                    "exists", "choose another name")
        row.name = new_name
        row.modified = utcnow()
        self._mutated()
        if row.id in self._invalid_scenarios:
            kind, _, problem = self._invalid_scenarios[row.id]
            self._invalid_scenarios[row.id] = (kind, new_name, problem)

    @_guarded
    def duplicate_scenario(self, ref: Any, new_name: str | None = None) -> int:
        """Copy a scenario; without ``new_name`` the copy is called "NAME copy" ("NAME copy 2", ...)."""
        row = self._scenario_row(ref)
        if new_name is None:
            name = self._unique_name(row.kind, row.name, lambda n: " copy" if n == 0 else f" copy {n + 1}")
        else:
            name = _clean_name(new_name)
            if self._name_taken(row.kind, name):
                self._session.rollback()
                raise NameConflictError(self._path, f"a {_kind_label(row.kind)} scenario named {shown(name)} "
                                        "already exists", "choose another name")
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

    @_guarded
    def delete_scenario(self, ref: Any) -> None:
        row = self._scenario_row(ref, usable=False)
        sid = row.id
        self._session.execute(delete(SavedScenario).where(SavedScenario.id == sid))
        self._session.expunge_all()
        self._mutated()
        self._invalid_scenarios.pop(sid, None)

    @_guarded
    def set_notes(self, ref: Any, notes: str) -> None:
        row = self._scenario_row(ref)
        notes = _clean_notes(notes)
        if row.notes == notes:
            self._session.rollback()
            return
        row.notes = notes
        row.modified = utcnow()
        self._mutated()

    @_guarded
    def export_scenario(self, ref: Any, path: str | os.PathLike[str]) -> Path:
        """Write a scenario to a small JSON file (format "scaling-workbench-scenario")."""
        row = self._scenario_row(ref)
        name, notes = row.name, row.notes
        notes = _as_text(notes)
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

    @_guarded
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
    @_guarded
    def list_presets(self) -> list[PresetRecord]:
        """Presets, built-in first, then by name, without parsing their payloads."""
        self._check_open()
        self._raw_commit()
        return [
            PresetRecord(key, name, _as_text(vendor), _stored_flag(builtin), _parse_time(modified))
            for key, name, vendor, builtin, modified in self._memory.execute(
                f"SELECT key, name, vendor, builtin, modified FROM hardware_presets {_LISTED_PRESETS}")
        ]

    def _preset_row(self, key: str) -> HardwarePreset:
        self._check_open()
        row = self._session.get(HardwarePreset, key)
        if row is None:
            raise ItemNotFoundError(self._path, f"there is no hardware preset {shown(key)}",
                                    "it may have been deleted")
        return row

    @_guarded
    def get_preset(self, key: str) -> Hardware:
        row = self._preset_row(key)
        builtin, name = row.builtin, row.name
        self._session.rollback()
        self._raw_commit()
        hw, problem = _preset_from_stored(key, builtin, *self._memory.execute(
            f"SELECT {_RAW_COLUMNS.format('payload')} FROM hardware_presets WHERE key = ?", (key,)).fetchone())
        if hw is not None:
            return hw
        raise InvalidItemError(self._path, f"preset {_label(name, key)} ({_kind_label(key, 'key')}) cannot be "
                               f"loaded: {problem}", "delete it or fix it and save it again")

    @_guarded
    def usable_presets(self) -> dict[str, Hardware]:
        """Every preset that loads, by key, in :meth:`list_presets`' order, from one query
        (what :meth:`get_preset` gives for each listed key; a query and a transaction each would
        be most of an open's time for the presets). Those that do not load are left out:
        :meth:`preset_problem` and :attr:`problems` say why."""
        self._check_open()
        self._raw_commit()
        usable = {}
        for key, builtin, key_type, key_raw, *payload in self._memory.execute(
                f"SELECT key, builtin, {_RAW_COLUMNS.format('key')}, {_RAW_COLUMNS.format('payload')} "
                f"FROM hardware_presets {_LISTED_PRESETS}"):
            if _text_problem(key_type, key_raw, "key"):
                continue  # a key read with U+FFFD is no preset's key: get_preset cannot find it
            hw, _problem = _preset_from_stored(key, _stored_flag(builtin), *payload)
            if hw is not None:
                usable[key] = hw
        return usable

    @_guarded
    def add_preset(self, hw: Hardware) -> str:
        """Add a user preset (stored with builtin=False); returns its key."""
        self._check_open()
        if self._session.get(HardwarePreset, hw.key) is not None:
            self._session.rollback()
            raise NameConflictError(self._path, f"a hardware preset with key {shown(hw.key)} already exists",
                                    "use another name, or update_preset to change it")
        hw = hw.with_changes(builtin=False)
        now = utcnow()
        self._session.add(HardwarePreset(key=hw.key, name=hw.name, vendor=hw.vendor, builtin=False,
                                         payload=json.dumps(hw.to_dict()), created=now, modified=now))
        self._mutated()
        self._invalid_presets.pop(hw.key, None)
        return hw.key

    @_guarded
    def update_preset(self, key: str, hw: Hardware) -> None:
        """Replace the user preset ``key`` with ``hw`` (its key stays ``key``)."""
        row = self._preset_row(key)
        if row.builtin:
            name = row.name
            self._session.rollback()
            raise BuiltinPresetError(self._path, f"the built-in preset {shown(name)} is read-only",
                                     "duplicate it first and edit the copy")
        hw = hw.with_changes(key=key, builtin=False)
        row.name = hw.name
        row.vendor = hw.vendor
        row.payload = json.dumps(hw.to_dict())
        row.modified = utcnow()
        self._mutated()
        self._invalid_presets.pop(key, None)

    @_guarded
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

    @_guarded
    def delete_preset(self, key: str) -> None:
        row = self._preset_row(key)
        if row.builtin:
            name = row.name
            self._session.rollback()
            raise BuiltinPresetError(self._path, f"the built-in preset {shown(name)} cannot be deleted",
                                     "only your own presets can be deleted")
        self._session.execute(delete(HardwarePreset).where(HardwarePreset.key == key))
        self._session.expunge_all()
        self._mutated()
        self._invalid_presets.pop(key, None)


def _preset_from_stored(key: str, builtin: object, payload_type: str, payload_raw: bytes | None,
                        ) -> tuple[Hardware | None, str | None]:
    """A stored preset's hardware (its key and builtin flag from the row), or None and why it
    does not load, from the payload's stored type and bytes."""
    payload, problem = _payload_text(payload_type, payload_raw)
    if problem is None:
        return _parsed_preset(payload, key=key, builtin=bool(builtin))
    return None, problem


def _parsed_preset(payload: str, **changes: Any) -> tuple[Hardware | None, str | None]:
    """The hardware of a preset's JSON (with ``changes``), or None and why it does not load."""
    try:
        hw = Hardware.from_dict(json.loads(payload))
        return (hw.with_changes(**changes) if changes else hw), None
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        return None, shorten(str(exc) or type(exc).__name__, MAX_PROBLEM_DETAIL)


def _stored_flag(value: object) -> bool:
    """A stored boolean column as listed: a damaged file's text or BLOB there reads as False."""
    return bool(value) if isinstance(value, int | float) else False


#: the presets :meth:`Project.list_presets` lists (a damaged file's rows whose key or name is
#: not text are left out), in its order: built-in first, then by name
_LISTED_PRESETS = "WHERE typeof(key) = 'text' AND typeof(name) = 'text' ORDER BY builtin DESC, name, key"


def _as_text(value: object) -> str:
    """A free-text column (notes, vendor) as text, whatever a damaged file holds there."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return _DECODE(value)
    return "" if value is None else str(value)


def _parse_time(value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return UNKNOWN_TIME
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return UNKNOWN_TIME


# The SQL type of a column and its raw bytes (text as stored, before any decoding).
_RAW_COLUMNS = "typeof({0}), CAST({0} AS BLOB)"


def _text_problem(sql_type: str, raw: bytes | None, column: str) -> str | None:
    """Why a stored value is not usable text (a damaged or altered file), or None."""
    if sql_type == "text":
        try:
            (raw or b"").decode("utf-8")
        except UnicodeDecodeError:
            return f"its {column} is damaged (not valid UTF-8 text)"
        return None
    if sql_type == "null":
        return f"its {column} is missing (NULL)"
    if sql_type == "blob":
        return f"its {column} is binary data, not text"
    return f"its {column} is a number, not text"


def _payload_text(sql_type: str, raw: bytes | None) -> tuple[str | None, str | None]:
    """(the stored JSON as text, None) or (None, the problem). A BLOB of UTF-8 JSON is read."""
    if sql_type not in ("text", "blob"):
        return None, "it holds no data (NULL)" if sql_type == "null" else "its data is a number, not JSON"
    try:
        return (raw or b"").decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "its data is damaged (not valid UTF-8 text)"


def _scenario_problem(kind: object, payload: str) -> str | None:
    """Why a stored scenario's JSON does not load as a scenario of ``kind``, or None."""
    try:
        scenario = _scenarios_module().scenario_from_json(payload)
    except _scenario_errors() as exc:
        return shorten(str(exc) or type(exc).__name__, MAX_PROBLEM_DETAIL)
    if scenario.kind != kind:
        return f"stored as {shown(kind)} but holds a {shown(scenario.kind)} scenario"
    return None


def _preset_problem(payload: str) -> str | None:
    return _parsed_preset(payload)[1]


def _label(value: object, number: object) -> str:
    """How a stored item is named in a message: its name, or its number when it has none."""
    return shown(value) if isinstance(value, str) else f"#{number}" if isinstance(number, int) else shown(number)


def _kind_label(kind: object, word: str = "kind") -> str:
    """A kind (or preset key) in parentheses in a message: as it is, cut and escaped."""
    if isinstance(kind, str):
        return shorten(repr(kind)[1:-1])
    return f"{word} {shown(kind)}"


def _unlisted(kind: object, name: object) -> str:
    if isinstance(kind, str) and isinstance(name, str):
        return ""
    return "; it is left out of the list"


def read_scenario_file(path: Path) -> tuple[Scenario, str, str]:
    """Parse a scenario file: returns (scenario, name, notes) or raises InvalidItemError."""
    advice = "choose a file exported by Scaling Workbench"
    path = Path(path)
    try:
        # A named pipe or a device is never read (it could block forever or never end).
        data = fileio.read_regular(path, MAX_SCENARIO_FILE_BYTES + 1)
        if len(data) > MAX_SCENARIO_FILE_BYTES:
            raise InvalidItemError(path, f"is too large for a scenario file (over {MAX_SCENARIO_FILE_BYTES} "
                                   "bytes)", advice)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise InvalidItemError(path, "no such file", "check the path") from None
    except fileio.NotRegularFileError as exc:
        raise InvalidItemError(path, f"is {exc.kind}, not a scenario file", advice) from None
    except UnicodeDecodeError:
        raise InvalidItemError(path, "is not a scenario file (not UTF-8 text)", advice) from None
    except OSError as exc:
        raise InvalidItemError(path, f"cannot be read ({exc.strerror})", "check the permissions") from None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidItemError(path, f"is not a scenario file (not JSON: {shorten(str(exc), MAX_PROBLEM_DETAIL)})",
                               advice) from None
    if not isinstance(document, dict) or document.get("format") != SCENARIO_FILE_FORMAT:
        raise InvalidItemError(path, "is not a Scaling Workbench scenario file (no \"format\": "
                               f"\"{SCENARIO_FILE_FORMAT}\")", advice)
    version = document.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version > SCENARIO_FILE_VERSION:
        raise InvalidItemError(path, f"was written in scenario file format {shown(version, 20)}; this version reads "
                               f"up to {SCENARIO_FILE_VERSION}", "use a newer Scaling Workbench")
    body = document.get("scenario")
    if not isinstance(body, dict):
        raise InvalidItemError(path, "has no \"scenario\" object", advice)
    try:
        name = _clean_name(document.get("name", ""), "name")
        notes = _clean_notes(document.get("notes", ""))
        scenario = _scenarios_module().scenario_from_json(json.dumps(body))
    except _scenario_errors() as exc:
        raise InvalidItemError(path, f"holds an invalid scenario: {shorten(str(exc), MAX_PROBLEM_DETAIL)}",
                               "fix the file and import it again") from None
    return scenario, name, notes


__all__ = [
    "Project",
    "ScenarioListing",
    "ScenarioRecord",
    "PresetRecord",
    "default_project_path",
    "open_or_create_default",
    "read_scenario_file",
    "SCENARIO_FILE_FORMAT",
]
