"""The all-reduce panel, driven the way a person uses it: type, choose, load a log."""

from __future__ import annotations

import csv
import math

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

import presets
from ui.catalog import HardwareCatalog
from ui.panels.allreduce import AllReducePanel
from workbench import comms, comms_sweep, units
from workbench.context import RunContext
from workbench.scenarios import AllReduceScenario

GiB = 2**30
MiB = 2**20
H100_LOG = "h100-16gpu-2node-allreduce-a3mega.txt"


@pytest.fixture
def panel(qtbot):
    scenario = AllReduceScenario(size_bytes=256 * MiB, n_ranks=4, link_bw=360e9, alpha=5e-6)
    p = AllReducePanel(HardwareCatalog(), scenario)
    qtbot.addWidget(p)
    p.resize(1600, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


def _enter(qtbot, panel, name, text):
    edit = panel.field(name).edit
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def _choose(combo, data):
    index = combo.findData(data)
    assert index >= 0, f"{data!r} not offered"
    combo.setCurrentIndex(index)
    combo.activated.emit(index)  # what picking the entry in the popup does


def _row(panel, quantity):
    rows = {q: (value, unit) for q, value, unit in panel.results.rows()}
    return rows[quantity]


def _shown(value, unit):
    return tuple(units.format_quantity(value, unit).split(" ", 1))


def _series(chart, name):
    return next(s for s in chart.series() if s.name == name)


def _crossover_lines(chart):
    chart.settle()  # as shown: what the redraw cleared and did not draw again has left
    return [item for item in chart.getPlotItem().items
            if isinstance(item, pg.InfiniteLine) and item.angle == 90 and getattr(item, "label", None) is not None
            and "crossover" in item.label.textItem.toPlainText()]


def test_typed_size_and_ranks_give_the_ring_time_of_the_model(qtbot, panel):
    _enter(qtbot, panel, "size_bytes", "1 GiB")
    _enter(qtbot, panel, "n_ranks", "8")
    s = panel.scenario()
    assert s.size_bytes == GiB and s.n_ranks == 8
    expected = comms.ring_allreduce_time(GiB, 8, 360e9, 5e-6)
    assert _row(panel, "Ring time") == _shown(expected, "s")
    assert _row(panel, "Tree time") == _shown(comms.tree_allreduce_time(GiB, 8, 360e9, 5e-6), "s")
    assert _row(panel, "Best algorithm") == ("ring", "")
    x, y, label = panel.chart.operating_point()
    assert x == GiB and y == pytest.approx(expected, rel=1e-12)
    assert "1 GiB" in label and "ring" in label
    assert panel.field("size_bytes").edit.text() == "1 GiB"
    # busbw = algbw x 2(n-1)/n, as nccl-tests reports it
    assert _row(panel, "Bus factor, n = 8") == ("1.75", "")
    assert _row(panel, "Bus bandwidth (ring)") == _shown(comms.busbw("all_reduce", GiB, expected, 8), "B/s")


def test_the_crossover_marker_moves_when_alpha_changes(qtbot, panel):
    _enter(qtbot, panel, "n_ranks", "8")
    before = panel.crossover_marker()
    assert before == pytest.approx(comms.crossover_size(8, 360e9, 5e-6))
    _enter(qtbot, panel, "alpha", "20 us")
    assert panel.scenario().alpha == pytest.approx(20e-6)
    after = panel.crossover_marker()
    assert after == pytest.approx(comms.crossover_size(8, 360e9, 20e-6))
    assert after == pytest.approx(4 * before)
    lines = _crossover_lines(panel.chart)
    assert len(lines) == 1 and 10 ** lines[0].value() == pytest.approx(after)
    assert _row(panel, "Crossover size") == tuple(units.format_quantity(after, "B", binary=True).split(" ", 1))


def test_no_crossover_line_when_ring_is_never_slower(qtbot, panel):
    _enter(qtbot, panel, "n_ranks", "3")
    assert panel.crossover_marker() is None and not _crossover_lines(panel.chart)
    assert _row(panel, "Crossover size")[0] == "none"


def test_loading_the_h100_log_shows_averages_and_plots_the_points(qtbot, panel, nccl_logs_dir):
    path = nccl_logs_dir / H100_LOG
    assert panel.load_log_from(path) is True
    s = panel.scenario()
    assert s.measured_log == path.read_text()
    assert s.n_ranks == 16 and s.collective == "all_reduce"  # the model follows the log
    assert s.size_min <= 8 and s.size_max >= 8 * GiB
    printed, unit = _row(panel, "Avg busbw, printed")
    recomputed, unit2 = _row(panel, "Avg busbw, recomputed")
    assert unit == unit2 == "GB/s"
    assert printed == "70.742"
    assert abs(float(printed) - float(recomputed)) <= 0.001 + 1e-9
    assert _row(panel, "Log: rows parsed, ranks")[0] == "31 rows, 16 ranks (device lines)"
    measured = _series(panel.chart, H100_LOG)  # named after its file
    assert len(measured.x) == 31 and measured.x[0] == 8 and measured.y[-1] == pytest.approx(47535e-6)
    assert len(_series(panel.busbw_chart, H100_LOG).y) == 31
    fit = next(s for s in panel.chart.series() if s.name.startswith("fit:"))
    assert len(fit.x) > 10
    assert "16 ranks" in panel.log_label.text() and H100_LOG in panel.log_label.text()
    assert panel.undo_stack().count() == 1 and "log" in panel.undo_stack().undoText().lower()
    assert panel.chart.legend_visible()


def test_a_log_with_two_runs_shows_the_first_and_says_so(qtbot, panel, nccl_logs_dir, tmp_path):
    both = tmp_path / "job.out"
    both.write_text((nccl_logs_dir / H100_LOG).read_text() + "\n"
                    + (nccl_logs_dir / "a100-8gpu-allgather-superbench.txt").read_text())
    assert panel.load_log_from(both) is True
    assert _row(panel, "Log: rows parsed, ranks")[0] == "31 rows, 16 ranks (device lines)"  # the all-reduce run only
    assert _row(panel, "Avg busbw, printed")[0] == "70.742"
    assert "the first of 2 runs" in panel.log_label.text()


def test_a_text_file_that_is_not_a_log_changes_nothing(qtbot, panel, nccl_logs_dir, tmp_path):
    panel.load_log_from(nccl_logs_dir / H100_LOG)
    before = panel.scenario()
    rows_before = panel.results.rows()
    bad = tmp_path / "notes.txt"
    bad.write_text("Meeting notes\n\nall_reduce looked slow on Tuesday, 12 GB/s?\n")
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        assert panel.load_log_from(bad) is False
    assert panel.scenario() == before
    assert panel.undo_stack().count() == 1
    assert panel.results.rows() == rows_before
    message = panel.status_text()
    assert "notes.txt" in message and "not an nccl-tests log" in message and "Nothing was changed" in message
    assert panel.load_log_from(tmp_path / "missing.txt") is False
    assert "missing.txt" in panel.status_text()


def test_the_plan_sets_the_gradient_sync_without_an_undo_step(qtbot, panel):
    # 64 GPUs on 8 nodes, fully sharded: the gradient sync runs over 64 ranks across the NICs
    with qtbot.waitSignal(panel.scenarioChanged, timeout=1000):
        assert panel.apply_context(RunContext(n_gpus=64, interconnect="nic-400g"))
    s = panel.scenario()
    nic = presets.interconnect_by_key("nic-400g")
    assert s.n_ranks == 64 and s.interconnect == "nic-400g"
    # 8 GPUs a node each with its NIC: the ring runs at min(NVLink, 8 x NIC)
    assert s.link_bw == pytest.approx(min(360e9, 8 * nic.achievable_bw)) and s.alpha == pytest.approx(nic.latency_s)
    assert s.size_bytes == pytest.approx(8e9 * 4)  # one GPU's FP32 gradient shard (an 8B model)
    assert panel.field("n_ranks").value() == 64
    assert panel.field("interconnect").currentData() == "nic-400g"
    assert panel.undo_stack().count() == 0
    with qtbot.assertNotEmitted(panel.scenarioChanged):
        panel.apply_context(RunContext(n_gpus=64, interconnect="nic-400g"))  # nothing differs
    panel.set_override_context(True)
    panel.apply_context(RunContext(n_gpus=128))
    assert panel.scenario().n_ranks == 64


def test_undo_restores_an_edit(qtbot, panel):
    _enter(qtbot, panel, "n_ranks", "512")
    assert panel.scenario().n_ranks == 512
    panel.undo_stack().undo()
    assert panel.scenario().n_ranks == 4
    assert panel.field("n_ranks").edit.text() == "4"
    assert _row(panel, "Ring time") == _shown(comms.ring_allreduce_time(256 * MiB, 4, 360e9, 5e-6), "s")
    panel.undo_stack().redo()
    assert panel.scenario().n_ranks == 512


def test_a_bad_entry_is_refused_at_the_field(qtbot, panel):
    _enter(qtbot, panel, "n_ranks", "1")
    assert panel.scenario().n_ranks == 4
    assert panel.field("n_ranks").message_text()
    assert panel.undo_stack().count() == 0


def test_choosing_an_interconnect_is_one_undo_step(qtbot, panel):
    combo = panel.field("interconnect")
    nvlink = presets.interconnect_by_key("nvlink-3")
    index = combo.findData("nvlink-3")
    tip = combo.itemData(index, Qt.ItemDataRole.ToolTipRole)
    assert "300 GB/s" in tip and "Latency per step" in tip and "source" in tip.lower()
    _choose(combo, "nvlink-3")
    s = panel.scenario()
    assert (s.interconnect, s.link_bw, s.alpha) == ("nvlink-3", nvlink.achievable_bw, nvlink.latency_s)
    assert panel.undo_stack().count() == 1 and "NVLink 3" in panel.undo_stack().undoText()
    assert panel.field("link_bw").edit.text() == "240 GB/s"
    # a hand-typed bandwidth is no longer the preset
    _enter(qtbot, panel, "link_bw", "200 GB/s")
    assert panel.scenario().interconnect == "" and combo.currentData() == ""
    panel.undo_stack().undo()
    panel.undo_stack().undo()
    assert panel.scenario() == AllReduceScenario(size_bytes=256 * MiB, n_ranks=4, link_bw=360e9, alpha=5e-6)
    assert combo.currentData() == ""


def test_other_collectives_use_the_ring_time(qtbot, panel):
    _choose(panel.field("collective"), "all_gather")
    s = panel.scenario()
    ring = _series(panel.chart, "ring (model)")
    assert ring.y == pytest.approx(comms.ring_time("all_gather", ring.x, 4, s.link_bw, s.alpha))
    assert _row(panel, "Tree time")[0] == "n/a"
    assert _row(panel, "Bus factor, n = 4") == ("0.75", "")
    assert panel.crossover_marker() is None
    assert "tree" not in [s.name for s in panel.chart.series()]


def test_use_the_fitted_values(qtbot, panel, nccl_logs_dir):
    assert panel.fit_button.isHidden()
    panel.load_log_from(nccl_logs_dir / H100_LOG)
    assert panel.fit_button.isEnabled()
    qtbot.mouseClick(panel.fit_button, Qt.MouseButton.LeftButton)
    log = comms_sweep.analyze_log((nccl_logs_dir / H100_LOG).read_text())
    bw, alpha = log.fitted_ring_parameters()
    s = panel.scenario()
    assert s.link_bw == pytest.approx(bw) and s.alpha == pytest.approx(alpha)
    assert panel.undo_stack().count() == 2
    qtbot.mouseClick(panel.remove_log_button, Qt.MouseButton.LeftButton)
    assert panel.scenario().measured_log == ""
    assert not [s for s in panel.chart.series() if s.name.startswith(H100_LOG) or s.name.startswith("fit")]
    assert not any(q.startswith("Avg busbw") for q, _v, _u in panel.results.rows())


def test_comparison_overlays_named_dashed_curves(qtbot, panel):
    other = AllReduceScenario(n_ranks=64, link_bw=50e9, alpha=10e-6)
    panel.set_comparison([("IB 400G x 64", other)])
    series = _series(panel.chart, "IB 400G x 64")
    assert series.style == Qt.PenStyle.DashLine
    expected = comms_sweep.sweep("all_reduce", 64, 50e9, 10e-6, panel.scenario().size_min,
                                 panel.scenario().size_max).best
    assert series.y == pytest.approx(expected)
    _enter(qtbot, panel, "n_ranks", "8")  # survives a refresh
    assert "IB 400G x 64" in [s.name for s in panel.chart.series()]
    panel.clear_comparison()
    assert "IB 400G x 64" not in [s.name for s in panel.chart.series()]


def test_explain_opens_a_non_blocking_box(qtbot, panel):
    text = panel.explanation()
    for part in ("2(n-1)/n", "log2 n", "busbw", "80%", "24 GB/s"):
        assert part in text
    panel.action_explain.trigger()
    box = panel._explain_box
    assert box is not None and box.isVisible()
    assert not box.isModal()  # the app keeps running
    assert "log2 n" in box.text()
    box.close()


def test_csv_has_unit_headers_and_measured_rows(qtbot, panel, nccl_logs_dir, tmp_path):
    path = panel.export_to("csv", tmp_path / "model.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["size (B)", "ring time (s)", "tree time (s)", "busbw (B/s)"]
    size, ring = float(rows[1][0]), float(rows[1][1])
    assert ring == pytest.approx(comms.ring_allreduce_time(size, 4, 360e9, 5e-6), rel=1e-6)
    panel.load_log_from(nccl_logs_dir / H100_LOG)
    path = panel.export_to("csv", tmp_path / "with-log.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "source" and "measured time (s)" in rows[0]
    measured = [r for r in rows[1:] if r[0].startswith("measured")]
    assert len(measured) == 31
    assert float(measured[-1][1]) == 8589934592 and math.isclose(float(measured[-1][-1]), 47535e-6)


def test_png_export_of_the_time_chart(qtbot, panel, nccl_logs_dir, tmp_path):
    from PySide6.QtGui import QImage

    panel.load_log_from(nccl_logs_dir / H100_LOG)
    path = panel.export_to("png", tmp_path / "allreduce.png", width_px=1200)
    image = QImage(str(path))
    assert image.width() == 1200 and not image.isNull()
