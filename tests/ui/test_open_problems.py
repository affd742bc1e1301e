"""Opening a project shows it before every saved payload is parsed: which items cannot be loaded
is counted once the window is up and then joins the status line (issue 15: File > Open of
10,000 scenarios spent half a second on that count before anything was shown)."""

from __future__ import annotations

import sqlite3

from storage import Project
from workbench.scenarios import RooflineScenario


def test_the_unloadable_count_comes_after_the_project_is_shown(qtbot, new_window, tmp_path, monkeypatch):
    window = new_window()
    path = tmp_path / "damaged.swbproj"
    project = Project.create(path)
    project.save_scenario("fine", RooflineScenario())
    sid = project.save_scenario("broken", RooflineScenario())
    project.save()
    project.close()
    with sqlite3.connect(path) as db:  # a payload that no longer validates
        db.execute("UPDATE scenarios SET payload = ? WHERE id = ?", ('{"kind": "roofline", "version": 1, '
                                                                     '"precision": "fp3"}', sid))

    counted = []
    real = Project.problems

    def spy(self):
        counted.append(window.project is self)
        return real.fget(self)

    monkeypatch.setattr(Project, "problems", property(spy))
    assert window.open_path(path, confirm=False)
    assert counted == []  # the window shows the project first
    qtbot.waitUntil(lambda: "cannot be loaded" in window.statusBar().currentMessage())
    assert counted and counted[-1]
    assert "broken" in window.statusBar().currentMessage()
