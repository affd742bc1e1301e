"""nccl-tests logs as they come off clusters: launcher prefixes, NCCL INFO output inside rows,
older algbw conventions and layouts, rccl-tests, chatter, values that are not numbers.

The fixtures in tests/fixtures/nccl are written for these tests in the real formats (the
printf formats of nccl-tests, its banner and header lines, NCCL's debug prefix, the
launchers' prefixes) with the project's own numbers.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import comms
from workbench._validate import InputError
from workbench.nccl import (
    GATHER_2020,
    PER_RANK_SIZE,
    SIZE_OVER_TIME,
    NcclDevice,
    NcclResult,
    SkippedLine,
    parse_nccl_runs,
    parse_nccl_tests,
    rows_to_points,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nccl"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def read(name: str) -> NcclResult:
    return parse_nccl_tests(text(name))


def placements(result: NcclResult):
    return [m for row in result.rows for m in (row.out_of_place, row.in_place) if m is not None]


def finite_everywhere(result: NcclResult) -> bool:
    numbers = [result.algbw_factor] + ([result.avg_busbw] if result.avg_busbw is not None else [])
    for m in placements(result):
        numbers += [m.time, m.algbw, m.busbw] + ([m.error] if m.error is not None else [])
    numbers += list(result.sizes) + [result.computed_avg_busbw()]
    return all(math.isfinite(x) for x in numbers)


def check_avg(result: NcclResult) -> None:
    """The printed average is nccl-tests' mean of the unrounded busbw; each printed busbw is
    within 0.005 GB/s of it, so the mean of the printed ones is too (plus %g's rounding)."""
    assert abs(result.computed_avg_busbw() - result.avg_busbw) <= 0.005e9 + 5e-6 * result.avg_busbw


# -- Slurm srun --label -----------------------------------------------------------------------
def test_srun_label_prefixes_are_read_through():
    result = read("srun-label-allreduce.txt")
    assert (result.collective, result.collective_source) == ("all_reduce", "named")
    assert (result.n_ranks, result.n_ranks_source) == (16, "devices")
    assert len(result.rows) == 11 and result.skipped_lines == ()
    assert result.algbw_convention == SIZE_OVER_TIME and result.algbw_factor == 1.0
    assert (result.tool, result.tool_version) == ("nccl-tests", "2.18.3")
    assert result.hosts == ("gpu-a017", "gpu-a018")
    assert result.device_names == ("NVIDIA H100 80GB HBM3",)
    assert result.devices[9] == NcclDevice(rank=9, host="gpu-a018", device=1, bus_id="0000:2a:00",
                                           name="NVIDIA H100 80GB HBM3", pid=41209, group=0)
    row = result.rows[5]
    assert (row.size, row.count, row.type, row.redop, row.root, row.line) == (1048576, 262144, "float", "sum", None, 33)
    assert row.out_of_place.time == pytest.approx(37.63e-6, rel=1e-12)
    assert row.out_of_place.algbw == pytest.approx(27.87e9, rel=1e-12)
    assert row.out_of_place.busbw == pytest.approx(52.25e9, rel=1e-12)
    assert (row.in_place.time, row.in_place.wrong) == (pytest.approx(36.77e-6, rel=1e-12), 0)
    assert result.avg_busbw == pytest.approx(124.538e9, rel=1e-12) and result.out_of_bounds == 0
    check_avg(result)
    # The same rows as the log without its labels (every line starts " 0: ").
    plain = "\n".join(line[4:] if line.startswith(" 0: ") else line for line in text("srun-label-allreduce.txt").splitlines())
    assert parse_nccl_tests(plain).rows == result.rows


def test_busbw_of_the_srun_log_follows_the_all_reduce_factor():
    result = read("srun-label-allreduce.txt")
    factor = comms.bus_factor("all_reduce", 16)
    for m in placements(result):
        if m.algbw >= 1e9:
            assert m.busbw == pytest.approx(m.algbw * factor, abs=0.01e9 + 0.005e9 * factor)


# -- mpirun --tag-output ------------------------------------------------------------------------
def test_mpirun_tags_in_the_middle_of_a_line_are_read_through():
    result = read("mpirun-tag-output-allgather.txt")
    assert result.skipped_lines == ()
    assert [r.size for r in result.rows] == [1024 * 4**k for k in range(10)]
    assert (result.collective, result.n_ranks, result.hosts) == ("all_gather", 8, ("a100-r1n3", "a100-r1n4"))
    # rank 5's warning landed between two pieces of rank 0's row: the row is whole again
    row = result.rows[5]
    assert (row.size, row.count, row.redop, row.line) == (1048576, 32768, "none", 25)
    assert (row.out_of_place.time, row.out_of_place.algbw, row.out_of_place.busbw) == pytest.approx(
        (41.60e-6, 25.21e9, 22.06e9), rel=1e-12)
    assert (row.in_place.time, row.in_place.algbw) == pytest.approx((40.64e-6, 25.80e9), rel=1e-12)
    # the in-place half of this row arrived on the next line
    assert result.rows[8].in_place.time == pytest.approx(931.6e-6, rel=1e-12)
    assert result.rows[8].line == 29
    assert result.avg_busbw == pytest.approx(26.1456e9, rel=1e-12)
    check_avg(result)


def test_open_mpi_tags_and_srun_labels_together_with_several_runs():
    body = text("srun-label-allreduce.txt").replace(" 0: ", "[1,0]<stdout>:")
    runs = parse_nccl_runs(body + text("mpirun-tag-output-allgather.txt"))
    assert [(r.collective, r.n_ranks, len(r.rows)) for r in runs] == [("all_reduce", 16, 11), ("all_gather", 8, 10)]
    assert runs[0].rows == read("srun-label-allreduce.txt").rows
    assert runs[1].rows == read("mpirun-tag-output-allgather.txt").rows
    assert runs[1].first_line > runs[0].last_line


# -- NCCL_DEBUG=INFO ----------------------------------------------------------------------------
def test_nccl_info_lines_that_split_every_row_are_taken_out():
    result = read("nccl-debug-info-allreduce.txt")
    assert result.skipped_lines == () and len(result.rows) == 13
    assert [r.size for r in result.rows] == [8 * 4**k for k in range(13)]
    first, last = result.rows[0], result.rows[-1]
    assert (first.out_of_place.time, first.in_place.time) == pytest.approx((18.50e-6, 18.68e-6), rel=1e-12)
    assert (last.out_of_place.algbw, last.out_of_place.busbw) == pytest.approx((127.98e9, 223.96e9), rel=1e-12)
    assert last.in_place.time == pytest.approx(1026.5e-6, rel=1e-12)
    assert result.library_version == "2.19.3+cuda12.3"
    assert result.hosts == ("dgx-b03",) and result.n_ranks == 8
    check_avg(result)


def test_without_device_lines_nccl_info_gives_the_rank_count():
    lines = [line for line in text("nccl-debug-info-allreduce.txt").splitlines() if "Rank" not in line]
    result = parse_nccl_tests("\n".join(lines))
    assert (result.n_ranks, result.n_ranks_source, result.devices) == (8, "nccl-info", ())
    assert len(result.rows) == 13


def test_a_host_name_glued_to_a_row_is_told_apart_without_knowing_the_host():
    # the host appears nowhere else: the end of the row is read as a number
    text_ = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
             "     4194304       1048576     float     sum      -1gpu-7x:811:902 [3] NCCL INFO Connected all trees\n"
             "    50.78   82.60  144.54      0n7:811:905 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetHandle failed\n"
             "    50.25   83.47  146.08      0\n")
    result = parse_nccl_tests(text_)
    (row,) = result.rows
    assert row.in_place.busbw == pytest.approx(146.08e9, rel=1e-12) and row.out_of_place.wrong == 0
    assert result.hosts == ("gpu-7x", "n7") and result.skipped_lines == ()


def test_a_row_cut_by_nccl_output_that_never_goes_on_is_reported():
    text_ = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
             "         256            64     float     sum      -1    20.00    0.01    0.02      0    20.00    0.01    0.02      0\n"
             "         512           128     float     sum      -1nodeA:1:2 [0] NCCL INFO Channel 00/0 : 0 1\n"
             "# Avg bus bandwidth    : 0.02\n")
    result = parse_nccl_tests(text_)
    assert len(result.rows) == 1
    (skipped,) = result.skipped_lines
    assert skipped.line == 3 and "too few" in skipped.reason and "cut" in skipped.reason
    assert result.skipped == (skipped.text,) and str(skipped).startswith("line 3: ")


def test_a_row_left_open_when_the_next_run_begins_stays_with_its_own_run():
    header = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    text_ = ("# Collective test starting: all_reduce_perf\n" + header
             + "         128            32     float     sum      -1    20.00    0.01    0.01      0    20.00    0.01    0.01      0\n"
             + "         512           128     float     sum      -1nodeA:1:2 [0] NCCL INFO Channel 00/0 : 0 1\n"
             + "# Collective test starting: broadcast_perf\n" + header
             + "         256            64     float    none       0    20.00    0.01    0.01      0    20.00    0.01    0.01      0\n"
             + "    20.00    0.03    0.03      0    20.00    0.03    0.03      0\n")
    first, second = parse_nccl_runs(text_)
    assert (first.collective, [r.size for r in first.rows]) == ("all_reduce", [128])
    assert [s.line for s in first.skipped_lines] == [4] and "cut" in first.skipped_lines[0].reason
    assert (second.collective, [r.size for r in second.rows], second.skipped_lines) == ("broadcast", [256], ())


# -- 2020-era conventions ----------------------------------------------------------------------
def test_all_gather_before_mid_2020_keeps_every_row():
    result = read("allgather-2020.txt")
    assert len(result.rows) == 31 and result.skipped_lines == ()
    assert (result.algbw_convention, result.algbw_factor) == (GATHER_2020, 7 / 8)
    assert (result.collective, result.n_ranks) == ("all_gather", 8)
    assert not result.sizes_per_rank and any("mid-2020" in note for note in result.notes)
    for row in result.rows:
        for m in (row.out_of_place, row.in_place):
            assert m.busbw == m.algbw  # nccl-tests printed busbw = algbw then
            assert m.error == 0.0 and m.wrong is None
            if row.size >= 1 << 26:  # algbw = 7/8 x size / time within the printed digits
                assert m.algbw * m.time / row.size == pytest.approx(7 / 8, rel=1.5e-3)
                # and busbw is what nccl-tests prints today: (n-1)/n x size / time
                assert m.busbw == pytest.approx(comms.busbw("all_gather", row.size, m.time, 8), rel=1.5e-3)
    last = result.rows[-1]
    assert (last.size, last.count) == (8589934592, 268435456)
    check_avg(result)
    sizes, _ = rows_to_points(result)
    assert sizes[-1] == 8589934592.0  # whole-buffer sizes, as printed


def test_reduce_scatter_pasted_without_devices_names_its_ranks_through_the_algbw():
    result = read("reducescatter-2020-pasted.txt")
    assert (result.n_ranks, result.n_ranks_source) == (4, "algbw")
    assert (result.algbw_convention, result.algbw_factor) == (GATHER_2020, 0.75)
    assert (result.collective, result.collective_source) == ("reduce_scatter", "inferred")
    assert len(result.rows) == 15 and result.skipped_lines == ()
    assert result.rows[0].out_of_place.error == pytest.approx(2e-7) and result.rows[0].in_place.error == pytest.approx(1e-7)
    check_avg(result)


def test_per_rank_sizes_give_whole_buffer_sizes_to_the_model():
    n = 4
    rows = []
    for size, t in ((1 << 20, 100.0), (1 << 24, 1400.0), (1 << 26, 5500.0)):
        alg = (n - 1) * size / (t * 1e3)
        rows.append(f"{size:12d}  {size // 4:12d}  {'float':>8s}  {'sum':>6s}  {-1:6d}"
                    + f"  {t:7.1f}  {alg:6.2f}  {alg:6.2f}  {0:5d}" * 2)
    devices = "".join(f"#  Rank {r:2d} Group  0 Pid 1 on h device {r:2d} [0x0{r}] GPU\n" for r in range(n))
    result = parse_nccl_tests(devices + "\n".join(rows))
    assert result.algbw_convention == PER_RANK_SIZE and result.sizes_per_rank
    assert [r.size for r in result.rows] == [1 << 20, 1 << 24, 1 << 26]  # as printed
    np.testing.assert_array_equal(result.sizes, [4 << 20, 4 << 24, 4 << 26])
    np.testing.assert_array_equal(rows_to_points(result)[0], [4 << 20, 4 << 24, 4 << 26])


# -- printing precision and old layouts ---------------------------------------------------------
def test_two_decimal_times_are_read_within_their_rounding():
    result = read("two-decimal-times.txt")
    assert len(result.rows) == 8 and result.skipped_lines == ()
    row = result.rows[4]  # 0.14 us stands for anything in [0.135, 0.145]
    assert (row.size, row.out_of_place.time, row.out_of_place.algbw) == (16384, pytest.approx(0.14e-6), pytest.approx(121.08e9))
    for row in result.rows:
        for m in (row.out_of_place, row.in_place):
            true_time = row.size / m.algbw  # what nccl-tests divided by, up to the algbw's rounding
            assert abs(true_time - m.time) <= 0.005e-6 + true_time * 0.005 / (m.algbw / 1e9)
    assert result.n_ranks == 1 and result.avg_busbw == 0.0


def test_the_2017_layout_with_times_in_milliseconds():
    result = read("allreduce-2017-ms.txt")
    assert result.time_unit == "ms" and len(result.rows) == 11 and result.skipped_lines == ()
    assert result.columns[:4] == ("size", "count", "type", "redop") and "error" in result.columns
    last = result.rows[-1]
    assert (last.size, last.out_of_place.time, last.out_of_place.algbw) == (8388608, pytest.approx(0.277e-3), pytest.approx(30.33e9))
    assert (last.out_of_place.error, last.in_place.error) == (pytest.approx(1e-7), 0.0)
    assert (result.collective, result.collective_source, result.n_ranks) == ("all_reduce", "inferred", 4)
    assert result.devices[2].bus_id == "0x08" and result.devices[2].pid is None
    check_avg(result)


def test_a_log_viewer_that_dropped_every_leading_hash():
    result = read("hash-stripped-allgather.txt")
    assert result.avg_busbw == pytest.approx(87.8084e9, rel=1e-12) and result.out_of_bounds == 0
    assert (result.collective, result.n_ranks, len(result.rows)) == ("all_gather", 8, 11)
    assert result.columns[:6] == ("size", "count", "type", "redop", "root", "time")
    check_avg(result)
    with_hashes = "\n".join("#" + line if not re.match(r"^\s+\d", line) else line
                            for line in text("hash-stripped-allgather.txt").splitlines())
    assert parse_nccl_tests(with_hashes).rows == result.rows


# -- rccl-tests, chatter, a binary never named ---------------------------------------------------
def test_rccl_tests_wrapped_in_kubectl_and_ssh_chatter():
    result = read("rccl-wrapped.txt")
    assert (result.tool, result.tool_version, result.library_version) == ("rccl-tests", "develop:4f9c21e", "2.20.5-HEAD:7d1a2f0")
    assert result.date == "Wed Mar 12 09:41:07 UTC 2025"
    assert result.hosts == ("mi300-node-3",) and result.device_names == ("AMD Instinct MI300X",)
    assert (result.collective, result.collective_source) == ("all_reduce", "inferred")
    assert (result.n_ranks, len(result.rows), result.skipped_lines) == (8, 11, ())
    last = result.rows[-1]
    assert (last.size, last.out_of_place.time, last.out_of_place.busbw) == (
        1073741824, pytest.approx(5194.0e-6, rel=1e-12), pytest.approx(361.77e9, rel=1e-12))
    check_avg(result)


def test_a_collective_the_numbers_do_not_single_out_stays_unnamed():
    # all_gather and alltoall have the same bus factor and columns
    lines = [line for line in text("hash-stripped-allgather.txt").splitlines() if "all_gather" not in line]
    result = parse_nccl_tests("\n".join(lines))
    assert (result.collective, result.collective_source) == (None, None)
    assert len(result.rows) == 11


@pytest.mark.parametrize("style", ["kubectl-timestamps", "kubectl-prefix", "compose"])
def test_other_launcher_prefixes(style):
    plain = "\n".join(line[4:] for line in text("srun-label-allreduce.txt").splitlines() if line.startswith(" 0: "))
    lines = plain.splitlines()
    if style == "kubectl-timestamps":
        lines = [f"2025-02-13T08:15:{i % 60:02d}.{i:06d}Z {line}" for i, line in enumerate(lines)]
    elif style == "kubectl-prefix":
        lines = [f"[pod/nccl-worker-0/bench] {line}" for line in lines]
    else:
        lines = [f"bench-worker-1  | {line}" for line in lines]
    result = parse_nccl_tests("\n".join(lines))
    assert result.rows == read("srun-label-allreduce.txt").rows
    assert result.n_ranks == 16 and result.skipped_lines == ()
    if style == "kubectl-timestamps":
        assert result.date == "2025-02-13T08:15:00.000000Z"


def test_a_date_printed_by_the_job_script():
    body = text("two-decimal-times.txt")
    result = parse_nccl_tests("Start time: 2024-11-05 22:14:09 CET\n" + body)
    assert result.date == "2024-11-05 22:14:09 CET"
    assert parse_nccl_tests(body).date is None


# -- values that are not numbers (issue 14 item 7) -----------------------------------------------
def test_values_that_overflow_or_are_not_numbers_are_errors_with_their_line():
    result = read("bad-values-allreduce.txt")
    assert [r.size for r in result.rows] == [1024, 8192, 65536, 4194304, 33554432, 268435456]
    assert [s.line for s in result.skipped_lines] == [15, 17, 19, 20, 24]
    reasons = [s.reason for s in result.skipped_lines]
    assert "size" in reasons[0] and "out of range" in reasons[0] and "400 characters" in reasons[0]
    assert reasons[1].startswith("busbw") and "overflows" in reasons[1]
    assert reasons[2] == "algbw 'inf' is not a finite number"
    assert reasons[3] == "busbw '-nan' is not a finite number"
    assert reasons[4] == "Avg bus bandwidth 'nan' is not a finite number"
    assert result.avg_busbw is None and finite_everywhere(result)
    assert all(len(s.text) < 5000 for s in result.skipped_lines)


@pytest.mark.parametrize(("value", "words"), [("1e400", "out of range"), ("1e300", "out of range"),
                                               ("inf", "finite"), ("-3", "out of range"), ("", "not a number")])
def test_an_avg_line_that_is_no_bandwidth_is_skipped_not_read(value, words):
    body = text("two-decimal-times.txt").replace("# Avg bus bandwidth    : 0 ", f"# Avg bus bandwidth    : {value}")
    result = parse_nccl_tests(body)
    assert result.avg_busbw is None and len(result.rows) == 8
    (skipped,) = result.skipped_lines
    assert skipped.line == 19 and words in skipped.reason


def test_a_log_whose_rows_are_all_unreadable_says_which_lines_and_why():
    lines = text("bad-values-allreduce.txt").splitlines()
    bad_only = "\n".join(lines[:12] + [lines[14], lines[16]])  # the banner and the two worst rows
    with pytest.raises(InputError) as info:
        parse_nccl_tests(bad_only)
    message = str(info.value)
    assert info.value.parameter == "text" and "no nccl-tests result rows" in message
    assert "line 13: size" in message and "line 14: busbw" in message


def test_skipped_lines_keep_their_text_and_read_as_messages():
    result = read("bad-values-allreduce.txt")
    assert all(isinstance(s, SkippedLine) for s in result.skipped_lines)
    assert result.skipped == tuple(s.text for s in result.skipped_lines)
    assert str(result.skipped_lines[2]) == "line 19: algbw 'inf' is not a finite number"


def test_a_shifted_row_is_reported_with_the_convention_it_breaks():
    body = text("srun-label-allreduce.txt").splitlines()
    body[32] = body[32].replace("27.87", "72.87")  # the 1 MiB row, line 33
    result = parse_nccl_tests("\n".join(body))
    assert len(result.rows) == 10
    (skipped,) = result.skipped_lines
    assert skipped.line == 33 and "does not follow size/time" in skipped.reason and "27.87 GB/s" in skipped.reason


# -- properties ----------------------------------------------------------------------------------
def nccl_row(size: int, count: int, redop: str, root: int, measures) -> str:
    """A row as nccl-tests prints it (its printf formats)."""
    def time(us):
        return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"

    head = f"{size:12d}  {count:12d}  {'float':>8s}  {redop:>6s}  {root:6d}"
    return head, [f"  {time(t):>7s}  {a:6.2f}  {b:6.2f}  {w:>5s}" for t, a, b, w in measures]


HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")


@st.composite
def logs(draw):
    """A log printed the way nccl-tests prints one, with its true values."""
    n = draw(st.integers(2, 64))
    old = draw(st.booleans())
    exponents = sorted(draw(st.sets(st.integers(10, 33), min_size=1, max_size=12)) | {24})
    alpha = draw(st.floats(1.0, 500.0))  # us
    bw = draw(st.floats(1e3, 1e6))  # bytes/us
    factor = (n - 1) / n if old else 1.0
    rows = []
    for k in exponents:
        size = 1 << k
        measures = []
        for _placement in range(2):
            t = (alpha + size / bw) * (1 + 0.01 * draw(st.floats(-1, 1)))
            alg = factor * size / (t * 1e3)
            measures.append((t, alg, alg * (1 if old else (n - 1) / n), "0"))
        rows.append(nccl_row(size, size // 4 // n, "none", -1, measures))
    devices = "".join(f"#  Rank {r:2d} Group  0 Pid {100 + r} on node{r // 8} device {r % 8:2d} [0x{r:02x}] GPU\n" for r in range(n))
    return n, old, devices, rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.data())
def test_every_row_nccl_tests_prints_is_kept_however_the_output_is_cut(log, data):
    n, old, devices, rows = log
    plain = devices + HEADER + "".join(head + "".join(parts) + "\n" for head, parts in rows)
    expected = parse_nccl_tests(plain)
    assert len(expected.rows) == len(rows) and expected.skipped_lines == ()
    assert expected.algbw_convention == (GATHER_2020 if old else SIZE_OVER_TIME)
    assert expected.collective in (None, "all_gather", "all_to_all")
    # The same output with NCCL lines written into the rows and a launcher's prefixes.
    prefix = data.draw(st.sampled_from(["", " 0: ", "[1,0]<stdout>:", "2025-01-01T00:00:00Z "]))
    lines = [prefix + line for line in (devices + HEADER).splitlines()]
    for head, parts in rows:
        pieces = [head, *parts]
        cuts = data.draw(st.lists(st.booleans(), min_size=2, max_size=2))
        line = prefix + pieces[0]
        for piece, cut in zip(pieces[1:], cuts, strict=True):
            if cut:
                lines.append(line + f"node0:77:78 [0] NCCL INFO AllReduce: opCount 1 [nranks={n}]")
                lines.append(prefix + "node1:79:80 [3] NCCL INFO Connected all rings")
                line = prefix
            line += piece
        lines.append(line)
    result = parse_nccl_tests("\n".join(lines))
    assert result.rows == expected.rows and result.skipped_lines == ()
    assert result.n_ranks == n and result.algbw_convention == expected.algbw_convention


LINE_PIECES = st.sampled_from([
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20",
    "#  Rank  0 Group  0 Pid   6899 on ztan-mig device  0 [0000:04:00] NVIDIA H100 80GB HBM3",
    "# Avg bus bandwidth    : ", "# Out of bounds values : 0 OK", HEADER.splitlines()[0], HEADER.splitlines()[1],
    "         8             2     float     sum      -1", "  135.8    0.00    0.00      0", "    1e300  inf  nan  N/A",
    "host:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0", "[1,0]<stdout>:", " 0: ", "all_reduce_perf -g 8",
    "mpirun -np 4", "rccl-tests: Version x", "9" * 400, "-1", "0.13", "1e-320", "١٢٣", "\ufeff", "\r", "\t", " ",
])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LINE_PIECES, st.text(max_size=30), st.integers(-10**30, 10**30).map(str),
                          st.floats(allow_nan=True, allow_infinity=True).map(repr)), max_size=40),
       st.lists(st.sampled_from(["\n", " ", "  ", ""]), min_size=40, max_size=40))
def test_any_text_parses_or_raises_input_error_never_inf_or_nan(pieces, seps):
    body = "".join(p + s for p, s in zip(pieces, seps, strict=False))
    try:
        runs = parse_nccl_runs(body)
    except InputError as exc:
        assert exc.parameter == "text"
        return
    for result in runs:
        assert result.rows and finite_everywhere(result)
        assert all(isinstance(s.line, int) and s.line >= 1 for s in result.skipped_lines)
        assert result.n_ranks is None or result.n_ranks >= 1


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_any_unicode_text_parses_or_raises_input_error(body):
    try:
        result = parse_nccl_tests(body)
    except InputError:
        return
    assert finite_everywhere(result)
