"""Two writers of one project: copies of the app saving at once, and other programs holding
SQLite locks on the file. No save that reports success may be lost, and a save that would
lose someone else's change is refused with a clear error."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from storage_helpers import SAMPLES, file_state, folder_listing, make_hardware

from storage import (
    Project,
    ProjectChangedOnDiskError,
    ProjectLockedError,
    ReadOnlyProjectError,
    fileio,
)
from workbench.scenarios import PowerScenario

ROOT = Path(__file__).resolve().parents[2]
WATCHDOG_SECONDS = 120

# One copy of the app: opens the project, then SAVES times adds a scenario named after
# itself and saves. A refused save is reported and the project reopened (the user reloads
# and carries on, the refused scenario is dropped knowingly). Every outcome is printed as it
# happens, so the parent knows which saves reported success.
WRITER = r"""
import sys
from storage import Project, ProjectChangedOnDiskError, ProjectLockedError
from workbench.scenarios import PowerScenario

path, tag, saves = sys.argv[1], sys.argv[2], int(sys.argv[3])
project = Project.open(path)
print("READY", flush=True)
sys.stdin.readline()  # both writers start together
for i in range(saves):
    project.save_scenario(f"{tag} {i}", PowerScenario(n_gpus=1 + i))
    try:
        project.save()
    except (ProjectChangedOnDiskError, ProjectLockedError) as exc:
        print(f"refused {i} {type(exc).__name__}", flush=True)
        project.close()
        project = Project.open(path)
    else:
        print(f"saved {i}", flush=True)
project.close()
print("DONE", flush=True)
"""


def _start_writer(path: Path, tag: str, saves: int) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), tag, str(saves)],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _outcomes(lines: list[str]) -> tuple[set[int], set[int]]:
    saved = {int(line.split()[1]) for line in lines if line.startswith("saved ")}
    refused = {int(line.split()[1]) for line in lines if line.startswith("refused ")}
    return saved, refused


def test_two_copies_saving_at_once_never_lose_a_successful_save(project_path):
    saves = 60
    writers = {tag: _start_writer(project_path, tag, saves) for tag in ("A", "B")}
    watchdog = threading.Timer(WATCHDOG_SECONDS, lambda: [w.kill() for w in writers.values()])
    watchdog.start()
    try:
        for writer in writers.values():
            assert writer.stdout.readline().strip() == "READY", writer.stderr.read()
        for writer in writers.values():  # as close to together as two processes can start
            writer.stdin.write("go\n")
            writer.stdin.flush()
        results = {tag: writer.communicate() for tag, writer in writers.items()}
    finally:
        watchdog.cancel()
        for writer in writers.values():
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    outcomes = {}
    for tag, (out, err) in results.items():
        lines = out.splitlines()
        assert writers[tag].returncode == 0 and lines[-1] == "DONE", err
        outcomes[tag] = _outcomes(lines)
        saved, refused = outcomes[tag]
        assert saved | refused == set(range(saves)) and not saved & refused

    with Project.open(project_path) as final:
        assert final.problems == []
        names = {r.name for r in final.list_scenarios("power")}
    for tag, (saved, refused) in outcomes.items():
        present = {int(n.split()[1]) for n in names if n.startswith(f"{tag} ")}
        # Every save that reported success is in the file; no refused save is.
        assert present == saved, (tag, sorted(saved - present), sorted(present & refused))
    assert outcomes["A"][0] or outcomes["B"][0]
    assert sorted(folder_listing(project_path.parent)) == [project_path.name]


def _open_two(path: Path) -> tuple[Project, Project]:
    return Project.open(path), Project.open(path)


def test_the_changed_check_happens_under_the_lock(project_path, monkeypatch):
    """A save that lands while another is writing its temporary file is seen by the other
    (the old code checked before writing, and both "succeeded")."""
    first, second = _open_two(project_path)
    try:
        first.save_scenario("First", PowerScenario())
        second.save_scenario("Second", PowerScenario())
        real_copy = fileio.copy_database
        calls = []

        def slow_copy(source, dest):
            # While `first` writes its temporary copy, `second` tries to save. It waits for
            # the lock, so here it cannot have saved yet; once `first` is done it sees the
            # change and refuses.
            calls.append(dest)
            if len(calls) == 1:
                with pytest.raises(ProjectLockedError, match="another copy of Scaling Workbench"):
                    second.save()
            real_copy(source, dest)

        monkeypatch.setattr(fileio, "SAVE_LOCK_TIMEOUT", 0.05)
        monkeypatch.setattr(fileio, "copy_database", slow_copy)
        first.save()
        monkeypatch.undo()
        with pytest.raises(ProjectChangedOnDiskError, match="changed by another program"):
            second.save()
        assert second.dirty
    finally:
        first.close()
        second.close()
    with Project.open(project_path) as final:
        names = {r.name for r in final.list_scenarios()}
    assert "First" in names and "Second" not in names


def test_a_change_during_the_write_is_still_seen_before_the_rename(project_path, tmp_path, monkeypatch):
    """A program that ignores the lock (a sync tool) and replaces the file while the temporary
    copy is being written: the check just before the rename refuses."""
    theirs = tmp_path / "elsewhere" / "demo.swbproj"
    theirs.parent.mkdir()
    with Project.open(project_path) as other:
        other.save_scenario("Theirs", PowerScenario())
        other.save_as(theirs)
    with Project.open(project_path) as project:
        project.save_scenario("Mine", PowerScenario())
        real_copy = fileio.copy_database

        def copy_while_replaced(source, dest):
            real_copy(source, dest)
            os.replace(theirs, project_path)

        monkeypatch.setattr(fileio, "copy_database", copy_while_replaced)
        with pytest.raises(ProjectChangedOnDiskError):
            project.save()
        monkeypatch.undo()
        assert project.dirty
    with Project.open(project_path) as final:
        names = {r.name for r in final.list_scenarios()}
    assert "Theirs" in names and "Mine" not in names
    assert sorted(folder_listing(project_path.parent)) == ["demo.swbproj", "elsewhere"]  # no temporary file


def test_overwrite_after_a_refusal_is_a_knowing_choice(project_path):
    first, second = _open_two(project_path)
    try:
        second.save_scenario("Theirs", PowerScenario())
        second.save()
        first.save_scenario("Mine", PowerScenario())
        with pytest.raises(ProjectChangedOnDiskError):
            first.save()
        first.save(overwrite_external=True)
        second.save_scenario("Theirs again", PowerScenario())
        with pytest.raises(ProjectChangedOnDiskError):
            second.save()
    finally:
        first.close()
        second.close()


def test_two_new_projects_at_the_same_path_do_not_overwrite_each_other(tmp_path, monkeypatch):
    path = tmp_path / "new.swbproj"
    real_copy = fileio.copy_database
    calls = []

    def create_meanwhile(source, dest):
        real_copy(source, dest)
        if not calls:
            calls.append(dest)
            Project.create(path, seed=False).close()

    monkeypatch.setattr(fileio, "copy_database", create_meanwhile)
    with pytest.raises(fileio.ProjectExistsError, match="already exists") as info:
        Project.create(path, hardware=[make_hardware("Mine")], samples=SAMPLES)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    monkeypatch.undo()
    with Project.open(path) as project:
        assert project.list_presets() == []  # the other `new` (seed=False) is kept
    assert sorted(os.listdir(tmp_path)) == ["new.swbproj"]


# -- another program holding SQLite locks ----------------------------------------------------

# Another program: a tiny SQL shell in its own process (SQLite's locks are per process: a
# connection in the test process itself would not show what another program does).
SQL_SHELL = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "close":
        break
    conn.execute(line)
    print("ok", flush=True)
conn.close()
print("closed", flush=True)
"""


class OtherProgram:
    def __init__(self, path: Path):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen([sys.executable, "-c", SQL_SHELL, str(path)], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.watchdog = threading.Timer(WATCHDOG_SECONDS, self.proc.kill)
        self.watchdog.start()
        self._expect("ready")

    def _expect(self, word: str) -> None:
        line = self.proc.stdout.readline().strip()
        if line != word:
            self.proc.kill()
            raise AssertionError(f"the other program said {line!r}: {self.proc.stderr.read()}")

    def sql(self, *statements: str) -> None:
        for statement in statements:
            self.proc.stdin.write(statement + "\n")
            self.proc.stdin.flush()
            self._expect("ok")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("close\n")
            self.proc.stdin.flush()
            self._expect("closed")
            self.proc.wait()
        self.watchdog.cancel()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


@pytest.fixture
def other(project_path):
    program = OtherProgram(project_path)
    yield program
    program.close()


THEIR_CHANGE = "UPDATE scenarios SET notes = 'their change' WHERE name = 'Big run'"


def _notes(path: Path, name: str) -> str:
    with Project.open(path) as project:
        return next(r.notes for r in project.list_scenarios() if r.name == name)


def test_a_project_being_written_by_another_program_opens_read_only(project_path, other):
    other.sql("BEGIN IMMEDIATE", THEIR_CHANGE)
    with Project.open(project_path) as project:
        assert project.read_only
        assert project.read_only_reason == "another program is writing it (it holds SQLite's write lock)"
        assert any(n.startswith("opened read-only because another program is writing it") for n in project.notices)
        project.save_scenario("Mine", PowerScenario())
        with pytest.raises(ReadOnlyProjectError, match="another program is writing it.*Save As"):
            project.save()
    other.sql("COMMIT")
    assert _notes(project_path, "Big run") == "their change"
    with Project.open(project_path) as project:  # and once it is done, the project opens as usual
        assert not project.read_only


def test_a_save_while_another_program_writes_is_refused_and_loses_nothing(project_path, other, monkeypatch):
    monkeypatch.setattr(fileio, "WRITER_TIMEOUT", 0.05)
    with Project.open(project_path) as project:  # opened before the other program started
        project.save_scenario("Mine", PowerScenario())
        other.sql("BEGIN IMMEDIATE", THEIR_CHANGE)
        before = file_state(project_path)
        with pytest.raises(ProjectLockedError, match="not saved: another program is writing it") as info:
            project.save()
        assert str(project_path) in str(info.value) and "\n" not in str(info.value)
        assert file_state(project_path) == before and project.dirty
        other.sql("COMMIT")
        assert _notes(project_path, "Big run") == "their change"
        # Their change is now in the file: saving over it needs the user's say-so.
        with pytest.raises(ProjectChangedOnDiskError):
            project.save()


def test_a_wal_mode_project_open_in_another_program(project_path, other, monkeypatch):
    monkeypatch.setattr(fileio, "WRITER_TIMEOUT", 0.05)
    early = Project.open(project_path)
    try:
        other.sql("PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0", THEIR_CHANGE)
        listing = folder_listing(project_path.parent)
        with Project.open(project_path) as project:
            assert project.read_only
            assert "has it open in SQLite's WAL mode" in project.read_only_reason
            assert _notes_of(project, "Big run") == "their change"  # committed in the WAL: read
        assert folder_listing(project_path.parent) == listing
        early.save_scenario("Mine", PowerScenario())
        with pytest.raises(ProjectLockedError, match="has it open in SQLite's WAL mode"):
            early.save(overwrite_external=True)
        other.sql("BEGIN IMMEDIATE", "UPDATE scenarios SET notes = 'again' WHERE name = 'Big run'")
        with pytest.raises(ProjectLockedError, match="another program is writing it"):
            early.save(overwrite_external=True)
        other.sql("ROLLBACK")
    finally:
        other.close()
        early.close()
    # Closed: the other program checkpointed its WAL and removed it. The project saves, and
    # the saved file is in rollback-journal mode (reading it creates no -wal or -shm).
    with Project.open(project_path) as project:
        assert not project.read_only and _notes_of(project, "Big run") == "their change"
        project.save_scenario("Mine", PowerScenario())
        project.save()
    assert project_path.read_bytes()[18:20] == b"\x01\x01"
    assert sorted(folder_listing(project_path.parent)) == [project_path.name]


def _notes_of(project: Project, name: str) -> str:
    return next(r.notes for r in project.list_scenarios() if r.name == name)


def test_a_wal_mode_file_is_read_without_creating_files_beside_it(project_path):
    conn = sqlite3.connect(project_path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert project_path.read_bytes()[18:20] == b"\x02\x02"
    listing = folder_listing(project_path.parent)
    with Project.open(project_path, read_only=True) as project:
        assert project.list_scenarios()
    with Project.open(project_path) as project:
        assert not project.read_only
    assert folder_listing(project_path.parent) == listing


def test_a_file_system_without_locks_still_saves(project_path, monkeypatch):
    import errno

    real_fcntl = fileio.fcntl.fcntl

    def no_locks(fd, cmd, arg=0):
        if cmd in (fileio.fcntl.F_OFD_SETLK, fileio.fcntl.F_OFD_GETLK):
            raise OSError(errno.ENOLCK, "No locks available")
        return real_fcntl(fd, cmd, arg)

    monkeypatch.setattr(fileio.fcntl, "fcntl", no_locks)
    with Project.open(project_path) as project:
        assert not project.read_only
        project.save_scenario("Saved without locks", PowerScenario())
        project.save()
    monkeypatch.undo()
    with Project.open(project_path) as project:
        assert "Saved without locks" in {r.name for r in project.list_scenarios()}


def test_two_first_starts_at_once_share_the_default_project(tmp_path, monkeypatch):
    from storage import default_project_path, open_or_create_default

    monkeypatch.setenv("SCALING_WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    path = default_project_path()
    real_copy = fileio.copy_database
    calls = []

    def the_other_copy_starts(source, dest):
        real_copy(source, dest)
        if not calls:
            calls.append(dest)
            Project.create(path, seed=False).close()  # the other copy wins the race

    monkeypatch.setattr(fileio, "copy_database", the_other_copy_starts)
    with open_or_create_default() as project:
        assert project.path == path and project.list_presets() == []
