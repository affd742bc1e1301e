"""Fixtures for the project file tests: small projects built without the preset files."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_helpers import SAMPLES, make_hardware

from storage import Project
from workbench.hardware import Hardware


@pytest.fixture
def hardware() -> Hardware:
    return make_hardware()


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    """A saved project (seeded from SAMPLES, not the preset files): two presets, three scenarios."""
    path = tmp_path / "demo.swbproj"
    project = Project.create(path, hardware=[make_hardware("Builtin GPU")], samples=SAMPLES)
    project.add_preset(make_hardware("User GPU"))
    project.set_notes(("roofline", "Default roofline"), "the default")
    project.save()
    project.close()
    return path


@pytest.fixture
def project(project_path: Path):
    p = Project.open(project_path)
    yield p
    p.close()
