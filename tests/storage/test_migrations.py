"""Schema migrations: a real version-0 file is opened, backed up, migrated and saved."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from storage_helpers import file_state, folder_listing, make_hardware

from storage import (
    SCHEMA_VERSION,
    Project,
    ProjectSaveError,
    ReadOnlyProjectError,
    fileio,
    migrations,
)
from storage.models import REQUIRED_COLUMNS
from workbench.scenarios import RooflineScenario, ScalingScenario


def make_v0_file(path: Path) -> None:
    """A project as version 0 wrote it: scenarios have no notes column."""
    conn = sqlite3.connect(path)
    try:
        migrations.create_v0(conn)
        hw = make_hardware("Old GPU", builtin=True)
        conn.execute(
            "INSERT INTO hardware_presets VALUES (?, ?, ?, 1, ?, '2024-01-01 00:00:00', '2024-01-01 00:00:00')",
            (hw.key, hw.name, hw.vendor, json.dumps(hw.to_dict())),
        )
        for name, scenario in [("Old roofline", RooflineScenario()), ("Old run", ScalingScenario(n_gpus=64))]:
            conn.execute(
                "INSERT INTO scenarios (kind, name, payload, created, modified) "
                "VALUES (?, ?, ?, '2024-01-01 00:00:00', '2024-01-02 00:00:00')",
                (scenario.kind, name, scenario.to_json()),
            )
        conn.commit()
    finally:
        conn.close()


def _columns(path: Path, table: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    finally:
        conn.close()


def test_migration_steps_cover_every_version():
    assert len(migrations.MIGRATIONS) == SCHEMA_VERSION


def test_opening_a_v0_file_migrates_the_working_copy_only(tmp_path):
    path = tmp_path / "old.swbproj"
    make_v0_file(path)
    assert "notes" not in _columns(path, "scenarios")
    before = file_state(path)
    with Project.open(path) as project:
        assert project.migrated_from == 0
        assert project.backup_path == tmp_path / "old.swbproj.bak-v0"
        assert not project.read_only
        records = project.list_scenarios()
        assert [(r.kind, r.name, r.notes) for r in records] == [
            ("roofline", "Old roofline", ""), ("scaling", "Old run", ""),
        ]
        assert project.load_scenario(("scaling", "Old run")) == ScalingScenario(n_gpus=64)
        assert project.get_preset("old-gpu").builtin
        assert project.info["schema_version"] == str(SCHEMA_VERSION)
        assert project.problems == []
        # The original file is untouched until the user saves.
        assert file_state(path) == before
        # The backup is a faithful copy of the original.
        assert project.backup_path.read_bytes() == path.read_bytes()
        project.set_notes(("roofline", "Old roofline"), "now with notes")
        project.save()
    assert _columns(path, "scenarios") == REQUIRED_COLUMNS["scenarios"]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
    with Project.open(path) as project:
        assert project.migrated_from is None
        assert project.list_scenarios("roofline")[0].notes == "now with notes"
    # The backup still opens (and migrates again) on its own.
    backup = tmp_path / "old.swbproj.bak-v0"
    copy = tmp_path / "restored.swbproj"
    copy.write_bytes(backup.read_bytes())
    with Project.open(copy) as restored:
        assert restored.list_scenarios("roofline")[0].notes == ""


def test_an_existing_backup_is_never_overwritten(tmp_path):
    path = tmp_path / "old.swbproj"
    make_v0_file(path)
    (tmp_path / "old.swbproj.bak-v0").write_bytes(b"an older backup")
    with Project.open(path) as project:
        assert project.backup_path == tmp_path / "old.swbproj.bak-v0-2"
    assert (tmp_path / "old.swbproj.bak-v0").read_bytes() == b"an older backup"


def test_migrated_schema_matches_a_new_project(tmp_path):
    old = tmp_path / "old.swbproj"
    make_v0_file(old)
    with Project.open(old) as project:
        project.save_as(tmp_path / "migrated.swbproj")
    Project.create(tmp_path / "fresh.swbproj", seed=False).close()
    for table in REQUIRED_COLUMNS:
        assert _columns(tmp_path / "migrated.swbproj", table) == _columns(tmp_path / "fresh.swbproj", table)


def test_a_failing_migration_leaves_the_file_alone(tmp_path, monkeypatch):
    path = tmp_path / "old.swbproj"
    make_v0_file(path)
    before = file_state(path)

    def broken(conn):
        conn.execute("ALTER TABLE no_such_table ADD COLUMN x TEXT")

    monkeypatch.setattr(migrations, "MIGRATIONS", [broken])
    from storage import CorruptProjectError

    listing = folder_listing(tmp_path)
    with pytest.raises(CorruptProjectError, match="could not be upgraded from schema 0"):
        Project.open(path)
    assert file_state(path) == before
    assert folder_listing(tmp_path) == listing  # no backup either


def test_without_a_backup_the_migrated_project_is_saved_only_with_save_as(tmp_path, monkeypatch):
    path = tmp_path / "old.swbproj"
    make_v0_file(path)
    before = file_state(path)

    def no_space(source, target, what="write a backup copy", **options):
        raise ProjectSaveError(target, "could not write a backup copy: the disk is full")

    monkeypatch.setattr(fileio, "atomic_copy_file", no_space)
    with Project.open(path) as project:
        assert project.migrated_from == 0 and project.backup_path is None
        assert project.read_only
        assert "no backup copy of the schema-0 file" in project.read_only_reason
        with pytest.raises(ReadOnlyProjectError, match="Save As"):
            project.save()
        project.save_as(tmp_path / "upgraded.swbproj")
    assert file_state(path) == before


def test_migrate_rejects_impossible_ranges():
    conn = sqlite3.connect(":memory:")
    with pytest.raises(ValueError):
        migrations.migrate(conn, SCHEMA_VERSION + 1)
    conn.close()
