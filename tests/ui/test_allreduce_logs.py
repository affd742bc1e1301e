"""Several nccl-tests logs in the All-reduce panel, driven as a person does: load two logs,
compare them on the charts, read each one's link health and fit, remove one, save and reopen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

import presets
from storage.project import Project
from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.panels.allreduce import MODEL_LEGEND, AllReducePanel
from workbench import comms, comms_sweep, link_health
from workbench.scenarios import AllReduceScenario, scenario_from_dict, scenario_from_json

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nccl"
HEALTHY = "h100-node-healthy-allreduce.txt"
PCIE = "h100-node-pcie-fallback-allreduce.txt"
TWO_NODES = "h100-2node-nic400-allreduce.txt"
SENDRECV = "h100-node-sendrecv.txt"
MiB = 2**20
GiB = 2**30


@pytest.fixture
def panel(qtbot):
    p = AllReducePanel(HardwareCatalog(), AllReduceScenario(size_bytes=GiB, n_ranks=4, link_bw=360e9, alpha=5e-6))
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


def _load_with_the_button(qtbot, panel, monkeypatch, *names):
    """Click "Load nccl-tests log…" and pick ``names`` in the file dialog."""
    chosen = [str(FIXTURES / name) for name in names]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: (chosen, ""))
    qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)


def _series(chart, name):
    return next(s for s in chart.series() if s.name == name)


def _names(chart):
    return [s.name for s in chart.series()]


def _row(panel, quantity):
    return {q: (value, unit) for q, value, unit in panel.results.rows()}[quantity]


def _table(panel):
    t = panel.logs_table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def _click_row(qtbot, panel, row):
    t = panel.logs_table
    rect = t.visualRect(t.model().index(row, 0))
    qtbot.mouseClick(t.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


# -- two logs on the charts --------------------------------------------------------------------
def test_two_nodes_side_by_side_each_with_its_colour_legend_and_verdict(qtbot, panel, monkeypatch):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, PCIE)
    s = panel.scenario()
    assert [name for name, _text in s.logs] == [HEALTHY, PCIE]
    assert panel.undo_stack().count() == 2  # one step per log, never merged
    # both measured on both size charts, each in its own colour and marker
    healthy, pcie = _series(panel.chart, HEALTHY), _series(panel.chart, PCIE)
    assert len(healthy.x) == len(pcie.x) == 24
    assert healthy.color != pcie.color and healthy.symbol != pcie.symbol
    assert _series(panel.busbw_chart, PCIE).y.max() < 50e9 < 360e9 < _series(panel.busbw_chart, HEALTHY).y.max()
    # a legend names the files
    assert panel.chart.side_legend_names() == [HEALTHY, PCIE]
    assert panel.chart.legend_visible()
    # one line of link health each, in the list under the charts
    rows = _table(panel)
    assert [r[0] for r in rows] == [HEALTHY, PCIE]
    assert rows[0][5].startswith("Healthy: 412 GB/s busbw")
    assert rows[1][5].startswith("Degraded to PCIe Gen5 x16 class (63 GB/s)")
    assert rows[0][1] == "all-reduce" and rows[0][2] == "8 ranks (device lines)"
    assert rows[0][3] == "NVIDIA H100 80GB HBM3"
    # the model followed the first log; each log is drawn against NVLink 4's curve
    assert (s.collective, s.n_ranks) == ("all_reduce", 8)
    nvlink = presets.interconnect_by_key("nvlink-4")
    model = _series(panel.chart, f"{PCIE}: all-reduce model, 8 ranks, NVLink 4")
    expected = comms_sweep.sweep("all_reduce", 8, nvlink.achievable_bw, nvlink.latency_s, 1024, 8 * GiB)
    assert model.y == pytest.approx(expected.best)
    assert model.style == Qt.PenStyle.DashLine and model.color == pcie.color
    assert MODEL_LEGEND in _names(panel.chart)


def test_the_selected_log_shows_its_details_fit_and_numbers(qtbot, panel, monkeypatch):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, PCIE)
    assert panel.selected_log().name == PCIE  # the one just loaded
    _click_row(qtbot, panel, 0)
    assert panel.selected_log().name == HEALTHY
    assert panel.undo_stack().count() == 2  # choosing a row is no edit
    details = panel.log_label.text()
    assert panel.log_label.textFormat() == Qt.TextFormat.PlainText
    for part in (HEALTHY, "all-reduce, 8 ranks (device lines), 24 sizes",
                 "Device: NVIDIA H100 80GB HBM3 on 1 host (gpu-b07)", "Tue May 14 10:22:01 UTC 2024",
                 "nccl-tests 2.13.9", "Healthy: 412 GB/s", "Fit good"):
        assert part in details, part
    assert _row(panel, "Link health")[0] == "healthy"
    assert _row(panel, "Log: rows parsed, ranks")[0] == "24 rows, 8 ranks (device lines)"
    fit = [s for s in panel.chart.series() if s.name.startswith("fit: ")]
    assert len(fit) == 1 and fit[0].color == _series(panel.chart, HEALTHY).color
    log = panel.selected_log().log
    assert fit[0].x.min() >= log.sizes.min() and fit[0].x.max() <= log.sizes.max()  # over what was measured


def test_a_sendrecv_log_is_drawn_against_a_sendrecv_model(qtbot, panel, monkeypatch):
    combo = panel.field("collective")
    combo.setCurrentIndex(combo.findData("all_gather"))
    combo.activated.emit(combo.currentIndex())
    assert panel.scenario().collective == "all_gather"
    _load_with_the_button(qtbot, panel, monkeypatch, SENDRECV)
    s = panel.scenario()
    assert s.collective == "all_gather"  # the form has no send/receive: it keeps its own
    view = panel.selected_log()
    assert view.log.collective == "sendrecv"
    models = [n for n in _names(panel.chart) if n.startswith(f"{SENDRECV}: ")]
    assert models == [f"{SENDRECV}: send/receive model, 8 ranks, NVLink 4"]
    nvlink = presets.interconnect_by_key("nvlink-4")
    curve = _series(panel.chart, models[0])
    assert curve.y == pytest.approx(comms.ring_time("sendrecv", curve.x, 8, nvlink.achievable_bw, nvlink.latency_s))
    assert not np.allclose(curve.y, comms.ring_time("all_gather", curve.x, 8, nvlink.achievable_bw,
                                                    nvlink.latency_s))
    assert _table(panel)[0][1] == "send/receive"
    # the rank chart shows logs of the form's collective only: no send/receive point among all-gathers
    panel.chart_tabs.setCurrentIndex(1)
    assert "ring (model)" in _names(panel.ranks_chart)  # drawn, for all-gather
    assert SENDRECV not in _names(panel.ranks_chart)


def test_two_nodes_are_compared_with_the_hierarchical_ring(qtbot, panel, monkeypatch):
    _load_with_the_button(qtbot, panel, monkeypatch, TWO_NODES)
    view = panel.selected_log()
    assert view.log.n_ranks == 16 and panel.scenario().n_ranks == 16
    nvlink, nic = presets.interconnect_by_key("nvlink-4"), presets.interconnect_by_key("nic-400g")
    bw, alpha = comms.hierarchical_link(8, 16, nvlink.achievable_bw, nvlink.latency_s, nic.achievable_bw,
                                        nic.latency_s)
    name = f"{TWO_NODES}: all-reduce model, 16 ranks, 2 nodes with NVLink 4 inside and 8 × 400 Gb/s NICs each"
    curve = _series(panel.chart, name)
    assert curve.y == pytest.approx(comms_sweep.sweep("all_reduce", 16, bw, alpha, 1024, 8 * GiB).best)
    assert _table(panel)[0][3] == "NVIDIA H100 80GB HBM3, 2 hosts"
    assert "of 2 nodes with NVLink 4 inside and 8 × 400 Gb/s NICs each" in _table(panel)[0][5]
    # slower NICs between the nodes: an undoable edit, and the verdict follows
    nics = panel.field("inter_node")
    nics.setCurrentIndex(nics.findData("nic-200g"))
    nics.activated.emit(nics.currentIndex())
    assert panel.scenario().inter_node == "nic-200g"
    assert "above the nominal bound" in _table(panel)[0][5]
    panel.undo_stack().undo()
    assert panel.scenario().inter_node == "nic-400g" and "above the nominal bound" not in _table(panel)[0][5]


# -- remove, undo, save and reopen -----------------------------------------------------------------
def test_remove_one_log_and_undo_it(qtbot, panel, monkeypatch):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, PCIE, SENDRECV)
    _click_row(qtbot, panel, 1)
    qtbot.mouseClick(panel.remove_log_button, Qt.MouseButton.LeftButton)
    assert [name for name, _ in panel.scenario().logs] == [HEALTHY, SENDRECV]
    assert PCIE not in _names(panel.chart) and [r[0] for r in _table(panel)] == [HEALTHY, SENDRECV]
    assert panel.undo_stack().undoText() == f"Remove log {PCIE}"
    panel.undo_stack().undo()
    assert [name for name, _ in panel.scenario().logs] == [HEALTHY, PCIE, SENDRECV]
    assert PCIE in _names(panel.chart)
    panel.undo_stack().redo()
    _click_row(qtbot, panel, 1)
    qtbot.keyClick(panel.logs_table, Qt.Key.Key_Delete)  # the key does what the button does
    assert [name for name, _ in panel.scenario().logs] == [HEALTHY]
    panel.undo_stack().undo()
    # removing the first log moves the next one into its place
    _click_row(qtbot, panel, 0)
    qtbot.mouseClick(panel.remove_log_button, Qt.MouseButton.LeftButton)
    s = panel.scenario()
    assert s.measured_log_name == SENDRECV and s.more_logs == () and s.logs[0][1] == (FIXTURES / SENDRECV).read_text()
    qtbot.mouseClick(panel.remove_log_button, Qt.MouseButton.LeftButton)
    assert panel.scenario().logs == () and panel.logs_table.isHidden()
    assert not panel.remove_log_button.isEnabled()
    assert "No measured log" in panel.log_label.text()


def test_save_and_reopen_keeps_every_log(qtbot, panel, monkeypatch, tmp_path):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, PCIE)
    path = tmp_path / "runs.swproj"
    project = Project.create(path)
    project.save_scenario("two nodes", panel.scenario())
    project.save()
    project.close()
    with Project.open(path) as reopened:
        record = next(r for r in reopened.list_scenarios("allreduce") if r.name == "two nodes")
        scenario = reopened.load_scenario(record.id)
    assert scenario == panel.scenario()
    again = AllReducePanel(HardwareCatalog(), scenario)
    qtbot.addWidget(again)
    again.show()
    assert again.chart.side_legend_names() == [HEALTHY, PCIE]
    assert [r[5].split(":")[0] for r in _table(again)] == ["Healthy", "Degraded to PCIe Gen5 x16 class (63 GB/s)"]
    assert scenario_from_json(panel.scenario().to_json()) == panel.scenario()


def test_an_older_scenario_with_one_unnamed_log_opens(qtbot):
    text = (FIXTURES / HEALTHY).read_text()
    old = {"kind": "allreduce", "schema_version": 1, "collective": "all_reduce", "size_bytes": float(GiB),
           "n_ranks": 8, "link_bw": 360e9, "alpha": 5e-6, "interconnect": "", "size_min": 1024.0,
           "size_max": float(16 * GiB), "measured_log": text}
    scenario = scenario_from_dict(old)
    assert scenario.logs == (("", text),) and scenario.inter_node == "nic-400g"
    p = AllReducePanel(HardwareCatalog(), scenario)
    qtbot.addWidget(p)
    assert _table(p)[0][0] == "log 1" and p.chart.side_legend_names() == ["log 1"]


def test_files_with_one_name_are_told_apart_by_host(qtbot, panel, tmp_path):
    for folder, name in (("a", HEALTHY), ("b", PCIE)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "all_reduce.log").write_text((FIXTURES / name).read_text())
    assert panel.load_log_from(tmp_path / "a" / "all_reduce.log")
    assert panel.load_log_from(tmp_path / "b" / "all_reduce.log")
    assert panel.chart.side_legend_names() == ["all_reduce.log (gpu-b07)", "all_reduce.log (gpu-b12)"]


def test_the_same_log_twice_and_a_seventh_log_are_refused(qtbot, panel, tmp_path):
    assert panel.load_log_from(FIXTURES / HEALTHY)
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        assert not panel.load_log_from(FIXTURES / HEALTHY)
    assert "loaded already" in panel.status_text()
    text = (FIXTURES / HEALTHY).read_text()
    for i in range(AllReduceScenario.MAX_LOGS - 1):
        copy = tmp_path / f"run{i}.txt"
        copy.write_text(text.replace("Tue May 14 10:22:01 UTC 2024", f"Tue May 14 1{i}:00:00 UTC 2024"))
        assert panel.load_log_from(copy)
    assert not panel.load_button.isEnabled()
    extra = tmp_path / "extra.txt"
    extra.write_text(text + "\n")
    assert not panel.load_log_from(extra) and "remove one first" in panel.status_text()


# -- what the log says, as plain text ------------------------------------------------------------
def test_skipped_lines_inferred_collective_and_notes_are_shown(qtbot, panel):
    assert panel.load_log_from(FIXTURES / "bad-values-allreduce.txt")
    details = panel.log_label.text()
    assert "Skipped: line 15: size" in details
    assert "line 19: algbw 'inf' is not a finite number" in details
    assert "Not comparable: 1 size of 256 MiB or more" in details
    assert panel.load_log_from(FIXTURES / "rccl-wrapped.txt")
    row = _table(panel)[1]
    assert row[1] == "all-reduce (inferred)"
    assert row[5] == "Not comparable: no link preset for the device 'AMD Instinct MI300X'"
    assert "Note: the log does not name its collective" in panel.log_label.text()


def test_an_old_convention_is_named(qtbot, panel):
    assert panel.load_log_from(FIXTURES / "allgather-2020.txt")
    details = panel.log_label.text()
    assert "algbw convention: (n-1)/n*size/time" in details
    assert "Note: algbw follows the nccl-tests convention before mid-2020" in details


def test_text_from_a_log_is_never_read_as_markup(qtbot, panel, tmp_path):
    hostile = (FIXTURES / HEALTHY).read_text().replace("NVIDIA H100 80GB HBM3", "<b>H100</b><img src=/etc/passwd>")
    path = tmp_path / "<i>x.txt"
    path.write_text(hostile)
    assert panel.load_log_from(path)
    assert panel.logs_table.item(0, 3).text() == "<b>H100</b><img src=/etc/passwd>"  # shown as typed
    assert panel.logs_table.item(0, 0).text() == "<i>x.txt"
    # tooltips are rich text to Qt: every one is escaped inside its one wrapper
    wrapper, end = "<p style='white-space:pre-wrap'>", "</p>"
    tips = [panel.logs_table.item(r, c).toolTip() for r in range(1) for c in range(6)]
    tips += [panel.results.item(r, 1).toolTip() for r in range(panel.results.rowCount())]
    for tip in filter(None, tips):
        inner = tip.removeprefix(wrapper).removesuffix(end) if tip.startswith(wrapper) else tip
        assert "<" not in inner, tip
    assert "&lt;i&gt;x.txt" in panel.logs_table.item(0, 0).toolTip()
    assert "<b>H100</b>" in panel.log_label.text() and panel.log_label.textFormat() == Qt.TextFormat.PlainText
    assert _row(panel, "Link health")[0] == link_health.HEALTHY  # the name still says H100
    assert panel.status.textFormat() == Qt.TextFormat.PlainText


# -- the fit says how far to trust it ------------------------------------------------------------------
def test_four_large_sizes_give_a_bandwidth_but_no_latency(qtbot, panel, tmp_path):
    lines = (FIXTURES / SENDRECV).read_text().splitlines()
    kept = [ln for ln in lines if not ln.strip() or not ln.split()[0].isdigit() or int(ln.split()[0]) >= 128 * MiB]
    snippet = tmp_path / "sendrecv-128M-1G.txt"
    snippet.write_text("\n".join(kept))
    assert panel.load_log_from(snippet)
    fit = panel.selected_log().log.fit
    assert fit.verdict == comms.FIT_NO_LATENCY and fit.n_points == 4
    assert _row(panel, "Fit")[0].startswith("latency not measured")
    assert _row(panel, "Fitted latency (whole op)")[0] == "not measured"
    assert _row(panel, "Fitted bandwidth (algbw)")[1] == "GB/s"
    assert "Fit latency not measured: 0 of the 4 sizes" in panel.log_label.text()
    assert panel.fit_button.text() == "Use fitted bandwidth"
    before = panel.scenario().alpha
    qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    s = panel.scenario()
    assert s.alpha == before and s.link_bw == pytest.approx(fit.bandwidth * 1.0)  # sendrecv: bus factor 1
    assert panel.undo_stack().undoText() == "Use fitted bandwidth"


# -- against rank count and link bandwidth -------------------------------------------------------
def test_time_against_rank_count_and_link_bandwidth(qtbot, panel, monkeypatch):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, TWO_NODES)
    panel.chart_tabs.setCurrentIndex(1)
    s = panel.scenario()
    ring = _series(panel.ranks_chart, "ring")
    assert ring.x[0] == 2 and ring.x[-1] == 100_000
    assert ring.y == pytest.approx(comms.ring_allreduce_time(s.size_bytes, ring.x, s.link_bw, s.alpha))
    latency = _series(panel.ranks_chart, "ring latency term")
    assert latency.y == pytest.approx(2 * (ring.x - 1) * s.alpha)
    assert panel.latency_marker() == comms_sweep.latency_takes_over("all_reduce", s.size_bytes, s.link_bw, s.alpha)
    assert _row(panel, "Latency takes over from")[0] == f"{panel.latency_marker():,} ranks"
    # each all-reduce log at its own rank count, at the chosen size
    two = _series(panel.ranks_chart, TWO_NODES)
    assert list(two.x) == [16] and two.y[0] == pytest.approx(panel.loaded_logs()[1].log.time_at(s.size_bytes))
    assert panel.ranks_chart.operating_point()[0] == s.n_ranks
    link = _series(panel.link_chart, "ring")
    assert link.y == pytest.approx(comms.ring_allreduce_time(s.size_bytes, s.n_ranks, link.x, s.alpha))
    lines = {round(value) for _line, value, *_ in panel.link_chart._lines}
    assert {31_000_000_000, 63_000_000_000, 450_000_000_000, 50_000_000_000} <= lines
    assert panel.chart_for_export() is panel.scale_charts


@pytest.mark.parametrize(("mode", "presentation"), [("light", False), ("dark", False), ("light", True)])
def test_the_panel_draws_at_full_hd_in_each_look(qtbot, qapp, panel, monkeypatch, tmp_path, mode, presentation):
    _load_with_the_button(qtbot, panel, monkeypatch, HEALTHY, PCIE, TWO_NODES, SENDRECV)
    th.apply_theme(qapp, mode)
    th.set_presentation(presentation)
    try:
        panel.resize(1920, 1080)
        for tab in (0, 1):
            panel.chart_tabs.setCurrentIndex(tab)
            image = panel.grab().toImage()
            assert (image.width(), image.height()) == (1920, 1080)
            colours = {image.pixel(x, y) for x in range(300, 1900, 40) for y in range(60, 560, 20)}
            assert len(colours) > 20  # curves, markers, labels: not a blank chart
        path = panel.export_to("png", tmp_path / f"{mode}.png", width_px=1920)
        exported = QImage(str(path))
        assert exported.width() == 1920 and not exported.isNull()
        assert panel.chart.side_legend_names() == [HEALTHY, PCIE, TWO_NODES, SENDRECV]
        assert panel.log_label.font().pointSizeF() == pytest.approx(panel.form_widget.font().pointSizeF())
    finally:
        th.set_presentation(False)
        th.apply_theme(qapp, "light")
