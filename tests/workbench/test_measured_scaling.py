"""The measured scaling table read row by row against its first row, the fitted law, the table
as text, and the MFU checks (workbench.measured_scaling), without Qt."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import presets
import presets.catalog
from workbench import measured_scaling as ms
from workbench import plan as pl
from workbench import scaling as sc
from workbench import scaling_analysis as sa
from workbench._validate import InputError
from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.scenarios import ScalingScenario, scenario_from_dict
from workbench.workspace import DEFAULT_PLAN

# The issue's example (issue 16), built for it: a base run of 1 GPU at 10,000 tokens/s and
# rows at 8, 64 and 512 GPUs whose speedups over that base, S = X / 10,000, are
#   8 GPUs:    76,930 tokens/s, S = 7.693,  e = (1/7.693 - 1/8) / (1 - 1/8)       = 0.570%
#   64 GPUs:  553,518 tokens/s, S = 55.35,  e = (1/55.35 - 1/64) / (1 - 1/64)     = 0.248%
#   512 GPUs: 3,690,521 tokens/s, S = 369.1, e = (1/369.1 - 1/512) / (1 - 1/512) = 0.0758%
# which print as 0.57%, 0.25% and 0.076% with two significant digits. The Amdahl fit over the
# four rows has s = 0.0464% and its own single-GPU rate 8,916 tokens/s (not the measured
# 10,000): Karp-Flatt of the 512-GPU row against that rate is 0.0464% again, the fit restated.
ISSUE_ROWS = ((1, 10_000.0), (8, 76_930.0), (64, 553_518.0), (512, 3_690_521.0))
ISSUE_KARP_FLATT = ("0.57%", "0.25%", "0.076%")


def test_the_issue_table_gives_its_three_karp_flatt_values_against_the_base_row():
    table = ms.analyse_measured(ISSUE_ROWS, "strong")
    assert table.base.gpus == 1 and table.base.serial_fraction is None
    shown = tuple(ms.plain_percent(r.serial_fraction, 2) for r in table.rows[1:])
    assert shown == ISSUE_KARP_FLATT
    assert table.rows[1].serial_fraction == pytest.approx(0.0057, rel=2e-3)
    assert table.rows[2].serial_fraction == pytest.approx(0.00248, rel=1e-3)
    assert table.rows[3].serial_fraction == pytest.approx(0.000758, rel=1e-3)
    assert table.largest.gpus == 512
    assert ms.plain_percent(table.fit.serial_fraction) == "0.0464%"
    assert table.fit.throughput_1 == pytest.approx(8916, rel=1e-3)


def test_the_old_single_karp_flatt_only_repeats_the_fit():
    """ScalingAnalysis.karp_flatt divides by the fit's single-GPU rate: for the issue's rows it
    gives the fit's own 0.0464%, not any row's measured serial fraction."""
    s = ScalingScenario(measured=ISSUE_ROWS)
    old = sa.analyse_scaling(s, 989e12, 1e12)
    assert ms.plain_percent(old.karp_flatt) == "0.0464%"
    assert old.karp_flatt == pytest.approx(old.measured.fit.serial_fraction, rel=1e-3)
    mine = ms.analyse_measured(s.measured, s.mode)
    assert mine.largest.serial_fraction / old.karp_flatt > 1.6  # 0.076% measured vs 0.0464%


def test_rows_against_a_base_of_eight_gpus():
    rows = ((8, 80_000.0), (16, 150_000.0), (64, 512_000.0))
    t = ms.analyse_measured(rows)
    r16, r64 = t.rows[1], t.rows[2]
    assert (r16.ratio, r64.ratio) == (2.0, 8.0)
    assert r16.speedup == pytest.approx(150 / 80)
    assert r16.efficiency == pytest.approx((150_000 / 80_000) / (16 / 8))
    assert r64.efficiency == pytest.approx(0.8)
    assert r64.serial_fraction == pytest.approx((1 / 6.4 - 1 / 8) / (1 - 1 / 8))
    assert r64.serial_fraction == pytest.approx(ms.karp_flatt_vs_base(512_000, 64, 80_000, 8))


def test_rows_keep_their_order_and_the_first_is_the_base():
    t = ms.analyse_measured(((64, 500_000.0), (8, 80_000.0), (128, 900_000.0)))
    assert [r.gpus for r in t.rows] == [64, 8, 128]
    assert t.rows[1].ratio == pytest.approx(1 / 8) and t.rows[1].serial_fraction is None  # fewer GPUs
    assert t.rows[2].serial_fraction is not None and t.largest.gpus == 128


def test_an_empty_or_single_row_table():
    empty = ms.analyse_measured(())
    assert empty.rows == () and empty.base is None and empty.fit is None and empty.largest is None
    one = ms.analyse_measured(((8, 1000.0),))
    assert one.fit is None and one.rows[0].efficiency == 1.0


@settings(max_examples=60, deadline=None)
@given(s=st.floats(0.0, 0.5), n0=st.sampled_from([1, 2, 8, 64]),
       factors=st.lists(st.sampled_from([2, 4, 8, 16, 128]), min_size=1, max_size=4, unique=True))
def test_amdahl_data_give_one_serial_fraction_against_the_base(s, n0, factors):
    """For exact Amdahl data every row's Karp-Flatt against a base of n0 GPUs is the base run's
    own serial share, s / (s + (1 - s) / n0): the same on every row."""
    gpus = [n0] + [n0 * f for f in sorted(factors)]
    rows = [(n, 1000.0 * float(sc.amdahl_speedup(s, n))) for n in gpus]
    t = ms.analyse_measured(rows, "strong")
    expected = s / (s + (1 - s) / n0)
    for r in t.rows[1:]:
        assert r.serial_fraction == pytest.approx(expected, abs=1e-9)
        # and as a share of one GPU's time it is the s the data were made with
        assert ms.one_gpu_serial_fraction(r.serial_fraction, n0) == pytest.approx(s, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(s=st.floats(0.0, 0.9), n0=st.sampled_from([1, 4, 8]),
       factors=st.lists(st.sampled_from([2, 4, 8, 32]), min_size=1, max_size=4, unique=True))
def test_gustafson_data_give_one_serial_fraction_against_the_base(s, n0, factors):
    """Weak scaling: for exact Gustafson data the implied fraction against the base is
    s / (s + (1 - s) n0) on every row, and the fit recovers s and the single-GPU rate."""
    gpus = [n0] + [n0 * f for f in sorted(factors)]
    rows = [(n, 500.0 * float(sc.gustafson_speedup(s, n))) for n in gpus]
    t = ms.analyse_measured(rows, "weak")
    for r in t.rows[1:]:
        assert r.serial_fraction == pytest.approx(s / (s + (1 - s) * n0), abs=1e-9)
    assert t.fit.law == "Gustafson" and t.fit.ceiling is None
    assert t.fit.serial_fraction == pytest.approx(s, abs=1e-6)
    assert t.fit.throughput_1 == pytest.approx(500.0, rel=1e-6)
    assert t.fit.predict(gpus[-1]) == pytest.approx(rows[-1][1], rel=1e-6)


def test_gustafson_fit_of_better_than_linear_rows_is_clamped():
    fit = ms.fit_gustafson([1, 2, 4], [100.0, 210.0, 440.0])
    assert fit.serial_fraction == 0.0 and fit.throughput_1 == pytest.approx((100 + 420 + 1760) / 21)


def test_the_fitted_amdahl_law_and_its_ceiling():
    rows = [(n, 2000.0 * float(sc.amdahl_speedup(0.01, n))) for n in (1, 8, 64, 512)]
    t = ms.analyse_measured(rows)
    assert t.fit.law == "Amdahl" and t.fit.serial_fraction == pytest.approx(0.01, rel=1e-6)
    assert t.fit.ceiling == pytest.approx(100.0, rel=1e-6)
    assert t.fit.speedup(512) == pytest.approx(sc.amdahl_speedup(0.01, 512), rel=1e-6)


def test_the_ceiling_in_words_and_numbers_without_exponents():
    assert ms.amdahl_ceiling(0.05) == pytest.approx(20.0) and ms.amdahl_ceiling(0.0) is None
    assert ms.ceiling_label(0.05) == "5% serial caps you at 20×"
    assert ms.ceiling_label(0.0007) == "0.07% serial caps you at 1,429×"
    assert ms.ceiling_label(0.0) == ""
    assert ms.plain_number(1929.6) == "1,930"
    assert ms.plain_number(1930.0) == "1,930"
    assert ms.plain_number(33_333.3) == "33,333"
    assert ms.plain_number(45.63) == "45.6" and ms.plain_number(7.0) == "7"
    assert ms.plain_number(0.000464) == "0.000464" and ms.plain_number(0) == "0"
    assert ms.plain_number(-0.0123) == "-0.0123"
    assert ms.plain_percent(76.95) == "7,695%" and ms.plain_percent(0.00570091, 2) == "0.57%"
    for value in (1.93e3, 1e9, 1.234e-7, 5e17):
        assert "e" not in ms.plain_number(value)


# -- text in, text out ----------------------------------------------------------------------------


def test_a_spreadsheet_paste_with_a_header_and_digit_groups():
    text = "GPUs\tThroughput (tokens/s)\tnote\n1\t10,000\tbase\n8\t76.93k\t\n\n64\t553,518\n"
    got = ms.parse_table_text(text)
    assert got.rows == ((1, 10_000.0), (8, 76_930.0), (64, 553_518.0))
    assert got.header[0] == "GPUs" and got.problems == () and not got.per_gpu


@pytest.mark.parametrize("text", [
    "1,10000\n8,76930\n",
    '1,"10,000"\n8,"76,930"\n',
    "1;10000\n8;76930",
    "1 10000\n8 76930\n",
    "1: 10k\n8: 76.93k\n",
    "gpus,throughput_tokens_per_s\n1,10000.0\n8,76930.0\n",
])
def test_separators_a_person_would_use(text):
    assert ms.parse_table_text(text).rows == ((1, 10_000.0), (8, 76_930.0))


def test_a_per_gpu_column_is_multiplied_by_the_gpu_count():
    got = ms.parse_table_text("n_gpus,tokens_per_s_per_gpu\n8,9600\n64,9000\n")
    assert got.per_gpu and got.rows == ((8, 76_800.0), (64, 576_000.0))


def test_lines_that_cannot_be_read_are_named_and_the_rest_kept():
    got = ms.parse_table_text("gpus,throughput_tokens_per_s\n8,80000\nsixteen,1\n32,-5\n64\n128,1e6\n")
    assert got.rows == ((8, 80_000.0), (128, 1_000_000.0))
    assert [p.line for p in got.problems] == [3, 4, 5]
    assert "'sixteen' is not a GPU count" in got.problems[0].reason
    assert "between" in got.problems[1].reason
    assert "column 2" in got.problems[2].reason


def test_a_header_without_tokens_per_second_is_refused_with_what_to_do():
    got = ms.parse_table_text("gpus,samples_per_s\n8,30\n")
    assert got.rows == () and "not tokens/s" in got.problems[0].reason
    got = ms.parse_table_text("nodes,value\n1,3\n")
    assert got.rows == () and "GPU counts" in got.problems[0].reason


def test_the_csv_names_its_units_and_reads_back():
    text = ms.table_csv(ISSUE_ROWS, "strong")
    lines = text.splitlines()
    assert lines[0] == "gpus,throughput_tokens_per_s,speedup_vs_base_x,efficiency_fraction,karp_flatt_serial_fraction"
    assert lines[1] == "1,10000.0,1.0,1.0,"
    assert float(lines[4].split(",")[4]) == pytest.approx(0.000758, rel=1e-3)
    assert ms.parse_table_text(text).rows == ISSUE_ROWS
    weak = ms.table_csv(ISSUE_ROWS, "weak").splitlines()[0]
    assert weak.endswith("gustafson_serial_fraction") and "scaled_speedup" in weak


@pytest.mark.parametrize(("text", "value"), [("85,144", 85_144.0), ("610k", 610e3), ("1.6M", 1.6e6),
                                             ("85k tokens/s", 85e3), ("12 tok/s", 12.0)])
def test_throughput_cells(text, value):
    assert ms.parse_throughput(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-5", "0", "1e99"])
def test_bad_throughput_cells_name_the_field(text):
    with pytest.raises(InputError) as info:
        ms.parse_throughput(text)
    assert info.value.parameter == "throughput"


@pytest.mark.parametrize("text", ["", "8.5", "0", "x", "1e12"])
def test_bad_gpu_cells_name_the_field(text):
    with pytest.raises(InputError) as info:
        ms.parse_gpus(text)
    assert info.value.parameter == "gpus"


def test_bad_tables_name_the_parameter():
    for bad, name in [(((0, 5.0),), "measured[0].gpus"), (((8, 0.0),), "measured[0].throughput"),
                      ("8: 5", "measured"), (((8, 5.0, 1),), "measured[0]")]:
        with pytest.raises(InputError) as info:
            ms.analyse_measured(bad)
        assert info.value.parameter == name
    with pytest.raises(InputError) as info:
        ms.analyse_measured(ISSUE_ROWS, "medium")
    assert info.value.parameter == "mode"
    with pytest.raises(InputError) as info:
        ms.karp_flatt_vs_base(100.0, 8, 100.0, 8)
    assert info.value.parameter == "gpus"


# -- MFU checks -----------------------------------------------------------------------------------


def test_mfu_bands_reuse_the_plan_rating():
    assert [ms.mfu_band(x) for x in (0.2, 0.35, 0.55, 0.58, 0.61, 1.0, 76.95)] == [
        "low", "typical", "typical", "very good", "excellent", "excellent", "impossible"]
    assert pl.mfu_rating(0.46) == pl.MFU_RATINGS[ms.mfu_band(0.46)]


def test_an_mfu_above_100_percent_says_what_to_check():
    per_token = 6 * 8e9
    peak = 989e12
    tps = 1.27e8  # a 1,024-GPU run's tokens/s typed against 8 GPUs
    mfu = per_token * tps / (8 * peak)
    text = ms.impossible_mfu_message(mfu, per_token, tps, 8, peak)
    assert text.startswith(f"MFU {ms.plain_percent(mfu)} is impossible")
    assert f"at least {math.ceil(per_token * tps / peak):,} GPUs" in text and "has 8" in text
    assert "whole job's tokens/s" in text and "precision" in text
    assert ms.impossible_mfu_message(0.99, per_token, tps, 8, peak) == ""


def _device(key, bf16_dense, factor=2.0, builtin=False):
    return Hardware(name=key.upper(), vendor="x", key=key, builtin=builtin,
                    compute=(ComputeRate("bf16", bf16_dense, "test", sparsity_factor=factor),),
                    memory=(MemoryLevel("HBM", 3e12, "test"),))


def test_a_dense_peak_that_is_a_sparse_figure_is_found():
    devices = presets.load_hardware()
    h100 = presets.hardware_by_key("h100-sxm")
    typed = _device("my-h100", 1979e12, factor=None)
    found = ms.sparse_peak_match(typed.peak_flops("bf16"), "bf16", [*devices, typed], own_key="my-h100")
    assert found is not None and found[0].key in ("h100-sxm", "h200-sxm")
    assert found[1] == pytest.approx(h100.peak_flops("bf16", sparse=True))
    text = ms.sparse_peak_message("MY-H100", "bf16", 1979e12, found[0].name, found[0].peak_flops("bf16"))
    assert "1,979 TFLOP/s" in text and "2:4 sparse peak" in text and "2x too low" in text


def test_real_dense_peaks_are_not_flagged():
    devices = presets.load_hardware()
    for hw in devices:
        for precision in hw.precisions:
            assert ms.sparse_peak_match(hw.peak_flops(precision), precision, devices, own_key=hw.key) is None, \
                (hw.key, precision)


def test_a_stale_throughput_message_names_both_devices():
    text = ms.stale_throughput_message(50_000.0, "NVIDIA H100 SXM", "NVIDIA B200", 0.168)
    assert text.startswith("50,000 tokens/s was measured on NVIDIA H100 SXM, not on NVIDIA B200")
    assert "MFU 16.8%" in text and text.endswith("NVIDIA H100 SXM's speed against NVIDIA B200's peak.")


# -- planned throughput and the scenario ------------------------------------------------------------


def test_the_planned_throughput_is_the_plan_s_prediction_for_the_scenario_s_hardware():
    catalog = presets.catalog.BUILTIN
    s = ScalingScenario(hardware="h100-sxm", n_gpus=8, n_params=DEFAULT_PLAN.n_params, seq_len=DEFAULT_PLAN.seq_len)
    assert ms.planned_tokens_per_s(s, DEFAULT_PLAN, catalog) == pytest.approx(pl.predict(DEFAULT_PLAN).tokens_per_s)
    b200 = ms.planned_tokens_per_s(s.with_changes(hardware="b200"), DEFAULT_PLAN, catalog)
    assert b200 == pytest.approx(pl.predict(DEFAULT_PLAN.with_changes(hardware="b200", intra_node=None)).tokens_per_s)
    assert b200 > 1.5 * ms.planned_tokens_per_s(s, DEFAULT_PLAN, catalog)
    with pytest.raises(InputError) as info:
        ms.planned_tokens_per_s(s.with_changes(hardware="no-such-gpu"), DEFAULT_PLAN, catalog)
    assert info.value.parameter == "hardware"


def test_a_scenario_remembers_where_its_throughput_was_measured():
    s = ScalingScenario()
    assert s.throughput_source == "measured" and s.measured_on == "h100-sxm" and not s.measured_elsewhere
    moved = s.with_changes(hardware="b200")
    assert moved.measured_on == "h100-sxm" and moved.measured_elsewhere
    planned = moved.with_changes(throughput_source="planned")
    assert planned.measured_on == "" and not planned.measured_elsewhere
    assert planned.with_changes(throughput_source="measured").measured_on == "b200"
    assert scenario_from_dict(moved.to_dict()) == moved
    with pytest.raises(InputError) as info:
        s.with_changes(throughput_source="guessed")
    assert info.value.parameter == "throughput_source"


def test_a_scenario_saved_before_the_throughput_source_opens_as_measured_on_its_hardware():
    old = {key: value for key, value in ScalingScenario(hardware="a100-sxm-80gb").to_dict().items()
           if key not in ("throughput_source", "measured_on")}
    assert old["schema_version"] == 1
    s = scenario_from_dict(old)
    assert s.throughput_source == "measured" and s.measured_on == "a100-sxm-80gb"
    for _name, sample in presets.sample_scenarios():
        if isinstance(sample, ScalingScenario):
            assert sample.measured_on == sample.hardware and not sample.measured_elsewhere


# -- every public callable against bad values (the design's contract, as test_public_api walks) ------

H100 = presets.hardware_by_key("h100-sxm")
GOOD_CALLS = [
    (ms.analyse_measured, dict(measured=ISSUE_ROWS, mode="strong")),
    (ms.karp_flatt_vs_base, dict(throughput=76_930.0, gpus=8, base_throughput=10_000.0, base_gpus=1)),
    (ms.gustafson_fraction_vs_base, dict(throughput=76_930.0, gpus=8, base_throughput=10_000.0, base_gpus=1)),
    (ms.one_gpu_serial_fraction, dict(serial_fraction=0.0027, base_gpus=64)),
    (ms.fit_gustafson, dict(gpus=[1, 8, 64], throughputs=[100.0, 790.0, 6300.0])),
    (ms.fit_law, dict(gpus=[1, 8, 64], throughputs=[100.0, 790.0, 6300.0], mode="strong")),
    (ms.amdahl_ceiling, dict(serial_fraction=0.05)),
    (ms.plain_number, dict(value=1929.6, digits=3)),
    (ms.plain_percent, dict(fraction=0.0057, digits=2)),
    (ms.ceiling_label, dict(serial_fraction=0.05)),
    (ms.parse_gpus, dict(text="512")),
    (ms.parse_throughput, dict(text="610k")),
    (ms.parse_table_text, dict(text="gpus,throughput_tokens_per_s\n1,10000\n8,76930\n")),
    (ms.table_csv, dict(measured=ISSUE_ROWS, mode="weak")),
    (ms.mfu_band, dict(mfu=0.46)),
    (ms.impossible_mfu_message, dict(mfu=33.8, flops_per_token=6.09e10, tokens_per_s=1e7, n_gpus=8,
                                     peak_flops=2.25e15)),
    (ms.sparse_peak_match, dict(peak_flops=1979e12, precision="bf16", devices=[H100], own_key="mine",
                                tolerance=0.015)),
    (ms.sparse_peak_message, dict(device_name="Mine", precision="bf16", peak_flops=1979e12,
                                  match_name="NVIDIA H100 SXM", match_dense_flops=989e12)),
    (ms.stale_throughput_message, dict(tokens_per_s=5e4, measured_on="H100", now_on="B200", mfu=0.2)),
    (ms.planned_tokens_per_s, dict(scenario=ScalingScenario(), plan=DEFAULT_PLAN, catalog=presets.catalog.BUILTIN)),
]


def test_every_public_callable_has_a_good_call():
    called = {func.__name__ for func, _ in GOOD_CALLS}
    public = {name for name in ms.__all__ if callable(getattr(ms, name)) and not isinstance(getattr(ms, name), type)}
    assert public == called


@pytest.mark.parametrize(("func", "good"), GOOD_CALLS, ids=[f.__name__ for f, _ in GOOD_CALLS])
def test_bad_values_raise_an_error_naming_the_parameter_or_give_a_finite_result(func, good):
    from bad_input import BAD_VALUES, bad_value_problem, call, non_finite

    assert non_finite(call(func, good)) is None
    # a cell's parser names the field its text is for, as the other text parsers do
    named = {ms.parse_gpus: "gpus", ms.parse_throughput: "throughput"}.get(func)
    problems = [f"{param}={bad!r:.30}: {problem}" for param in good for bad in BAD_VALUES
                if (problem := bad_value_problem(func, good, param, bad, named))]
    assert not problems, "\n".join(problems)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("0123456789.,;:\t\n -+ekMBx#\"gpustokenr_/")), max_size=200))
def test_any_pasted_text_gives_valid_rows_or_names_its_problems(text):
    got = ms.parse_table_text(text)
    for gpus, rate in got.rows:
        assert isinstance(gpus, int) and 1 <= gpus and math.isfinite(rate) and rate > 0
    assert all(p.line >= 1 and p.reason for p in got.problems)
    if got.rows:
        ms.analyse_measured(got.rows)  # anything read is a table the panel can show
