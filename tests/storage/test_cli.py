"""The headless command line: ``new`` and ``list``, run as a user would, in a subprocess."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from storage_helpers import file_state

import workbench

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "ui.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )


def _assert_one_line_failure(result: subprocess.CompletedProcess[str], path: Path, words: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0]
    assert words in lines[0], lines[0]
    assert "Traceback" not in result.stderr


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert workbench.__version__ in result.stdout


def test_new_then_list(tmp_path):
    import presets

    path = tmp_path / "cli.swbproj"
    result = run_cli("new", str(path))
    assert result.returncode == 0, result.stderr
    assert path.exists()
    result = run_cli("list", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    expected = sorted(f"{s.kind}\t{name}" for name, s in presets.sample_scenarios())
    assert sorted(lines) == expected
    assert all(len(line.split("\t")) == 2 for line in lines)


def test_list_by_kind(project_path):
    result = run_cli("list", str(project_path), "--kind", "scaling")
    assert result.returncode == 0
    assert result.stdout == "scaling\tBig run\n"


def test_new_refuses_an_existing_file(project_path):
    before = file_state(project_path)
    result = run_cli("new", str(project_path))
    assert result.returncode == 1
    assert result.stderr.strip().endswith(f"{project_path}: already exists; choose another name or delete it first")
    _assert_one_line_failure(result, project_path, "already exists")
    assert file_state(project_path) == before


def test_new_in_a_missing_folder(tmp_path):
    path = tmp_path / "nope" / "x.swbproj"
    _assert_one_line_failure(run_cli("new", str(path)), path, "does not exist")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no such file"),
        (b"hello\n", "not a Scaling Workbench project"),
        (b"", "is empty"),
    ],
)
def test_list_failures(tmp_path, content, words):
    path = tmp_path / "x.swbproj"
    if content is not None:
        path.write_bytes(content)
    _assert_one_line_failure(run_cli("list", str(path)), path, words)


def test_list_corrupt_and_newer(project_path, tmp_path):
    newer = tmp_path / "newer.swbproj"
    newer.write_bytes(project_path.read_bytes())
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    _assert_one_line_failure(run_cli("list", str(newer)), newer, "written by schema 7; this version reads up to 1")
    data = project_path.read_bytes()
    project_path.write_bytes(data[: len(data) // 2])
    _assert_one_line_failure(run_cli("list", str(project_path)), project_path, "damaged")


def test_list_a_locked_file_fails_quickly(project_path):
    locker = sqlite3.connect(project_path, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        result = run_cli("list", str(project_path), timeout=60)  # a hang fails here
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    _assert_one_line_failure(result, project_path, "locked")


def test_list_reports_invalid_scenarios_as_warnings(project_path):
    conn = sqlite3.connect(project_path)
    conn.execute("UPDATE scenarios SET payload = '{' WHERE name = 'Big run'")
    conn.commit()
    conn.close()
    result = run_cli("list", str(project_path))
    assert result.returncode == 0
    assert "scaling\tBig run" in result.stdout.splitlines()
    assert "warning" in result.stderr and "Big run" in result.stderr


def test_list_escapes_hostile_names(project_path):
    conn = sqlite3.connect(project_path)
    conn.execute("UPDATE scenarios SET name = 'two\tparts\nand a line' WHERE name = 'Big run'")
    conn.commit()
    conn.close()
    result = run_cli("list", str(project_path))
    assert result.returncode == 0
    assert "scaling\ttwo\\tparts\\nand a line" in result.stdout.splitlines()


def test_usage_errors_exit_non_zero(tmp_path):
    result = run_cli("list")
    assert result.returncode == 2
    assert "usage" in result.stderr


def test_new_and_list_do_not_import_qt(tmp_path):
    code = (
        "import sys; from ui.cli import main; "
        f"main(['new', {str(tmp_path / 'q.swbproj')!r}]); main(['list', {str(tmp_path / 'q.swbproj')!r}]); "
        "print(','.join(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))), file=sys.stderr)"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""


def test_gui_branch_is_chosen_for_a_project_path(monkeypatch, project_path):
    """``scaling-workbench PROJECT`` hands the path to ui.app.run_gui (stubbed: no window)."""
    import types

    from ui import cli

    calls = []
    fake = types.ModuleType("ui.app")
    fake.run_gui = lambda project=None: calls.append(project) or 0
    monkeypatch.setitem(sys.modules, "ui.app", fake)
    assert cli.main([str(project_path)]) == 0
    assert cli.main([]) == 0
    assert calls == [str(project_path), None]


# -- hostile files and names (issue 14) -------------------------------------------------------


def test_list_and_export_of_a_named_pipe_fail_at_once(tmp_path):
    fifo = tmp_path / "p.swbproj"
    os.mkfifo(fifo)
    _assert_one_line_failure(run_cli("list", str(fifo), timeout=60), fifo, "is a named pipe, not a project file")
    result = run_cli("export", str(fifo), "--scenario", "x", "--csv", str(tmp_path / "x.csv"), timeout=60)
    _assert_one_line_failure(result, fifo, "is a named pipe")


def test_list_escapes_terminal_control_sequences(project_path):
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x9b\u202eevil"
    conn = sqlite3.connect(project_path)
    conn.execute("UPDATE scenarios SET name = ? WHERE name = 'Big run'", (hostile,))
    conn.commit()
    conn.close()
    result = run_cli("list", str(project_path))
    assert result.returncode == 0, result.stderr
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in result.stdout and raw not in result.stderr
    assert "scaling\t\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x9b\\u202eevil" in result.stdout.splitlines()


def test_a_failure_message_with_control_characters_is_escaped(tmp_path):
    path = tmp_path / "x\x1b[2J.swbproj"
    result = run_cli("list", str(path))
    assert result.returncode == 1 and "\x1b" not in result.stderr
    assert "x\\x1b[2J.swbproj: no such file" in result.stderr


def _v0_project(path: Path) -> Path:
    from storage import migrations

    conn = sqlite3.connect(path)
    migrations.create_v0(conn)
    conn.execute("INSERT INTO scenarios (kind, name, payload, created, modified) VALUES "
                 "('power', 'Old one', '{\"kind\": \"power\", \"schema_version\": 1}', "
                 "'2024-01-01 00:00:00', '2024-01-01 00:00:00')")
    conn.commit()
    conn.close()
    return path


def test_list_writes_nothing_beside_an_old_or_a_wal_mode_project(tmp_path, project_path):
    old = _v0_project(tmp_path / "old.swbproj")
    conn = sqlite3.connect(project_path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    before = {p: file_state(p) for p in (old, project_path)}
    listing = sorted(os.listdir(tmp_path))
    for _ in range(3):
        result = run_cli("list", str(old))
        assert result.returncode == 0 and result.stdout == "power\tOld one\n", result.stderr
        result = run_cli("list", str(project_path))
        assert result.returncode == 0 and "scaling\tBig run" in result.stdout.splitlines(), result.stderr
    assert sorted(os.listdir(tmp_path)) == listing  # no .bak-v0, -2, -3, no -wal or -shm
    assert {p: file_state(p) for p in (old, project_path)} == before


def test_list_leaves_the_leftovers_of_a_killed_save_alone(project_path):
    leftover = project_path.with_name("demo.swbproj.tmp-1a2b3c4d")
    leftover.write_bytes(b"half a database")
    stamp = project_path.stat().st_mtime - 1000
    os.utime(leftover, (stamp, stamp))
    assert run_cli("list", str(project_path)).returncode == 0
    assert leftover.exists()  # the GUI's open removes it; a read-only command does not


def test_list_warns_about_a_huge_kind_in_one_short_line(project_path):
    conn = sqlite3.connect(project_path)
    conn.execute("UPDATE scenarios SET kind = ? WHERE name = 'Big run'", ("k" * 100_000,))
    conn.commit()
    conn.close()
    result = run_cli("list", str(project_path))
    assert result.returncode == 0
    (warning,) = result.stderr.splitlines()
    assert len(warning) < 500 and "…(100000 characters)" in warning


def test_new_on_a_full_disk_says_nothing_was_written(tmp_path, monkeypatch, capsys):
    import errno

    from storage import fileio
    from ui import cli

    def full(source, dest):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio, "copy_database", full)
    path = tmp_path / "new.swbproj"
    assert cli.main(["new", str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(f"{path}: could not create the project: the disk is full; free some space or "
                         "choose another disk; nothing was written")
    assert "previous file" not in line
    assert os.listdir(tmp_path) == []
