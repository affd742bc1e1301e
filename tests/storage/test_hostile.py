"""Hostile and broken files: each gives a clear error (or a clear report) and changes nothing."""

from __future__ import annotations

import errno
import json
import sqlite3
import struct
from pathlib import Path

import pytest
from storage_helpers import file_state, folder_listing

from storage import (
    CorruptProjectError,
    InvalidItemError,
    NewerVersionError,
    NotAProjectError,
    Project,
    ProjectError,
    ProjectLockedError,
    ProjectNotFoundError,
    ProjectSaveError,
    ReadOnlyProjectError,
    fileio,
)
from workbench.scenarios import PowerScenario

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f"
    b"\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)


def _assert_refused(path: Path, error: type[ProjectError], match: str) -> ProjectError:
    """Opening ``path`` raises ``error`` naming the file, and leaves file and folder unchanged."""
    before = file_state(path)
    listing = folder_listing(path.parent)
    with pytest.raises(error, match=match) as info:
        Project.open(path)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message
    assert file_state(path) == before
    assert folder_listing(path.parent) == listing
    return info.value


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def test_empty_file(tmp_path):
    path = tmp_path / "empty.swbproj"
    path.write_bytes(b"")
    error = _assert_refused(path, NotAProjectError, "is empty")
    assert "Scaling Workbench" in str(error)


def test_text_file(tmp_path):
    path = tmp_path / "notes.swbproj"
    path.write_text("These are my notes, not a project.\n" * 20)
    _assert_refused(path, NotAProjectError, "not a Scaling Workbench project .it is a text file")


def test_png_renamed(tmp_path):
    path = tmp_path / "chart.swbproj"
    path.write_bytes(PNG)
    _assert_refused(path, NotAProjectError, "PNG image")


def test_a_folder(tmp_path):
    path = tmp_path / "folder.swbproj"
    path.mkdir()
    with pytest.raises(NotAProjectError, match="is a folder"):
        Project.open(path)


def test_missing_file_and_missing_folder(tmp_path):
    with pytest.raises(ProjectNotFoundError, match="no such file"):
        Project.open(tmp_path / "absent.swbproj")
    missing = tmp_path / "no such folder" / "x.swbproj"
    with pytest.raises(ProjectNotFoundError, match="folder .* does not exist") as info:
        Project.open(missing)
    assert str(missing) in str(info.value)
    assert not missing.parent.exists()


def test_valid_sqlite_that_is_not_a_project(tmp_path):
    path = tmp_path / "other.swbproj"
    _sql(path, "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('Ada')")
    _assert_refused(path, NotAProjectError, "SQLite database but not a Scaling Workbench project")


def test_our_application_id_but_missing_tables(tmp_path):
    path = tmp_path / "hollow.swbproj"
    _sql(path, "CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT)",
         f"PRAGMA application_id = {fileio.APPLICATION_ID}", "PRAGMA user_version = 1")
    _assert_refused(path, CorruptProjectError, "table 'hardware_presets' is missing")


def test_truncated_project_cut_in_half(project_path):
    data = project_path.read_bytes()
    project_path.write_bytes(data[: len(data) // 2])
    _assert_refused(project_path, CorruptProjectError, "damaged")


@pytest.mark.parametrize("keep", [60, 150, 4096 + 17])
def test_truncated_at_odd_sizes(project_path, keep):
    data = project_path.read_bytes()
    project_path.write_bytes(data[:keep])
    _assert_refused(project_path, (CorruptProjectError, NotAProjectError), "damaged|cut short|not a")


def test_garbage_inside_the_database(project_path):
    data = bytearray(project_path.read_bytes())
    data[100:4096] = bytes((i * 7919) % 251 for i in range(4096 - 100))
    project_path.write_bytes(bytes(data))
    _assert_refused(project_path, CorruptProjectError, "damaged")


def test_newer_schema_version(project_path):
    _sql(project_path, "PRAGMA user_version = 7")
    error = _assert_refused(project_path, NewerVersionError, "written by schema 7; this version reads up to 1")
    assert error.found == 7 and error.supported == 1
    assert "newer Scaling Workbench" in str(error)


def test_invalid_scenarios_are_reported_and_the_rest_opens(project_path):
    _sql(
        project_path,
        "UPDATE scenarios SET payload = '{\"kind\": \"collective\", \"schema_version\": 1, \"n_ranks\": 1}' "
        "WHERE name = 'Ring of 8'",
        "UPDATE scenarios SET payload = '{not json' WHERE name = 'Big run'",
        "INSERT INTO scenarios (kind, name, notes, payload, created, modified) VALUES "
        "('power', 'From the future', '', '{\"kind\": \"power\", \"schema_version\": 99}', "
        "'2024-01-01 00:00:00', '2024-01-01 00:00:00')",
        "INSERT INTO scenarios (kind, name, notes, payload, created, modified) VALUES "
        "('roofline', 'Mislabelled', '', '{\"kind\": \"power\", \"schema_version\": 1}', "
        "'2024-01-01 00:00:00', '2024-01-01 00:00:00')",
        "UPDATE hardware_presets SET payload = '[]' WHERE key = 'user-gpu'",
    )
    before = file_state(project_path)
    with Project.open(project_path) as project:
        problems = project.problems
        assert any(p.startswith("scenario 'Ring of 8' (collective): n_ranks: must be >= 2") for p in problems), problems
        assert any(p.startswith("scenario 'Big run' (scaling): json: is not valid JSON") for p in problems)
        assert any("'From the future' (power)" in p and "newer" in p for p in problems)
        assert any("'Mislabelled' (roofline)" in p for p in problems)
        assert any(p.startswith("preset 'User GPU' (user-gpu)") for p in problems)
        assert len(problems) == 5
        records = {r.name: r for r in project.list_scenarios()}
        assert project.problem_of(records["Ring of 8"].id).startswith("n_ranks: must be >= 2")
        assert project.problem_of(records["Default roofline"]) is None
        assert project.preset_problem("user-gpu").startswith("hardware: must be a mapping")
        assert project.preset_problem("builtin-gpu") is None
        with pytest.raises(InvalidItemError, match="'Ring of 8' \\(collective\\) cannot be loaded: n_ranks") as info:
            project.load_scenario(records["Ring of 8"].id)
        assert str(project_path) in str(info.value)
        with pytest.raises(InvalidItemError):
            project.get_preset("user-gpu")
        project.load_scenario(records["Default roofline"].id)  # the rest load
        # Fixing a broken scenario (saving over it) or deleting it clears its problem.
        from workbench.scenarios import CollectiveScenario

        project.save_scenario("Ring of 8", CollectiveScenario(n_ranks=2))
        project.delete_scenario(records["Big run"].id)
        assert len(project.problems) == 3
    assert file_state(project_path) == before


def test_read_only_file_opens_read_only(project_path, tmp_path):
    project_path.chmod(0o444)
    before = file_state(project_path)
    with Project.open(project_path) as project:
        assert project.read_only
        assert "read-only" in project.read_only_reason
        project.save_scenario("Edited", PowerScenario())  # edits are allowed, saving in place is not
        with pytest.raises(ReadOnlyProjectError, match="Save As") as info:
            project.save()
        assert str(project_path) in str(info.value)
        assert project.dirty
        copy = tmp_path / "writable.swbproj"
        project.save_as(copy)
        assert not project.read_only and not project.dirty
    assert file_state(project_path) == before


def test_file_made_read_only_after_opening(project):
    project.path.chmod(0o444)
    project.save_scenario("Edited", PowerScenario())
    with pytest.raises(ReadOnlyProjectError):
        project.save()
    assert project.read_only


def test_save_as_refuses_to_replace_a_read_only_file(project, tmp_path):
    other = tmp_path / "other.swbproj"
    other.write_bytes(b"keep me")
    other.chmod(0o444)
    with pytest.raises(ReadOnlyProjectError, match="other.swbproj"):
        project.save_as(other)
    assert other.read_bytes() == b"keep me"


def test_locked_by_another_connection(project_path):
    before = file_state(project_path)
    locker = sqlite3.connect(project_path, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(ProjectLockedError, match="locked by another program") as info:
            Project.open(project_path)
        assert str(project_path) in str(info.value)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert file_state(project_path) == before
    with Project.open(project_path) as project:  # and opens fine once released
        assert project.list_scenarios()


def test_create_in_a_missing_folder(tmp_path):
    path = tmp_path / "missing" / "new.swbproj"
    with pytest.raises(ProjectSaveError, match="folder .*missing does not exist") as info:
        Project.create(path, seed=False)
    assert str(path) in str(info.value)
    assert not path.parent.exists()


def test_save_as_into_a_missing_folder(project, tmp_path):
    with pytest.raises(ProjectSaveError, match="does not exist"):
        project.save_as(tmp_path / "missing" / "copy.swbproj")
    assert project.path.parent == tmp_path


@pytest.mark.parametrize("stage", ["copy", "fsync", "replace"])
def test_full_disk_during_save_keeps_the_old_file(project, project_path, monkeypatch, stage):
    before = file_state(project_path)
    listing = folder_listing(project_path.parent)
    project.save_scenario("Unsaved", PowerScenario())

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        if stage == "copy":
            def half_written(source, dest):
                Path(dest).write_bytes(b"SQLite format 3\x00" + b"\x00" * 500)
                full()

            patch.setattr(fileio, "copy_database", half_written)
        elif stage == "fsync":
            patch.setattr(fileio, "fsync_file", full)
        else:
            patch.setattr(fileio.os, "replace", full)
        with pytest.raises(ProjectSaveError, match="disk is full") as info:
            project.save()
    assert str(project_path) in str(info.value)
    assert "unchanged" in str(info.value)
    assert project.dirty
    assert file_state(project_path) == before
    assert folder_listing(project_path.parent) == listing  # the temporary file is gone
    with Project.open(project_path) as old:
        assert ("power", "Unsaved") not in {(r.kind, r.name) for r in old.list_scenarios()}
    project.save()  # space freed: the save goes through
    with Project.open(project_path) as new:
        assert ("power", "Unsaved") in {(r.kind, r.name) for r in new.list_scenarios()}


def test_sqlite_reporting_a_full_disk(project, project_path, monkeypatch):
    before = file_state(project_path)
    project.save_scenario("Unsaved", PowerScenario())

    def full(source, dest):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(fileio, "copy_database", full)
    with pytest.raises(ProjectSaveError, match="disk is full"):
        project.save()
    assert file_state(project_path) == before


def test_header_is_checked_before_sqlite_sees_the_file(tmp_path):
    # A file with the SQLite magic but a nonsense header.
    path = tmp_path / "odd.swbproj"
    header = bytearray(b"SQLite format 3\x00" + b"\x00" * 84)
    header[16:18] = struct.pack(">H", 1000)  # not a power of two
    header[68:72] = struct.pack(">I", fileio.APPLICATION_ID)
    path.write_bytes(bytes(header) + b"\x00" * 900)
    _assert_refused(path, CorruptProjectError, "page size")


def test_a_json_scenario_file_opened_as_a_project(tmp_path):
    path = tmp_path / "run.swbproj"
    path.write_text(json.dumps({"format": "scaling-workbench-scenario"}))
    _assert_refused(path, NotAProjectError, "imported, not opened")
