"""A project file whose database is valid SQLite (it passes ``quick_check``) but whose
contents were damaged or altered: every operation gives one clear line or skips the bad row
with a stated problem, never a traceback, and the rest of the project stays usable."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from storage_helpers import file_state, folder_listing

from storage import (
    CorruptProjectError,
    InvalidItemError,
    Project,
    ProjectError,
    fileio,
    read_scenario_file,
)
from storage.errors import shorten, shown
from workbench.scenarios import PowerScenario, RooflineScenario


def _sql(path: Path, *statements: str, params: dict[int, tuple] | None = None) -> None:
    conn = sqlite3.connect(path)
    try:
        for i, statement in enumerate(statements):
            conn.execute(statement, (params or {}).get(i, ()))
        conn.commit()
    finally:
        conn.close()


def _loosen(path: Path) -> None:
    """Rebuild the scenarios table without NOT NULL or type affinity, as another tool could,
    so that NULLs, BLOBs and numbers can be stored in its columns."""
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE loose (id INTEGER PRIMARY KEY AUTOINCREMENT, kind, name, notes, payload, created, modified);
        INSERT INTO loose SELECT id, kind, name, notes, payload, created, modified FROM scenarios;
        DROP TABLE scenarios;
        ALTER TABLE loose RENAME TO scenarios;
    """)
    conn.close()


def _one_line(error: BaseException, path: Path) -> str:
    message = str(error)
    assert isinstance(error, ProjectError)
    assert "\n" not in message and str(path) in message
    return message


def _ids(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {name: sid for sid, name in conn.execute("SELECT id, name FROM scenarios")}
    finally:
        conn.close()


def test_text_that_is_not_utf8(project_path):
    """Bit flips inside text: the rows list (bad bytes shown as U+FFFD), are named in
    problems, and a scenario whose stored JSON is damaged does not load as data."""
    ids = _ids(project_path)
    _sql(project_path,
         f"UPDATE scenarios SET name = CAST(X'426967ff2072756e' AS TEXT) WHERE id = {ids['Big run']}",
         f"UPDATE scenarios SET payload = CAST(X'7b226b696e64223a22726f6f666c696e65ff227d' AS TEXT) "
         f"WHERE id = {ids['Default roofline']}",
         f"UPDATE scenarios SET notes = CAST(X'6e6f746573ff' AS TEXT) WHERE id = {ids['Ring of 8']}",
         "UPDATE hardware_presets SET vendor = CAST(X'41636dff' AS TEXT)")
    assert sqlite3.connect(project_path).execute("PRAGMA quick_check").fetchone() == ("ok",)
    with Project.open(project_path) as project:
        records = {r.id: r for r in project.list_scenarios()}
        assert records[ids["Big run"]].name == "Big\ufffd run"
        assert records[ids["Ring of 8"]].notes == "notes\ufffd"
        assert {p.vendor for p in project.list_presets()} == {"Acm\ufffd"}
        problems = project.problems
        assert "scenario 'Big\ufffd run' (scaling): its name is damaged (not valid UTF-8 text)" in problems
        assert "scenario 'Ring of 8' (collective): its notes is damaged (not valid UTF-8 text)" in problems
        assert ("scenario 'Default roofline' (roofline): its data is damaged (not valid UTF-8 text)"
                in problems)
        with pytest.raises(InvalidItemError, match="cannot be loaded: its data is damaged") as info:
            project.load_scenario(ids["Default roofline"])
        _one_line(info.value, project_path)
        project.load_scenario(ids["Big run"])  # its data is sound
        # Saving a scenario over the damaged one, and saving the file, work.
        project.save_scenario("Default roofline", RooflineScenario())
        project.save()
    with Project.open(project_path) as project:
        assert not any("Default roofline" in p for p in project.problems)


@pytest.mark.parametrize(("column", "value", "words"), [
    ("name", None, "its name is missing (NULL)"),
    ("name", b"\x00\x01binary", "its name is binary data, not text"),
    ("kind", None, "its kind is missing (NULL)"),
    ("kind", b"\xff", "its kind is binary data, not text"),
    ("name", 42, "its name is a number, not text"),
])
def test_a_scenario_without_a_text_name_or_kind_is_left_out_with_a_problem(project_path, column, value, words):
    _loosen(project_path)
    sid = _ids(project_path)["Big run"]
    _sql(project_path, f"UPDATE scenarios SET {column} = ? WHERE id = {sid}", params={0: (value,)})
    before = file_state(project_path)
    with Project.open(project_path) as project:
        listed = project.list_scenarios()
        assert sid not in {r.id for r in listed} and len(listed) == 2
        assert all(isinstance(r.kind, str) and isinstance(r.name, str) for r in listed)
        (problem,) = [p for p in project.problems if words in p]
        assert problem.endswith("it is left out of the list")
        assert "\n" not in problem
        for call in (lambda: project.load_scenario(sid), lambda: project.rename_scenario(sid, "x"),
                     lambda: project.duplicate_scenario(sid), lambda: project.set_notes(sid, "x"),
                     lambda: project.export_scenario(sid, project_path.with_name("out.json"))):
            with pytest.raises(InvalidItemError, match=f"scenario #{sid} is damaged") as info:
                call()
            _one_line(info.value, project_path)
        project.save_scenario("Big run", PowerScenario())  # the rest of the project is usable
        project.delete_scenario(sid)  # and the damaged row can be deleted
        assert not any(words in p for p in project.problems)
    assert file_state(project_path) == before


def test_times_that_are_not_times(project_path):
    _loosen(project_path)
    _sql(project_path, "UPDATE scenarios SET modified = 'last tuesday', created = X'00'",
         "UPDATE hardware_presets SET modified = 'soon'")
    with Project.open(project_path) as project:
        assert all(r.modified.year == 1970 for r in project.list_scenarios())
        assert all(p.modified.year == 1970 for p in project.list_presets())
        # Loading the whole row through the ORM (replacing, renaming) does not trip on it.
        project.save_scenario("Big run", PowerScenario())
        project.rename_scenario(("roofline", "Default roofline"), "Renamed")
        project.set_notes(("collective", "Ring of 8"), "new notes")
        project.update_preset("user-gpu", project.get_preset("user-gpu").with_changes(vendor="Other"))
        project.save()
    with Project.open(project_path) as project:
        assert "Renamed" in {r.name for r in project.list_scenarios()}


def test_a_view_in_place_of_the_scenarios_table(project_path):
    _sql(project_path, "ALTER TABLE scenarios RENAME TO hidden",
         "CREATE VIEW scenarios AS SELECT * FROM hidden")
    before, listing = file_state(project_path), folder_listing(project_path.parent)
    with pytest.raises(CorruptProjectError, match="'scenarios' is a view, not a table") as info:
        Project.open(project_path)
    _one_line(info.value, project_path)
    assert file_state(project_path) == before and folder_listing(project_path.parent) == listing


def test_triggers_are_removed_from_the_working_copy(project_path):
    _sql(project_path,
         "CREATE TRIGGER refuse BEFORE INSERT ON scenarios BEGIN SELECT RAISE(ABORT, 'no new scenarios'); END",
         "CREATE TRIGGER wipe AFTER UPDATE ON scenarios BEGIN DELETE FROM hardware_presets; END")
    before = file_state(project_path)
    with Project.open(project_path, read_only=True) as project:
        assert sorted(n.split("'")[1] for n in project.notices if "trigger" in n) == ["refuse", "wipe"]
    assert file_state(project_path) == before
    with Project.open(project_path) as project:
        project.save_scenario("New", PowerScenario())
        project.set_notes(("scaling", "Big run"), "updated")
        assert len(project.list_presets()) == 2
        project.save()
    conn = sqlite3.connect(project_path)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone() == (0,)
    conn.close()


def test_a_constraint_of_another_program_that_refuses_the_apps_rows(project_path):
    """A CHECK the app knows nothing about: the refused change is one line, and nothing else
    is lost."""
    conn = sqlite3.connect(project_path)
    conn.executescript("""
        CREATE TABLE strict (id INTEGER PRIMARY KEY AUTOINCREMENT, kind VARCHAR(40) NOT NULL,
            name VARCHAR(200) NOT NULL CHECK (length(name) < 10), notes TEXT NOT NULL DEFAULT '',
            payload TEXT NOT NULL, created DATETIME NOT NULL, modified DATETIME NOT NULL);
        INSERT INTO strict SELECT id, kind, name, notes, payload, created, modified FROM scenarios
            WHERE length(name) < 10;
        DROP TABLE scenarios;
        ALTER TABLE strict RENAME TO scenarios;
    """)
    conn.close()
    with Project.open(project_path) as project:
        with pytest.raises(CorruptProjectError, match="its database refused the operation .*CHECK") as info:
            project.save_scenario("A rather long name", PowerScenario())
        _one_line(info.value, project_path)
        project.save_scenario("Short", PowerScenario())
        assert {r.name for r in project.list_scenarios()} == {"Big run", "Ring of 8", "Short"}


def test_long_kinds_and_names_are_cut_in_messages(project_path):
    kind = "k" * 100_000
    name = "n" * 5000
    _loosen(project_path)
    ids = _ids(project_path)
    _sql(project_path, f"UPDATE scenarios SET kind = ? WHERE id = {ids['Big run']}",
         f"UPDATE scenarios SET name = ? WHERE id = {ids['Ring of 8']}",
         params={0: (kind,), 1: (name,)})
    with Project.open(project_path) as project:
        (problem,) = project.problems  # the long name is text: listed as it is
        assert len(problem) < 400 and "k" * 60 + "…(100000 characters)" in problem
        with pytest.raises(InvalidItemError) as info:
            project.load_scenario(ids["Big run"])
        assert len(str(info.value)) < 500 and "…(100000 characters)" in str(info.value)
        with pytest.raises(ProjectError) as info:
            project.load_scenario((kind + "x", name))
        assert len(str(info.value)) < 500


def test_shown_and_shorten():
    assert shown("Big run") == "'Big run'"
    assert shown("\x1b]0;title\x07") == "'\\x1b]0;title\\x07'"
    assert shown("a" * 61) == "'" + "a" * 60 + "'…(61 characters)"
    assert shown(None) == "NULL" and shown(b"xyz") == "a 3-byte BLOB"
    assert shown(10**5000).endswith("-bit number")
    assert shorten("abc", 2) == "ab…(3 characters)" and shorten("ab", 2) == "ab"
    assert len(str(ProjectError("p", "x" * 100_000))) < 1100


def test_a_folder_where_the_journal_goes(project_path):
    journal = project_path.with_name("demo.swbproj-journal")
    journal.mkdir()
    before, listing = file_state(project_path), folder_listing(project_path.parent)
    with pytest.raises(ProjectError) as info:
        Project.open(project_path)
    message = _one_line(info.value, project_path)
    assert "a folder called demo.swbproj-journal sits beside it where SQLite keeps its rollback journal" in message
    assert f"move or rename {journal}" in message
    assert "disk I/O" not in message
    assert file_state(project_path) == before and folder_listing(project_path.parent) == listing
    journal.rmdir()
    Project.open(project_path).close()


# -- named pipes and other special files ---------------------------------------------------


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "p.swbproj"
    os.mkfifo(path)
    return path


def test_a_named_pipe_is_never_read(fifo, tmp_path):
    """Opening, fingerprinting or importing a named pipe returns at once (reading one blocks
    until someone writes to it: for ever)."""
    with pytest.raises(ProjectError, match="is a named pipe, not a project file") as info:
        Project.open(fifo)
    _one_line(info.value, fifo)
    with pytest.raises(ProjectError, match="is a named pipe"):
        Project.open(fifo, read_only=True)
    assert fileio.fingerprint(fifo) is None
    scenario_pipe = tmp_path / "s.json"
    os.mkfifo(scenario_pipe)
    with pytest.raises(InvalidItemError, match="is a named pipe, not a scenario file"):
        read_scenario_file(scenario_pipe)


def test_a_named_pipe_beside_the_project(project_path):
    """A pipe where a recovery file or a journal would be is not a recovery file or a journal."""
    pipe = project_path.with_name(".demo.swbproj.recovery")
    os.mkfifo(pipe)
    os.mkfifo(project_path.with_name("demo.swbproj-wal"))
    assert Project.recovery_for(project_path) is None
    with pytest.raises(ProjectError, match="a named pipe called demo.swbproj-wal sits beside it"):
        Project.open(project_path, use_recovery=True)


def test_save_as_onto_a_named_pipe_is_refused(project, fifo):
    with pytest.raises(ProjectError, match="is a named pipe, not a regular file"):
        project.save_as(fifo)
    assert fifo.is_fifo()
