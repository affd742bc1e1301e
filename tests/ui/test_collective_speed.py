"""What keeps the Collectives panel quick (issue 15), checked by counting, never by timing.

- a step moves the drawing's items (texts, arrows, the grid, the time strip) instead of making
  new ones, and regroups only the cells whose content changed;
- a drawing stepped to a frame looks exactly like a fresh drawing of that frame;
- a message-size edit recomputes what depends on the size only, and every number shown is still
  the one ``workbench.collectives`` gives.
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from ui.panels import collective_view
from ui.panels.collective import CollectivePanel
from ui.panels.collective_view import ArrowItem, CollectiveView, GridItem, TimeStripItem
from workbench import collectives, units
from workbench.collectives import Collective


@pytest.fixture
def panel(qtbot):
    p = CollectivePanel(None)
    qtbot.addWidget(p)
    p.resize(1200, 760)
    p.show()
    qtbot.waitExposed(p)
    return p


def _ranks(panel, n: int) -> None:
    panel.edit(n_ranks=n, _merge=False)
    assert panel.scenario().n_ranks == n


def _image(view: CollectiveView) -> QImage:
    return view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _result(panel, quantity: str) -> tuple[str, str]:
    for name, value, unit in panel.results.rows():
        if name == quantity:
            return value, unit
    raise AssertionError(f"no result row {quantity!r}")


def test_a_step_moves_the_items_it_has_instead_of_making_new_ones(panel):
    _ranks(panel, 16)
    panel.go_to(3)
    view = panel.view
    view.grab()  # painted once
    before = list(view.scene().items())
    title = next(i.text() for i in view.text_items("title"))
    arrows = view.arrow_items()
    assert len(arrows) == 16 and view.grid_item() is not None and view.time_strip() is not None
    panel.go_to(4)
    after = list(view.scene().items())
    assert len(after) == len(before)
    assert {id(i) for i in after} == {id(i) for i in before}  # the same objects, moved
    assert next(i.text() for i in view.text_items("title")) != title
    assert sorted((a.src, a.dst) for a in view.arrow_items()) == sorted(
        (t.src, t.dst) for t in panel.current_frame().transfers)
    assert {type(i) for i in after} >= {GridItem, TimeStripItem, ArrowItem}


def test_a_ring_step_regroups_only_the_cells_it_changed(panel, monkeypatch):
    _ranks(panel, 16)
    panel.go_to(2)
    panel.view.grab()
    placed = []
    real = collective_view._CellBatches._place

    def counting(self, r, j, *args):
        placed.append((r, j))
        return real(self, r, j, *args)

    monkeypatch.setattr(collective_view._CellBatches, "_place", counting)
    before, after = panel.frames()[2].buffers, panel.frames()[3].buffers
    changed = {(r, j) for r in range(16) for j in range(16) if before[r][j] != after[r][j]}
    panel.go_to(3)
    panel.view.grab()
    assert 0 < len(changed) <= 2 * 16
    assert set(placed) == changed  # not the 256 cells of the grid


@pytest.mark.parametrize("collective,schedule,ranks", [
    ("all_reduce", "ring", 16), ("all_reduce", "ring", 64), ("broadcast", "ring", 8),
    ("all_to_all", "conceptual", 8), ("reduce", "conceptual", 6),
])
def test_a_stepped_drawing_looks_like_a_fresh_one(qtbot, panel, collective, schedule, ranks):
    panel.edit(collective=collective, schedule=schedule, n_ranks=ranks, _merge=False)
    last = panel.last_step()
    for step in (*range(last + 1), last // 2, 0, last):  # forwards, then jumps
        panel.go_to(step)
        panel.view.grab()
    fresh = CollectiveView()
    qtbot.addWidget(fresh)
    fresh.resize(panel.view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    panel.show_frame_in(fresh, panel.current_frame())
    assert _image(fresh) == _image(panel.view)


def test_a_size_edit_keeps_what_does_not_depend_on_the_size(panel, monkeypatch):
    from ui.panels import collective as module

    _ranks(panel, 8)
    finals = []
    real = module.final_state_rows
    monkeypatch.setattr(module, "final_state_rows", lambda *a: finals.append(a) or real(*a))
    items = {id(i) for i in panel.view.scene().items()}
    for size in (64 * 2**20, 256 * 2**20, 64 * 2**20):
        assert panel.edit(message_bytes=size)
    assert finals == []  # the final state of every rank does not change with the size
    assert {id(i) for i in panel.view.scene().items()} == items
    # the numbers shown are workbench's for the new size
    sc = panel.scenario()
    c = Collective(sc.collective)
    frames = collectives.frames(c, sc.n_ranks, sc.schedule, sc.root, collectives.chunk_size(sc.message_bytes, 8))
    times = collectives.step_times(c, sc.n_ranks, sc.schedule, sc.message_bytes, sc.link_bw, sc.alpha, root=sc.root)
    moved = collectives.traffic(frames, 8)

    def shown(value: float, unit: str, binary: bool = False) -> str:
        return units.format_quantity(value, unit, binary=binary).replace(" ", "")

    assert "".join(_result(panel, "Bytes per link per step")) == shown(moved.busiest_link_bytes, "B", True)
    assert "".join(_result(panel, "Chunk (message ÷ ranks)")) == shown(sc.message_bytes / 8, "B", True)
    assert "".join(_result(panel, "Time, whole collective (ring model)")) == shown(
        collectives.total_time(times), "s")
    assert panel.total_time() == pytest.approx(collectives.total_time(times))
    panel.edit(n_ranks=4, _merge=False)
    assert len(finals) == 1  # another shape: what the ranks hold at the end is worked out again


def test_a_step_paints_again_only_the_cells_it_changed(panel, monkeypatch):
    _ranks(panel, 64)
    panel.go_to(5)
    panel.view.grab()
    painted = []
    real = GridItem._paint_cells

    def recording(self, painter, geo, rects, cells):
        painted.append(None if cells is None else set(cells))
        return real(self, painter, geo, rects, cells)

    monkeypatch.setattr(GridItem, "_paint_cells", recording)
    before, after = panel.frames()[5].buffers, panel.frames()[6].buffers
    changed = {(r, j) for r in range(64) for j in range(64) if before[r][j] != after[r][j]}
    panel.go_to(6)
    panel.view.grab()
    panel.view.grab()  # painted again without a change: the image is copied, no cell is painted
    assert len(painted) == 1 and painted[0] is not None
    assert changed <= painted[0] and len(painted[0]) < 64 * 64 // 4  # the changed cells and their neighbours


def test_the_grids_image_is_what_painting_the_cells_gives(panel):
    import numpy as np
    from PySide6.QtGui import QColor, QPainter

    _ranks(panel, 16)
    panel.go_to(7)
    grid = panel.view.grid_item()
    area = grid.boundingRect().toAlignedRect()

    def painted(direct: bool):
        image = QImage(area.size(), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(panel.view._theme.background))
        p = QPainter(image)
        p.setRenderHints(panel.view.renderHints())
        p.translate(-area.x(), -area.y())
        if direct:
            grid._paint_cells(p, panel.view._geo, panel.view._cell_rects(panel.view._geo), None)
        else:
            grid.paint(p, None)
        p.end()
        image = image.convertToFormat(QImage.Format.Format_RGB32)
        bits = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        return bits[:, : image.width() * 4].astype(int)

    panel.view.grab()  # the image is up to date
    direct, cached = painted(True), painted(False)
    assert np.abs(direct - cached).max() <= 2  # premultiplied rounding at antialiased edges only
    assert len(np.unique(direct.reshape(-1, 4), axis=0)) > 10  # cells were painted


def test_an_svg_export_draws_the_cells_as_vectors_not_the_grids_image(panel, tmp_path):
    _ranks(panel, 8)
    panel.go_to(3)
    panel.view.grab()  # the grid's image exists
    svg = panel.export_to("svg", tmp_path / "c.svg").read_text()
    assert "<image" not in svg
    assert svg.count("<rect") >= 8  # the cells' rectangles (batched per colour)


def test_a_size_edit_repaints_the_texts_but_not_the_unchanged_cells_and_a_step_repaints_them(qtbot, monkeypatch):
    from PySide6.QtCore import QCoreApplication, QEvent, QObject

    grids = []
    real = GridItem.paint
    # patched before the panel is made: the binding looks a Python override up once per item
    monkeypatch.setattr(GridItem, "paint", lambda self, *args: grids.append(self) or real(self, *args))
    panel = CollectivePanel(None)
    qtbot.addWidget(panel)
    panel.resize(1200, 760)
    panel.show()
    qtbot.waitExposed(panel)
    _ranks(panel, 8)
    viewport = panel.view.viewport()

    class Paints(QObject):
        count = 0

        def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
            if event.type() == QEvent.Type.Paint and obj is viewport:
                Paints.count += 1
            return False

    watcher = Paints()
    QCoreApplication.instance().installEventFilter(watcher)
    try:
        qtbot.waitUntil(lambda: len(grids) >= 1)  # drawn once
        assert panel.scenario().message_bytes != 64 * 2**20
        Paints.count, shown = 0, len(grids)
        assert panel.edit(message_bytes=64 * 2**20)
        qtbot.waitUntil(lambda: Paints.count >= 1)  # the size and times shown changed
        for _ in range(3):
            QCoreApplication.processEvents()
        assert len(grids) == shown  # the cells hold what they held: the grid is not painted again
        panel.go_to(1)
        qtbot.waitUntil(lambda: len(grids) > shown)  # a step changes cells
    finally:
        QCoreApplication.instance().removeEventFilter(watcher)
