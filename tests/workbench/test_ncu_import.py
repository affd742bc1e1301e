"""Nsight Compute CSV exports as people make them: the raw and the details page, a byte order
mark and the program's output before the table, the DRAM counters under their three names,
decimal unit prefixes, exports without FLOP counters, values that overflow.

The fixtures in tests/fixtures/ncu are written for these tests in ncu's CSV layouts (every
cell quoted, thousands separators, a units row under the raw page's header, one row per
metric on the details page) with the project's own numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench._validate import InputError
from workbench.kernel_import import (
    NCU_COMMAND,
    ROOFLINE_METRICS,
    ImportResult,
    parse_kernel_csv,
    parse_ncu_csv,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"


def read(name: str) -> ImportResult:
    return parse_ncu_csv((FIXTURES / name).read_text(encoding="utf-8"))


def test_raw_page_after_a_byte_order_mark_and_the_programs_output():
    result = read("raw-page-bom-prof.csv")
    assert [k.name for k in result.kernels] == [
        "sgemm_nn_4096", "softmax_fwd(float const*, float*, int)", "dgemm_tile<128, 64>", "half_axpy"]
    gemm, softmax, dgemm, axpy = result.kernels
    # FLOPs = 2 x FMA + ADD + MUL; Mbyte and Kbyte are decimal
    assert gemm.flops == 2 * 68_719_476_736 + 16_777_216
    assert gemm.bytes == pytest.approx(603_980_000 + 67_108_860, rel=1e-12)
    assert gemm.time_s == pytest.approx(9_812.35e-6, rel=1e-12)
    assert softmax.flops == 67_108_864 + 2 * 134_217_728 + 67_108_864
    assert softmax.bytes == pytest.approx(268_440_000 + 268_435_460, rel=1e-12)
    assert dgemm.flops == 2 * 1_073_741_824 + 2_097_152 and dgemm.time_s == pytest.approx(1.2045e-3, rel=1e-12)
    assert axpy.flops == 2 * 33_554_432 and axpy.bytes == pytest.approx(201_328_860, rel=1e-12)
    (error,) = result.errors  # the copy did no floating-point work
    assert error.line == 17 and error.reason.startswith("copy_kernel: 0 FP32/FP64/FP16 FLOPs")
    assert result.notes == () and result.missing_counters == () and result.ncu_command is None


def test_details_page_without_counters_says_so_once_with_the_command():
    result = read("details-page-sections.csv")
    assert result.kernels == ()
    (error,) = result.errors  # one for the file, not one per launch
    assert error.line == 7
    assert "neither FLOP counters nor DRAM byte counters" in error.reason and "4 kernel launch" in error.reason
    assert result.missing_counters == tuple(m for m in ROOFLINE_METRICS if m != "gpu__time_duration.sum")
    for counter in result.missing_counters:
        assert counter in error.reason
    assert result.ncu_command == NCU_COMMAND and NCU_COMMAND in error.reason
    assert "--csv --page raw" in NCU_COMMAND and "dram__bytes_write.sum" in NCU_COMMAND


def test_details_page_of_metrics_with_op_byte_counters_and_two_processes():
    result = read("details-metrics-op-bytes.csv")
    assert [k.name for k in result.kernels] == ["reduce_sum_f32", "conv_direct_f32"]
    reduce_, conv = result.kernels
    assert (reduce_.flops, reduce_.time_s) == (4_194_304, pytest.approx(12.61e-6, rel=1e-12))
    assert reduce_.bytes == pytest.approx(16_780_000 + 4_100, rel=1e-12)
    assert conv.flops == 1_048_576 + 2 * 8_589_934_592
    assert conv.bytes == pytest.approx(1_210_000_000 + 302_990_000, rel=1e-12)  # Gbyte + Mbyte
    assert conv.time_s == pytest.approx(4.72e-3, rel=1e-12)  # msecond
    overflow, half = result.errors
    assert overflow.line == 14 and overflow.reason.startswith("scale_f32: ") and "too large" in overflow.reason
    assert "400 characters" in overflow.reason
    assert half.line == 22 and "dram__bytes_op_read.sum but not dram__bytes_op_write.sum" in half.reason


def test_dram_total_tensor_core_kernels_and_a_repeated_header():
    result = read("raw-page-dram-total-tensor.csv")
    assert [k.name for k in result.kernels] == ["gelu_kernel", "gelu_kernel"]  # one per process
    gelu = result.kernels[0]
    assert (gelu.flops, gelu.bytes, gelu.time_s) == (16_777_216 + 2 * 33_554_432 + 50_331_648, pytest.approx(7e7), None)
    tensor, missing = result.errors
    assert tensor.line == 4 and "tensor cores" in tensor.reason
    assert missing.line == 6 and missing.reason == "rotary_embed: dram__bytes.sum 'n/a' Gbyte is not a byte count"
    assert any("tensor-core counters" in n for n in result.notes)
    assert any("gpu__time_duration.sum" in n for n in result.notes)


def test_a_roofline_section_export_has_rates_not_counts():
    rate = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"
    text = (f'"ID","Kernel Name","dram__bytes.sum","{rate}","smsp__cycles_elapsed.avg.per_second"\n'
            '"","","byte","inst/cycle","cycle/second"\n"0","k","4,096","12.50","1.41e+09"\n')
    result = parse_ncu_csv(text)
    (error,) = result.errors
    assert "rounded rates, not counts" in error.reason and "no FLOP counters" in error.reason
    assert result.missing_counters == tuple(m for m in ROOFLINE_METRICS if "sass" in m)


def test_the_details_page_duration_gives_the_time():
    header = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
    rows = [("GPU Speed Of Light Throughput", "Duration", "msecond", "1.25"),
            ("Command line profiler metrics", "dram__bytes.sum", "Kbyte", "512"),
            ("Command line profiler metrics", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "1,000")]
    text = header + "".join(f'"0","k","{s}","{m}","{u}","{v}"\n' for s, m, u, v in rows)
    (kernel,) = parse_ncu_csv(text).kernels
    assert (kernel.flops, kernel.bytes, kernel.time_s) == (2000.0, 512_000.0, pytest.approx(1.25e-3))


def test_a_details_page_without_an_id_column_splits_launches_where_metrics_repeat():
    header = '"Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    launch = [("dram__bytes.sum", "byte", "4,096"), ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "8")]
    text = header + "".join(f'"k","{m}","{u}","{v}"\n' for m, u, v in launch * 2) + '"j","dram__bytes.sum","byte","1"\n'
    result = parse_ncu_csv(text)
    assert [k.name for k in result.kernels] == ["k", "k"] and result.kernels[1].bytes == 4096
    (error,) = result.errors  # j has bytes but no FLOP counters, which the others have
    assert error.line == 6 and "this launch has no FLOP counters" in error.reason


# -- properties -----------------------------------------------------------------------------------
UNITS = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
TIMES = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**12), st.integers(0, 10**9), st.integers(1, 10**6),
                          st.integers(1, 10**7)), min_size=1, max_size=6),
       st.sampled_from(sorted(UNITS)), st.sampled_from(sorted(TIMES)), st.booleans())
def test_a_raw_page_reads_back_exactly(launches, byte_unit, time_unit, thousands):
    def cell(x: int) -> str:
        return f"{x:,}" if thousands else str(x)

    fma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
    add = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
    lines = [f'"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum","{fma}","{add}"',
             f'"","","{byte_unit}","{time_unit}","inst","inst"']
    lines += [f'"{i}","k{i}","{cell(b)}","{cell(t)}","{cell(f)}","{cell(a)}"' for i, (f, a, b, t) in enumerate(launches)]
    result = parse_ncu_csv("\ufeff==PROF== Connected\n" + "\n".join(lines) + "\n")
    assert result.ok
    for kernel, (f, a, b, t) in zip(result.kernels, launches, strict=True):
        assert kernel.flops == 2 * f + a
        assert kernel.bytes == pytest.approx(b * UNITS[byte_unit], rel=1e-15)
        assert kernel.time_s == pytest.approx(t * TIMES[time_unit], rel=1e-15)


def finite(result: ImportResult) -> bool:
    return all(math.isfinite(x) and x > 0 for k in result.kernels
               for x in (k.flops, k.bytes, *(() if k.time_s is None else (k.time_s,))))


FIXTURE_LINES = [line for p in sorted(FIXTURES.glob("*.csv")) for line in p.read_text(encoding="utf-8").splitlines()]
CELLS = st.sampled_from(["", "0", "1,234", "n/a", "9" * 400, "1e308", "-5", "inf", "nan", '"', '""', "Kbyte",
                         "nsecond", "inst", "Kernel Name", "ID", "Metric Name", "Metric Value", "dram__bytes.sum",
                         "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "gpu__time_duration.sum", "\ufeff"])


@st.composite
def mangled_exports(draw):
    lines = draw(st.lists(st.sampled_from(FIXTURE_LINES), min_size=1, max_size=25))
    out = []
    for line in lines:
        if draw(st.booleans()):
            cells = line.split(",")
            cells[draw(st.integers(0, len(cells) - 1))] = '"' + draw(CELLS) + '"'
            line = ",".join(cells)
        if draw(st.integers(0, 9)) == 0:
            line = line[: draw(st.integers(0, len(line)))]
        out.append(line)
    return "\n".join(out)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mangled_exports(), st.text(max_size=300)))
def test_any_text_gives_an_import_result_or_an_input_error(text):
    for parse in (parse_ncu_csv, parse_kernel_csv):
        try:
            result = parse(text)
        except InputError as exc:
            assert exc.parameter == "text"
            continue
        assert isinstance(result, ImportResult) and finite(result)
        assert all(e.line >= 1 and e.reason for e in result.errors)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["k", "", "a,b", '"q"']),
                          st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), CELLS),
                          st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), CELLS),
                          st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), CELLS, st.just(""))),
                max_size=20))
def test_every_plain_row_is_a_kernel_or_an_error_with_its_line(rows):
    text = "name,flops,bytes,time_s\n" + "".join(
        ",".join(f'"{c}"' if "," in c else c for c in row) + "\n" for row in rows)
    try:
        result = parse_kernel_csv(text)
    except InputError as exc:
        assert exc.parameter == "text"
        return
    assert finite(result)
    lines = [e.line for e in result.errors]
    assert lines == sorted(lines) and len(set(lines)) == len(lines) and all(2 <= n <= len(rows) + 1 for n in lines)
