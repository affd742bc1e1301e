"""Kernel files go to the reader that can read them (workbench decides), and what an import
says (rows not imported, notes, the ncu command for missing counters) is shown, copyable."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from ui.panels.roofline_kernels import ImportReport, looks_like_ncu, read_kernel_file
from workbench.kernel_import import NCU_COMMAND

NCU = Path(__file__).resolve().parent.parent / "fixtures" / "ncu"

RAW_NO_ID = (
    '"Kernel Name","Device","gpu__time_duration.sum","dram__bytes.sum",'
    '"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"\n'
    '"","","usecond","Mbyte","inst"\n'
    '"ampere_sgemm_128x64_nn","0","12.5","3.2","1000000"\n'
)
DETAILS_NO_ID = (
    '"Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
    '"layer_norm_fwd","Memory","dram__bytes.sum","Mbyte","8.0"\n'
    '"layer_norm_fwd","Duration","gpu__time_duration.sum","usecond","4.0"\n'
)


def test_an_export_without_an_id_column_after_long_program_output_is_nsight_compute(tmp_path):
    chatter = "".join(f"step {i}: loss 2.{i % 10}\n" for i in range(300))  # more than 200 lines first
    path = tmp_path / "kernels.csv"
    path.write_text(chatter + RAW_NO_ID)
    result, fmt = read_kernel_file(path)
    assert fmt == "Nsight Compute CSV"
    assert [k.name for k in result.kernels] == ["ampere_sgemm_128x64_nn"]
    assert looks_like_ncu(chatter + RAW_NO_ID)


def test_a_details_page_without_an_id_column_is_nsight_compute(tmp_path):
    path = tmp_path / "details.csv"
    path.write_text(DETAILS_NO_ID)
    result, fmt = read_kernel_file(path)
    assert fmt == "Nsight Compute CSV"
    assert result.missing_counters and result.ncu_command == NCU_COMMAND  # no FLOP counters in it


def test_a_plain_kernel_csv_stays_plain(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("name,flops,bytes,time_s\ngemm,1e12,1e9,0.002\n")
    result, fmt = read_kernel_file(path)
    assert fmt == "kernel CSV" and [k.name for k in result.kernels] == ["gemm"]
    assert not looks_like_ncu(path.read_text())


def test_the_exports_of_the_fixtures_still_read_as_nsight_compute():
    for path in sorted(NCU.glob("*.csv")):
        _result, fmt = read_kernel_file(path)
        assert fmt == "Nsight Compute CSV", path.name


def test_the_report_shows_notes_and_a_copyable_command(qtbot, tmp_path):
    path = tmp_path / "details.csv"
    path.write_text(DETAILS_NO_ID)
    result, fmt = read_kernel_file(path)
    report = ImportReport()
    qtbot.addWidget(report)
    report.show()
    report.show_result(result, fmt, "<b>details</b>.csv")
    assert report.head.textFormat() == Qt.TextFormat.PlainText
    assert "<b>details</b>.csv" in report.head.text() and "Nsight Compute CSV" in report.head.text()
    assert not report.problems.isHidden() and report.problems.count() == len(result.errors)
    assert report.problems.item(0).text().startswith("line 1: the export has no FLOP counters")
    assert report.notes.isHidden() == (not result.notes)
    assert report.command.isVisible() and report.command.isReadOnly()
    assert report.command.text() == NCU_COMMAND  # "<your program ...>" intact: a line edit is plain text
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in report.command_label.text()
    qtbot.mouseClick(report.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == NCU_COMMAND


def test_a_complete_import_shows_its_notes_and_no_command(qtbot, tmp_path):
    path = tmp_path / "kernels.csv"
    path.write_text(RAW_NO_ID.replace('"gpu__time_duration.sum",', "").replace('"usecond",', "")
                    .replace('"12.5",', ""))
    result, fmt = read_kernel_file(path)
    assert result.kernels and any("gpu__time_duration.sum" in note for note in result.notes)
    report = ImportReport()
    qtbot.addWidget(report)
    report.show()
    report.show_result(result, fmt, "kernels.csv")
    assert report.problems.isHidden() and not report.command.isVisible()
    assert report.notes.isVisible() and "Note: no gpu__time_duration.sum" in report.notes.text()
    assert report.notes.textFormat() == Qt.TextFormat.PlainText
    report.clear()
    assert report.isHidden()
