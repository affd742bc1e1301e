"""The roofline panel's analysis (``workbench.analyses.roofline``), without Qt: its roofs,
placements, flags, axes and lines are what ``workbench.roofline`` gives directly, for the
scenario on its own and as it follows a plan; a device it cannot draw is named, not raised;
the placements of the same kernels are kept (one object) across analyses that change no roof."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import presets.catalog
from workbench import InputError
from workbench import roofline as rl
from workbench import workspace as ws
from workbench.analyses import roofline as ar
from workbench.kernels import Kernel, seed_examples
from workbench.plan import predict
from workbench.scenarios import CollectiveScenario, RooflineScenario

CATALOG = presets.catalog.BUILTIN


def _kernels(n: int = 60) -> tuple[Kernel, ...]:
    """Kernels on both sides of the ridge, every other one timed, some of those faster than
    any roof (flagged), some under theirs."""
    rng = np.random.default_rng(11)
    out = []
    for i in range(n):
        flops = float(10 ** rng.uniform(8, 13))
        moved = flops / float(10 ** rng.uniform(-1, 3.5))
        time_s = float(flops / 10 ** rng.uniform(12, 15.5)) if i % 2 == 0 else None
        out.append(Kernel(f"k{i}", flops, moved, time_s))
    return tuple(out)


def _check_against_workbench(a: ar.RooflineAnalysis, s: RooflineScenario) -> None:
    """Every number of ``a`` equals what workbench.roofline gives for ``s`` directly."""
    assert a.scenario is s
    assert [d.key for d in a.devices] == list(s.hardware)
    for i, d in enumerate(a.devices):
        hw = CATALOG.hardware(d.key)
        assert d.hardware == hw
        expected = rl.ceilings(hw, s.precision, s.sparse, extra_precisions=i == 0 and s.show_precision_ceilings,
                               include_l2=i == 0 and s.show_l2)
        assert d.roofs == expected and d.problem == ""
        assert d.compute is d.roofs[0] and d.memory is d.roofs[1]
        for line, roof in zip(a.lines[i], d.roofs, strict=True):
            x, y = roof.segment(a.extent.xmin, a.extent.xmax)
            assert line.roof is roof
            np.testing.assert_array_equal(line.x, x)
            np.testing.assert_array_equal(line.y, y)
    primary = a.primary
    if not s.kernels:
        assert a.placements is None and a.warnings is None and not len(a.above_roof)
        return
    placed = rl.place_many(s.kernels, primary.compute.peak_flops, primary.compute.mem_bw)
    for name in ("intensity", "ceiling", "achieved", "fraction_of_roof", "compute_bound", "measured"):
        np.testing.assert_array_equal(getattr(a.placements, name), getattr(placed, name), err_msg=name)
    assert a.placements.names == placed.names
    assert a.n_compute_bound == int(np.count_nonzero(placed.compute_bound))
    assert a.n_memory_bound == len(s.kernels) - a.n_compute_bound
    caches = [(m.name, m.bandwidth) for m in primary.hardware.cache_levels]
    texts = placed.roof_warnings(primary.compute.peak_flops, caches)
    above = placed.above_roof()
    assert list(np.flatnonzero(a.above_roof)) == list(np.flatnonzero(above))
    assert a.warnings.texts() == texts
    # one kernel's text, worked out for it alone, is the same words
    for row in np.flatnonzero(above)[:3]:
        assert ar.RoofWarnings(placed, primary.compute.peak_flops, caches).text(int(row)) == texts[row]


# -- the scenario's own numbers -------------------------------------------------------------------
@pytest.mark.parametrize("scenario", [
    RooflineScenario(),
    RooflineScenario(kernels=tuple(seed_examples())),
    RooflineScenario(hardware=("h100-pcie", "b200", "mi300x"), show_l2=True, show_precision_ceilings=True,
                     kernels=_kernels()),
    RooflineScenario(hardware=("a100-sxm-80gb",), precision="fp16", sparse=True, kernels=_kernels(20)),
], ids=["defaults", "seed kernels", "three devices, L2 and ceilings", "sparse fp16"])
def test_the_numbers_are_workbench_roofline_s(scenario):
    a = ar.analyse(scenario, None, CATALOG)
    _check_against_workbench(a, scenario)
    assert a.problems == ()


def test_a_scenario_following_the_plan_is_analysed_as_it_follows_it():
    plan = dataclasses.replace(ws.DEFAULT_PLAN, hardware="h100-pcie", precision="fp8")
    view = ws.PlanView(plan=plan, sparse=True, hardware=CATALOG.hardware("h100-pcie"),
                       prediction=predict(plan, CATALOG))
    saved = RooflineScenario(hardware=("b200", "h100-pcie"), show_l2=True, kernels=_kernels())
    followed = ws.follow_plan("roofline", saved, view)
    assert followed.hardware == ("h100-pcie", "b200") and followed.precision == "fp8" and followed.sparse
    a = ar.analyse(followed, view, CATALOG)
    _check_against_workbench(a, followed)
    assert a.primary.compute.sparse and a.primary.compute.peak_flops == CATALOG.hardware("h100-pcie").peak_flops(
        "fp8", True)
    # the plan adds nothing the followed scenario does not say: the same numbers without it
    alone = ar.analyse(followed, None, CATALOG)
    assert alone.extent == a.extent and alone.placements is a.placements


def test_the_cache_roofs_are_listed_with_their_level_and_drawn_on_to_the_ridge():
    s = RooflineScenario(hardware=("h100-pcie",), show_l2=True)
    a = ar.analyse(s, None, CATALOG)
    (level, roof), = a.primary.cache_roofs
    assert level == CATALOG.hardware("h100-pcie").cache_levels[0] and roof.kind == "l2"
    line = next(li for li in a.lines[0] if li.roof is roof)
    # its slope to its own ridge, then flat at the peak to the device-memory ridge
    assert list(line.drawn_x[:2]) == list(line.x) and line.drawn_x[-1] == pytest.approx(a.primary.compute.ridge)
    assert line.drawn_y[-1] == roof.peak_flops
    assert ar.analyse(s.with_changes(show_l2=False), None, CATALOG).primary.cache_roofs == ()


def test_the_axes_hold_every_roof_corner_dense_and_sparse_and_every_kernel():
    s = RooflineScenario(hardware=("h100-sxm", "b200"), kernels=_kernels())
    a = ar.analyse(s, None, CATALOG)
    e = a.extent
    for d in a.devices:
        for sparse in (False, True):
            peak = d.hardware.peak_flops("bf16", sparse)
            assert e.xmin < peak / d.hardware.mem_bw < e.xmax and peak < e.ymax
    p = a.placements
    assert e.xmin <= p.intensity.min() and p.intensity.max() < e.xmax
    assert e.ymin <= p.achieved.min()
    # the sparsity switch never moves the axes
    assert ar.analyse(s.with_changes(sparse=True), None, CATALOG).extent == e


def test_saved_scenarios_overlaid_widen_the_axes_to_their_roofs_and_kernels():
    main = ar.analyse(RooflineScenario(kernels=tuple(seed_examples())), None, CATALOG)
    slow = Kernel("slow", 1e6, 1e9, 1.0)  # 1 MFLOP/s at 0.001 FLOP/B: far under the main axes
    saved = ar.analyse(RooflineScenario(hardware=("v100-sxm2",), precision="fp16", kernels=(slow,)), None, CATALOG)
    assert ar.chart_extent(main) == main.extent
    wide = ar.chart_extent(main, [saved])
    assert wide.xmin <= 1e-3 < main.extent.xmin and wide.ymin <= 1e6 < main.extent.ymin
    lines = main.lines_within(wide)
    roof = main.primary.compute
    np.testing.assert_array_equal(lines[0][0].x, roof.segment(wide.xmin, wide.xmax)[0])
    assert main.lines_within(main.extent) is main.lines
    # the other way round too: the panel's own slow kernel stays in view under a saved one's
    # faster kernels (the lowest point of all of them sets the floor, not the last scenario's)
    own_slow = ar.analyse(RooflineScenario(kernels=(slow,)), None, CATALOG)
    fast = ar.analyse(RooflineScenario(kernels=tuple(seed_examples())), None, CATALOG)
    assert ar.chart_extent(own_slow, [fast]).ymin <= 1e6


def test_the_readout_is_what_each_device_attains():
    s = RooflineScenario(hardware=("h100-pcie", "b200"), show_l2=True)
    a = ar.analyse(s, None, CATALOG)
    for ai in (0.5, 300.0, 5000.0):
        readout = a.readout(ai)
        assert [r.device for r in readout] == list(a.devices)
        for r in readout:
            c = r.device.compute
            assert r.attainable == rl.attainable(ai, c.peak_flops, c.mem_bw)
            assert r.compute_bound == (rl.bound(ai, c.peak_flops, c.mem_bw) == "compute")
        (roof, cached), = readout[0].cached
        assert cached == rl.attainable(ai, roof.peak_flops, roof.mem_bw)
        assert readout[1].cached == ()  # cache roofs are the primary's only


# -- what it cannot draw --------------------------------------------------------------------------
def test_a_device_not_in_the_catalog_or_without_the_precision_is_named_and_the_rest_drawn():
    s = RooflineScenario(hardware=("h100-sxm", "no-such-gpu", "v100-sxm2"), kernels=tuple(seed_examples()))
    a = ar.analyse(s, None, CATALOG)
    assert a.problems == ("no preset 'no-such-gpu' in this project", "NVIDIA V100 SXM2 has no BF16 rate")
    assert a.devices[1].hardware is None and a.devices[1].roofs is None and a.lines[1] == ()
    assert a.devices[2].hardware is not None and a.devices[2].roofs is None
    assert a.placements is not None and len(a.placements) == len(s.kernels)  # the primary's kernels stay


def test_a_primary_without_roofs_places_no_kernel():
    s = RooflineScenario(hardware=("tpu-v4", "h100-sxm"), precision="fp8", kernels=tuple(seed_examples()))
    a = ar.analyse(s, None, CATALOG)
    assert a.primary.problem == f"{CATALOG.hardware('tpu-v4').name} has no FP8 rate"
    assert a.problems == (a.primary.problem,)
    assert a.placements is None and a.warnings is None and a.n_compute_bound == a.n_memory_bound == 0
    assert a.devices[1].roofs is not None  # the other device is drawn


def test_a_scenario_of_another_kind_is_refused_naming_the_scenario():
    with pytest.raises(InputError) as err:
        ws.analyse("roofline", CollectiveScenario(), None, CATALOG)
    assert err.value.parameter == "scenario"


# -- kept placements ------------------------------------------------------------------------------
def test_a_display_option_keeps_the_placements_and_flags_a_new_roof_places_them_again():
    s = RooflineScenario(hardware=("h100-pcie",), kernels=_kernels(200))
    first = ar.analyse(s, None, CATALOG)
    assert first.above_roof.any()
    for change in ({"show_l2": True}, {"show_precision_ceilings": True}, {"hardware": ("h100-pcie", "b200")}):
        again = ar.analyse(s.with_changes(**change), None, CATALOG)
        assert again.placements is first.placements, change
        assert again.above_roof is first.above_roof and again.warnings is first.warnings, change
    # equal kernels (a list read again) are the same kernels
    copy = ar.analyse(s.with_changes(kernels=tuple(dataclasses.replace(k) for k in s.kernels)), None, CATALOG)
    assert copy.placements is first.placements
    sparse = ar.analyse(s.with_changes(sparse=True), None, CATALOG)
    assert sparse.placements is not first.placements and sparse.warnings is not first.warnings
    assert sparse.placements.intensity is first.placements.intensity  # the kernels' own numbers, kept
    _check_against_workbench(sparse, sparse.scenario)
    # back to the dense roof: the dense placements again
    assert ar.analyse(s, None, CATALOG).placements is first.placements
