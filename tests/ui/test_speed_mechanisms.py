"""What keeps the app fast (issue 15), checked by counting, never by timing.

The benchmark (``python -m tests.benchmarks.bench``) measures the speed; these tests guard the
mechanisms behind it, so a change that undoes one fails here whatever the machine:

- the scenario browser fills from one storage query and parses no payload until a row is
  shown or asked about (and then says what ``Project.problem_of`` says);
- a chart's items (curves, legend entries, reference lines) are the same objects after a
  value change, and its overlays are placed once per change;
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from storage import Project
from ui.scenario_browser import PROBLEM_ROLE, ScenarioBrowser
from workbench.scenarios import CollectiveScenario, ScalingScenario


def _selects(connection: sqlite3.Connection) -> list[str]:
    seen: list[str] = []

    def trace(statement: str) -> None:
        if statement.lstrip()[:6].upper() == "SELECT":
            seen.append(statement)

    connection.set_trace_callback(trace)
    return seen


@pytest.fixture
def many(tmp_path):
    path = tmp_path / "many.swbproj"
    with Project.create(path, seed=False) as project:
        for i in range(300):
            scenario = ScalingScenario(n_gpus=8 + i) if i % 2 else CollectiveScenario(n_ranks=2 + i % 60)
            project.save_scenario(f"Scenario {i:03d}", scenario, notes=f"note {i}")
        project.save()
    return path


def test_the_browser_fills_from_one_query_and_parses_only_what_it_shows(qtbot, many):
    project = Project.open(many)
    try:
        browser = ScenarioBrowser(None)
        qtbot.addWidget(browser)
        browser.resize(320, 500)
        browser.show()
        qtbot.waitExposed(browser)
        selects = _selects(project._memory)
        browser.set_project(project)
        assert len(selects) == 1, selects
        browser.grab()  # the rows on screen are checked as they are drawn
        assert len(selects) == 1, selects
        assert not project._checked  # no first look at every payload
        rows = [browser.group_item(kind).childCount() for kind in ("scaling", "collective")]
        assert rows == [150, 150]
        checked = sum(1 for item in browser._items.values() if item._problem is not False)
        assert 0 < checked < 100
    finally:
        project.close()


def test_lazily_found_problems_are_the_projects(qtbot, tmp_path):
    path = tmp_path / "damaged.swbproj"
    with Project.create(path, seed=False) as project:
        for i in range(7):
            project.save_scenario(f"S{i}", ScalingScenario(n_gpus=8 + i))
        project.save()
    damage = [
        ("payload", json.dumps({"kind": "scaling", "schema_version": 1, "n_gpus": -3})),  # invalid value
        ("payload", CollectiveScenario().to_json()),  # another kind's scenario
        ("payload", "{not json"),  # not JSON
        ("payload", 42),  # a number
        ("payload", b"\xff\xfe not utf-8"),  # a BLOB that is not text
        ("name", b"S5 \xff"),  # a name whose text is not UTF-8
    ]
    with sqlite3.connect(path) as db:
        ids = [sid for (sid,) in db.execute("SELECT id FROM scenarios ORDER BY name")]
        for sid, (column, value) in zip(ids, damage, strict=False):
            if column == "name":
                db.execute("UPDATE scenarios SET name = CAST(? AS TEXT) WHERE id = ?", (value, sid))
            else:
                db.execute(f"UPDATE scenarios SET {column} = ? WHERE id = ?", (value, sid))
    lazy = Project.open(path)
    eager = Project.open(path)
    try:
        listing = lazy.list_scenarios_with_problems()
        assert [r.id for r in listing] == [r.id for r in lazy.list_scenarios()]
        found = {r.id: listing.problem(r) for r in listing}
        expected = {r.id: eager.problem_of(r.id) for r in eager.list_scenarios()}
        assert found == expected
        assert sum(1 for p in found.values() if p) >= 5  # the damage was seen
        assert found[ids[-1]] is None  # an intact one

        browser = ScenarioBrowser(lazy)
        qtbot.addWidget(browser)
        for record in listing:
            assert browser.item_for(record.id).data(0, PROBLEM_ROLE) == expected[record.id]
    finally:
        lazy.close()
        eager.close()
