"""Low-level file work: recognising a project file, loading it, writing copies atomically.

Loading never writes to the source or beside it: the path must name a regular file (a
named pipe would block a reader forever), the header is read as bytes, then a read-only
SQLite connection (``mode=ro``) takes a shared lock with a short busy timeout (a lock held
by another process gives :class:`ProjectLockedError`, never a hang) and the backup API
copies the database into memory. A file in SQLite's WAL mode, or one with a journal beside
it, is copied to a private scratch folder and read there, so no ``-wal``, ``-shm`` or
journal is ever created, changed or removed beside it.

Writing goes to ``NAME.tmp-XXXXXXXX`` in the target's folder (same file system, so the
final rename is atomic), is fsynced, renamed over the target with ``os.replace`` and the
folder is fsynced. A crash at any point leaves either the old or the new file; a stray
temporary file never carries the project's name or extension. Saved files are always in
SQLite's rollback-journal mode.

Saving in place is serialised by :func:`locked_for_saving`: advisory locks on the file
itself (open file description locks, Linux) exclude other copies of this app saving the
same file, and SQLite writers of it (the lock SQLite itself takes to write, "RESERVED"),
for the whole check, write, fsync and rename. See that function for the details and the
limits on other systems.
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
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from storage.errors import (
    CorruptProjectError,
    NewerVersionError,
    NotAProjectError,
    ProjectError,
    ProjectExistsError,
    ProjectLockedError,
    ProjectNotFoundError,
    ProjectSaveError,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks (see locked_for_saving)
    fcntl = None  # type: ignore[assignment]
from storage.constants import APPLICATION_ID, SCHEMA_VERSION

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
# What SQLite keeps in each file beside a database, for messages.
_SIDECAR_ROLES = {"-journal": "its rollback journal", "-wal": "its write-ahead log",
                  "-shm": "its write-ahead log index"}

# Seconds a save waits for another copy of the app that is saving the same file.
SAVE_LOCK_TIMEOUT = 30.0
# Seconds a save waits for another program's SQLite write transaction on the file to end.
WRITER_TIMEOUT = 1.0
# SQLite's locks (os_unix.c): bytes of the database file from the "pending byte" on
# (pending, reserved, then 510 shared bytes), and in WAL mode bytes of NAME-shm: 120 the
# write lock (121 checkpoint, 122 recovery) and 128 the "DMS" byte, on which every
# connection that has the database open holds a read lock.
_PENDING_BYTE = 0x40000000
_RESERVED_BYTE = _PENDING_BYTE + 1
_SQLITE_LOCK_BYTES = 512
_WAL_WRITE_BYTE = 120
_WAL_LOCK_BYTES = 3
_WAL_DMS_BYTE = 128
# Copies of this app saving a file lock this byte of it, far from any SQLite uses.
_SAVE_LOCK_BYTE = 1 << 40
# Open file description locks (Linux): unlike classic POSIX locks they are not dropped when
# the process closes another descriptor of the file, and they conflict with the classic
# locks SQLite takes, even those of this process. ``struct flock`` is packed by hand, so
# only where its layout is known (64-bit Linux).
_OFD = (fcntl is not None and sys.platform.startswith("linux") and hasattr(fcntl, "F_OFD_SETLK")
        and struct.calcsize("P") == 8)
_FLOCK_LAYOUT = "hhqqi4x"
_OPEN_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
# A file system that cannot lock (some network and FUSE file systems) answers with these:
# saving there goes on without the locks, as it did before they existed.
_NO_LOCKS_HERE = frozenset(code for code in (getattr(errno, name, None) for name in (
    "ENOLCK", "EOPNOTSUPP", "ENOTSUP", "EINVAL", "ENOSYS", "EBADF")) if code is not None)

_NOT_A_PROJECT_ADVICE = "open a .swbproj file saved by Scaling Workbench (the file was not changed)"
_CORRUPT_ADVICE = "restore it from a backup or a .bak copy beside it (the file was not changed)"


def file_kind(mode: int) -> str:
    """What a file's mode says it is, for messages: "a folder", "a named pipe", ..."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


class NotRegularFileError(OSError):
    """A path names a folder, a named pipe, a socket or a device where a file was expected."""

    def __init__(self, path: str | os.PathLike[str], mode: int):
        self.kind = file_kind(mode)
        super().__init__(errno.EINVAL, f"it is {self.kind}, not a regular file", str(path))


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """Open ``path`` only if it is a regular file: returns (descriptor, its stat).

    Checked before opening (opening some devices does something) and again on the open
    descriptor (the path may have been swapped meanwhile). ``O_NONBLOCK`` makes the open of
    a named pipe return at once instead of waiting for a writer; for a regular file it
    changes nothing. Raises :class:`NotRegularFileError` or the ``OSError`` of the open.
    """
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFileError(path, before.st_mode)
    fd = os.open(path, flags | _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(path, st.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of the regular file ``path`` (see open_regular)."""
    fd, _ = open_regular(path)
    try:
        chunks = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Header:
    """The facts of an SQLite header that matter before opening the database."""

    page_size: int
    page_count: int | None  # None when the header's in-header size is not valid
    user_version: int
    application_id: int
    wal: bool = False  # the file is in SQLite's WAL mode (header bytes 18-19)


def _is_wal(head: bytes) -> bool:
    return len(head) >= 20 and 2 in (head[18], head[19])


def read_header(path: Path) -> Header:
    """Recognise a project by its first 100 bytes, or raise a :class:`ProjectError`."""
    try:
        fd, st = open_regular(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise ProjectNotFoundError(path, f"the folder {path.parent} does not exist",
                                       "check the path") from None
        raise ProjectNotFoundError(path, "no such file", "check the path") from None
    except NotRegularFileError as exc:
        raise NotAProjectError(path, f"is {exc.kind}, not a project file", "choose a .swbproj file") from None
    except OSError as exc:
        raise ProjectError(path, f"cannot be read ({exc.strerror})", "check the path and permissions") from None
    try:
        if st.st_size == 0:
            raise NotAProjectError(path, "is empty, not a Scaling Workbench project", _NOT_A_PROJECT_ADVICE)
        try:
            head = os.read(fd, HEADER_SIZE)
        except OSError as exc:
            raise ProjectError(path, f"cannot be read ({exc.strerror})", "check the permissions") from None
    finally:
        os.close(fd)
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
        wal=_is_wal(head),
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
    A file in WAL mode is read from such a copy too: SQLite would create ``-wal`` and
    ``-shm`` files beside it even for a read-only connection.

    Something other than a file where SQLite keeps the journal (a folder called
    ``NAME-journal``) is refused with a message saying so.
    """
    header = read_header(path)
    _refuse_blocked_sidecars(path, header)
    journals = tuple(leftover_journals(path))
    if not journals and not header.wal:
        return Loaded(_copy_into_memory(path, _ro_uri(path), header), header)
    return _load_beside_journals(path, header, journals)


def _refuse_blocked_sidecars(path: Path, header: Header) -> None:
    real = real_path(path)
    suffixes = ("-journal", "-wal", "-shm") if header.wal else ("-journal", "-wal")
    for suffix in suffixes:
        side = real.with_name(real.name + suffix)
        try:
            mode = os.stat(side).st_mode
        except OSError:
            continue  # absent (or a dangling link): SQLite sees no file there either
        if not stat.S_ISREG(mode):
            raise ProjectError(
                path, f"cannot be opened: {file_kind(mode)} called {side.name} sits beside it where SQLite "
                f"keeps {_SIDECAR_ROLES[suffix]}, so SQLite cannot read the project",
                f"move or rename {side} (it is not part of the project) and open the project again; "
                "the file was not changed")


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
        if not journals:  # a WAL-mode file and nothing to apply: read the copy
            return open_copy()
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
            if suffix == "-journal" and read_regular(side, 1) == b"\x00":
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
    if "disk i/o error" in lowered:
        return ProjectError(path, "cannot be read: the disk reported an input/output error",
                            "check the disk, and anything beside the file named like it with -journal "
                            "or -wal at the end; the file was not changed")
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
    """Copy the whole database of ``source`` into the (empty) file ``dest``: the writer step.

    The copy is always in rollback-journal mode: a working copy read from a WAL-mode file
    carries that mode in its header, and a WAL-mode file makes every reader create
    ``-wal`` and ``-shm`` files beside it.
    """
    conn = sqlite3.connect(dest, isolation_level=None)
    try:
        # A scratch file: no rollback journal and no syncs here; fsync_file follows.
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        source.backup(conn)
    finally:
        conn.close()
    with open(dest, "r+b") as handle:
        handle.seek(18)
        if handle.read(2) != b"\x01\x01":  # file format write/read version: 1 is rollback mode
            handle.seek(18)
            handle.write(b"\x01\x01")


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


def _save_error(target: Path, exc: BaseException, what: str, existed: bool = True) -> ProjectSaveError:
    """The one-line error for a failed write; ``existed``: whether a file was there before
    (it is unchanged), or not (nothing was written)."""
    unchanged = "the previous file is unchanged" if existed else "nothing was written"
    if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "full" in str(exc).lower():
        problem = f"could not {what}: the disk is full"
        advice = (f"free some space or use Save As to save elsewhere; {unchanged}" if existed
                  else f"free some space or choose another disk; {unchanged}")
    elif isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        problem = f"could not {what}: permission denied"
        advice = (f"use Save As to save elsewhere; {unchanged}" if existed
                  else f"choose a folder you can write to; {unchanged}")
    elif isinstance(exc, NotRegularFileError):
        problem = f"could not {what}: {exc.strerror}"
        advice = f"choose another name; {unchanged}"
    elif not target.parent.is_dir():
        problem = f"could not {what}: the folder {target.parent} does not exist"
        advice = "choose an existing folder"
    else:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problem = f"could not {what} ({reason})"
        advice = (f"try again or use Save As; {unchanged}" if existed
                  else f"try again or choose another folder; {unchanged}")
    return ProjectSaveError(target, problem, advice)


def _atomic_replace(target: Path, fill: Callable[[Path], None], what: str, *, lock: bool = False,
                    check: Callable[[bool], None] | None = None, no_clobber: bool = False) -> Fingerprint | None:
    """Write ``target`` atomically: ``fill`` writes a temp file beside it, which is fsynced and
    renamed over the target, then the folder is fsynced. On any failure the target is as it was
    and the temp file is removed. A symbolic link is followed: the file it points to is
    replaced and the link stays. Errors name ``target`` as given.

    ``lock``: hold :func:`locked_for_saving` from before the first check to after the rename.
    ``check(exists)``: called under the lock before the temp file is written and again just
    before the rename (``exists``: whether there is a file to replace); it raises to refuse.
    ``no_clobber``: fail with :class:`ProjectExistsError` rather than replace a file that
    appeared meanwhile (the rename is then a hard link, which cannot replace anything).

    Returns the fingerprint of the written file, taken before the rename (afterwards the
    file may already be another writer's).
    """
    real = real_path(target)
    existed = os.path.lexists(real)
    tmp: Path | None = None
    written: Fingerprint | None = None
    try:
        with locked_for_saving(target, real) if lock else nullcontext(existed) as exists:
            if check is not None:
                check(exists)
            tmp = _create_temp(real)
            fill(tmp)
            fsync_file(tmp)
            written = fingerprint(tmp)
            if check is not None:
                check(exists)
            if no_clobber:
                _link_new(tmp, real, target)
            else:
                os.replace(tmp, real)
                tmp = None
    except (OSError, sqlite3.Error) as exc:
        raise _save_error(target, exc, what, existed) from exc
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    fsync_dir(real.parent)
    return written


def _link_new(tmp: Path, real: Path, target: Path) -> None:
    """Give the finished ``tmp`` the name ``real`` unless that name exists (then refuse)."""
    try:
        os.link(tmp, real)
        return
    except FileExistsError:
        raise ProjectExistsError(target, "already exists (another program created it just now)",
                                 "choose another name or delete it first") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
            raise
    # No hard links on this file system: check, then rename (a small window remains).
    if os.path.lexists(real):
        raise ProjectExistsError(target, "already exists (another program created it just now)",
                                 "choose another name or delete it first")
    os.replace(tmp, real)


def _refuse_journals(target: Path, what: str) -> None:
    journals = leftover_journals(target)
    if journals:
        raise ProjectSaveError(
            target, f"could not {what}: {_describe_journals(journals)} (or another program writing it) "
            "sits beside the file", "close the other program and try again, or use Save As to save elsewhere")


def atomic_write_database(source: sqlite3.Connection, target: Path, what: str = "save", *,
                          lock: bool = False, check: Callable[[bool], None] | None = None,
                          no_clobber: bool = False) -> Fingerprint | None:
    """Write ``source`` to ``target`` atomically (temp file, fsync, rename, fsync folder).

    Refused while a journal file sits beside the target: SQLite would later apply that
    journal to the new file and damage it. ``lock``, ``check``, ``no_clobber`` and the
    returned fingerprint: see :func:`_atomic_replace`.
    """
    if not target.parent.is_dir():
        raise ProjectSaveError(target, f"could not {what}: the folder {target.parent} does not exist",
                               "choose an existing folder")
    if not lock:
        _refuse_journals(target, what)

    def checks(exists: bool) -> None:
        # Under the lock, after it found no other program writing: a journal now is a leftover.
        _refuse_journals(target, what)
        if check is not None:
            check(exists)

    return _atomic_replace(target, lambda tmp: copy_database(source, tmp), what, lock=lock, check=checks,
                           no_clobber=no_clobber)


def atomic_write_bytes(data: bytes, target: Path, what: str = "write") -> None:
    _atomic_replace(target, lambda tmp: tmp.write_bytes(data), what)


def atomic_copy_file(source: Path, target: Path, what: str = "write a backup copy", *,
                     no_clobber: bool = False) -> None:
    _atomic_replace(target, lambda tmp: shutil.copyfile(source, tmp), what, no_clobber=no_clobber)


# -- locks ----------------------------------------------------------------------------------


def _flock(kind: int, start: int, length: int) -> bytes:
    return struct.pack(_FLOCK_LAYOUT, kind, os.SEEK_SET, start, length, 0)


def _try_lock(fd: int, kind: int, start: int, length: int = 1) -> bool:
    """Take an open file description lock without waiting; False when another lock conflicts.

    True also where the file system cannot lock at all (see :data:`_NO_LOCKS_HERE`).
    """
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock(kind, start, length))
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        if exc.errno in _NO_LOCKS_HERE:
            return True
        raise
    return True


def _conflicts(fd: int, kind: int, start: int, length: int = 1) -> bool:
    """True when a lock of another descriptor (this process's included) would block a
    ``kind`` lock on the range; takes nothing."""
    result = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _flock(kind, start, length))
    return struct.unpack(_FLOCK_LAYOUT, result)[0] != fcntl.F_UNLCK


def _wait_for(take: Callable[[], bool], seconds: float) -> bool:
    """Call ``take`` until it returns True or ``seconds`` have passed (polling: a lock held
    by a hostile program must not hang the app)."""
    deadline = time.monotonic() + seconds
    pause = 0.001
    while not take():
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    return True


_WRITING = "another program is writing it (it holds SQLite's write lock)"
_WAL_OPEN = ("another program has it open in SQLite's WAL mode (its next write would damage a file "
             "saved over it)")


def sqlite_activity(path: Path) -> str | None:
    """Why another program's use of ``path`` through SQLite makes saving over it unsafe, or None.

    Looks, without taking anything, for a write lock on the database (a write transaction,
    rollback-journal mode) and, in WAL mode, for the write lock or any connection holding
    the database open (NAME-shm). Only where open file description locks exist (Linux);
    elsewhere None.
    """
    if not _OFD:
        return None
    real = real_path(path)
    try:
        fd, _ = open_regular(real)
    except OSError:
        return None
    try:
        if _conflicts(fd, fcntl.F_RDLCK, _PENDING_BYTE, _SQLITE_LOCK_BYTES):
            return _WRITING
        wal = _is_wal(os.pread(fd, 20, 0))
    except OSError:
        return None
    finally:
        os.close(fd)
    if not wal:
        return None
    try:
        shm, _ = open_regular(real.with_name(real.name + "-shm"))
    except OSError:
        return None
    try:
        if _conflicts(shm, fcntl.F_RDLCK, _WAL_WRITE_BYTE, _WAL_LOCK_BYTES):
            return _WRITING
        if _conflicts(shm, fcntl.F_WRLCK, _WAL_DMS_BYTE):
            return _WAL_OPEN
    except OSError:
        return None
    finally:
        os.close(shm)
    return None


@contextmanager
def locked_for_saving(target: Path, real: Path) -> Iterator[bool]:
    """Hold what makes replacing ``real`` safe; yields whether there is a file to replace.

    1. Other copies of this app: an exclusive lock on one byte of the file, far from the
       bytes SQLite uses, waited for up to :data:`SAVE_LOCK_TIMEOUT`. A save replaces the
       file, so the lock is on the file that was there when it was taken: once it is held
       the path is checked to still name that file, else the new one is locked instead.
       Everything a save checks and writes happens under it, so two copies saving the
       same project take turns, and the second sees the first's save (and refuses to
       overwrite it, see ``Project.save``).
    2. SQLite writers (another program): the lock SQLite takes before writing ("RESERVED"),
       taken here too, so no write transaction is in progress and none can start until the
       rename is done; waited for up to :data:`WRITER_TIMEOUT`. In WAL mode, SQLite's WAL
       write lock, and the byte every connection holding the database open locks (a
       connection opened before the rename would later write into a ``-wal`` that SQLite
       would apply to the new file).

    Raises :class:`ProjectLockedError` when a lock is not had in time, and
    :class:`NotRegularFileError` when ``real`` is not a regular file. No file is created.

    The locks are open file description locks (Linux). Elsewhere on POSIX step 1 uses
    ``flock`` and step 2 is skipped; on Windows nothing is locked.
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield os.path.lexists(real)
        return
    held: list[int] = []
    deadline = time.monotonic() + SAVE_LOCK_TIMEOUT
    try:
        for _ in range(1000):
            try:
                fd, st = open_regular(real, os.O_RDWR)
            except FileNotFoundError:
                break
            except PermissionError:
                # Not writable by us, though its folder is (the rename needs only that):
                # nothing to lock with, save as before the locks existed.
                yield True
                return
            held.append(fd)
            if _OFD:
                def take(fd: int = fd) -> bool:
                    return _try_lock(fd, fcntl.F_WRLCK, _SAVE_LOCK_BYTE)
            else:
                def take(fd: int = fd) -> bool:
                    return _try_flock(fd)
            if not _wait_for(take, max(0.0, deadline - time.monotonic())):
                raise ProjectLockedError(
                    target, f"not saved: another copy of Scaling Workbench has been saving it for over "
                    f"{SAVE_LOCK_TIMEOUT:g} s", "try again when it has finished; nothing was written")
            try:
                now = os.stat(real)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                break
            os.close(held.pop())  # replaced (or removed) while we waited: look again
        if not held:
            yield False
            return
        fd = held[-1]
        if _OFD:
            if not _wait_for(lambda: _try_lock(fd, fcntl.F_WRLCK, _RESERVED_BYTE), WRITER_TIMEOUT):
                raise ProjectLockedError(target, f"not saved: {_WRITING}",
                                         "let that program finish (or close it) and save again, or use Save As")
            if _is_wal(os.pread(fd, 20, 0)):
                _lock_wal_index(target, real, held)
        yield True
    finally:
        for fd in held:
            os.close(fd)


@contextmanager
def locked_for_reading(path: Path) -> Iterator[None]:
    """Wait (up to :data:`SAVE_LOCK_TIMEOUT`) for a save of ``path`` by another copy of this
    app to finish, and hold it off while the caller reads the file.

    A shared lock on the byte :func:`locked_for_saving` locks exclusively: reading then
    sees the file before or after a save, never the save's own lock on SQLite's bytes
    (taken for another program's write). Nothing is written or created; a file that cannot
    be opened is simply not locked (reading it reports the problem).
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    real = real_path(path)
    deadline = time.monotonic() + SAVE_LOCK_TIMEOUT
    fd = None
    try:
        for _ in range(1000):
            try:
                fd, st = open_regular(real)
            except OSError:
                break
            if _OFD:
                def take(fd: int = fd) -> bool:
                    return _try_lock(fd, fcntl.F_RDLCK, _SAVE_LOCK_BYTE)
            else:
                def take(fd: int = fd) -> bool:
                    return _try_flock(fd, fcntl.LOCK_SH)
            if not _wait_for(take, max(0.0, deadline - time.monotonic())):
                raise ProjectLockedError(
                    path, f"cannot be opened: another copy of Scaling Workbench has been saving it for over "
                    f"{SAVE_LOCK_TIMEOUT:g} s", "try again when it has finished")
            try:
                now = os.stat(real)
            except OSError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                break
            os.close(fd)  # replaced by the save we waited for: lock the new file
            fd = None
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _try_flock(fd: int, how: int | None = None) -> bool:  # pragma: no cover - no OFD locks here
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if how is None else how) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in _NO_LOCKS_HERE:
            return True
        raise
    return True


def _lock_wal_index(target: Path, real: Path, held: list[int]) -> None:
    shm_path = real.with_name(real.name + "-shm")
    try:
        shm, _ = open_regular(shm_path, os.O_RDWR)
    except OSError:
        return  # no index (no connection has the database open), or not ours to lock
    held.append(shm)
    advice = "close that program and save again, or use Save As"
    if not _wait_for(lambda: _try_lock(shm, fcntl.F_WRLCK, _WAL_WRITE_BYTE), WRITER_TIMEOUT):
        raise ProjectLockedError(target, f"not saved: {_WRITING}", advice)
    if not _try_lock(shm, fcntl.F_WRLCK, _WAL_DMS_BYTE):
        raise ProjectLockedError(target, f"not saved: {_WAL_OPEN}", advice)


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
    """The file's (mtime, size, content hash), or None when it cannot be read or is not a
    regular file (a named pipe is never read)."""
    try:
        fd, st = open_regular(path)
    except OSError:
        return None
    try:
        with open(fd, "rb", closefd=False) as handle:
            whole = st.st_size <= FINGERPRINT_WHOLE_BYTES
            data = handle.read(FINGERPRINT_WHOLE_BYTES if whole else FINGERPRINT_HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
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
