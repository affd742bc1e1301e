"""Low-level file work: recognising a project file, loading it, writing copies atomically.

Loading never writes to the source: the header is read as bytes, then a read-only SQLite
connection (``mode=ro``) takes a shared lock with a short busy timeout (a lock held by
another process gives :class:`ProjectLockedError`, never a hang) and the backup API copies
the database into memory.

Writing goes to ``NAME.tmp-XXXXXXXX`` in the target's folder (same file system, so the
final rename is atomic), is fsynced, renamed over the target with ``os.replace`` and the
folder is fsynced. A crash at any point leaves either the old or the new file; a stray
temporary file never carries the project's name or extension.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import shutil
import sqlite3
import stat
import struct
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from storage.errors import (
    CorruptProjectError,
    NewerVersionError,
    NotAProjectError,
    ProjectError,
    ProjectLockedError,
    ProjectNotFoundError,
    ProjectSaveError,
)
from storage.models import APPLICATION_ID, SCHEMA_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
# Seconds to wait for another process's lock before giving up with ProjectLockedError.
BUSY_TIMEOUT = 0.25
TEMP_MARKER = ".tmp-"
# A temporary file of our naming pattern untouched for this long is left over from a killed
# save (a save in progress rewrites and renames its file within seconds).
STALE_TEMP_SECONDS = 300
# Files up to this size are hashed whole for change detection; larger ones by their head.
FINGERPRINT_WHOLE_BYTES = 4 * 2**20
FINGERPRINT_HEAD_BYTES = 64 * 2**10
# Files SQLite keeps beside a database while writing it; left behind by a crash.
JOURNAL_SUFFIXES = ("-journal", "-wal")

_NOT_A_PROJECT_ADVICE = "open a .swbproj file saved by Scaling Workbench (the file was not changed)"
_CORRUPT_ADVICE = "restore it from a backup or a .bak copy beside it (the file was not changed)"


@dataclass(frozen=True)
class Header:
    """The facts of an SQLite header that matter before opening the database."""

    page_size: int
    page_count: int | None  # None when the header's in-header size is not valid
    user_version: int
    application_id: int


def read_header(path: Path) -> Header:
    """Recognise a project by its first 100 bytes, or raise a :class:`ProjectError`."""
    try:
        st = path.stat()
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise ProjectNotFoundError(path, f"the folder {path.parent} does not exist",
                                       "check the path") from None
        raise ProjectNotFoundError(path, "no such file", "check the path") from None
    except OSError as exc:
        raise ProjectError(path, f"cannot be read ({exc.strerror})", "check the path and permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise NotAProjectError(path, "is a folder, not a project file", "choose a .swbproj file")
    if not stat.S_ISREG(st.st_mode):
        raise NotAProjectError(path, "is not a regular file", "choose a .swbproj file")
    if st.st_size == 0:
        raise NotAProjectError(path, "is empty, not a Scaling Workbench project", _NOT_A_PROJECT_ADVICE)
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEADER_SIZE)
    except OSError as exc:
        raise ProjectError(path, f"cannot be read ({exc.strerror})", "check the permissions") from None
    if not head.startswith(SQLITE_MAGIC):
        raise NotAProjectError(
            path, f"is not a Scaling Workbench project ({_describe_content(head)})", _NOT_A_PROJECT_ADVICE
        )
    if len(head) < HEADER_SIZE:
        raise CorruptProjectError(path, "is damaged: the database header is cut short", _CORRUPT_ADVICE)
    (raw_page_size,) = struct.unpack(">H", head[16:18])
    page_size = 65536 if raw_page_size == 1 else raw_page_size
    change_counter, in_header_pages = struct.unpack(">II", head[24:32])
    (valid_for,) = struct.unpack(">I", head[92:96])
    (user_version,) = struct.unpack(">I", head[60:64])
    (application_id,) = struct.unpack(">I", head[68:72])
    header = Header(
        page_size=page_size,
        page_count=in_header_pages if in_header_pages and valid_for == change_counter else None,
        user_version=user_version,
        application_id=application_id,
    )
    if application_id != APPLICATION_ID:
        raise NotAProjectError(
            path, "is an SQLite database but not a Scaling Workbench project", _NOT_A_PROJECT_ADVICE
        )
    if user_version > SCHEMA_VERSION:
        raise NewerVersionError(path, user_version, SCHEMA_VERSION)
    if page_size < 512 or page_size & (page_size - 1):
        raise CorruptProjectError(path, "is damaged: invalid page size in the header", _CORRUPT_ADVICE)
    if st.st_size % page_size or (header.page_count and header.page_count * page_size > st.st_size):
        raise CorruptProjectError(
            path, "is damaged: the file is truncated (shorter than its header says)", _CORRUPT_ADVICE
        )
    return header


def _describe_content(head: bytes) -> str:
    if head.startswith(b"\x89PNG"):
        return "it is a PNG image"
    if head[:3] == b"\xff\xd8\xff":
        return "it is a JPEG image"
    if head.startswith(b"%PDF"):
        return "it is a PDF document"
    if head.startswith(b"PK\x03\x04"):
        return "it is a ZIP archive"
    if head.lstrip().startswith((b"{", b"[")):
        return "it looks like a JSON file; scenario files are imported, not opened"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "unrecognised binary content"
    return "it is a text file"


def _ro_uri(path: Path) -> str:
    return Path(os.path.abspath(path)).as_uri() + "?mode=ro"


@dataclass
class Loaded:
    """A database copied into memory, and how journal files beside it were handled."""

    memory: sqlite3.Connection
    header: Header
    journals: tuple[Path, ...] = ()  # leftover journal files found beside the file
    notice: str | None = None  # one line for the user about those journal files


def load_into_memory(path: Path) -> tuple[sqlite3.Connection, Header]:
    """Check ``path`` and copy its database into a new in-memory connection.

    Raises the matching :class:`ProjectError`; the file is never written.
    """
    loaded = load(path)
    return loaded.memory, loaded.header


def load(path: Path) -> Loaded:
    """Check ``path`` and copy its database into memory; nothing beside it is ever written.

    Without journal files beside it the file is read through a read-only connection. A
    leftover ``-journal`` or ``-wal`` (see :func:`leftover_journals`) would make SQLite
    roll back or replay it, which a read-only connection cannot do (and which would write
    beside the file), so the file and its journals are copied to a private scratch folder
    and opened there instead; if the journal cannot be applied, the file is read as it is.
    """
    header = read_header(path)
    journals = tuple(leftover_journals(path))
    if not journals:
        return Loaded(_copy_into_memory(path, _ro_uri(path), header), header)
    return _load_beside_journals(path, header, journals)


def _copy_into_memory(path: Path, uri: str, header: Header | None) -> sqlite3.Connection:
    """Copy the database at ``uri`` into memory and check it; errors name ``path``."""
    try:
        source = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise _classify(path, exc) from None
    memory = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        try:
            # Take the shared lock ourselves, with the busy timeout: Connection.backup() would
            # retry forever while another process holds an exclusive lock.
            source.execute("BEGIN")
            source.execute("SELECT count(*) FROM sqlite_master").fetchone()
            source.backup(memory)
            source.execute("ROLLBACK")
        finally:
            source.close()
        result = memory.execute("PRAGMA quick_check").fetchall()
        if [tuple(r) for r in result] != [("ok",)]:
            first = str(result[0][0]) if result else "unknown problem"
            raise CorruptProjectError(path, f"is damaged: {first[:200]}", _CORRUPT_ADVICE)
        if header is not None and (
                memory.execute("PRAGMA application_id").fetchone()[0] != header.application_id
                or memory.execute("PRAGMA user_version").fetchone()[0] != header.user_version):
            raise CorruptProjectError(path, "is damaged: its header is inconsistent", _CORRUPT_ADVICE)
    except ProjectError:
        memory.close()
        raise
    except sqlite3.Error as exc:
        memory.close()
        raise _classify(path, exc) from None
    return memory


def _describe_journals(journals: Iterable[Path]) -> str:
    names = [j.name for j in journals]
    kind = "journal file" if len(names) == 1 else "journal files"
    return f"a {kind} {' and '.join(names)} from an interrupted write"


def _load_beside_journals(path: Path, header: Header, journals: tuple[Path, ...]) -> Loaded:
    what = _describe_journals(journals)
    with tempfile.TemporaryDirectory(prefix="scaling-workbench-open-") as scratch:
        copy = Path(scratch) / "project.swbproj"

        def fresh_copy(with_journals: bool) -> None:
            for leftover in Path(scratch).iterdir():
                leftover.unlink()
            try:
                shutil.copyfile(path, copy)
                if with_journals:
                    for journal in journals:
                        suffix = journal.name[len(real_path(path).name):]
                        shutil.copyfile(journal, copy.with_name(copy.name + suffix))
            except OSError as exc:
                raise ProjectError(
                    path, f"cannot be read: copying it to a scratch folder to apply the journal beside it "
                    f"failed ({exc.strerror})",
                    f"free some space in {tempfile.gettempdir()} and check the permissions "
                    "(the file was not changed)") from None

        def open_copy() -> Loaded:
            # Read-write, in the scratch folder only: SQLite rolls back (or replays) the journal.
            memory = _copy_into_memory(path, copy.as_uri(), None)
            try:
                try:
                    fixed = read_header(copy)
                except NewerVersionError as exc:
                    raise NewerVersionError(path, exc.found, exc.supported) from None
                except ProjectError as exc:
                    raise CorruptProjectError(path, exc.problem, _CORRUPT_ADVICE) from None
                if memory.execute("PRAGMA user_version").fetchone()[0] != fixed.user_version:
                    raise CorruptProjectError(path, "is damaged: its header is inconsistent", _CORRUPT_ADVICE)
            except BaseException:
                memory.close()
                raise
            return Loaded(memory, fixed, journals)

        fresh_copy(with_journals=True)
        try:
            loaded = open_copy()
            loaded.notice = (f"{what} sits beside the project; it was applied to this working copy "
                             "only (an unfinished change is rolled back), the file itself was not changed")
            return loaded
        except (NewerVersionError, ProjectLockedError):
            raise
        except ProjectError as exc:
            first = exc.problem
        fresh_copy(with_journals=False)
        try:
            loaded = open_copy()
        except ProjectError as exc:
            raise CorruptProjectError(
                path, f"cannot be read: {what} sits beside the project and it cannot be read with it "
                f"({first}) or without it ({exc.problem})",
                "restore it from a backup or a .bak copy beside it (the file was not changed)") from None
        loaded.notice = (f"{what} sits beside the project and could not be applied ({first}); the file "
                         "was opened as it is and may hold part of an unfinished change: check it, "
                         "then use Save As")
        return loaded


def leftover_journals(path: Path) -> list[Path]:
    """SQLite journal files beside ``path`` that SQLite would act on when opening it.

    ``NAME-journal`` counts when it is not empty and its first byte is not zero (SQLite's
    own test for a journal that may need a rollback); ``NAME-wal`` when it is not empty.
    They belong beside the real file, so a symbolic link is followed first.
    """
    real = real_path(path)
    found = []
    for suffix in JOURNAL_SUFFIXES:
        side = real.with_name(real.name + suffix)
        try:
            st = os.stat(side)
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                continue
            if suffix == "-journal":
                with open(side, "rb") as handle:
                    if handle.read(1) == b"\x00":
                        continue
        except OSError:
            continue
        found.append(side)
    return found


def _classify(path: Path, exc: sqlite3.Error) -> ProjectError:
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return ProjectLockedError(
            path, "is locked by another program", "close the other program (or wait for it) and try again"
        )
    if "readonly" in lowered or "read-only" in lowered:
        # SQLite wants to roll back a journal (it appeared after we looked for one).
        return ProjectLockedError(
            path, "is being written by another program, or a write to it was interrupted",
            "close the other program and try again (the file was not changed)")
    if "unable to open" in lowered:
        return ProjectError(path, "cannot be opened", "check that the file exists and is readable")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return CorruptProjectError(path, f"is damaged ({text})", _CORRUPT_ADVICE)
    return CorruptProjectError(path, f"cannot be read as a project ({text})", _CORRUPT_ADVICE)


# -- writing --------------------------------------------------------------------------------


def real_path(path: Path) -> Path:
    """The file ``path`` stands for, symbolic links followed (it need not exist).

    Writes go to the real file: ``os.replace`` onto a link would replace the link itself
    with a regular file and leave the file it pointed to stale.
    """
    return Path(os.path.realpath(path))


def temp_path_for(target: Path) -> Path:
    return target.with_name(f"{target.name}{TEMP_MARKER}{secrets.token_hex(4)}")


def _create_temp(target: Path) -> Path:
    """Create an empty temporary file beside ``target`` (mode from the umask, or the target's)."""
    for _ in range(100):
        tmp = temp_path_for(target)
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode) | stat.S_IWUSR)
        except FileNotFoundError:
            pass
        return tmp
    raise FileExistsError(errno.EEXIST, "could not create a temporary file", str(target))


def copy_database(source: sqlite3.Connection, dest: Path) -> None:
    """Copy the whole database of ``source`` into the (empty) file ``dest``: the writer step."""
    conn = sqlite3.connect(dest, isolation_level=None)
    try:
        # A scratch file: no rollback journal and no syncs here; fsync_file follows.
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        source.backup(conn)
    finally:
        conn.close()


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename durable; not every platform or file system can, which is fine."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _save_error(target: Path, exc: BaseException, what: str) -> ProjectSaveError:
    if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "full" in str(exc).lower():
        problem = f"could not {what}: the disk is full"
        advice = "free some space or use Save As to save elsewhere; the previous file is unchanged"
    elif isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        problem = f"could not {what}: permission denied"
        advice = "use Save As to save elsewhere; the previous file is unchanged"
    elif not target.parent.is_dir():
        problem = f"could not {what}: the folder {target.parent} does not exist"
        advice = "choose an existing folder"
    else:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problem = f"could not {what} ({reason})"
        advice = "try again or use Save As; the previous file is unchanged"
    return ProjectSaveError(target, problem, advice)


def _atomic_replace(target: Path, fill: Callable[[Path], None], what: str) -> None:
    """Write ``target`` atomically: ``fill`` writes a temp file beside it, which is fsynced and
    renamed over the target, then the folder is fsynced. On any failure the target is as it was
    and the temp file is removed. A symbolic link is followed: the file it points to is
    replaced and the link stays. Errors name ``target`` as given."""
    real = real_path(target)
    tmp: Path | None = None
    try:
        tmp = _create_temp(real)
        fill(tmp)
        fsync_file(tmp)
        os.replace(tmp, real)
        tmp = None
    except (OSError, sqlite3.Error) as exc:
        raise _save_error(target, exc, what) from exc
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    fsync_dir(real.parent)


def atomic_write_database(source: sqlite3.Connection, target: Path, what: str = "save") -> None:
    """Write ``source`` to ``target`` atomically (temp file, fsync, rename, fsync folder).

    Refused while a journal file sits beside the target: SQLite would later apply that
    journal to the new file and damage it.
    """
    if not target.parent.is_dir():
        raise ProjectSaveError(target, f"could not {what}: the folder {target.parent} does not exist",
                               "choose an existing folder")
    journals = leftover_journals(target)
    if journals:
        raise ProjectSaveError(
            target, f"could not {what}: {_describe_journals(journals)} (or another program writing it) "
            "sits beside the file", "close the other program and try again, or use Save As to save elsewhere")
    _atomic_replace(target, lambda tmp: copy_database(source, tmp), what)


def atomic_write_bytes(data: bytes, target: Path, what: str = "write") -> None:
    _atomic_replace(target, lambda tmp: tmp.write_bytes(data), what)


def atomic_copy_file(source: Path, target: Path, what: str = "write a backup copy") -> None:
    _atomic_replace(target, lambda tmp: shutil.copyfile(source, tmp), what)


@dataclass(frozen=True)
class Fingerprint:
    """What a file looked like: to tell whether another program changed it since."""

    mtime_ns: int
    size: int
    digest: str  # sha256 of the whole file when ``whole``, else of its first 64 KiB
    whole: bool

    def differs_from(self, other: Fingerprint | None) -> bool:
        if other is None:
            return True
        if self.size != other.size or self.digest != other.digest or self.whole != other.whole:
            return True
        # Same bytes: a touched file (a sync tool restoring it) is not a change. Only the
        # head of a large file was hashed, so there the time must match too.
        return not self.whole and self.mtime_ns != other.mtime_ns


def fingerprint(path: Path) -> Fingerprint | None:
    """The file's (mtime, size, content hash), or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            whole = st.st_size <= FINGERPRINT_WHOLE_BYTES
            data = handle.read(FINGERPRINT_WHOLE_BYTES if whole else FINGERPRINT_HEAD_BYTES)
    except OSError:
        return None
    return Fingerprint(st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest(), whole)


def remove_stale_temps(path: Path, names: Iterable[str], *, now: float | None = None) -> list[Path]:
    """Delete temporary files left beside ``path`` by killed writes; returns those deleted.

    Only regular files named exactly ``NAME.tmp-XXXXXXXX`` (8 lowercase hex digits, the
    pattern :func:`temp_path_for` makes) for one of ``names`` are candidates, and only
    when they are no newer than ``path`` (a later save finished) or have not been touched
    for :data:`STALE_TEMP_SECONDS` (a save in progress, perhaps by another copy of the app,
    is left alone). Anything else is never touched.
    """
    try:
        reference = os.stat(path).st_mtime_ns
    except OSError:
        return []
    cutoff = int(((time.time() if now is None else now) - STALE_TEMP_SECONDS) * 1e9)
    pattern = re.compile("|".join(re.escape(name) + re.escape(TEMP_MARKER) + "[0-9a-f]{8}" for name in names))
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry.name) or entry.name == path.name:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_mtime_ns <= reference or st.st_mtime_ns < cutoff:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return sorted(removed)


def read_only_reason(path: Path) -> str | None:
    """Why ``path`` cannot be saved in place, or None.

    Mode bits are checked as well as ``os.access``: root may write anything, but a file
    marked read-only is the user's wish all the same. A symbolic link is followed: the
    file it points to, and that file's folder, are what a save writes.
    """
    path = real_path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    if st is not None:
        if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            return "the file is marked read-only"
        if not os.access(path, os.W_OK):
            return "you do not have permission to write the file"
    parent = path.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"the folder {parent} is not writable"
    return None
