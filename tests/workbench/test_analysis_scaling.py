"""The Scaling and MFU panel's analysis (``workbench.analyses.scaling``): its numbers are the
ones the workbench functions give directly, for the default scenario, for one that follows the
plan and for one without a plan; what cannot be worked out is held as text, not raised."""

from __future__ import annotations

import numpy as np
import pytest

from presets.catalog import BUILTIN
from workbench import measured_scaling as ms
from workbench import scaling as sc
from workbench import scaling_analysis as sa
from workbench import workspace as ws
from workbench.analyses import scaling as analysis
from workbench.context import RunContext
from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.plan import predict
from workbench.scenarios import CollectiveScenario, ScalingScenario

CATALOG = BUILTIN
ROWS = ((8, 1000.0), (16, 1900.0), (64, 6500.0), (256, 19000.0))


def _view(plan=ws.DEFAULT_PLAN) -> ws.PlanView:
    return ws.PlanView(plan=plan, hardware=CATALOG.hardware(plan.hardware), prediction=predict(plan, CATALOG))


def _peak(s: ScalingScenario) -> float:
    return CATALOG.hardware(s.hardware).peak_flops(s.precision, sparse=False)


class Listed:
    """A catalog that can also list its devices (the window's can): the built-in presets and ``extra``."""

    def __init__(self, *extra: Hardware):
        self.extra = {hw.key: hw for hw in extra}

    def hardware(self, key: str) -> Hardware:
        return self.extra[key] if key in self.extra else CATALOG.hardware(key)

    def interconnect(self, key: str):
        return CATALOG.interconnect(key)

    def items(self) -> list[Hardware]:
        import presets

        return [*presets.load_hardware(), *self.extra.values()]


def test_the_default_scenario_s_numbers_are_the_workbench_functions():
    s = ScalingScenario()
    a = analysis.analyse(s, None, CATALOG)
    tokens = RunContext().train_tokens  # no plan: the default context's run
    direct = sa.analyse_scaling(s, _peak(s), tokens)
    assert a.problem == "" and a.figures == direct
    assert a.peak_flops == _peak(s) == direct.peak_flops and a.train_tokens == tokens
    assert (a.mfu, a.hfu, a.flops_per_token, a.predicted_mfu) == (direct.mfu, direct.hfu, direct.flops_per_token,
                                                                    direct.predicted_mfu)
    assert a.mfu_band == ms.mfu_band(direct.mfu) and a.mfu_rating.startswith(a.mfu_band)
    assert a.hardware_name == CATALOG.hardware("h100-sxm").name == a.measured_on_name
    assert a.plan_step is None  # no plan, no plan step
    # the chart: the law's sweep to 4 x the GPUs (at least 1,024), Amdahl's ceiling, the operating point
    n, speedup, _eff = sa.speedup_sweep(s.serial_fraction, 1024, s.mode)
    assert a.gpus_top == 1024
    assert a.curve_gpus.tolist() == n.tolist() and a.curve_speedup.tolist() == speedup.tolist()
    assert a.operating_speedup == float(sa.speedup_at(s.serial_fraction, s.n_gpus, s.mode))
    assert a.ceiling == ms.amdahl_ceiling(s.serial_fraction) == pytest.approx(50.0)
    assert a.ceiling_label == ms.ceiling_label(0.02) == "2% serial caps you at 50×"
    assert [(c.value, c.label, c.source) for c in a.ceilings] == [(1 / 0.02, ms.ceiling_label(0.02), "law")]
    # no measured rows: an empty table, no fit, nothing to draw for it
    assert a.measured == ms.analyse_measured((), s.mode) and a.measured_problem == ""
    assert a.fit_speedup is None and a.measured_gpus is None and a.one_gpu_serial_fraction is None
    assert (a.stale_message, a.impossible_message, a.sparse_message) == ("", "", "")


def test_the_csv_is_the_law_at_every_power_of_two_and_the_gpu_count():
    s = ScalingScenario(n_gpus=12, serial_fraction=0.05)
    a = analysis.analyse(s, None, CATALOG)
    assert a.csv_gpus == (1, 2, 4, 8, 12, 16, 32, 64, 128, 256, 512, 1024)
    n = np.array(a.csv_gpus, dtype=float)
    speedup = sa.speedup_at(0.05, n, "strong")
    assert a.csv_speedup == pytest.approx(speedup.tolist())
    assert a.csv_efficiency == pytest.approx(np.asarray(sc.scaling_efficiency(speedup, n, 1.0)).tolist())


def test_the_measured_table_and_its_fit_are_measured_scaling_s():
    s = ScalingScenario(measured=ROWS, serial_fraction=0.05)
    a = analysis.analyse(s, None, CATALOG)
    table = ms.analyse_measured(ROWS, "strong")
    assert a.measured == table
    fit = table.fit
    assert a.fit_speedup.tolist() == np.asarray(fit.speedup(a.curve_gpus), dtype=float).tolist()
    assert a.measured_gpus.tolist() == [8, 16, 64, 256]
    assert a.measured_speedup.tolist() == pytest.approx([x / fit.throughput_1 for _n, x in ROWS])
    largest = table.largest
    assert a.one_gpu_serial_fraction == ms.one_gpu_serial_fraction(largest.serial_fraction, 8)
    # the law's ceiling and the fit's, highest first (the fit's is not within 5% of the law's)
    expected = sorted([(20.0, ms.ceiling_label(0.05), "law"),
                       (fit.ceiling, f"fit: {ms.ceiling_label(fit.serial_fraction)}", "fit")], key=lambda c: -c[0])
    assert [(c.value, c.label, c.source) for c in a.ceilings] == expected
    assert a.measured_csv() == ms.table_csv(ROWS, "strong")
    with pytest.raises(ValueError):
        a.curve_speedup[0] = 2.0  # read-only: the cache hands the same arrays to every reader


def test_weak_scaling_has_no_ceiling_and_reads_the_rows_by_gustafson():
    s = ScalingScenario(measured=ROWS, mode="weak")
    a = analysis.analyse(s, None, CATALOG)
    assert a.measured == ms.analyse_measured(ROWS, "weak") and a.measured.fit.law == "Gustafson"
    assert a.ceiling is None and a.ceilings == () and a.one_gpu_serial_fraction is None
    assert a.ceiling_label == ms.ceiling_label(s.serial_fraction)  # the tooltip still says what 1/s would be
    assert a.operating_speedup == float(sc.gustafson_speedup(s.serial_fraction, s.n_gpus))


def test_a_scenario_that_follows_the_plan_gets_the_plan_s_tokens_and_step():
    view = _view()
    p = view.prediction
    s = ws.follow_plan("scaling", ScalingScenario(), view)
    assert s.tokens_per_s == p.tokens_per_s and s.throughput_source == "planned"
    a = analysis.analyse(s, view, CATALOG)
    assert a.train_tokens == ws.DEFAULT_PLAN.train_tokens
    assert a.figures == sa.analyse_scaling(s, _peak(s), ws.DEFAULT_PLAN.train_tokens)
    step = a.plan_step
    assert step.terms == tuple((term, t) for term, t in p.breakdown.items() if t > 0)
    assert (step.step_time_s, step.mfu) == (p.step_time_s, p.mfu)
    assert (step.global_batch, step.seq_len) == (ws.DEFAULT_PLAN.global_batch, ws.DEFAULT_PLAN.seq_len)
    assert a.measured_on_name == ""  # planned: measured nowhere
    # a plan that cannot be predicted has no step to show
    assert analysis.analyse(s, ws.PlanView(plan=ws.DEFAULT_PLAN, problem="no"), CATALOG).plan_step is None
    # and the workspace finds the same analysis by kind
    assert ws.analyse("scaling", s, view, CATALOG).figures == a.figures


def test_hardware_the_catalog_lacks_is_named_and_the_chart_still_drawn():
    s = ScalingScenario(hardware="my-cluster-gpu")
    a = analysis.analyse(s, None, CATALOG)
    assert a.figures is None and a.peak_flops is None and a.mfu is None
    assert "my-cluster-gpu" in a.problem and a.hardware_name == "my-cluster-gpu"
    assert a.mfu_band == a.mfu_rating == ""
    assert a.curve_speedup.tolist() == sa.speedup_sweep(0.02, 1024, "strong")[1].tolist()


def test_a_precision_the_device_lacks_is_named():
    a = analysis.analyse(ScalingScenario(hardware="tpu-v4", precision="fp8"), None, CATALOG)
    assert a.figures is None and "fp8" in a.problem.lower()


def test_the_warnings_are_the_measured_scaling_messages():
    impossible = ScalingScenario(tokens_per_s=10e6)  # a large run's tokens/s against 8 GPUs
    a = analysis.analyse(impossible, None, CATALOG)
    assert a.mfu > 1 and a.mfu_band == "impossible"
    assert a.impossible_message == ms.impossible_mfu_message(a.mfu, a.flops_per_token, 10e6, 8, a.peak_flops) != ""
    elsewhere = ScalingScenario(hardware="b200", measured_on="h100-sxm")
    b = analysis.analyse(elsewhere, None, CATALOG)
    assert b.measured_on_name == CATALOG.hardware("h100-sxm").name
    assert b.stale_message == ms.stale_throughput_message(5e4, CATALOG.hardware("h100-sxm").name,
                                                          CATALOG.hardware("b200").name, b.mfu) != ""


def test_a_dense_peak_that_is_another_device_s_sparse_one_is_flagged_where_the_catalog_lists_devices():
    typed = Hardware(name="My H100", vendor="NVIDIA", key="my-h100",
                     compute=(ComputeRate("bf16", 1979e12, "typed from the datasheet's first column"),),
                     memory=(MemoryLevel("HBM", 3.35e12, "datasheet", capacity=80e9),))
    s = ScalingScenario(hardware="my-h100")
    listed = Listed(typed)
    a = analysis.analyse(s, None, listed)
    h100 = CATALOG.hardware("h100-sxm")
    assert a.sparse_message == ms.sparse_peak_message("My H100", "bf16", 1979e12, h100.name, h100.peak_flops("bf16"))
    assert "2:4 sparse peak of NVIDIA H100 SXM" in a.sparse_message
    assert analysis.analyse(ScalingScenario(), None, listed).sparse_message == ""
    # a catalog that only looks keys up cannot be compared against: nothing said
    assert analysis.analyse(ScalingScenario(), None, CATALOG).sparse_message == ""


def test_a_measured_table_the_reader_refuses_is_named_and_the_rest_still_worked_out():
    rows = tuple((n, 1000.0 * n) for n in range(1, ms.MAX_ROWS + 2))  # one row more than it reads
    a = analysis.analyse(ScalingScenario(measured=rows), None, CATALOG)
    assert a.measured is None and a.measured_problem.startswith("Measured table: measured")
    assert a.figures is not None and a.fit_speedup is None and a.one_gpu_serial_fraction is None
    with pytest.raises(ValueError, match="measured"):
        a.measured_csv()


def test_a_scenario_of_another_kind_is_refused_naming_it():
    with pytest.raises(ValueError, match="scenario"):
        analysis.analyse(CollectiveScenario(), None, CATALOG)
    with pytest.raises(ValueError, match="catalog"):
        analysis.analyse(ScalingScenario(), None, object())
