"""What keeps the app fast (issue 15), checked by counting, never by timing.

The benchmark (``python -m tests.benchmarks.bench``) measures the speed; these tests guard the
mechanisms behind it, so a change that undoes one fails here whatever the machine:

- the scenario browser fills from one storage query and parses no payload until a row is
  shown or asked about (and then says what ``Project.problem_of`` says);
- a chart's items (curves, legend entries, reference lines) are the same objects after a
  value change, and its overlays are placed once per change;
- an axis records its ticks, grid and labels again only when its range (or what it shows)
  changed, not when a redraw sets the same ticks or labels again.
"""

from __future__ import annotations

import json
import sqlite3
from math import log10 as math_log10

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QCoreApplication, QObject

from storage import Project
from ui.catalog import HardwareCatalog
from ui.charts import Chart
from ui.scenario_browser import PROBLEM_ROLE, ScenarioBrowser
from ui.widgets.cap_field import CapEdit
from workbench.scenarios import AllReduceScenario, CollectiveScenario, ScalingScenario


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


def _shown_browser(qtbot) -> ScenarioBrowser:
    browser = ScenarioBrowser(None)
    qtbot.addWidget(browser)
    browser.resize(320, 500)
    browser.show()
    qtbot.waitExposed(browser)
    return browser


def test_the_browser_fills_from_one_query_and_parses_only_what_it_shows(qtbot, many):
    project = Project.open(many)
    try:
        browser = _shown_browser(qtbot)
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
        by_row = lazy.list_scenarios_with_problems()  # asked by row instead, from a fresh listing
        assert {r.id: by_row.problem_at(i) for i, r in enumerate(by_row)} == expected
        assert sum(1 for p in found.values() if p) >= 5  # the damage was seen
        assert found[ids[-1]] is None  # an intact one

        browser = ScenarioBrowser(lazy)
        qtbot.addWidget(browser)
        for record in listing:
            assert browser.item_for(record.id).data(0, PROBLEM_ROLE) == expected[record.id]
    finally:
        lazy.close()
        eager.close()


def test_the_browser_makes_records_only_for_the_rows_it_shows_and_filters_them_all(qtbot, many):
    project = Project.open(many)
    try:
        browser = _shown_browser(qtbot)
        browser.set_project(project)
        browser.grab()
        listing = browser.tree.listing
        made = sum(record is not None for record in listing._records)
        assert 0 < made < 100  # the rows on screen, not the 300
        assert [r.name for r in listing] == [r.name for r in project.list_scenarios()]
        # the filter looks at every scenario's name and notes, shown or not
        browser.filter_edit.setText("note 299")
        shown = [item.record.name for item in browser._items.values() if not item.isHidden()]
        assert shown == ["Scenario 299"]
        assert listing[-1].name == "Scenario 299" and listing[1:3] == [listing[1], listing[2]]
        assert listing.records == list(listing) == project.list_scenarios()
    finally:
        project.close()


def test_the_catalog_reads_the_projects_presets_with_one_query(tmp_path):
    path = tmp_path / "presets.swbproj"
    with Project.create(path) as project:
        keys = [r.key for r in project.list_presets()]
        project.save()
    with sqlite3.connect(path) as db:  # one preset that no longer loads, one whose key is damaged
        db.execute("UPDATE hardware_presets SET payload = '{not json' WHERE key = ?", (keys[1],))
        db.execute("UPDATE hardware_presets SET key = CAST(? AS TEXT) WHERE key = ?",
                   (keys[2].encode() + b"\xff", keys[2]))
    project = Project.open(path)
    try:
        selects = _selects(project._memory)
        catalog = HardwareCatalog(project)
        preset_reads = [s for s in selects if "hardware_presets" in s]
        assert len(preset_reads) == 1, preset_reads
        usable = project.usable_presets()
        listed = [r.key for r in project.list_presets()]
        # neither the one that does not load nor the one get_preset cannot find (its key read
        # with U+FFFD), and in the listing's order
        assert list(usable) == [k for k in listed if k != keys[1] and "\ufffd" not in k]
        assert len(usable) == len(keys) - 2
        for key, hardware in usable.items():
            assert catalog.get(key) == hardware == project.get_preset(key)
        assert project.preset_problem(keys[1])
        assert any("key is damaged" in problem for problem in project.problems)
    finally:
        project.close()


# -- charts ------------------------------------------------------------------------------------
def _events() -> None:
    """Deliver what a change posted (the chart's settle, the scene's update, the paint)."""
    for _ in range(3):
        QCoreApplication.processEvents()


def _drawn(chart: Chart) -> dict[str, list[int]]:
    """The ids of the items a chart draws with (the objects, not their values)."""
    plot = chart.getPlotItem()
    legend = plot.legend
    return {
        "series": [id(s.item) for s in chart.series()],
        "lines": [id(line) for line, *_ in chart._lines],
        "line labels": [id(getattr(line, "label", None)) for line, *_ in chart._lines],
        "legend": [id(legend)] + ([id(x) for entry in legend.items for x in entry] if legend is not None else []),
        "scene": sorted(id(item) for item in chart.scene().items()),
    }


def _redraw(chart: Chart, k: float) -> None:
    """A panel's redraw: everything cleared and drawn again, with new values."""
    chart.clear_series()
    chart.clear_reference_lines()
    chart.set_title(f"Time at {k:g}")
    for i, name in enumerate(("ring", "tree", "measured")):
        chart.add_series(name, [1, 10, 100, 1000], [k * (i + 1), k * (i + 2), k * (i + 4), k * (i + 8)],
                         style="dash" if i == 2 else "solid")
    chart.add_reference_line(30 * k, label=f"crossover {30 * k:g}")
    chart.add_reference_line(5 * k, vertical=False, label=f"ceiling {5 * k:g}")
    chart.set_operating_point(100, 4 * k, f"point {k:g}")
    chart.getPlotItem().getViewBox().enableAutoRange()


def test_a_redraw_with_new_values_keeps_every_item_and_places_the_overlays_once(chart):
    _redraw(chart, 1.0)
    _events()
    before = _drawn(chart)
    assert len(before["series"]) == 3 and len(before["lines"]) == 2 and len(before["legend"]) == 7
    for k in (2.0, 3.0, 1.0):  # tick labels no wider than the first draw's (wider ones resize the view)
        placed = chart.overlay_placements
        _redraw(chart, k)
        _events()
        assert _drawn(chart) == before, k  # the same curves, lines, labels, legend: none made again
        assert chart.overlay_placements - placed == 1, k  # once per change, not once per call
        values = [line.value() for line, *_ in chart._lines]
        assert values == pytest.approx([math_log10(30 * k), math_log10(5 * k)])  # log axes: log10
        labels = [line.label.textItem.toPlainText() for line, *_ in chart._lines]
        assert labels == [f"crossover {30 * k:g}", f"ceiling {5 * k:g}"]
        assert chart._op_label.toPlainText() == f"point {k:g}"
    assert chart.legend_visible()


def test_fewer_series_and_lines_leave_the_plot_and_more_come_back_from_the_pool(chart):
    _redraw(chart, 1.0)
    _events()
    kept = {id(s.item) for s in chart.series()}
    chart.clear_series()
    chart.clear_reference_lines()
    chart.add_series("only", [1, 10], [1, 2])
    chart.settle()  # what the redraw cleared and did not draw again leaves then (the next event-loop turn)
    plot = chart.getPlotItem()
    data_items = [i for i in plot.items if isinstance(i, pg.PlotDataItem) and i is not chart._op_item]
    assert data_items == [chart.series()[0].item]  # the others are out of the plot's lists
    assert not [i for i in plot.items if isinstance(i, pg.InfiniteLine) and getattr(i, "label", None)]
    assert not chart.legend_visible()  # one series: no legend
    _redraw(chart, 2.0)
    assert {id(s.item) for s in chart.series()} == kept  # taken back, none made
    assert chart.legend_visible()


def test_the_all_reduce_panel_redraws_its_charts_in_place(qtbot):
    from ui.panels.allreduce import AllReducePanel

    panel = AllReducePanel(HardwareCatalog(), AllReduceScenario(n_ranks=8))
    qtbot.addWidget(panel)
    panel.resize(1800, 1000)
    panel.show()
    qtbot.waitExposed(panel)
    front = [panel.chart, panel.busbw_chart]  # the tab in front; the one behind waits (tests/ui/test_allreduce_speed.py)
    assert all(c.series() for c in front)
    panel.edit(size_bytes=2**28)
    _events()
    before = {id(c): (_series_and_lines(c), c.overlay_placements) for c in front}
    for size in (2**30, 2**26, 2**28):
        panel.edit(size_bytes=size)
        _events()
        for c in front:
            items, placed = before[id(c)]
            assert _series_and_lines(c) == items, c.getPlotItem().titleLabel.text
            assert c.overlay_placements - placed == 1, c.getPlotItem().titleLabel.text
            before[id(c)] = (items, c.overlay_placements)


def _series_and_lines(chart: Chart):
    drawn = _drawn(chart)
    return drawn["series"], drawn["lines"], drawn["line labels"], drawn["legend"]


def test_axes_record_again_only_when_their_range_changes(chart, monkeypatch):
    from ui.charts import LogUnitAxis

    chart.add_series("a", [1, 10, 100], [1, 2, 3])
    chart.add_series("b", [1, 10, 100], [2, 3, 4])
    chart.set_log_range(1, 1000, 0.5, 10)
    for _ in range(2):  # the first paints size the axes to their tick labels
        _events()
        chart.grab()
    recorded = []
    real = LogUnitAxis._record

    def record(axis):
        recorded.append(axis.orientation)
        return real(axis)

    monkeypatch.setattr(LogUnitAxis, "_record", record)
    # a redraw that sets the same range, ticks and labels again, with new data
    chart.set_series_data("a", [1, 10, 100], [1.5, 2.5, 3.5])
    chart.set_log_range(1, 1000, 0.5, 10)
    chart.axis("x").setTicks(None)
    chart.set_axis_labels(x_label="Size", x_unit="B")
    chart.set_title("Time")
    _events()
    chart.grab()
    assert recorded == []
    chart.set_log_range(1, 1000, 0.5, 20)  # the y range: only the left axis again
    _events()
    chart.grab()
    assert recorded == ["left"]


def test_a_curve_given_the_same_values_again_is_not_recomputed_and_the_range_still_follows(chart, monkeypatch):
    import numpy as np

    calls = []
    real = pg.PlotDataItem.setData

    def set_data(item, *args, **kwargs):
        if args:  # not the empty call of the item's constructor
            calls.append(kwargs.get("name", item.opts.get("name")))  # no name: it keeps its own
        return real(item, *args, **kwargs)

    monkeypatch.setattr(pg.PlotDataItem, "setData", set_data)
    x = np.array([1.0, 10.0, 100.0])
    chart.add_series("small", x, [1.0, 2.0, 3.0])
    chart.add_series("large", x, [1.0, 1e3, 1e6])
    _events()
    assert calls == ["small", "large"]
    (_, _), (_, top) = chart.visible_range()
    assert top >= 1e6
    chart.clear_series()
    chart.add_series("small", x.copy(), [1.0, 2.0, 3.0])  # the same values, new arrays: kept
    _events()
    assert calls == ["small", "large"]
    (_, _), (_, top) = chart.visible_range()
    assert top < 10  # the large curve left: the automatic range follows what is still drawn
    moving = np.array([1.0, 2.0, 4.0])
    chart.add_series("small", x.copy(), moving)  # new values: drawn
    moving[2] = 30.0  # the array it draws, changed in place: drawn again
    chart.add_series("small", x.copy(), moving)
    _events()
    assert calls == ["small", "large", "small", "small"]
    assert chart.series()[0].item.getOriginalDataset()[1].tolist() == [1.0, 2.0, 30.0]


def test_series_taken_back_from_the_pool_are_drawn_in_the_order_they_were_added(chart):
    def stacking():
        names = {id(s.item): s.name for s in chart.series()}
        kids = chart.getPlotItem().getViewBox().childGroup.childItems()
        return [names[id(k)] for k in kids if id(k) in names]

    chart.add_series("x", [1, 10], [1, 2])
    chart.add_series("y", [1, 10], [2, 3])
    _events()
    chart.clear_series()
    chart.add_series("p", [1, 10], [1, 2])  # takes x's item; y's waits in the pool after it
    _events()
    chart.clear_series()  # the pool: y's item, then x's
    chart.add_series("q", [1, 10], [1, 2])
    chart.add_series("r", [1, 10], [2, 3])  # x's item, stacked under y's
    _events()
    assert stacking() == ["q", "r"]  # r, added last, is drawn on top


# -- axes that hold still while the data moves a little ------------------------------------------
def test_held_range_keeps_grows_to_cover_both_or_refits():
    from ui.charts import held_range

    assert held_range((0.0, 10.0), (1.0, 9.0)) is None  # inside and most of it: kept
    assert held_range((0.0, 10.0), (2.0, 12.0)) == (0.0, 12.0)  # left it a little: covers both
    assert held_range((0.0, 10.0), (4.0, 5.0)) == (4.0, 5.0)  # shrunk well inside: fitted again
    assert held_range((0.0, 10.0), (50.0, 60.0)) == (50.0, 60.0)  # elsewhere: fitted again
    assert held_range((3.0, 3.0), (1.0, 2.0)) == (1.0, 2.0)  # no range yet to hold


def test_an_automatic_range_holds_still_while_the_data_moves_a_little_and_records_no_axis(chart, monkeypatch):
    from ui.charts import LogUnitAxis

    vb = chart.getPlotItem().getViewBox()
    vb.enableAutoRange()
    chart.add_series("a", [1, 10, 100], [1.0, 2.0, 4.0])
    _events()
    chart.add_series("a", [1, 10, 100], [1.0, 2.0, 5.0])  # a little more: grows to cover both
    _events()
    held = chart.visible_range()
    for _ in range(2):
        _events()
        chart.grab()
    recorded = []
    real = LogUnitAxis._record
    monkeypatch.setattr(LogUnitAxis, "_record", lambda axis: (recorded.append(axis.orientation), real(axis))[1])
    for top in (4.0, 5.0, 4.5, 4.0):  # edited back and forth: the same range every time
        chart.add_series("a", [1, 10, 100], [1.0, 2.0, top])
        _events()
        chart.grab()
        assert chart.visible_range() == held
    assert recorded == []
    chart.add_series("a", [1, 10, 100], [1.0, 2.0, 400.0])  # far out: fitted again
    _events()
    (_, _), (_, y_top) = chart.visible_range()
    assert y_top >= 400.0
    chart.add_series("a", [1, 10, 100], [1.0, 2.0, 4.0])  # back, well inside: fitted again
    _events()
    (_, _), (_, y_top) = chart.visible_range()
    assert 4.0 <= y_top < 10.0


def test_a_held_explicit_range_settles_and_a_plain_one_is_taken_as_it_is(chart):
    chart.add_series("a", [300, 700], [1e3, 1e4])
    chart.set_log_range(258, 780, 1e3, 1e4, hold=True)
    assert chart.visible_range()[0] == pytest.approx((258, 780))
    chart.set_log_range(310, 770, 1.2e3, 1e4, hold=True)  # inside: nothing moves
    assert chart.visible_range()[0] == pytest.approx((258, 780))
    assert chart.visible_range()[1] == pytest.approx((1e3, 1e4))
    chart.set_log_range(250, 790, 1e3, 1e4, hold=True)  # a little wider: covers both
    assert chart.visible_range()[0] == pytest.approx((250, 790))
    chart.set_log_range(310, 770, 1e3, 1e4)  # the caller's own range: as asked
    assert chart.visible_range()[0] == pytest.approx((310, 770))


def test_a_new_title_of_the_same_size_is_set_without_asking_the_layout_and_looks_the_same(qtbot, chart, monkeypatch):
    chart.set_title("Step time: 1.23 s")
    _events()
    asked = []
    title = chart.getPlotItem().titleLabel
    real = type(title).updateGeometry
    monkeypatch.setattr(type(title), "updateGeometry", lambda label: (asked.append(1), real(label))[1])
    chart.set_title("Step time: 4.56 s")
    _events()
    assert asked == []
    assert chart.getPlotItem().titleLabel.plain_text() == "Step time: 4.56 s"
    # drawn as a chart given that title from the start draws it
    fresh = Chart(title="Step time: 4.56 s", x_label="Size", x_unit="B", y_label="Time", y_unit="s",
                  log_x=True, log_y=True)
    qtbot.addWidget(fresh)
    fresh.resize(chart.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    _events()
    title = chart.getPlotItem().titleLabel

    def title_pixels(c):
        rect = c.mapFromScene(title.sceneBoundingRect()).boundingRect()
        return c.grab(rect).toImage()

    assert title_pixels(chart) == title_pixels(fresh)
    chart.set_title("Step time: 4.56 s, and a great deal more text than the row had room for before")
    _events()
    assert asked  # wider than its row: laid out again


# -- one repaint per edit -------------------------------------------------------------------------
class _Passes(QObject):
    """Which of the window's repaints (update requests) painted which chart."""

    def __init__(self, window, charts):
        super().__init__()
        self.window = window
        self.viewports = {chart.viewport(): chart.objectName() or str(i) for i, chart in enumerate(charts)}
        self.current = 0
        self.painted: list[tuple[int, str]] = []

    def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.UpdateRequest and obj is self.window:
            self.current += 1
        elif event.type() == QEvent.Type.Paint and obj in self.viewports:
            self.painted.append((self.current, self.viewports[obj]))
        return False


@pytest.mark.parametrize(("kind", "field", "values", "where"), [
    ("power", "static_fraction", (0.4, 0.3), "docked"),  # two charts, their x axes linked
    ("allreduce", "size_bytes", (256 * 2**20, 1024 * 2**20), "docked"),
    ("power", "static_fraction", (0.4, 0.3), "floating"),  # a window of its own
    ("allreduce", "size_bytes", (256 * 2**20, 1024 * 2**20), "presented"),  # F11 in a meeting
])
def test_an_edit_paints_every_chart_it_changed_in_one_repaint_of_the_window(qtbot, new_window, kind, field, values,
                                                                            where):
    window = new_window()
    panel = window.panel(kind)
    window.raise_panel(kind)
    if where == "floating":
        window.docks[kind].setFloating(True)
    elif where == "presented":
        window.action_presentation.trigger()
    qtbot.waitUntil(lambda: panel.isVisible() and panel.window().isVisible())
    top = panel.window()
    assert (top is window) == (where == "docked")
    charts = [c for c in panel.findChildren(Chart) if c.isVisible()]
    assert len(charts) >= 2
    qtbot.waitUntil(lambda: all(c.viewport().isVisible() for c in charts))
    for value in values:  # the first edits settle the axes and the layout
        window.document.edit_scenario(kind, **{field: value})
        _events()
    passes = _Passes(top, charts)
    QCoreApplication.instance().installEventFilter(passes)
    try:
        for value in values:
            passes.painted.clear()
            window.document.edit_scenario(kind, **{field: value})
            qtbot.waitUntil(lambda: {name for _, name in passes.painted} == set(passes.viewports.values()))
            _events()
            assert len({n for n, _ in passes.painted}) == 1, passes.painted  # one repaint, not one per chart
            assert len(passes.painted) == len(charts)  # and each chart painted once
    finally:
        QCoreApplication.instance().removeEventFilter(passes)


def test_a_resize_fits_the_automatic_range_as_it_asks_not_held(qtbot, chart):
    vb = chart.getPlotItem().getViewBox()
    vb.enableAutoRange()
    chart.add_series("a", [1, 10, 100], [1.0, 2.0, 5.0])
    _events()
    chart.grab()
    fitted = chart.visible_range()
    chart.resize(300, 200)  # pyqtgraph pads a small view more
    _events()
    chart.grab()
    assert chart.visible_range() != fitted
    chart.resize(900, 560)
    _events()
    chart.grab()
    (x0, x1), (y0, y1) = chart.visible_range()
    assert (x0, x1, y0, y1) == pytest.approx((*fitted[0], *fitted[1]), rel=1e-9)  # not the small size's padding


def test_the_power_sweeps_fit_their_new_room_exactly_when_presented(qtbot, new_window):
    window = new_window()
    panel = window.panel("power")
    window.raise_panel("power")
    qtbot.waitUntil(lambda: panel.on_screen() and not panel.is_stale())
    for share in (0.45, 0.3, 0.4, 0.35):  # held across the edits
        window.document.edit_scenario("power", static_fraction=share)
        _events()
    panel._fit_cap_ranges()  # as a resize or a restyle asks: the exact fit for this room
    exact = panel.chart.visible_range()[0]
    lo, hi = float(panel.analysis().sweep.cap_w.min()), float(panel.analysis().sweep.cap_w.max())
    assert exact[0] == pytest.approx(lo - 0.04 * (hi - lo))  # its margin, not an earlier edit's


def test_held_roofline_axes_keep_still_and_its_roofs_reach_their_edges(qtbot):
    from PySide6.QtGui import QUndoStack

    from ui.panels.roofline import RooflinePanel
    from workbench.scenarios import RooflineScenario

    panel = RooflinePanel(HardwareCatalog(), RooflineScenario(), undo_stack=QUndoStack())
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.show()
    qtbot.waitExposed(panel)
    asked = panel.analysis().extent
    panel.edit(show_precision_ceilings=True)  # higher peaks: the axes grow
    _events()
    grown = [v for pair in panel.chart.visible_range() for v in pair]
    panel.edit(show_precision_ceilings=False)  # back: the axes stay where they were
    _events()
    assert [v for pair in panel.chart.visible_range() for v in pair] == pytest.approx(grown)
    assert panel.analysis().extent == asked  # the analysis asks for the tight axes ...
    (x0, _x1), _ = panel.chart.visible_range()
    roof = min(min(s.x) for s in panel.chart.series() if len(s.x))
    assert roof == pytest.approx(x0, rel=1e-6)  # ... and the roofs are drawn out to the held edge


def test_a_chart_narrowed_after_a_long_title_fits_its_new_width(qtbot, chart):
    chart.resize(1400, 400)
    chart.set_title("A rather long chart title that says what every GPU of the cluster did over the whole run")
    _events()
    chart.set_title("A rather long chart title that says what every GPU of the cluster did over the whole day")
    _events()
    for width in (900, 600, 400):  # as a dock is narrowed, or two panels tiled side by side
        chart.resize(width, 400)
        _events()
        plot = chart.getPlotItem()
        assert plot.size().width() == pytest.approx(chart.width(), abs=1)  # nothing cut off on the right
        assert plot.titleLabel.plain_text().endswith("…")  # the title is cut instead


def test_a_field_shown_its_value_again_formats_nothing_and_a_new_one_is_shown(qtbot):
    edit = CapEdit("W")
    qtbot.addWidget(edit)
    formatted = []
    real = edit.format_value
    edit.format_value = lambda value: (formatted.append(value), real(value))[1]
    edit.setValue(400.0)
    assert edit.text() == "400 W" and formatted == [400.0]
    edit.setValue(400.0)  # a redraw showing the same value
    assert formatted == [400.0]
    edit.setValue(None)
    assert edit.text() == "uncapped"
    edit.setValue(400.0)  # the same number after another text: shown again, from what was kept
    assert edit.text() == "400 W" and formatted == [400.0]
    edit.setValue(350.0)
    assert edit.text() == "350 W" and formatted == [400.0, 350.0]



def test_a_charts_view_fills_its_own_background_once_in_the_themes_colour(qtbot, chart):
    # Qt's own fill of the viewport (the palette's colour, then the view's) was a second fill of
    # the whole chart per paint; the view's fill alone must still cover every pixel
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor

    from ui import theme as th

    for theme in (th.LIGHT, th.DARK):
        chart.apply_theme(theme)
        viewport = chart.viewport()
        assert not viewport.autoFillBackground()
        assert viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        picture = chart.grab().toImage()
        corner = QColor(picture.pixel(2, 2))  # outside the plot's frame: background only
        assert corner.name() == QColor(theme.background).name()


def test_a_legend_entry_renamed_to_a_text_of_its_size_keeps_the_legend_as_it_is(chart, monkeypatch):
    x = [1.0, 10.0]
    names = ["H100: ridge 295 FLOP/B", "B200: ridge 281 FLOP/B"]
    for name, y in zip(names, ([1.0, 2.0], [2.0, 3.0]), strict=True):
        chart.add_series(name, x, y)
    chart.update_legend()
    legend = chart._legend
    size = legend.geometry().size()
    sized = []
    real = type(legend).updateSize
    monkeypatch.setattr(type(legend), "updateSize", lambda item: sized.append(item) or real(item))
    with chart.replacing_series():
        chart.add_series("H100: ridge 590 FLOP/B", x, [1.0, 4.0])  # the same digits' width
        chart.add_series("B200: ridge 562 FLOP/B", x, [2.0, 6.0])
    _events()
    labels = [label for _sample, label in legend.items]
    assert [label.text for label in labels] == ["H100: ridge 590 FLOP/B", "B200: ridge 562 FLOP/B"]
    assert sized == [] and legend.geometry().size() == size  # renamed in place, no layout round
    # measured as pyqtgraph's own label of that text and look measures (its box is sized so)
    fresh = pg.LabelItem(labels[0].text, color=labels[0].opts["color"], size=labels[0].opts["size"], justify="left")
    assert labels[0].minimumSize() == fresh.minimumSize()
    with chart.replacing_series():
        chart.add_series("H100: ridge 590 FLOP/B, a longer name", x, [1.0, 4.0])
        chart.add_series("B200: ridge 562 FLOP/B", x, [2.0, 6.0])
    _events()
    assert sized and legend.geometry().width() > size.width()
    # a name is shown as it is: markup in it is text, and takes the room its characters take
    with chart.replacing_series():
        chart.add_series("<b>H100</b> &amp;", x, [1.0, 4.0])
        chart.add_series("B200: ridge 562 FLOP/B", x, [2.0, 6.0])
    _events()
    label = legend.items[0][1]
    assert label.text == "<b>H100</b> &amp;" and label.minimumSize().width() > fresh.minimumSize().width() / 2
    with chart.replacing_series():  # a name from a file with breaks and tabs: one line, as before
        chart.add_series("H100\r\nfrom\tfile  x", x, [1.0, 4.0])
        chart.add_series("B200: ridge 562 FLOP/B", x, [2.0, 6.0])
    _events()
    label = legend.items[0][1]
    assert label.text == "H100 from file x" and label.minimumSize().height() == fresh.minimumSize().height()


def test_a_moved_operating_point_is_moved_not_drawn_anew(chart, monkeypatch):
    """The point's marker is one item of ours that moves: no pyqtgraph data item is made or
    handed data for it, yet it is drawn at each new value, also after the axes change between
    log and linear, and the automatic range sees it where it is."""
    from PySide6.QtCore import QPointF

    handed = []
    real = pg.PlotDataItem.setData

    def counting(item, *args, **kwargs):
        handed.append(item)
        return real(item, *args, **kwargs)

    monkeypatch.setattr(pg.PlotDataItem, "setData", counting)
    chart.add_series("curve", [1, 10, 100, 1000], [2, 20, 200, 2000])
    vb = chart.getPlotItem().getViewBox()
    handed.clear()

    def marker_at() -> QPointF:
        return chart._op_item.mapToScene(QPointF(0.0, 0.0))

    def belongs_at() -> QPointF:
        x, y, _label = chart.operating_point()
        return vb.childGroup.mapToScene(QPointF(*chart.to_view(x, y)))

    marker = None
    for i, (x, y) in enumerate(((3.0, 5.0), (300.0, 50.0), (30.0, 500.0))):
        chart.set_operating_point(x, y, f"{x:g}")
        marker = marker or chart._op_item
        assert chart._op_item is marker, i  # the same item, moved
        assert handed == [], i
        _events()
        assert (marker_at() - belongs_at()).manhattanLength() < 1e-6
        assert chart._op_item.sceneBoundingRect().contains(belongs_at())
    chart.set_log_axes(False, False)
    _events()
    assert (marker_at() - belongs_at()).manhattanLength() < 1e-6
    chart.set_operating_point(5000.0, 9000.0, "far")  # beyond the curve: the range takes it in
    chart.getPlotItem().enableAutoRange()
    _events()
    (x0, x1), (y0, y1) = vb.viewRange()
    assert x0 < 5000.0 < x1 and y0 < 9000.0 < y1
    assert (marker_at() - belongs_at()).manhattanLength() < 1e-6


@pytest.mark.parametrize("presented", [False, True])
def test_the_point_marker_draws_what_a_one_point_scatter_draws(chart, presented):
    """Pixel for pixel, on screen and in a 2x export: the marker against pyqtgraph's own
    one-point item with the same symbol, size, pen and brush, drawn in the same place."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from ui import export
    from ui import theme as th

    chart.set_presentation(presented)
    chart.add_series("curve", [1, 10, 100, 1000], [2, 20, 200, 2000])
    chart.set_log_range(0.5, 2000.0, 1.0, 4000.0)
    chart.set_operating_point(31.7, 77.3, "")
    _events()
    marker = chart._op_item
    symbol, size, pen, brush = marker.style()
    assert size == pytest.approx(th.BASE_MARKER_SIZE * th.scale_factor(presented))
    theirs = pg.PlotDataItem([31.7], [77.3], pen=None, symbol=symbol, symbolSize=size, symbolPen=pen,
                             symbolBrush=brush)
    theirs.setZValue(marker.zValue())
    theirs.setLogMode(True, True)
    chart.getPlotItem().addItem(theirs, ignoreBounds=True)

    def pictures() -> list[QImage]:
        _events()
        shown = chart.grab().toImage()
        scene = chart.scene()
        scaled = QImage(2 * chart.width(), 2 * chart.height(), QImage.Format.Format_ARGB32)
        scaled.fill(0)
        painter = QPainter(scaled)
        scene.render(painter, QRectF(scaled.rect()), scene.sceneRect())
        painter.end()
        return [shown, scaled, export.render_image(chart, 2 * chart.width())]  # pyqtgraph's export mode

    theirs.setVisible(False)
    ours = pictures()
    marker.setVisible(False)
    theirs.setVisible(True)
    assert pictures() == ours
    theirs.setVisible(False)
    assert pictures() != ours  # neither drawn: the pictures do show the marker


def test_the_point_label_avoids_curves_worked_out_once_until_they_change(chart):
    """The operating point's label keeps clear of the curves; a curve's path in scene pixels
    is worked out once and kept while the point alone moves (an All-reduce size edit), and
    worked out again when the curve's values change, also in the same arrays."""
    from ui.label_placement import segments_hit_boxes

    xs = np.array([1.0, 10.0, 100.0, 1000.0])
    ys = np.array([2.0, 20.0, 200.0, 2000.0])
    chart.set_log_axes(True, True)
    chart.add_series("curve", xs, ys)
    chart.set_log_range(0.5, 2000.0, 1.0, 4000.0)

    def label_box() -> np.ndarray:
        r = chart._op_label.sceneBoundingRect()
        return np.array([[r.left(), r.top(), r.width(), r.height()]])

    def crosses() -> bool:
        # the curve's path as drawn now, worked out afresh
        fresh = dict(chart._scene_segments)
        chart._scene_segments.clear()
        vb = chart.getPlotItem().getViewBox()
        t = vb.childGroup.sceneTransform()
        placement = (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(), True, True)
        segments = chart._curve_segments(chart._series["curve"], placement)
        chart._scene_segments.clear()
        chart._scene_segments.update(fresh)
        return bool(segments_hit_boxes(segments, label_box()).any())

    chart.set_operating_point(30.0, 60.0, "operating point")
    _events()
    kept = chart._scene_segments["curve"][3]
    assert not crosses()
    for x, y in ((40.0, 80.0), (20.0, 45.0)):
        chart.set_operating_point(x, y, "operating point")
        _events()
        assert chart._scene_segments["curve"][3] is kept  # the curve did not move
        assert not crosses()
    ys *= 1.6  # new values in the same array, drawn again with the point, as a panel redraws
    chart.add_series("curve", xs, ys)
    chart.set_operating_point(20.0, 45.0, "operating point")
    _events()
    assert chart._scene_segments["curve"][3] is not kept
    assert not crosses()
    chart.remove_series("curve")
    chart.set_operating_point(25.0, 40.0, "operating point")
    _events()
    assert "curve" not in chart._scene_segments  # a curve gone is not kept


def test_chart_and_animator_scenes_keep_no_spatial_index(chart, qtbot):
    """An edit moves many of a scene's few items; the scene draws them all on each paint. Qt's
    default BSP tree would re-file every moved item first: the scenes keep a plain list."""
    from PySide6.QtWidgets import QGraphicsScene

    from ui.panels.collective_view import CollectiveView

    view = CollectiveView()
    qtbot.addWidget(view)
    for scene in (chart.scene(), view.scene()):
        assert scene.itemIndexMethod() == QGraphicsScene.ItemIndexMethod.NoIndex


def test_a_text_shown_before_is_not_prepared_again(chart, monkeypatch):
    """Titles, legend names, labels at a point and tick labels are static texts prepared once per
    text and font: going back to values shown before (a toggle, an undo) shapes no text again,
    and what is drawn is what a freshly prepared text draws."""
    import ui.plain_text_item as plain

    made: list[str] = []
    real = plain.QStaticText

    class Counted(real):
        def __init__(self, text: str = "", *args) -> None:
            made.append(text)
            super().__init__(text, *args)

    monkeypatch.setattr(plain, "QStaticText", Counted)
    monkeypatch.setattr(plain, "_PREPARED", plain.BoundedCache(4096))  # not what earlier tests prepared
    for k in (1.0, 7.0):
        _redraw(chart, k)
        chart.settle()
        chart.grab()
    image = chart.grab().toImage()
    shown = bytes(image.constBits())  # k = 7, its texts prepared in this test (while image lives)
    _redraw(chart, 1.0)
    chart.settle()
    chart.grab()
    made.clear()
    _redraw(chart, 7.0)  # back to what was shown
    chart.settle()
    again = chart.grab().toImage()
    assert made == []
    assert bytes(again.constBits()) == shown
    _redraw(chart, 3.0)  # new values: their texts are new
    chart.settle()
    chart.grab()
    assert {"Time at 3", "point 3", "crossover 90"} <= set(made)
    # a shared text is one text per font: the same words in a bold font are prepared apart
    font = plain.QFont()
    bold = plain.QFont(font)
    bold.setBold(True)
    assert plain.prepared_text("ridge", font)[0] is plain.prepared_text("ridge", font)[0]
    assert plain.prepared_text("ridge", bold)[0] is not plain.prepared_text("ridge", font)[0]


def test_a_shared_text_keeps_its_size_after_a_render_at_another_resolution(chart):
    """A prepared text is shared by every label showing it; a painter at another resolution
    (an SVG export, a print) lays it out again in place. The labels' sizes are the ones
    measured when it was prepared, not what the shared text says after such a render."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QImage, QPainter

    import ui.plain_text_item as plain

    chart.set_title("A title drawn elsewhere too")
    chart.settle()
    title = chart.getPlotItem().titleLabel
    width = title.text_width()
    prepared = plain.prepared_text(title.text, title._font)
    assert prepared.static is title._prepared.static and width == prepared.size.width() > 0
    image = QImage(400, 100, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDotsPerMeterX(2 * image.dotsPerMeterX())  # twice the resolution
    image.setDotsPerMeterY(2 * image.dotsPerMeterY())
    painter = QPainter(image)
    try:
        painter.setFont(title._font)
        painter.drawStaticText(QPointF(0, 0), prepared.static)
    finally:
        painter.end()
    assert prepared.static.size().width() != width  # the shared text was laid out again
    assert title.text_width() == width == plain.prepared_text(title.text, title._font).size.width()
