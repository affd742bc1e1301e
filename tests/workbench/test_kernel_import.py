"""Importing kernels from a plain CSV and from Nsight Compute `ncu --csv` exports.

The ncu texts below are constructed for the tests. Their layout follows what public
parsers and fixtures of real exports show (searched in public repositories):
  - `ncu --csv --page raw`: a header "ID","Process ID","Process Name","Host Name",
    "Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC", then one column
    per metric; a second row of units with the identification cells empty; then one row
    per launch, every cell quoted, numbers with thousands separators;
  - the default details page (`ncu --csv`): one row per metric with "Section Name",
    "Metric Name","Metric Unit","Metric Value" (older versions add a "Kernel Time" column);
  - "==PROF==" lines around the CSV.
Metric names are those of the SpeedOfLight roofline sections (sm__sass_thread_inst_executed_
op_{d,f,h}{add,mul,fma}_pred_on.sum, dram__bytes.sum, gpu__time_duration.sum).
"""

from __future__ import annotations

import pytest

from workbench.kernel_import import (
    NCU_COMMAND,
    ImportResult,
    RowError,
    parse_kernel_csv,
    parse_ncu_csv,
)

# -- plain CSV ---------------------------------------------------------------------------
GOOD = """name,flops,bytes,time_s
gemm 8192,1.099511627776e12,402653184,0.0013
"layer norm, fused",2147483648,1073774592,
add,67108864,402653184,0.00015
"""


def test_plain_csv_reads_every_row():
    result = parse_kernel_csv(GOOD)
    assert isinstance(result, ImportResult) and result.ok
    assert [k.name for k in result.kernels] == ["gemm 8192", "layer norm, fused", "add"]
    assert result.kernels[0].flops == 1.099511627776e12
    assert result.kernels[0].time_s == 0.0013
    assert result.kernels[1].time_s is None


def test_plain_csv_one_bad_row_is_reported_rest_imported():
    text = """# exported by hand
Name,FLOPs,Bytes,Time (s)
good,100,50,0.1
bad,12x4,50,0.1
also good,200,50,
"""
    result = parse_kernel_csv(text)
    assert [k.name for k in result.kernels] == ["good", "also good"]
    assert len(result.errors) == 1
    error = result.errors[0]
    assert isinstance(error, RowError)
    assert error.line == 4
    assert "flops" in error.reason and "12x4" in error.reason and "not a number" in error.reason


@pytest.mark.parametrize(
    ("row", "words"),
    [
        ("k,,100,", ["flops", "empty"]),
        ("k,100,,", ["bytes", "empty"]),
        (",100,100,", ["name", "empty"]),
        ("k,-5,100,", ["flops", "> 0"]),
        ("k,100,0,", ["bytes", "> 0"]),
        ("k,100,1e3,0", ["time", "> 0", "empty if not measured"]),
        ("k,100,abc,", ["bytes", "not a number"]),
        ("k,nan,100,", ["flops", "not a number"]),
        ("k,inf,100,", ["flops", "not a number"]),
        ("k,100", ["bytes", "empty"]),
    ],
)
def test_plain_csv_bad_rows_say_what_to_fix(row, words):
    result = parse_kernel_csv(f"name,flops,bytes,time_s\nok,1,1,\n{row}\n")
    assert [k.name for k in result.kernels] == ["ok"]
    assert [e.line for e in result.errors] == [3]
    for word in words:
        assert word in result.errors[0].reason


def test_plain_csv_an_overflowing_row_is_one_error_the_rest_imported():
    """Issue 14 item 11: one row whose value overflows used to reject the whole file."""
    text = ("name,flops (GFLOP),bytes,time_s\n"
            "gemm,2.2e3,4.0e8,0.0015\n"
            f"huge,{'9' * 400},1e6,\n"
            "big,1e300,1e6,\n"
            "tiny,1e-300,1e300,\n"
            "fast,100,1e6,1e-320\n"
            "add,0.067,4.0e8,\n")
    result = parse_kernel_csv(text)
    assert [k.name for k in result.kernels] == ["gemm", "add"]
    assert result.kernels[0].flops == 2.2e12 and result.kernels[1].flops == pytest.approx(6.7e7)
    assert [e.line for e in result.errors] == [3, 4, 5, 6]
    huge, big, tiny, fast = (e.reason for e in result.errors)
    assert huge.startswith("huge: flops") and "too large" in huge and "400 characters" in huge
    assert big.startswith("big: flops") and "too large" in big  # 1e300 GFLOP overflows in FLOPs
    assert tiny.startswith("tiny: bytes") and "arithmetic intensity" in tiny  # the model refuses 1e-300 FLOP/B
    assert fast.startswith("fast: time_s") and "achieved rate" in fast  # 100 FLOPs in 1e-320 s: no finite rate


def test_plain_csv_a_row_csv_cannot_read_is_one_error():
    text = "name,flops,bytes\nok,1,1\n" + '"' + "x" * 200_000 + '",1,1\nalso,2,2\n'
    result = parse_kernel_csv(text)
    assert [k.name for k in result.kernels] == ["ok", "also"]
    assert [e.line for e in result.errors] == [3] and "field larger than field limit" in result.errors[0].reason


def test_plain_csv_header_units_and_layout():
    text = "kernel name;FLOP (GFLOP);bytes (MB);time (ms)\n\nk;2;4;0.5\n"
    (k,) = parse_kernel_csv(text).kernels
    assert (k.flops, k.bytes, k.time_s) == (2e9, 4e6, 5e-4)
    (k,) = parse_kernel_csv("BYTES,name,flops,time_us\r\n8,x,16,250\r\n").kernels
    assert (k.name, k.flops, k.bytes, k.time_s) == ("x", 16.0, 8.0, 2.5e-4)
    (k,) = parse_kernel_csv('\ufeffname,flops,bytes\nx,"1,000",2\n').kernels
    assert k.flops == 1000.0 and k.time_s is None


@pytest.mark.parametrize(
    "text",
    ["", "   \n", "# only a comment\n", "name,flops\nk,1\n", "1,2,3\n", "name,flops (parsecs),bytes\n"],
)
def test_plain_csv_without_usable_header_raises(text):
    with pytest.raises(ValueError, match="^text:"):
        parse_kernel_csv(text)


@pytest.mark.parametrize("bad", [None, 3, b"name,flops,bytes\n", ["name,flops,bytes"]])
def test_parsers_reject_non_text(bad):
    with pytest.raises(ValueError, match="^text:"):
        parse_kernel_csv(bad)
    with pytest.raises(ValueError, match="^text:"):
        parse_ncu_csv(bad)


# -- Nsight Compute: --page raw ----------------------------------------------------------
ID_COLUMNS = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'
METRICS = (
    '"dram__bytes.sum","gpu__time_duration.sum",'
    '"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",'
    '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",'
    '"sm__sass_thread_inst_executed_op_fmul_pred_on.sum"'
)
RAW = "\n".join(
    [
        "==PROF== Connected to process 4242 (/usr/bin/python3.11)",
        '==PROF== Profiling "vectorAdd" - 0: 0%....50%....100% - 9 passes',
        "result OK",
        f"{ID_COLUMNS},{METRICS}",
        '"","","","","","","","","","","","Mbyte","usecond","inst","inst","inst"',
        '"0","4242","python3.11","host","vectorAdd(const float *, const float *, float *, int)","1","7","(256, 1, 1)","(196, 1, 1)","0","9.0","1.21","3.42","50,176","0","0"',
        '"1","4242","python3.11","host","sgemm_128x64_nn","1","7","(256, 1, 1)","(64, 32, 1)","0","9.0","40.50","1,250.00","0","2,147,483,648","1,024"',
        '"2","4242","python3.11","host","memset_kernel","1","7","(256, 1, 1)","(1, 1, 1)","0","9.0","0.00","1.10","0","0","0"',
        "==PROF== Disconnected from process 4242",
    ]
)


def test_ncu_raw_page_with_units_row():
    result = parse_ncu_csv(RAW)
    assert [k.name for k in result.kernels] == [
        "vectorAdd(const float *, const float *, float *, int)",
        "sgemm_128x64_nn",
    ]
    add, gemm = result.kernels
    assert add.flops == 50_176
    assert add.bytes == pytest.approx(1.21e6)
    assert add.time_s == pytest.approx(3.42e-6)
    assert gemm.flops == 2 * 2_147_483_648 + 1_024  # an FFMA is 2 FLOPs
    assert gemm.bytes == pytest.approx(40.5e6)
    assert gemm.time_s == pytest.approx(1.25e-3)
    # the memset did no floating-point work: reported, not imported
    assert [e.line for e in result.errors] == [8]
    assert "memset_kernel" in result.errors[0].reason and "FLOP" in result.errors[0].reason


def test_ncu_raw_page_read_write_bytes_base_units_and_double_precision():
    text = "\n".join(
        [
            f'{ID_COLUMNS},"dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
            '"sm__sass_thread_inst_executed_op_dfma_pred_on.sum","sm__sass_thread_inst_executed_op_hfma_pred_on.sum"',
            '"","","","","","","","","","","","byte","byte","nsecond","",""',
            '"0","7","a.out","h","dgemm","1","7","(128, 1, 1)","(80, 1, 1)","0","8.0","2,000,000","1,000,000","2,000","1,000,000","10"',
        ]
    )
    (k,) = parse_ncu_csv(text).kernels
    assert k.bytes == 3_000_000 and k.time_s == pytest.approx(2e-6)
    assert k.flops == 2 * 1_000_000 + 2 * 10


def test_ncu_raw_page_without_units_row_assumes_base_units():
    text = f'{ID_COLUMNS},"dram__bytes.sum","sm__sass_thread_inst_executed_op_fadd_pred_on.sum"\n' \
        '"0","7","a.out","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","4,096","1,024"\n'
    result = parse_ncu_csv(text)
    (k,) = result.kernels
    assert (k.flops, k.bytes, k.time_s) == (1024.0, 4096.0, None)


def test_ncu_raw_page_bad_rows():
    text = "\n".join(
        [
            f"{ID_COLUMNS},{METRICS}",
            '"","","","","","","","","","","","byte","nsecond","inst","inst","inst"',
            '"0","1","p","h","no_bytes","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","n/a","10","1","1","1"',
            '"1","1","p","h","short_row","1","7"',
            '"2","1","p","h","ok","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","64","10","1","1","1"',
        ]
    )
    result = parse_ncu_csv(text)
    assert [k.name for k in result.kernels] == ["ok"]
    assert result.kernels[0].flops == 4
    assert [e.line for e in result.errors] == [3, 4]
    assert "dram__bytes.sum" in result.errors[0].reason
    assert "cells" in result.errors[1].reason


def test_ncu_without_flop_counters_says_how_to_profile():
    text = f'{ID_COLUMNS},"dram__bytes.sum"\n' + "".join(
        f'"{i}","1","p","h","k{i}","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","64"\n' for i in range(3))
    result = parse_ncu_csv(text)
    assert not result.kernels
    (error,) = result.errors  # once for the file, not once per launch
    assert error.line == 1 and "no FLOP counters" in error.reason and "3 kernel launch" in error.reason
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in error.reason
    assert NCU_COMMAND in error.reason and result.ncu_command == NCU_COMMAND
    assert NCU_COMMAND.startswith("ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,")
    assert len(result.missing_counters) == 9 and all(m.startswith("smsp__sass") for m in result.missing_counters)


# -- Nsight Compute: details page (one row per metric) -----------------------------------
DETAILS_HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _metric(launch, kernel, name, unit, value):
    return (
        f'"{launch}","99","train.py","node1","{kernel}","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0",'
        f'"Command line profiler metrics","{name}","{unit}","{value}"'
    )


def test_ncu_details_page_groups_rows_by_launch():
    ffma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
    text = "\n".join(
        [
            "==PROF== Connected to process 99",
            DETAILS_HEADER,
            _metric(0, "softmax_kernel", "dram__bytes.sum", "Gbyte", "1.07"),
            _metric(0, "softmax_kernel", "gpu__time_duration.sum", "msecond", "0.42"),
            _metric(0, "softmax_kernel", ffma, "inst", "100,000,000"),
            _metric(1, "softmax_kernel", "dram__bytes.sum", "Gbyte", "1.07"),
            _metric(1, "softmax_kernel", "gpu__time_duration.sum", "usecond", "415.5"),
            _metric(1, "softmax_kernel", ffma, "inst", "100,000,000"),
        ]
    )
    result = parse_ncu_csv(text)
    assert result.ok and len(result.kernels) == 2
    first, second = result.kernels
    assert first.flops == 2e8 and first.bytes == pytest.approx(1.07e9)
    assert first.time_s == pytest.approx(4.2e-4) and second.time_s == pytest.approx(4.155e-4)


def test_ncu_smsp_counter_names_are_accepted():
    text = "\n".join(
        [
            DETAILS_HEADER,
            _metric(0, "k", "dram__bytes.sum", "Kbyte", "2"),
            _metric(0, "k", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst", "3"),
        ]
    )
    (k,) = parse_ncu_csv(text).kernels
    assert k.flops == 3 and k.bytes == 2000


@pytest.mark.parametrize(
    "text",
    ["", "==PROF== no kernels were profiled\n", '"ID","Metric Name","Metric Value"\n"0","x","1"\n'],
)
def test_ncu_without_header_raises(text):
    with pytest.raises(ValueError, match="^text:"):
        parse_ncu_csv(text)
