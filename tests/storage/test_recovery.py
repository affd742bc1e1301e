"""Recovery files: unsaved work survives a crash; saving or closing cleanly removes it."""

from __future__ import annotations

import os

import pytest
from storage_helpers import file_state

from storage import NotAProjectError, Project, recovery
from workbench.scenarios import PowerScenario


def _names(project: Project) -> set[tuple[str, str]]:
    return {(r.kind, r.name) for r in project.list_scenarios()}


def test_nothing_to_recover_when_clean(project, project_path):
    assert project.write_recovery() is None
    assert Project.recovery_for(project_path) is None


def test_recovery_after_a_crash(project_path):
    before = file_state(project_path)
    project = Project.open(project_path)
    project.save_scenario("Unsaved work", PowerScenario())
    written = project.write_recovery()
    assert written == project_path.with_name(".demo.swbproj.recovery")
    assert file_state(project_path) == before  # the project itself is not written
    # Simulate a crash: the project is never closed cleanly.
    project._dispose()
    assert Project.recovery_for(project_path) == written
    with Project.open(project_path) as plain:  # declining keeps the file as it was
        assert ("power", "Unsaved work") not in _names(plain)
        assert not plain.recovered
    with Project.open(project_path, use_recovery=True) as recovered:
        assert recovered.recovered
        assert recovered.dirty
        assert recovered.path == project_path
        assert ("power", "Unsaved work") in _names(recovered)
        recovered.save()
        assert not written.exists()
    assert Project.recovery_for(project_path) is None
    with Project.open(project_path) as saved:
        assert ("power", "Unsaved work") in _names(saved)


def test_closing_cleanly_deletes_the_recovery_file(project):
    project.save_scenario("x", PowerScenario())
    written = project.write_recovery()
    assert written.exists()
    project.close()
    assert not written.exists()


def test_an_exception_in_the_with_block_keeps_the_recovery_file(project_path):
    with pytest.raises(RuntimeError):
        with Project.open(project_path) as project:
            project.save_scenario("x", PowerScenario())
            written = project.write_recovery()
            raise RuntimeError("crash")
    assert written.exists()
    Project.discard_recovery(project_path)
    assert not written.exists()


def test_a_recovery_older_than_the_file_is_ignored(project, project_path):
    project.save_scenario("x", PowerScenario())
    written = project.write_recovery()
    stamp = project_path.stat().st_mtime_ns
    os.utime(written, ns=(stamp - 10**9, stamp - 10**9))
    assert Project.recovery_for(project_path) is None
    with Project.open(project_path, use_recovery=True) as opened:
        assert not opened.recovered and not opened.dirty


def test_read_only_folder_puts_recovery_in_the_data_dir(project, monkeypatch, tmp_path):
    real_access = os.access

    def no_write_to_folder(path, mode, **kwargs):
        if os.fspath(path) == os.fspath(project.path.parent) and mode & os.W_OK:
            return False
        return real_access(path, mode, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(recovery.os, "access", no_write_to_folder)
        project.save_scenario("x", PowerScenario())
        written = project.write_recovery()
    assert written.parent == recovery.data_dir() / "recovery"
    assert Project.recovery_for(project.path) == written
    project.close()
    assert not written.exists()


def test_a_broken_recovery_file_names_itself(project_path):
    broken = project_path.with_name(".demo.swbproj.recovery")
    broken.write_text("garbage")
    os.utime(broken, ns=(project_path.stat().st_mtime_ns + 10**9,) * 2)
    with pytest.raises(NotAProjectError, match="recovery"):
        Project.open(project_path, use_recovery=True)


def test_closing_keeps_a_recovery_file_left_by_another_session(project_path):
    crashed = Project.open(project_path)
    crashed.save_scenario("x", PowerScenario())
    written = crashed.write_recovery()
    crashed._dispose()
    Project.open(project_path).close()  # the UI has not asked the user yet
    assert Project.recovery_for(project_path) == written


def test_save_as_removes_the_recovery_file(project, tmp_path):
    project.save_scenario("x", PowerScenario())
    written = project.write_recovery()
    project.save_as(tmp_path / "elsewhere.swbproj")
    assert not written.exists()


def test_metadata_for_the_recovery_file_only_leaves_the_working_copy_clean(project_path):
    project = Project.open(project_path)
    project.set_meta("workspace", '{"saved": true}')
    project.save()
    assert project.write_recovery(meta={"workspace": '{"saved": true}'}) is None  # nothing new
    written = project.write_recovery(meta={"workspace": '{"edited": true}'})
    assert written is not None and written.exists()
    # the working copy is as saved, and has nothing unsaved
    assert project.get_meta("workspace") == '{"saved": true}' and not project.dirty
    project._dispose()  # a crash
    with Project.open(project_path, use_recovery=True) as recovered:
        assert recovered.get_meta("workspace") == '{"edited": true}'
        assert recovered.dirty
    with Project.open(project_path) as plain:
        assert plain.get_meta("workspace") == '{"saved": true}'


def test_recovery_metadata_is_checked_like_set_meta(project):
    with pytest.raises(ValueError, match="managed by the project file"):
        project.write_recovery(meta={"schema_version": "99"})
    with pytest.raises(TypeError, match="must be text"):
        project.write_recovery(meta={"workspace": 3})
    assert not project.dirty
