"""The workspace document without Qt: saving, migrating, editing the plan, panels following it."""

from __future__ import annotations

import json

import pytest

import presets
from workbench import InputError
from workbench.context import RunContext
from workbench.plan import predict
from workbench.scenarios import (
    AllReduceScenario,
    CollectiveScenario,
    PowerScenario,
    RooflineScenario,
    ScalingScenario,
)
from workbench.workspace import (
    DEFAULT_PLAN,
    FOLLOWERS,
    PlanView,
    Workspace,
    context_of,
    differs_from_plan,
    edit_plan,
    fit_gpus,
    follow_plan,
    follows_alike,
    precision_fallback,
)

KINDS = ("run_plan", "roofline", "collective", "allreduce", "scaling", "power")


def lookup(key):
    try:
        return presets.hardware_by_key(key)
    except KeyError:
        return None


def view_of(plan, sparse=False):
    p = predict(plan)
    return PlanView(plan=plan, sparse=sparse, hardware=lookup(plan.hardware), prediction=p,
                    has_hardware=lambda key: lookup(key) is not None)


def test_the_default_plan_fits_and_predicts():
    p = predict(DEFAULT_PLAN)
    assert p.fits_memory and 0.3 < p.mfu < 0.7


def test_a_workspace_round_trips():
    ws = Workspace(plan=DEFAULT_PLAN.with_changes(n_gpus=16, global_batch=128), sparse=True,
                   scenarios={"power": PowerScenario(pue=1.3)}, overrides=frozenset({"power"}), active="power")
    data = json.loads(json.dumps(ws.to_dict()))
    back, problems = Workspace.from_dict(data)
    assert back == ws and problems == []


def test_a_version_1_workspace_migrates_its_context_into_the_plan():
    old = {
        "version": 1,
        "context": {"hardware": "a100-sxm-80gb", "n_gpus": 64, "precision": "bf16", "sparse": False,
                    "interconnect": "nic-200g", "model_params": 70e9, "train_tokens": 2e12},
        "panels": {"scaling": ScalingScenario(n_gpus=64).to_dict(), "bogus": {"kind": "x"}},
        "overrides": {"power": True, "roofline": False},
        "active": "scaling",
    }
    ws, problems = Workspace.from_dict(old, kinds=KINDS)
    plan = ws.plan
    assert (plan.hardware, plan.n_gpus, plan.train_tokens, plan.n_params) == ("a100-sxm-80gb", 64, 2e12, 70e9)
    assert plan.inter_node == "nic-200g" and plan.d_model > DEFAULT_PLAN.d_model
    assert plan.global_batch == 64 * DEFAULT_PLAN.global_batch // 8  # same batch per replica
    assert ws.overrides == {"power"} and ws.active == "scaling" and set(ws.scenarios) == {"scaling"}
    assert any("global batch" in p for p in problems)


def test_a_newer_workspace_is_refused_and_a_bad_panel_is_named():
    with pytest.raises(InputError, match="newer version"):
        Workspace.from_dict({"version": 99})
    data = Workspace().to_dict()
    data["panels"] = {"power": {"kind": "power", "schema_version": 2, "pue": -1}}
    ws, problems = Workspace.from_dict(data)
    assert "power" not in ws.scenarios and problems and problems[0].startswith("power: pue")
    with pytest.raises(InputError):
        Workspace.from_dict(["not", "a", "workspace"])


# -- editing the plan -------------------------------------------------------------------------
def test_one_precision_fallback_for_a_device_without_the_chosen_one():
    a100 = presets.hardware_by_key("a100-sxm-80gb")
    assert precision_fallback(a100, "fp8") == "bf16"
    tpu = presets.hardware_by_key("tpu-v4")
    assert precision_fallback(tpu, "fp16") == "bf16"
    plan = edit_plan(DEFAULT_PLAN.with_changes(precision="fp8"), lookup, hardware="a100-sxm-80gb")
    assert plan.precision == "bf16"
    with pytest.raises(InputError, match="no FP8 rate; it has"):
        edit_plan(DEFAULT_PLAN, lookup, hardware="a100-sxm-80gb", precision="fp8")


def test_a_gpu_count_edit_keeps_each_replica_s_batch_or_says_what_would_work():
    plan = edit_plan(DEFAULT_PLAN, lookup, n_gpus=512)
    assert plan.n_gpus == 512 and plan.global_batch == 64 * 512 // 8
    tp8 = DEFAULT_PLAN.with_changes(tp=8)
    with pytest.raises(InputError, match="use 96 or 104") as info:
        fit_gpus(tp8, 100)
    assert info.value.parameter == "n_gpus"


def test_a_model_size_reshapes_the_model_and_keeps_the_count():
    plan = edit_plan(DEFAULT_PLAN, lookup, model_params=70e9)
    assert plan.n_params == 70e9 and plan.n_layers > 32 and plan.d_model % plan.head_dim == 0
    assert predict(plan).mfu > 0


# -- following the plan -----------------------------------------------------------------------
def test_every_kind_has_a_follower():
    # the built-in panels' kinds, plus those a module registers (workbench.measured's)
    from workbench.scenarios import SCENARIO_TYPES

    assert set(KINDS) <= set(FOLLOWERS) <= set(SCENARIO_TYPES)


def test_the_roofline_follows_device_precision_and_sparsity():
    plan = DEFAULT_PLAN.with_changes(hardware="a100-sxm-80gb")
    roof = RooflineScenario(hardware=("h100-sxm", "a100-sxm-80gb"), precision="fp8")
    followed = follow_plan("roofline", roof, view_of(plan, sparse=True))
    assert followed.hardware == ("a100-sxm-80gb", "h100-sxm")  # swapped, comparison kept
    assert followed.precision == "bf16" and followed.sparse is True


def test_the_collective_animator_clamps_the_plan_s_gpus():
    plan = edit_plan(DEFAULT_PLAN, lookup, n_gpus=1024)
    followed = follow_plan("collective", CollectiveScenario(root=3), view_of(plan))
    assert followed.n_ranks == 64 and followed.root == 3


def test_the_allreduce_panel_shows_the_plan_s_gradient_sync():
    plan = edit_plan(DEFAULT_PLAN.with_changes(zero=1), lookup, n_gpus=64)
    view = view_of(plan)
    followed = follow_plan("allreduce", AllReduceScenario(), view)
    assert followed.n_ranks == plan.dp == 64
    assert followed.size_bytes == pytest.approx(plan.n_params * 4)
    assert followed.interconnect == "nic-400g"
    # the ring across 8 nodes runs at min(NVLink, 8 NICs x 48 GB/s): what the plan's term uses
    assert followed.link_bw == pytest.approx(min(360e9, 8 * 48e9))
    from workbench import comms
    ring = comms.ring_time("reduce_scatter", followed.size_bytes, followed.n_ranks, followed.link_bw, followed.alpha)
    assert ring > 0


def test_scaling_and_power_take_the_plan_s_throughput_so_the_days_agree():
    from workbench import carbon
    from workbench.scaling_analysis import analyse_scaling

    plan = edit_plan(DEFAULT_PLAN, lookup, n_gpus=64).with_changes(power_cap_w=600.0, gpu_hour_price=2.5)
    view = view_of(plan)
    p = view.prediction
    scaling = follow_plan("scaling", ScalingScenario(), view)
    analysis = analyse_scaling(scaling, p.peak_flops, plan.train_tokens)
    assert analysis.training_time_s == pytest.approx(p.train_time_s)
    # the scaling panel plans uncapped: its throughput is the plan's at the plan's cap
    assert scaling.tokens_per_s == pytest.approx(p.tokens_per_s)
    power = follow_plan("power", PowerScenario(), view)
    run = carbon.plan_for_scenario(power, 700.0)
    assert run.summary.duration_s == pytest.approx(p.train_time_s, rel=1e-9)
    assert run.summary.gpu_hours == pytest.approx(p.gpu_hours, rel=1e-9)
    assert run.summary.facility_energy_j == pytest.approx(p.facility_energy_j, rel=1e-9)
    assert run.summary.co2e_kg == pytest.approx(p.co2e_kg, rel=1e-9)
    assert run.summary.total_cost == pytest.approx(p.total_cost, rel=1e-9)


def test_a_scenario_that_differs_from_the_plan_says_so():
    view = view_of(DEFAULT_PLAN)
    own = PowerScenario(pue=1.5)
    assert differs_from_plan("power", own, view)
    assert not differs_from_plan("power", follow_plan("power", own, view), view)


def test_the_old_context_is_a_view_of_the_plan():
    ctx = context_of(edit_plan(DEFAULT_PLAN, lookup, n_gpus=64), sparse=True)
    assert isinstance(ctx, RunContext) and ctx.n_gpus == 64 and ctx.sparse
    assert ctx.interconnect == "nic-400g" and ctx.model_params == DEFAULT_PLAN.n_params


@pytest.mark.parametrize("size", [125e6, 350e6, 1e9, 13e9, 70e9, 405e9, 1e12])
def test_any_model_size_typed_gives_a_valid_plan(size):
    plan = edit_plan(DEFAULT_PLAN, lookup, model_params=size)
    assert plan.n_params == size and plan.n_heads % 8 == 0 or plan.n_heads < 16
    assert predict(plan).mfu > 0
    again = edit_plan(plan, lookup, model_params=8e9)  # and back, from any size
    assert again.n_params == 8e9


def test_a_v1_context_that_cannot_all_carry_over_keeps_the_rest():
    from workbench.workspace import plan_from_context

    plan, note = plan_from_context(RunContext(hardware="a100-sxm-80gb", n_gpus=7, model_params=70e9))
    assert plan.hardware == "a100-sxm-80gb" and plan.n_params == 70e9 and plan.intra_node is None
    assert plan.n_gpus == 7 or "GPU count" in note


@pytest.mark.parametrize("kind", ["scaling", "power", "allreduce", "collective"])
def test_following_a_plan_alike_the_last_one_needs_no_step_between(kind):
    from workbench.scenarios import SCENARIO_TYPES

    base = SCENARIO_TYPES[kind]()
    first, second = view_of(DEFAULT_PLAN), view_of(DEFAULT_PLAN.with_changes(n_gpus=64, global_batch=64))
    assert follows_alike(first, second)
    assert follow_plan(kind, follow_plan(kind, base, first), second) == follow_plan(kind, base, second)
    # a plan that cannot be predicted keeps what the last predicted one left: not alike
    blind = PlanView(plan=second.plan, hardware=second.hardware, prediction=None, problem="no link")
    assert not follows_alike(second, blind) and follows_alike(blind, blind)
