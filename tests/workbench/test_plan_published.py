"""The run plan against the published runs of ../shared/references/published-runs.json."""

from __future__ import annotations

import math

import pytest

from workbench import plan_check
from workbench.plan import predict

RESULT_FIELDS = (
    "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "hfu", "step_time_s",
    "derived_tokens_per_s", "derived_step_time_s", "derived_mfu_6n_attn", "tflops_kind",
    "mfu_flop_formula", "mfu_peak_flops", "notes", "source",
)


@pytest.fixture
def runs(published_runs_path):
    return plan_check.load_runs(published_runs_path)


def test_the_model_matches_the_published_runs(runs):
    rows = plan_check.compare(runs)
    assert len(rows) >= 40, "every run with a complete configuration and a published MFU"
    within, mae = plan_check.summary(rows)
    assert within >= 0.75, plan_check.format_table(rows)
    assert mae <= 4.0, plan_check.format_table(rows)


def test_every_complete_configuration_gives_a_finite_prediction(runs):
    complete = [r for r in runs if r["config_complete"]]
    assert len(complete) > len(plan_check.checkable(runs))  # some publish no MFU (nanotron)
    for run in complete:
        p = predict(plan_check.plan_from_published(run))
        assert math.isfinite(p.step_time_s) and 0 < p.mfu < 1, run["run_id"]


def test_a_plan_reads_the_configuration_never_the_result(runs):
    for run in plan_check.checkable(runs):
        blind = {k: (None if k in RESULT_FIELDS else val) for k, val in run.items()}
        assert plan_check.plan_from_published(blind) == plan_check.plan_from_published(run)


def test_runs_that_state_their_whole_setup_fit_in_memory(runs):
    stated = [r for r in plan_check.checkable(runs)
              if r["source_family"].startswith(("Megatron-LM", "MosaicML"))]
    assert len(stated) >= 20
    for run in stated:
        p = predict(plan_check.plan_from_published(run))
        assert p.fits_memory, (run["run_id"], p.memory.total / 2**30)


def test_the_comparison_prints_as_a_table(published_runs_path, capsys):
    assert plan_check.main([str(published_runs_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["run", "published", "predicted", "error", "largest", "drag"]
    assert any(line.startswith("mosaic-h100-amp_bf16-7b-s2048-g8-mb6 ") for line in out)
    assert "within 5 points, mean absolute error" in out[-1]


def test_the_comparison_command_says_when_the_file_is_missing(tmp_path, capsys):
    assert plan_check.main([str(tmp_path / "nope.json")]) == 2
    assert "not found" in capsys.readouterr().err
