"""The scenario browser, driven as a person would: keys, clicks, double-clicks, typing."""

from __future__ import annotations

import json
import sqlite3

import pytest
from PySide6.QtCore import Qt

from storage import Project
from ui import scenario_browser
from ui.scenario_browser import ScenarioBrowser, short_date


@pytest.fixture
def project(tmp_path):
    project = Project.create(tmp_path / "plan.swbproj")
    yield project
    project.close()


@pytest.fixture
def browser(qtbot, project):
    widget = ScenarioBrowser(project)
    qtbot.addWidget(widget)
    widget.resize(320, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def no_dialogs(monkeypatch):
    """Fail loudly if a test reaches a real modal question."""
    def boom(*args, **kwargs):
        raise AssertionError(f"unexpected modal dialog: {args[1:]}")

    for name in ("ask_confirm", "ask_text", "ask_notes"):
        monkeypatch.setattr(scenario_browser, name, boom)


def ids_by_name(project) -> dict[str, int]:
    return {r.name: r.id for r in project.list_scenarios()}


def visible_names(browser) -> list[str]:
    names = []
    tree = browser.tree
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        if group.isHidden():
            continue
        names += [group.child(i).text(0) for i in range(group.childCount()) if not group.child(i).isHidden()]
    return names


def click_item(qtbot, browser, item, modifier=Qt.KeyboardModifier.NoModifier):
    browser.tree.scrollToItem(item)
    rect = browser.tree.visualItemRect(item)
    qtbot.mouseClick(browser.tree.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())


def focus_on(qtbot, browser, scenario_id):
    item = browser.item_for(scenario_id)
    click_item(qtbot, browser, item)
    browser.tree.setFocus()
    assert browser.selected_ids() == [scenario_id]


def test_groups_the_sample_scenarios_by_kind_with_counts(browser, project):
    tree = browser.tree
    groups = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert groups == ["Run plans (2)", "Roofline (1)", "Collectives (2)", "All-reduce (2)",
                      "Scaling and MFU (2)", "Power and carbon (1)", "Plan vs actual (1)"]
    scaling = browser.group_item("scaling")
    assert [scaling.child(i).text(0) for i in range(scaling.childCount())] == [
        "70B on 1,024 H100", "Llama-class 8B on 8 H100"]
    # every scenario has its modified date, every group starts expanded
    assert all(browser.item_for(sid).text(1) for sid in ids_by_name(project).values())
    assert all(tree.topLevelItem(i).isExpanded() for i in range(tree.topLevelItemCount()))


def test_double_click_opens_the_scenario(qtbot, browser, project, no_dialogs):
    sid = ids_by_name(project)["All-reduce 1 GiB over NVLink 4"]
    item = browser.item_for(sid)
    rect = browser.tree.visualItemRect(item)
    assert rect.isValid()
    with qtbot.waitSignal(browser.openRequested, timeout=1000) as blocker:
        # A real double-click is press, release, double-click, release; in Qt 6 QTest's
        # mouseDClick sends only the double-click event, and item views ignore a
        # double-click on an index that was not pressed first.
        qtbot.mouseClick(browser.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(browser.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [sid]


def test_enter_opens_and_arrow_keys_move(qtbot, browser, project, no_dialogs):
    ids = ids_by_name(project)
    focus_on(qtbot, browser, ids["Broadcast from rank 0 on 4 GPUs"])
    qtbot.keyClick(browser.tree, Qt.Key.Key_Down)
    assert browser.current_id() == ids["Ring all-reduce on 8 GPUs"]
    with qtbot.waitSignal(browser.openRequested, timeout=1000) as blocker:
        qtbot.keyClick(browser.tree, Qt.Key.Key_Return)
    assert blocker.args == [ids["Ring all-reduce on 8 GPUs"]]


def test_enter_on_a_group_opens_nothing(qtbot, browser, no_dialogs):
    group = browser.group_item("roofline")
    browser.tree.setCurrentItem(group)
    browser.tree.setFocus()
    with qtbot.assertNotEmitted(browser.openRequested):
        qtbot.keyClick(browser.tree, Qt.Key.Key_Return)
    assert not group.isExpanded()  # Enter folds a group instead


def test_f2_renames_through_the_dialog(qtbot, browser, project, monkeypatch):
    ids = ids_by_name(project)
    sid = ids["Power cap sweep, 8 H100"]
    asked = []

    def fake_ask_text(parent, title, label, text):
        asked.append((title, label, text))
        return "Power cap sweep at 600 W"

    monkeypatch.setattr(scenario_browser, "ask_text", fake_ask_text)
    focus_on(qtbot, browser, sid)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        qtbot.keyClick(browser.tree, Qt.Key.Key_F2)
    assert asked[0][0] == "Rename scenario"
    assert asked[0][2] == "Power cap sweep, 8 H100"  # the old name, ready to edit
    assert ids_by_name(project)["Power cap sweep at 600 W"] == sid
    assert browser.item_for(sid).text(0) == "Power cap sweep at 600 W"
    assert browser.selected_ids() == [sid]
    assert project.dirty


def test_rename_clash_explains_and_keeps_the_old_name(qtbot, browser, project, monkeypatch):
    ids = ids_by_name(project)
    sid = ids["Ring all-reduce on 8 GPUs"]
    labels = []

    def fake_ask_text(parent, title, label, text):
        labels.append((label, text))
        return "Broadcast from rank 0 on 4 GPUs"  # another collective scenario's name

    monkeypatch.setattr(scenario_browser, "ask_text", fake_ask_text)
    focus_on(qtbot, browser, sid)
    with qtbot.assertNotEmitted(browser.projectChanged):
        browser.rename_action.trigger()
    # asked again with the reason and the typed name kept; the same answer twice stops
    assert len(labels) == 2
    assert "already exists" in labels[1][0]
    assert labels[1][1] == "Broadcast from rank 0 on 4 GPUs"
    assert "already exists" in browser.message_text()
    assert "keeps its name" in browser.message_text()
    assert ids_by_name(project)["Ring all-reduce on 8 GPUs"] == sid
    assert browser.item_for(sid).text(0) == "Ring all-reduce on 8 GPUs"


def test_rename_clash_then_a_free_name_succeeds(qtbot, browser, project, monkeypatch):
    sid = ids_by_name(project)["Ring all-reduce on 8 GPUs"]
    answers = iter(["Broadcast from rank 0 on 4 GPUs", "Ring all-reduce, 8 GPUs"])
    monkeypatch.setattr(scenario_browser, "ask_text", lambda *a: next(answers))
    focus_on(qtbot, browser, sid)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        browser.rename_selected()
    assert ids_by_name(project)["Ring all-reduce, 8 GPUs"] == sid
    assert browser.message_text() == ""


def test_rename_cancelled_or_empty_changes_nothing(qtbot, browser, project, monkeypatch):
    sid = ids_by_name(project)["Ring all-reduce on 8 GPUs"]
    focus_on(qtbot, browser, sid)
    monkeypatch.setattr(scenario_browser, "ask_text", lambda *a: None)
    with qtbot.assertNotEmitted(browser.projectChanged):
        qtbot.keyClick(browser.tree, Qt.Key.Key_F2)
    monkeypatch.setattr(scenario_browser, "ask_text", lambda *a: "   ")
    with qtbot.assertNotEmitted(browser.projectChanged):
        qtbot.keyClick(browser.tree, Qt.Key.Key_F2)
    assert "empty" in browser.message_text()
    assert ids_by_name(project)["Ring all-reduce on 8 GPUs"] == sid
    assert not project.dirty


def test_delete_asks_first(qtbot, browser, project, monkeypatch):
    ids = ids_by_name(project)
    sid = ids["Broadcast from rank 0 on 4 GPUs"]
    questions = []

    def refuse(parent, text):
        questions.append(text)
        return False

    monkeypatch.setattr(scenario_browser, "ask_confirm", refuse)
    focus_on(qtbot, browser, sid)
    with qtbot.assertNotEmitted(browser.projectChanged):
        qtbot.keyClick(browser.tree, Qt.Key.Key_Delete)
    assert "Broadcast from rank 0 on 4 GPUs" in questions[0]
    assert sid in ids_by_name(project).values()

    monkeypatch.setattr(scenario_browser, "ask_confirm", lambda parent, text: True)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        qtbot.keyClick(browser.tree, Qt.Key.Key_Delete)
    assert sid not in ids_by_name(project).values()
    assert browser.item_for(sid) is None
    assert browser.group_item("collective").text(0) == "Collectives (1)"
    # the next scenario is current, so Delete can be pressed again
    assert browser.current_id() == ids["Ring all-reduce on 8 GPUs"]


def test_delete_several_at_once(qtbot, browser, project, monkeypatch):
    ids = ids_by_name(project)
    monkeypatch.setattr(scenario_browser, "ask_confirm", lambda parent, text: "2 scenarios" in text)
    focus_on(qtbot, browser, ids["70B on 1,024 H100"])
    click_item(qtbot, browser, browser.item_for(ids["Power cap sweep, 8 H100"]), Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        browser.delete_action.trigger()
    left = ids_by_name(project)
    assert "70B on 1,024 H100" not in left and "Power cap sweep, 8 H100" not in left
    assert len(left) == 9


def test_compare_two_of_the_same_kind(qtbot, browser, project, no_dialogs):
    ids = ids_by_name(project)
    a, b = ids["All-reduce 1 GiB across 16 nodes, 400 Gb/s NICs"], ids["All-reduce 1 GiB over NVLink 4"]
    focus_on(qtbot, browser, a)
    assert not browser.compare_action.isEnabled()
    click_item(qtbot, browser, browser.item_for(b), Qt.KeyboardModifier.ControlModifier)
    assert browser.compare_action.isEnabled()
    with qtbot.waitSignal(browser.compareRequested, timeout=1000) as blocker:
        qtbot.mouseClick(browser._buttons["Compare"], Qt.MouseButton.LeftButton)
    assert sorted(blocker.args[0]) == sorted([a, b])


def test_compare_refuses_different_kinds(qtbot, browser, project, no_dialogs):
    ids = ids_by_name(project)
    focus_on(qtbot, browser, ids["Seed kernels on H100 vs B200"])
    click_item(qtbot, browser, browser.item_for(ids["Power cap sweep, 8 H100"]),
               Qt.KeyboardModifier.ControlModifier)
    with qtbot.assertNotEmitted(browser.compareRequested):
        browser.compare_action.trigger()
    message = browser.message_text()
    assert "different kinds" in message
    assert "Roofline" in message and "Power and carbon" in message


def test_compare_with_one_selected_explains(qtbot, browser, project, no_dialogs):
    focus_on(qtbot, browser, ids_by_name(project)["Seed kernels on H100 vs B200"])
    with qtbot.assertNotEmitted(browser.compareRequested):
        browser.compare_selected()
    assert "Select two scenarios" in browser.message_text()


def test_filter_narrows_the_tree(qtbot, browser, project):
    qtbot.keyClicks(browser.filter_edit, "all-reduce 1 gib")
    assert visible_names(browser) == ["All-reduce 1 GiB across 16 nodes, 400 Gb/s NICs",
                                      "All-reduce 1 GiB over NVLink 4"]
    assert browser.group_item("allreduce").text(0) == "All-reduce (2 of 2)"
    assert browser.group_item("roofline").isHidden()
    qtbot.keyClicks(browser.filter_edit, " nvlink")
    assert visible_names(browser) == ["All-reduce 1 GiB over NVLink 4"]
    # Down moves into the tree, to the first match; Escape in the field clears it
    qtbot.keyClick(browser.filter_edit, Qt.Key.Key_Down)
    assert browser.current_id() == ids_by_name(project)["All-reduce 1 GiB over NVLink 4"]
    browser.filter_edit.setFocus()
    qtbot.keyClick(browser.filter_edit, Qt.Key.Key_Escape)
    assert len(visible_names(browser)) == 11


def test_filter_without_match_says_so(qtbot, browser):
    qtbot.keyClicks(browser.filter_edit, "zzz-no-such")
    assert visible_names(browser) == []
    assert "No scenario matches" in browser.message_text()
    browser.filter_edit.clear()
    assert browser.message_text() == ""


def test_notes_are_edited_shown_as_tooltip_and_searchable(qtbot, browser, project, monkeypatch):
    sid = ids_by_name(project)["Seed kernels on H100 vs B200"]
    monkeypatch.setattr(scenario_browser, "ask_notes", lambda parent, title, text: "for the Tuesday review")
    focus_on(qtbot, browser, sid)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        browser.notes_action.trigger()
    assert next(r for r in project.list_scenarios() if r.id == sid).notes == "for the Tuesday review"
    assert "for the Tuesday review" in browser.item_for(sid).toolTip(0)
    qtbot.keyClicks(browser.filter_edit, "tuesday")
    assert visible_names(browser) == ["Seed kernels on H100 vs B200"]


def test_duplicate_adds_a_copy_and_selects_it(qtbot, browser, project, no_dialogs):
    sid = ids_by_name(project)["Seed kernels on H100 vs B200"]
    focus_on(qtbot, browser, sid)
    with qtbot.waitSignal(browser.projectChanged, timeout=1000):
        qtbot.mouseClick(browser._buttons["Duplicate"], Qt.MouseButton.LeftButton)
    new_id = ids_by_name(project)["Seed kernels on H100 vs B200 copy"]
    assert browser.selected_ids() == [new_id]
    assert browser.group_item("roofline").text(0) == "Roofline (2)"


def test_context_menu_offers_every_action(qtbot, browser, project, monkeypatch):
    seen = []

    class FakeMenu:
        def __init__(self, parent):
            pass

        def addAction(self, text):  # noqa: N802
            from PySide6.QtGui import QAction

            seen.append(text)
            return QAction(text, browser)

        def addSeparator(self):  # noqa: N802
            pass

        def exec(self, pos):
            pass

        def deleteLater(self):  # noqa: N802
            pass

    monkeypatch.setattr(scenario_browser, "QMenu", FakeMenu)
    item = browser.item_for(ids_by_name(project)["Seed kernels on H100 vs B200"])
    browser._show_context_menu(browser.tree.visualItemRect(item).center())
    assert [s.split("\t")[0] for s in seen] == ["Open", "Compare", "Rename", "Duplicate", "Notes", "Delete"]
    assert "Rename\tF2" in seen and "Delete\tDel" in seen
    assert browser.selected_ids() == [item.data(0, scenario_browser.ID_ROLE)]


def test_invalid_scenario_is_greyed_with_its_problem(qtbot, tmp_path, no_dialogs):
    path = tmp_path / "broken.swbproj"
    Project.create(path).close()
    with sqlite3.connect(path) as db:
        payload = json.dumps({"kind": "roofline", "schema_version": 1, "hardware": []})
        db.execute("UPDATE scenarios SET payload = ? WHERE kind = 'roofline'", (payload,))
    project = Project.open(path)
    try:
        browser = ScenarioBrowser(project)
        qtbot.addWidget(browser)
        browser.show()
        sid = ids_by_name(project)["Seed kernels on H100 vs B200"]
        item = browser.item_for(sid)
        problem = project.problem_of(sid)
        assert problem
        assert problem in item.toolTip(0)
        assert item.font(0).italic()
        assert item.foreground(0).color() != browser.item_for(
            ids_by_name(project)["Power cap sweep, 8 H100"]).foreground(0).color()
        focus_on(qtbot, browser, sid)
        with qtbot.assertNotEmitted(browser.openRequested):
            qtbot.keyClick(browser.tree, Qt.Key.Key_Return)
        assert "cannot be opened" in browser.message_text()
    finally:
        project.close()


def test_refresh_keeps_the_selection_and_set_project_none_empties(qtbot, browser, project):
    sid = ids_by_name(project)["Ring all-reduce on 8 GPUs"]
    focus_on(qtbot, browser, sid)
    project.rename_scenario(sid, "Ring, renamed elsewhere")  # e.g. by the window
    browser.refresh()
    assert browser.selected_ids() == [sid]
    assert browser.item_for(sid).text(0) == "Ring, renamed elsewhere"
    browser.set_project(None)
    assert browser.tree.topLevelItemCount() == 0
    assert not browser.open_action.isEnabled() and not browser.delete_action.isEnabled()


def test_empty_browser_without_project(qtbot):
    browser = ScenarioBrowser()
    qtbot.addWidget(browser)
    assert browser.tree.topLevelItemCount() == 0
    browser.open_selected()
    browser.delete_selected()
    browser.compare_selected()


def test_short_date():
    from datetime import datetime

    now = datetime(2026, 5, 9, 15, 0)
    assert short_date(datetime(2026, 5, 9, 14, 3), now) == "14:03"
    assert short_date(datetime(2026, 1, 2, 14, 3), now) == "2 Jan"
    assert short_date(datetime(2025, 11, 29, 1, 0), now) == "2025-11-29"
