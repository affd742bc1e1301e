"""nccl-tests log parsing against the real logs in shared/references/nccl-logs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from workbench import comms
from workbench._validate import InputError
from workbench.nccl import NcclResult, parse_nccl_runs, parse_nccl_tests, rows_to_points

LOGS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "references" / "nccl-logs"
# What each reference log must yield: (collective, ranks, rows).
EXPECTED = {
    "a100-8gpu-allgather-superbench.txt": ("all_gather", 8, 34),
    "a100-8gpu-allreduce-superbench.txt": ("all_reduce", 8, 34),
    "a100-8gpu-alltoall-superbench.txt": ("all_to_all", 8, 34),
    "a100-8gpu-broadcast-superbench.txt": ("broadcast", 8, 34),
    "a100-8gpu-reduce-superbench.txt": ("reduce", 8, 34),
    "a100-8gpu-reducescatter-superbench.txt": ("reduce_scatter", 8, 34),
    "a100-8gpu-sendrecv-snippet.txt": ("sendrecv", 8, 4),  # no device list: "-g 8" on its command line
    "h100-16gpu-2node-allreduce-a3mega.txt": ("all_reduce", 16, 31),
}
# Without ../shared the tests are still listed, and skip with the reason (the fixture's).
LOG_NAMES = sorted(p.name for p in LOGS_DIR.glob("*.txt")) if LOGS_DIR.is_dir() else sorted(EXPECTED)


def read(nccl_logs_dir: Path, name: str) -> NcclResult:
    return parse_nccl_tests((nccl_logs_dir / name).read_text())


def test_every_reference_log_is_known(nccl_logs_dir):
    assert sorted(p.name for p in nccl_logs_dir.iterdir()) == sorted(EXPECTED) == LOG_NAMES


@pytest.mark.parametrize("name", LOG_NAMES)
def test_reference_log_parses_and_reproduces_the_printed_average(nccl_logs_dir, name):
    result = read(nccl_logs_dir, name)
    collective, ranks, n_rows = EXPECTED[name]
    assert (result.collective, result.n_ranks, len(result.rows)) == (collective, ranks, n_rows)
    assert result.skipped == () and result.other_runs == 0
    if result.avg_busbw is None:
        assert name == "a100-8gpu-sendrecv-snippet.txt"  # truncated: no Avg line printed
    else:
        assert result.computed_avg_busbw() / 1e9 == pytest.approx(result.avg_busbw / 1e9, abs=0.001)
    for row in result.rows:
        assert row.in_place is not None
        for m in (row.out_of_place, row.in_place):
            assert m.time > 0 and m.algbw >= 0 and m.busbw >= 0
            if row.size >= 1 << 24:  # large rows: algbw = size / time within print rounding
                assert m.algbw == pytest.approx(row.size / m.time, rel=0.01)


@pytest.mark.parametrize("name", LOG_NAMES)
def test_printed_busbw_follows_the_bus_factor(nccl_logs_dir, name):
    result = read(nccl_logs_dir, name)
    ranks = result.n_ranks or 8  # the sendrecv snippet has no device list; its factor is 1
    factor = comms.bus_factor(result.collective, ranks)
    for row in result.rows:
        for m in (row.out_of_place, row.in_place):
            if m.algbw >= 1e9:  # 2-decimal GB/s printing swamps the ratio below 1 GB/s
                assert m.busbw == pytest.approx(m.algbw * factor, rel=0.005, abs=0.006e9)


def test_units_and_fields_of_the_h100_log(nccl_logs_dir):
    result = read(nccl_logs_dir, "h100-16gpu-2node-allreduce-a3mega.txt")
    first, last = result.rows[0], result.rows[-1]
    assert (first.size, first.count, first.type, first.redop, first.root) == (8, 2, "float", "sum", None)
    assert first.out_of_place.time == pytest.approx(135.8e-6)
    assert first.out_of_place.wrong == 0 and first.out_of_place.error is None
    assert last.size == 8589934592
    assert last.out_of_place.algbw == pytest.approx(180.71e9)
    assert last.out_of_place.busbw == pytest.approx(338.82e9)
    assert last.in_place.time == pytest.approx(47743e-6)
    assert result.avg_busbw == pytest.approx(70.742e9)
    assert result.columns[:6] == ("size", "count", "type", "redop", "root", "time")


def test_older_layouts_error_column_empty_redop_and_root(nccl_logs_dir):
    gather = read(nccl_logs_dir, "a100-8gpu-allgather-superbench.txt")  # no redop, no root
    assert gather.rows[0].redop == "" and gather.rows[0].root is None
    assert "error" in gather.columns and "wrong" not in gather.columns
    assert gather.rows[-1].out_of_place.error is None  # printed N/A
    assert gather.rows[-1].out_of_place.wrong is None
    alltoall = read(nccl_logs_dir, "a100-8gpu-alltoall-superbench.txt")  # redop column, empty
    assert alltoall.rows[0].redop == "" and alltoall.rows[-1].out_of_place.time == pytest.approx(33508e-6)
    broadcast = read(nccl_logs_dir, "a100-8gpu-broadcast-superbench.txt")  # root, no redop
    assert broadcast.rows[5].root == 0 and broadcast.rows[5].redop == ""
    reduce = read(nccl_logs_dir, "a100-8gpu-reduce-superbench.txt")
    assert (reduce.rows[5].redop, reduce.rows[5].root) == ("sum", 0)
    sendrecv = read(nccl_logs_dir, "a100-8gpu-sendrecv-snippet.txt")
    assert sendrecv.rows[0].out_of_place.wrong == 0 and sendrecv.rows[0].in_place.wrong is None
    assert sendrecv.rows[0].root is None  # printed -1


SYNTHETIC_HEADER = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid   1 on a device  0 [0x01] GPU
#  Rank  1 Group  0 Pid   2 on b device  0 [0x01] GPU
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""


def test_tolerates_mpirun_tags_info_lines_and_blank_lines():
    text = (
        "[1,0]<stdout>:# Collective test starting: all_gather_perf\n"
        + "".join(f"[1,0]<stdout>:{line}\n" for line in SYNTHETIC_HEADER.splitlines())
        + "\n\nnode:1:1 [0] NCCL INFO Channel 00/02 : 0 1\n"
        + "[1,0]<stdout>:          64            16     float    none      -1    10.00    0.01    0.00      0    10.00    0.01    0.00      0\r\n"
        + "[1,0]<stdout>:         128            32     float    none      -1    20.00    0.01    0.00      3    20.00    0.01    0.00    N/A\n"
    )
    result = parse_nccl_tests(text)
    assert result.collective == "all_gather" and result.n_ranks == 2
    assert [r.size for r in result.rows] == [64, 128]
    assert result.rows[0].redop == "none" and result.rows[0].root is None
    assert result.rows[1].out_of_place.wrong == 3 and result.rows[1].in_place.wrong is None
    assert result.avg_busbw is None


def test_a_cut_or_misaligned_row_is_skipped_not_misread():
    good = "         128            32     float     sum      -1    20.00    0.01    0.01      0    20.00    0.01    0.01      0"
    cut = "         256            64     float     sum      -1    20.00    0.01    0.01      0    20.00    0.01"
    result = parse_nccl_tests(SYNTHETIC_HEADER + good + "\n" + cut + "\n")
    assert len(result.rows) == 1 and result.skipped == (cut,)


def test_rows_without_a_header_are_read_from_the_right():
    text = "         1048576        262144     float     sum      -1    100.0   10.49   10.49      0    100.0   10.49   10.49      0\n"
    result = parse_nccl_tests(text)
    assert result.columns == () and result.collective is None and result.n_ranks is None
    row = result.rows[0]
    assert (row.size, row.redop, row.root) == (1048576, "sum", None)
    assert row.out_of_place.time == pytest.approx(100e-6)


@pytest.mark.parametrize(
    "text",
    ["", "# nThread 1 nGpus 8\n#\n# Avg bus bandwidth    : 1.0\n", "NCCL INFO hello\nsome words\n"],
)
def test_text_without_rows_is_refused(text):
    with pytest.raises(InputError) as info:
        parse_nccl_tests(text)
    assert info.value.parameter == "text"
    assert "no nccl-tests result rows" in str(info.value)


@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["lines"]])
def test_non_text_is_refused(bad):
    with pytest.raises(InputError) as info:
        parse_nccl_tests(bad)
    assert info.value.parameter == "text"


def test_rows_to_points(nccl_logs_dir):
    result = read(nccl_logs_dir, "a100-8gpu-alltoall-superbench.txt")
    sizes, times = rows_to_points(result)
    assert sizes.dtype == float and sizes.shape == times.shape == (29,)  # 5 zero-size rows dropped
    assert sizes[0] == 32 and times[0] == pytest.approx(89.00e-6)
    all_sizes, in_times = rows_to_points(result, "in", include_empty=True)
    assert all_sizes.shape == (34,) and in_times[0] == pytest.approx(1.38e-6)
    assert np.all(np.diff(sizes) > 0)
    with pytest.raises(InputError) as info:
        rows_to_points(result, "both")
    assert info.value.parameter == "placement"
    with pytest.raises(InputError) as info:
        rows_to_points("text", "out")
    assert info.value.parameter == "result"


def test_comms_reexports_the_parser():
    assert comms.parse_nccl_tests is parse_nccl_tests


def test_h100_fit_gives_sensible_latency_and_bandwidth(nccl_logs_dir):
    result = read(nccl_logs_dir, "h100-16gpu-2node-allreduce-a3mega.txt")
    fit = comms.fit_alpha_beta(*rows_to_points(result))
    # Dominated by the large messages: the asymptotic algbw (~181 GB/s printed at 8 GiB)
    # and, times the bus factor, the printed ~339 GB/s busbw of 16 ranks over 2 nodes.
    assert 170e9 < fit.bandwidth < 190e9
    assert fit.bandwidth * comms.bus_factor("all_reduce", 16) == pytest.approx(338.8e9, rel=0.02)
    assert 50e-6 < fit.alpha < 1e-3 and fit.r2 > 0.99 and fit.n_points == 31
    # Weighted by relative error the intercept lands near the ~123 us small-message time.
    relative = comms.fit_alpha_beta(*rows_to_points(result), weighting="relative")
    assert 100e-6 < relative.alpha < 200e-6
    assert not math.isnan(relative.r2)


def test_a_text_with_several_runs_keeps_them_apart(nccl_logs_dir):
    """One job's output of all_reduce_perf then all_gather_perf (mpirun --tag-output, as a
    batch system writes it), then all_reduce_perf again: three runs, rows never mixed."""
    names = ("a100-8gpu-allreduce-superbench.txt", "a100-8gpu-allgather-superbench.txt",
             "h100-16gpu-2node-allreduce-a3mega.txt")
    texts = [(nccl_logs_dir / n).read_text() for n in names]
    tagged = "\n".join("[1,0]<stdout>:" + line for line in texts[1].splitlines())
    combined = "\n".join([texts[0], "srun: job step finished", tagged, texts[2]])
    runs = parse_nccl_runs(combined)
    assert [(r.collective, r.n_ranks, len(r.rows)) for r in runs] == [EXPECTED[n] for n in names]
    for run, text in zip(runs, texts, strict=True):
        alone = parse_nccl_tests(text)
        assert run.rows == alone.rows and run.avg_busbw == alone.avg_busbw
        assert run.computed_avg_busbw() / 1e9 == pytest.approx(run.avg_busbw / 1e9, abs=0.001)
    first = parse_nccl_tests(combined)
    assert first.other_runs == 2 and first.rows == runs[0].rows and first.collective == "all_reduce"


def test_parse_nccl_runs_needs_a_row():
    with pytest.raises(InputError) as info:
        parse_nccl_runs("# nThread 1 nGpus 8\n# Avg bus bandwidth : 1.0\n")
    assert info.value.parameter == "text"


@pytest.mark.parametrize(("command", "ranks"), [
    ("./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8", 8),
    ("mpirun -np 16 -npernode 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1", 16),
    ("mpirun -np 2 ./all_gather_perf -t 2 -g 4", 16),
    ("srun --ntasks=32 all_reduce_perf -b 8 -e 1G", 32),
    ("./all_reduce_perf -b 8 -e 128M -f 2", None),  # says nothing about ranks
    ("srun -n16 all_reduce_perf_mpi -b 8 -e 1G -g 1", 16),
    ("srun -N 2 --ntasks-per-node=8 all_reduce_perf -g 1", None),  # the total is not written down
    ("mpirun -npernode 8 -H a:8,b:8 all_reduce_perf -g 1", None),
])
def test_rank_count_from_the_command_line_when_no_device_is_listed(command, ranks):
    row = "    134217728      33554432     float     sum      -1   1000.0  134.22  234.88      0   1000.0  134.22  234.88      0"
    result = parse_nccl_tests(command + "\n" + row + "\n")
    assert result.n_ranks == ranks


def test_runs_of_current_nccl_tests_end_with_concluded_not_a_new_run():
    row = "    134217728      33554432     float     sum      -1   1000.0  134.22  234.88      0   1000.0  134.22  234.88      0"
    gather = "    134217728       4194304     float    none      -1   1000.0  134.22  117.44      0   1000.0  134.22  117.44      0"
    text = "\n".join([
        "# Collective test starting: all_reduce_perf", "# nThread 1 nGpus 8 minBytes 8", row,
        "# Avg bus bandwidth    : 234.88", "# Collective test concluded: all_reduce_perf",
        "# Collective test starting: all_gather_perf", "# nThread 1 nGpus 8 minBytes 8", gather,
        "# Avg bus bandwidth    : 117.44", "# Collective test concluded: all_gather_perf",
    ])
    runs = parse_nccl_runs(text)
    assert [r.collective for r in runs] == ["all_reduce", "all_gather"]
    assert [r.avg_busbw for r in runs] == [234.88e9, 117.44e9]
