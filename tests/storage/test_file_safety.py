"""Data safety around the project file: symbolic links, leftovers of killed saves and of
other programs (temporary files, SQLite journals), changes made by another program while
the project is open, and what the UI is told about how a file was opened."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from storage_helpers import file_state, folder_listing

from storage import (
    Project,
    ProjectChangedOnDiskError,
    ProjectError,
    ProjectSaveError,
    ReadOnlyProjectError,
    fileio,
    migrations,
    recovery,
)
from workbench.scenarios import PowerScenario


def _names(path: Path) -> list[str]:
    with Project.open(path) as project:
        return sorted(r.name for r in project.list_scenarios())


def _set_mtime(path: Path, seconds_ago: float) -> None:
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp), follow_symlinks=False)


# -- 1. symbolic links ----------------------------------------------------------------------


@pytest.fixture
def linked(project_path, tmp_path):
    """(link, real): the project moved to real/ and reached through a link in links/."""
    real_dir, link_dir = tmp_path / "real", tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    real = real_dir / "demo.swbproj"
    project_path.rename(real)
    link = link_dir / "demo.swbproj"
    link.symlink_to(real)
    return link, real


def test_save_through_a_symlink_writes_the_file_it_points_to(linked):
    link, real = linked
    with Project.open(link) as project:
        assert not project.read_only
        project.save_scenario("Through the link", PowerScenario())
        project.save()
        assert project.path == link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "Through the link" in _names(real)
    assert sorted(os.listdir(link.parent)) == ["demo.swbproj"]
    assert sorted(os.listdir(real.parent)) == ["demo.swbproj"]


def test_a_retargeted_link_is_resolved_at_save_time(linked, tmp_path):
    link, real = linked
    other = tmp_path / "real" / "other.swbproj"
    shutil.copyfile(real, other)
    with Project.open(link) as project:
        link.unlink()
        link.symlink_to(other)
        project.save_scenario("Saved later", PowerScenario())
        # The link now points to another file, with the same bytes: nothing would be lost.
        assert not project.changed_on_disk()
        project.save()
    assert link.is_symlink()
    assert "Saved later" in _names(other)
    assert "Saved later" not in _names(real)


def test_recovery_and_backup_files_go_beside_the_real_file(linked):
    link, real = linked
    with Project.open(link) as project:
        project.save_scenario("Unsaved", PowerScenario())
        written = project.write_recovery()
        assert written == real.with_name(".demo.swbproj.recovery")
        assert Project.recovery_for(link) == written == Project.recovery_for(real)
        project._dispose()  # a crash: the recovery file stays
    with Project.open(link, use_recovery=True) as restored:
        assert restored.recovered and "Unsaved" in [r.name for r in restored.list_scenarios()]
        restored.save()
    assert link.is_symlink() and not written.exists()
    assert sorted(os.listdir(link.parent)) == ["demo.swbproj"]


def test_migration_backup_of_a_linked_file_is_beside_the_real_file(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "old.swbproj"
    conn = sqlite3.connect(real)
    migrations.create_v0(conn)
    conn.commit()
    conn.close()
    link = tmp_path / "old.swbproj"
    link.symlink_to(real)
    with Project.open(link) as project:
        assert project.migrated_from == 0
        assert project.backup_path == real_dir / "old.swbproj.bak-v0"
        project.save()
    assert link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["old.swbproj", "real"]


def test_save_as_onto_a_symlink_writes_through_it(project, tmp_path):
    target = tmp_path / "target.swbproj"
    target.write_bytes(b"old content")
    link = tmp_path / "link.swbproj"
    link.symlink_to(target)
    project.save_as(link)
    assert link.is_symlink()
    assert _names(target) == _names(project.path)


# -- 2. temporary files left by a killed save -------------------------------------------------


def test_stale_temp_files_of_this_project_are_removed_on_open(project_path, tmp_path):
    _set_mtime(project_path, 1000)
    older = tmp_path / "demo.swbproj.tmp-1a2b3c4d"  # older than the project: a later save finished
    abandoned = tmp_path / "demo.swbproj.tmp-0000beef"  # newer, but untouched for long
    recovery_tmp = tmp_path / ".demo.swbproj.recovery.tmp-c0ffee00"
    for path, age in [(older, 2000), (abandoned, 600), (recovery_tmp, 2000)]:
        path.write_bytes(b"half a database")
        _set_mtime(path, age)
    kept = {
        "demo.swbproj.tmp-feedf00d": 0,  # fresh: perhaps another copy of the app saving now
        "other.swbproj.tmp-1a2b3c4d": 2000,  # another project's
        "demo.swbproj.tmp-1A2B3C4D": 2000,  # not our pattern (upper case)
        "demo.swbproj.tmp-1a2b3c4": 2000,
        "demo.swbproj.tmp-1a2b3c4d.txt": 2000,
        "xdemo.swbproj.tmp-1a2b3c4d": 2000,
        "demo.swbproj.bak-v0": 2000,
    }
    for name, age in kept.items():
        (tmp_path / name).write_bytes(b"keep me")
        _set_mtime(tmp_path / name, age)
    (tmp_path / "demo.swbproj.tmp-0badf00d").mkdir()  # a folder is never ours
    (tmp_path / "demo.swbproj.tmp-00c0ffee").symlink_to(tmp_path / "other.swbproj.tmp-1a2b3c4d")
    _set_mtime(tmp_path / "demo.swbproj.tmp-00c0ffee", 2000)
    before = file_state(project_path)

    with Project.open(project_path) as project:
        removed = [n for n in project.notices if n.startswith("removed ")]
        assert len(removed) == 3
        for path in (older, abandoned, recovery_tmp):
            assert not path.exists()
            assert any(path.name in notice and "interrupted save" in notice for notice in removed)
        assert not project.read_only
    for name in kept:
        assert (tmp_path / name).read_bytes() == b"keep me"
    assert (tmp_path / "demo.swbproj.tmp-0badf00d").is_dir()
    assert (tmp_path / "demo.swbproj.tmp-00c0ffee").is_symlink()
    assert file_state(project_path) == before


def test_a_refused_file_keeps_its_temp_files(tmp_path):
    path = tmp_path / "broken.swbproj"
    path.write_text("not a project")
    temp = tmp_path / "broken.swbproj.tmp-1a2b3c4d"
    temp.write_bytes(b"x")
    _set_mtime(temp, 2000)
    with pytest.raises(ProjectError):
        Project.open(path)
    assert temp.exists()


def test_a_killed_save_leaves_a_temp_file_that_the_next_open_removes(project_path, monkeypatch):
    project = Project.open(project_path)
    project.save_scenario("Lost", PowerScenario())

    def killed(tmp, target):
        raise SystemExit("killed")  # unlike a real kill the finally clause still runs: undo it

    real_unlink = fileio.os.unlink
    monkeypatch.setattr(fileio.os, "replace", killed)
    monkeypatch.setattr(fileio.os, "unlink", lambda p: None)
    with pytest.raises(SystemExit):
        project.save()
    monkeypatch.setattr(fileio.os, "unlink", real_unlink)
    monkeypatch.undo()
    project._dispose()
    (leftover,) = [p for p in project_path.parent.iterdir() if ".tmp-" in p.name]
    assert fileio.TEMP_MARKER in leftover.name and leftover.name.startswith("demo.swbproj")
    with Project.open(project_path) as reopened:
        assert leftover.exists()  # just written: it could be another app's save in progress
    _set_mtime(leftover, fileio.STALE_TEMP_SECONDS + 60)
    with Project.open(project_path) as reopened:
        assert not leftover.exists()
        assert any(leftover.name in n for n in reopened.notices)
        assert "Lost" not in [r.name for r in reopened.list_scenarios()]


# -- 3. changed on disk by another program ---------------------------------------------------


def test_a_save_by_another_copy_of_the_app_is_not_overwritten_silently(project_path):
    first = Project.open(project_path)
    second = Project.open(project_path)
    try:
        assert not first.changed_on_disk() and not second.changed_on_disk()
        second.save_scenario("From the second window", PowerScenario())
        second.save()
        assert first.changed_on_disk()
        assert not second.changed_on_disk()

        first.save_scenario("From the first window", PowerScenario())
        saved_by_second = file_state(project_path)
        with pytest.raises(ProjectChangedOnDiskError) as info:
            first.save()
        message = str(info.value)
        assert str(project_path) in message and "\n" not in message
        assert "it was changed by another program since you opened it" in message
        assert "use Save As to keep both, or save again to overwrite" in message
        assert isinstance(info.value, ProjectError)
        assert first.dirty
        assert file_state(project_path) == saved_by_second

        first.save(overwrite_external=True)
        assert not first.dirty and not first.changed_on_disk()
        assert second.changed_on_disk()
        names = _names(project_path)
        assert "From the first window" in names and "From the second window" not in names
        # Once overwritten, the first window saves normally again.
        first.set_notes(("roofline", "Default roofline"), "later")
        first.save()
    finally:
        first.close()
        second.close()


def test_save_as_keeps_both(project_path, tmp_path):
    with Project.open(project_path) as first, Project.open(project_path) as second:
        second.save_scenario("Theirs", PowerScenario())
        second.save()
        first.save_scenario("Mine", PowerScenario())
        copy = tmp_path / "mine.swbproj"
        first.save_as(copy)
        assert not first.changed_on_disk()
        first.save()  # now the copy, unchanged since save_as
    assert "Theirs" in _names(project_path) and "Mine" not in _names(project_path)
    assert "Mine" in _names(copy)


def test_a_touched_but_identical_file_is_not_a_change(project):
    _set_mtime(project.path, 5000)
    assert not project.changed_on_disk()
    project.save_scenario("x", PowerScenario())
    project.save()


def test_a_content_change_with_the_same_size_and_time_is_seen(project):
    path = project.path
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert project.changed_on_disk()


def test_a_deleted_file_is_reported_and_written_back_on_request(project):
    project.path.unlink()
    assert project.changed_on_disk()
    with pytest.raises(ProjectChangedOnDiskError, match="moved or deleted by another program"):
        project.save()
    assert not project.path.exists()
    project.save(overwrite_external=True)
    assert project.path.exists() and not project.changed_on_disk()


def test_a_new_project_tracks_its_own_file(tmp_path):
    with Project.create(tmp_path / "new.swbproj", seed=False) as project:
        assert not project.changed_on_disk()
        project.set_meta("workspace", "{}")
        project.save()
        assert not project.changed_on_disk()


# -- 4. what the UI is told -----------------------------------------------------------------


def test_a_plain_open_has_no_notices(project):
    assert project.notices == []
    assert not project.read_only and project.read_only_reason is None


def test_read_only_notice_and_save_error(project_path):
    project_path.chmod(0o444)
    try:
        with Project.open(project_path) as project:
            assert project.read_only and "read-only" in project.read_only_reason
            assert project.notices == [
                "opened read-only because the file is marked read-only; use Save As to save a copy elsewhere"]
            project.save_scenario("x", PowerScenario())
            with pytest.raises(ReadOnlyProjectError, match="use Save As") as info:
                project.save()
            assert str(project_path) in str(info.value)
    finally:
        project_path.chmod(0o644)


def test_migration_notice_names_the_backup(tmp_path):
    path = tmp_path / "old.swbproj"
    conn = sqlite3.connect(path)
    migrations.create_v0(conn)
    conn.commit()
    conn.close()
    with Project.open(path) as project:
        assert project.notices == [f"migrated from schema 0; backup at {tmp_path / 'old.swbproj.bak-v0'}"]
        assert all("\n" not in n for n in project.notices)


def test_recovered_notice(project_path):
    crashed = Project.open(project_path)
    crashed.save_scenario("x", PowerScenario())
    written = crashed.write_recovery()
    crashed._dispose()
    with Project.open(project_path, use_recovery=True) as project:
        assert any(str(written) in n and "restored" in n for n in project.notices)


# -- 5. SQLite journals left beside the project ------------------------------------------------


def _fill(path: Path) -> None:
    with Project.open(path) as project:
        for k in range(40):
            project.save_scenario(f"filler {k}", PowerScenario(), notes="x" * 2000)
        project.save()


def _crash_mid_write(path: Path, into: Path) -> Path:
    """Copy ``path`` and its hot journal as another program left them, killed mid-write.

    The writer's cache is one page, so its changes spill into the file before the commit:
    the copied file is half changed and only the journal can restore it.
    """
    into.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA cache_size=1")
        conn.execute("BEGIN")
        conn.execute("UPDATE scenarios SET notes = 'half written ' || notes, name = 'renamed ' || name")
        shutil.copyfile(path, into / path.name)
        shutil.copyfile(f"{path}-journal", into / f"{path.name}-journal")
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    copy = into / path.name
    assert copy.read_bytes() != path.read_bytes()  # the file really is half changed
    assert (into / f"{path.name}-journal").read_bytes()[:1] != b"\x00"
    return copy


def test_a_hot_journal_is_rolled_back_in_memory_and_nothing_is_written(project_path, tmp_path):
    _fill(project_path)
    expected = _names(project_path)
    crashed = _crash_mid_write(project_path, tmp_path / "crashed")
    journal = crashed.with_name("demo.swbproj-journal")
    before, journal_before = file_state(crashed), file_state(journal)
    listing = folder_listing(crashed.parent)

    with Project.open(crashed) as project:
        assert sorted(r.name for r in project.list_scenarios()) == expected
        assert project.problems == []
        assert project.read_only
        assert "demo.swbproj-journal from an interrupted write" in project.read_only_reason
        assert any("demo.swbproj-journal from an interrupted write sits beside the project" in n
                   and "rolled back" in n for n in project.notices)
        assert any(n.startswith("opened read-only because") for n in project.notices)
        with pytest.raises(ReadOnlyProjectError, match="Save As"):
            project.save()
        project.save_as(tmp_path / "clean.swbproj")
    assert file_state(crashed) == before and file_state(journal) == journal_before
    assert folder_listing(crashed.parent) == listing
    assert _names(tmp_path / "clean.swbproj") == expected


def test_a_journal_that_does_not_apply_still_lets_the_intact_file_open(project_path, tmp_path):
    expected = _names(project_path)
    journal = project_path.with_name("demo.swbproj-journal")
    journal.write_bytes(b"\x01 not a journal at all " * 50)
    before, listing = file_state(project_path), folder_listing(tmp_path)
    with Project.open(project_path) as project:
        assert sorted(r.name for r in project.list_scenarios()) == expected
        assert project.read_only and "demo.swbproj-journal" in project.read_only_reason
    assert file_state(project_path) == before and folder_listing(tmp_path) == listing
    assert journal.read_bytes().startswith(b"\x01 not a journal")


def test_a_stray_wal_file_changes_nothing_beside_the_project(project_path):
    expected = _names(project_path)
    wal = project_path.with_name("demo.swbproj-wal")
    wal.write_bytes(os.urandom(4096))
    before, listing = file_state(project_path), folder_listing(project_path.parent)
    with Project.open(project_path) as project:
        assert sorted(r.name for r in project.list_scenarios()) == expected
        assert project.read_only and "demo.swbproj-wal" in project.read_only_reason
    assert file_state(project_path) == before
    assert folder_listing(project_path.parent) == listing  # no -shm created


def test_committed_changes_in_a_leftover_wal_are_read(project_path, tmp_path):
    crashed_dir = tmp_path / "crashed"
    crashed_dir.mkdir()
    conn = sqlite3.connect(project_path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("UPDATE scenarios SET name = 'committed in the wal' WHERE name = 'Big run'")
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{project_path}{suffix}", crashed_dir / f"demo.swbproj{suffix}")
    finally:
        conn.close()
    crashed = crashed_dir / "demo.swbproj"
    listing = folder_listing(crashed_dir)
    with Project.open(crashed) as project:
        assert "committed in the wal" in [r.name for r in project.list_scenarios()]
        assert project.read_only
    assert folder_listing(crashed_dir) == listing


def test_empty_or_finished_journals_are_ignored(project_path):
    journal = project_path.with_name("demo.swbproj-journal")
    for content in (b"", b"\x00" * 512):  # truncated, or zeroed by journal_mode=PERSIST
        journal.write_bytes(content)
        with Project.open(project_path) as project:
            assert not project.read_only and project.notices == []
            project.save_scenario(f"x{len(content)}", PowerScenario())
            project.save()


def test_save_is_refused_while_a_journal_sits_beside_the_file(project, tmp_path):
    project.save_scenario("Mine", PowerScenario())
    journal = project.path.with_name("demo.swbproj-journal")
    journal.write_bytes(b"\x01" * 512)  # another program started writing after we opened
    before = file_state(project.path)
    with pytest.raises(ProjectSaveError, match="demo.swbproj-journal from an interrupted write") as info:
        project.save()
    assert "\n" not in str(info.value) and str(project.path) in str(info.value)
    assert file_state(project.path) == before and project.dirty
    other = tmp_path / "other.swbproj"
    other.with_name("other.swbproj-wal").write_bytes(b"x" * 100)
    with pytest.raises(ProjectSaveError, match="other.swbproj-wal"):
        project.save_as(other)
    assert not other.exists()
    journal.unlink()
    project.save()


def test_the_race_with_a_journal_is_explained_not_called_corruption(project_path):
    exc = sqlite3.OperationalError("attempt to write a readonly database")
    error = fileio._classify(project_path, exc)
    assert "damaged" not in str(error) and "another program" in str(error)


def test_recovery_files_follow_the_real_path_for_the_data_dir(linked):
    link, real = linked
    assert recovery.candidates(link) == recovery.candidates(real)
