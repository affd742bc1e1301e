"""Project metadata for application state: get_meta / set_meta."""

from __future__ import annotations

import pytest

from storage import Project


def test_missing_key_is_none(project):
    assert project.get_meta("workspace") is None


def test_set_meta_marks_dirty_and_round_trips_through_save(project, project_path):
    assert not project.dirty
    project.set_meta("workspace", '{"context": {"n_gpus": 512}}')
    assert project.dirty
    assert project.get_meta("workspace") == '{"context": {"n_gpus": 512}}'
    project.save()
    assert not project.dirty
    with Project.open(project_path) as again:
        assert again.get_meta("workspace") == '{"context": {"n_gpus": 512}}'


def test_replacing_a_value_and_same_value_is_no_change(project):
    project.set_meta("workspace", "a")
    project.save()
    project.set_meta("workspace", "a")
    assert not project.dirty
    project.set_meta("workspace", "b")
    assert project.dirty and project.get_meta("workspace") == "b"


def test_file_keys_are_refused(project):
    for key in ("schema_version", "app_version", "created"):
        with pytest.raises(ValueError, match="managed by the project file"):
            project.set_meta(key, "1")
    with pytest.raises(ValueError):
        project.set_meta("", "x")
    with pytest.raises(ValueError):
        project.set_meta("k" * 65, "x")
    with pytest.raises(TypeError):
        project.set_meta("workspace", 3)  # type: ignore[arg-type]
    assert not project.dirty


def test_info_lists_the_new_key(project):
    project.set_meta("workspace", "{}")
    assert project.info["workspace"] == "{}"
