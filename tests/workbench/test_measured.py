"""workbench.measured: training logs and energy logs against the run plan, checked against the
logs' own numbers and the model's formulas (not against the module's own arithmetic)."""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from pathlib import Path

import pytest

import presets
from workbench import carbon, energy, measured, mfu, trainlog
from workbench.plan import RunPlan, predict
from workbench.scenarios import scenario_from_json
from workbench.workspace import DEFAULT_PLAN, PlanView, follow_plan

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LOG_A = FIXTURES / "trainlogs" / "plan_vs_actual_a.log"
LOG_B = FIXTURES / "trainlogs" / "plan_vs_actual_b_torchtitan.log"
CODECARBON = FIXTURES / "energy" / "plan_vs_actual_codecarbon.csv"
PREDICTION = predict(DEFAULT_PLAN)


@pytest.fixture(scope="module")
def run_a() -> measured.RunLog:
    return measured.run_from_text(LOG_A.name, LOG_A.read_text())


@pytest.fixture(scope="module")
def run_b() -> measured.RunLog:
    return measured.run_from_text(LOG_B.name, LOG_B.read_text())


@pytest.fixture(scope="module")
def codecarbon() -> measured.EnergyRecord:
    return measured.energy_from_text(CODECARBON.name, CODECARBON.read_text())


# -- reading -----------------------------------------------------------------------------------------
def test_a_log_keeps_its_steps_and_the_lines_it_could_not_read(run_a):
    parsed = trainlog.parse_training_log(LOG_A.read_text())
    assert run_a.framework == "workbench" and len(run_a) == 40 == len(parsed.steps)
    assert run_a.steps == tuple(s.step for s in parsed.steps)
    assert run_a.step_time_s == tuple(s.step_time_s for s in parsed.steps)
    assert run_a.data_wait[8] == pytest.approx(1.6) and run_a.data_wait[0] is False
    # the NaN loss of the second "step 29" line is unreadable, the banner lines are skipped
    lines = {line: reason for line, reason, _text in run_a.notes}
    assert lines[34].startswith("step not read") and "nan" in lines[34]
    assert {1, 2, 3, 24} <= set(lines)
    assert run_a.lines_skipped == 4 and run_a.lines_unreadable == 1


def test_other_ranks_copies_are_listed_and_dropped(run_b):
    assert run_b.framework == "torchtitan" and len(run_b) == 30
    assert run_b.duplicates_dropped == 30
    assert all("duplicate" in reason for _line, reason, _t in run_b.notes)
    assert run_b.tokens_per_s_per_gpu[0] == 1900 and run_b.tokens_per_s[0] is None


def test_read_measurement_tells_a_log_from_an_energy_file(codecarbon):
    assert isinstance(measured.read_measurement("x.csv", CODECARBON.read_text()), measured.EnergyRecord)
    assert isinstance(measured.read_measurement("x.txt", LOG_A.read_text()), measured.RunLog)
    assert isinstance(measured.read_measurement("samples.txt", (FIXTURES / "energy" / "power_epoch.txt").read_text()),
                      measured.EnergyRecord)
    with pytest.raises(measured.MeasurementError) as caught:
        measured.read_measurement("notes.txt", "shopping list\nmilk\n")
    assert "not a training log" in str(caught.value) and "not an energy log" in str(caught.value)


def test_files_past_the_limit_are_refused_with_what_to_do():
    text = "x" * (measured.MAX_LOG_BYTES + 1)
    with pytest.raises(measured.MeasurementError, match="20 MB") as caught:
        measured.run_from_text("huge.log", text)
    assert "grep" in str(caught.value)


# -- a log against the plan --------------------------------------------------------------------------
def test_steady_state_medians_skip_the_first_tenth(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION)
    parsed = trainlog.parse_training_log(LOG_A.read_text()).steps
    steady = [s for s in parsed if s.step > 4]  # 10% of 40 steps
    assert a.steady_count == 36 and a.first_steady_step == 5
    assert "10%" in a.steady_rule and "4 of 40" in a.steady_rule
    assert a.median_step_time_s == pytest.approx(statistics.median(s.step_time_s for s in steady))
    assert a.median_tokens_per_s == pytest.approx(statistics.median(s.tokens_per_s for s in steady))
    assert a.median_tokens_per_s_per_gpu == pytest.approx(a.median_tokens_per_s / 8)  # the plan's 8 GPUs
    assert a.median_mfu_logged == pytest.approx(statistics.median(s.mfu for s in steady))


def test_mfu_is_recomputed_with_the_plans_model_and_dense_peak(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION)
    p = DEFAULT_PLAN
    for tokens, recomputed in zip(a.tokens_per_s, a.mfu_recomputed, strict=True):
        expected = mfu.mfu(p.n_params, tokens, 8, 989e12, p.n_layers, p.d_model, p.seq_len)
        assert recomputed == pytest.approx(expected)
    # the seed framework counts 6N only: the ratio says so
    six_n = 6 * p.n_params / (6 * p.n_params + 12 * p.n_layers * p.d_model * p.seq_len)
    assert a.median_mfu_logged / a.median_mfu_recomputed == pytest.approx(six_n, rel=0.01)
    assert "6N FLOPs per token only" in a.mfu_note


def test_a_log_that_counts_like_the_plan_gets_no_note(run_b):
    a = measured.analyse_run(run_b, DEFAULT_PLAN, PREDICTION)
    assert a.median_mfu_logged == pytest.approx(a.median_mfu_recomputed, rel=0.01)
    assert a.mfu_note == ""
    assert a.median_step_time_s is None and a.gap is None  # torchtitan prints no step time
    assert a.data_wait_basis == "the log does not report data waits" and a.data_wait_s is None


def test_hfu_and_fixed_peaks_are_named():
    plan = DEFAULT_PLAN.with_changes(recompute="full")
    note = measured.explain_mfu_difference(0.4 * 4 / 3, 0.4, plan, 989e12)
    assert "HFU" in note
    note = measured.explain_mfu_difference(0.4 * 989 / 312, 0.4, DEFAULT_PLAN, 989e12)
    assert "312 TFLOP/s" in note and "nanoGPT" in note
    assert measured.explain_mfu_difference(0.41, 0.40, DEFAULT_PLAN, 989e12) == ""  # within 5%
    note = measured.explain_mfu_difference(0.9, 0.4, DEFAULT_PLAN, 989e12)
    assert "another way" in note and "higher" in note


def test_data_waits_are_marked_and_set_against_the_data_term(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION)
    assert a.waited_steps == (9, 17, 26, 33)
    printed = (1.6 + 0.9 + 2.1 + 1.2) / 36  # the waits the log prints, over the 36 steady steps
    assert a.data_wait_s == pytest.approx(printed)
    assert a.gap.total_s == pytest.approx(a.median_step_time_s - PREDICTION.step_time_s)
    assert a.gap.data_loading_s == pytest.approx(printed - PREDICTION.breakdown["data_loading"])
    assert a.gap.rest_s == pytest.approx(a.gap.total_s - a.gap.data_loading_s)


def test_flagged_waits_count_the_time_above_an_unflagged_step():
    text = "\n".join(
        f"step {i} | loss 3.0 | {t} s/step | {524288 / t / 1e3:.1f}k tok/s | MFU 40.0%" + (" | dataloader wait" if w else "")
        for i, (t, w) in enumerate([(9.0, False), (7.0, False), (7.0, False), (8.0, True), (7.0, False),
                                    (7.0, False), (9.0, True), (7.0, False), (7.0, False), (7.0, False)], start=1))
    a = measured.analyse_run(measured.run_from_text("flags.log", text), DEFAULT_PLAN, PREDICTION)
    assert a.waited_steps == (4, 7)
    assert a.data_wait_s == pytest.approx((1.0 + 2.0) / 9)
    assert "flagged" in a.data_wait_basis


def test_a_set_warm_up_skips_the_steps_up_to_it(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION, warmup_steps=10)
    assert a.first_steady_step == 11 and a.steady_count == 30 and "up to 10" in a.steady_rule
    none = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION, warmup_steps=1000)
    assert none.steady_count == 0 and none.median_step_time_s is None
    assert any("warm-up" in n for n in none.notes)


def test_steps_of_another_batch_are_not_compared_by_time():
    text = (FIXTURES / "trainlogs" / "megatron_core.log").read_text()
    a = measured.analyse_run(measured.run_from_text("megatron.log", text), DEFAULT_PLAN, PREDICTION)
    assert not a.comparable_steps and a.gap is None
    assert any("global batch (256)" in n for n in a.notes)
    assert a.mfu_logged_source == "flops"  # Megatron prints TFLOP/s per GPU
    assert a.median_mfu_recomputed > 1 and "above 100%" in a.mfu_note  # not the plan's model


def test_training_time_at_the_measured_rate(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION)
    assert a.train_time_s == pytest.approx(DEFAULT_PLAN.train_tokens / (a.median_tokens_per_s_per_gpu * 8))


# -- energy -------------------------------------------------------------------------------------------
def test_codecarbon_against_the_plan_for_the_same_time_and_gpus(codecarbon, run_a):
    rate = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION).median_tokens_per_s_per_gpu
    e = measured.analyse_energy(codecarbon, DEFAULT_PLAN, PREDICTION, tokens_per_s_per_gpu=rate)
    kwh = 0.015 + 0.426667 + 0.003938  # the file's energy_consumed, its parts added
    assert e.measured_energy_j == pytest.approx(kwh * 3.6e6, rel=1e-5)
    assert (e.basis, e.n_gpus, e.duration_s) == ("node", 8, 300.0)
    assert e.planned_power_w == PREDICTION.gpu_power_w + PREDICTION.host_power_w_per_gpu
    assert e.planned_energy_j == pytest.approx(8 * e.planned_power_w * 300.0)
    assert e.measured_power_w == pytest.approx(kwh * 3.6e6 / 300 / 8, rel=1e-5)
    assert e.measured_gpu_power_w == pytest.approx(640.0, rel=1e-5)  # CodeCarbon's GPU part
    assert e.measured_tokens_per_j == pytest.approx(rate / e.measured_power_w)
    expected = carbon.emissions_kg(carbon.facility_energy_kwh(e.measured_energy_j / 3.6e6, 1.2), 475.0)
    assert e.measured_co2e_kg == pytest.approx(expected)
    assert e.reported_co2e_kg == pytest.approx(0.168884) and "virginia" in e.reported_basis
    assert any("CodeCarbon measures" in n for n in e.notes)


def test_nvidia_smi_is_compared_gpu_board_to_gpu_board():
    record = measured.energy_from_text("smi.csv", (FIXTURES / "energy" / "nvidia_smi_units.csv").read_text())
    e = measured.analyse_energy(record, DEFAULT_PLAN, PREDICTION)
    parsed = energy.parse_energy_log((FIXTURES / "energy" / "nvidia_smi_units.csv").read_text())
    assert e.basis == "gpu" and e.n_gpus == len(parsed.gpus)
    assert e.planned_power_w == PREDICTION.gpu_power_w
    assert e.measured_power_w == pytest.approx(parsed.avg_power_w / len(parsed.gpus))
    assert e.measured_tokens_per_j is None and any("throughput" in n for n in e.notes)


# -- the scenario ----------------------------------------------------------------------------------------
def test_the_scenario_round_trips_with_its_logs(run_a, run_b, codecarbon):
    s = measured.MeasuredScenario(runs=(run_a, run_b), energy=codecarbon, warmup_steps=3)
    again = scenario_from_json(s.to_json())
    assert again == s and hash(again) == hash(s)
    assert again.runs[0].data_wait == run_a.data_wait
    assert len(s.to_json()) < 40_000  # parsed series, not the logs' text


def test_same_file_names_from_two_clusters_are_told_apart(run_a):
    s = measured.MeasuredScenario().with_run(run_a).with_run(run_a)
    assert [r.name for r in s.runs] == ["plan_vs_actual_a.log", "plan_vs_actual_a.log (2)"]
    with pytest.raises(ValueError, match="each log once"):
        measured.MeasuredScenario(runs=(run_a, run_a))
    full = measured.MeasuredScenario()
    for _ in range(measured.MAX_RUNS):
        full = full.with_run(run_a)
    with pytest.raises(ValueError, match="remove one first"):
        full.with_run(run_a)


def test_saved_data_that_does_not_fit_is_refused(run_a):
    data = json.loads(measured.MeasuredScenario(runs=(run_a,)).to_json())
    bad = json.loads(json.dumps(data))
    bad["runs"][0]["columns"]["step_time_s"] = [1.0]
    with pytest.raises(ValueError, match=r"runs\[0\]\.step_time_s"):
        scenario_from_json(json.dumps(bad))
    bad = json.loads(json.dumps(data))
    bad["runs"][0]["columns"]["step"] = [3, 2] + bad["runs"][0]["columns"]["step"][2:]
    with pytest.raises(ValueError, match="increasing"):
        scenario_from_json(json.dumps(bad))
    bad = json.loads(json.dumps(data))
    bad["runs"][0]["notes"] = [[0, "x", "y"]]
    with pytest.raises(ValueError, match="notes"):
        scenario_from_json(json.dumps(bad))
    bad = json.loads(json.dumps(data))
    bad["plan"]["n_gpus"] = 7  # not a layout the plan allows
    with pytest.raises(ValueError, match="plan"):
        scenario_from_json(json.dumps(bad))


def test_a_scenario_too_large_for_the_project_is_refused(run_a, monkeypatch):
    s = measured.MeasuredScenario(runs=(run_a,))
    assert measured.check_size(s) == len(s.to_json())
    monkeypatch.setattr(measured, "MAX_SCENARIO_CHARS", 1000)
    with pytest.raises(measured.MeasurementError, match="remove a log"):
        measured.check_size(s)


def test_the_logs_follow_the_plan(run_a):
    s = measured.MeasuredScenario(runs=(run_a,))
    other = DEFAULT_PLAN.with_changes(n_gpus=16, global_batch=128)
    followed = follow_plan("measured", s, PlanView(plan=other))
    assert followed.plan == other and followed.runs == s.runs
    assert follow_plan("measured", followed, PlanView(plan=other)) is followed


def test_the_sample_is_the_fixtures_parsed(run_a, run_b, codecarbon):
    samples = {name: s for name, s in presets.sample_scenarios() if s.kind == "measured"}
    assert len(samples) == 1
    sample = next(iter(samples.values()))
    assert sample.runs == (run_a, run_b) and sample.energy == codecarbon
    assert sample.plan == DEFAULT_PLAN


def test_csv_rows_per_step(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, PREDICTION)
    rows = measured.series_rows(run_a, a)
    assert len(rows) == 40 and len(rows[0]) == len(measured.SERIES_HEADERS)
    assert all("(" in h for h in measured.SERIES_HEADERS[1:])  # every numeric column names its unit
    ninth = rows[8]
    assert ninth[0] == LOG_A.name and ninth[1] == 9 and ninth[8] == 1 and ninth[7] == pytest.approx(1.6)
    assert rows[0][9] == 0 and rows[4][9] == 1  # warm-up, then steady


def test_an_unpredictable_plan_still_compares_what_it_can(run_a):
    a = measured.analyse_run(run_a, DEFAULT_PLAN, None, peak_flops=989e12)
    assert a.gap is None and a.median_mfu_recomputed is not None
    bare = measured.analyse_run(run_a, DEFAULT_PLAN)
    assert bare.median_mfu_recomputed is None and bare.median_tokens_per_s is not None


def test_dataclass_values_are_rounded_not_invented(run_a):
    for name in measured.STEP_FIELDS:
        for value in getattr(run_a, name):
            assert value is None or isinstance(value, (bool, int, float))
            if isinstance(value, float):
                assert math.isfinite(value) and float(f"{value:.7g}") == value
    assert dataclasses.replace(run_a) == run_a


def test_a_plan_of_another_shape_is_compared_with_its_own_model(run_a):
    plan = RunPlan(n_params=70.6e9, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ffn=28672,
                   vocab_size=128256, seq_len=8192, hardware="h100-sxm", n_gpus=64, tp=8, global_batch=64)
    a = measured.analyse_run(run_a, plan, predict(plan))
    per_token = mfu.flops_per_token(plan.n_params, plan.n_layers, plan.d_model, plan.seq_len)
    assert a.median_mfu_recomputed == pytest.approx(per_token * a.median_tokens_per_s / (64 * 989e12), rel=1e-9)
