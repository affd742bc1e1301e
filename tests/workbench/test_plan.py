"""The run plan: one prediction of a training step, its parts, memory, and what to fix first."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import presets
import presets.catalog
from workbench import InputError, mfu
from workbench import plan as P
from workbench.catalog import chain
from workbench.plan import RunPlan, predict, what_if
from workbench.scenarios import ScenarioVersionError

COMM_TERMS = ("tensor_parallel", "context_parallel", "pipeline_p2p", "data_parallel")


def llama70b(**changes) -> RunPlan:
    """The issue's example: Llama 3 70B on 1,024 H100 over 400 Gb/s NICs."""
    base = dict(
        n_params=70.6e9, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ffn=28672,
        vocab_size=128256, seq_len=8192, hardware="h100-sxm", n_gpus=1024, gpus_per_node=8,
        intra_node="nvlink-4", inter_node="nic-400g", tp=8, pp=4, zero=1, sequence_parallel=True,
        global_batch=1024, micro_batch=1, recompute="selective", precision="bf16", train_tokens=15e12,
    )
    base.update(changes)
    return RunPlan(**base)


# -- the value --------------------------------------------------------------------------------
def test_defaults_fill_what_a_planner_leaves_out():
    plan = RunPlan(n_params=8e9, n_layers=32, d_model=4096, n_heads=32, seq_len=8192,
                   hardware="h100-sxm", n_gpus=8, global_batch=16)
    assert plan.n_kv_heads == 32 and plan.d_ffn == 4 * 4096
    assert (plan.tp, plan.pp, plan.cp, plan.vp, plan.zero) == (1, 1, 1, 1, 0)
    assert plan.dp == 8 and plan.microbatches == 2
    assert plan.recompute == "none" and plan.precision == "bf16"


def test_a_plan_round_trips_through_json_with_its_kind_and_version():
    plan = llama70b(power_cap_w=600.0, pue=1.1)
    data = json.loads(plan.to_json())
    assert data["kind"] == "run_plan" and data["schema_version"] == 1
    assert RunPlan.from_dict(data) == plan
    newer = dict(data, schema_version=2)
    with pytest.raises(ScenarioVersionError):
        RunPlan.from_dict(newer)
    with pytest.raises(InputError, match="bogus"):
        RunPlan.from_dict(dict(data, bogus=1))


@pytest.mark.parametrize(("changes", "field", "hint"), [
    ({"tp": 8, "pp": 4, "n_gpus": 1000}, "n_gpus", "multiple of 32"),
    ({"global_batch": 1000}, "global_batch", "dp x micro_batch"),
    ({"tp": 128, "n_gpus": 1024, "pp": 1}, "tp", "at most the 64 attention heads"),
    ({"n_kv_heads": 7}, "n_kv_heads", "divide the 64 heads"),
    ({"n_gpus": -8}, "n_gpus", ">= 1"),
    ({"n_gpus": "1024"}, "n_gpus", "whole number"),
    ({"recompute": "some"}, "recompute", "none"),
    ({"zero": 4}, "zero", "ZeRO stage"),
    ({"n_params": float("nan")}, "n_params", "finite"),
    ({"train_tokens": 10**400}, "train_tokens", "too large"),
    ({"train_tokens": 1e30}, "train_tokens", "at most 1e+18 tokens"),
    ({"seq_len": 1 << 30}, "seq_len", "between 1 and 16,777,216"),
    ({"n_params": 8e9}, "n_params", "do not match the model shape"),
    ({"zero": 1.0}, "zero", "ZeRO stage"),
    ({"vp": 2, "global_batch": 32 * 6}, "vp", "multiple of pp = 4"),
    ({"checkpoint_interval_s": 600.0}, "checkpoint_write_bw", "both"),
])
def test_bad_plans_name_the_field_and_a_way_out(changes, field, hint):
    with pytest.raises(InputError) as info:
        llama70b(**changes)
    assert info.value.parameter == field
    assert hint in str(info.value)


def test_the_largest_plans_allowed_still_give_finite_numbers():
    huge = RunPlan(n_params=1e16, n_layers=2_000, d_model=800_000, n_heads=100_000,
                   seq_len=1 << 24, hardware="b200", n_gpus=1 << 23, global_batch=1 << 30,
                   train_tokens=1e18, vocab_size=100_000_000, d_ffn=1_000_000, tp=1, pp=1,
                   zero=3)
    p = predict(huge)
    for value in (p.step_time_s, p.tokens_per_s, p.mfu, p.train_time_s, p.co2e_kg, p.total_cost,
                  p.memory.total):
        assert math.isfinite(value) and value > 0


def test_a_precision_the_hardware_lacks_is_refused_with_what_it_has():
    with pytest.raises(InputError, match="A100.*no fp8.*bf16") as info:
        predict(llama70b(hardware="a100-sxm-80gb", precision="fp8"))
    assert info.value.parameter == "precision"


def test_an_unknown_preset_key_is_an_input_error():
    with pytest.raises(InputError, match="no hardware preset 'h900'"):
        predict(llama70b(hardware="h900"))
    with pytest.raises(InputError, match="no interconnect preset 'nic-9t'; known: .*nic-400g") as info:
        predict(llama70b(inter_node="nic-9t"))
    assert info.value.parameter == "inter_node"
    with pytest.raises(InputError, match="known: h100-sxm"):
        predict(llama70b(hardware="h900"))


# -- the prediction ---------------------------------------------------------------------------
def test_the_breakdown_sums_to_the_step_and_names_the_largest_drag():
    p = predict(llama70b())
    assert tuple(p.breakdown) == P.TERMS
    assert sum(p.breakdown.values()) == pytest.approx(p.step_time_s, rel=1e-12)
    drags = {k: t for k, t in p.breakdown.items() if k != "compute"}
    assert p.largest_drag == max(drags, key=drags.get)
    assert p.breakdown["compute"] > max(drags.values())


def test_mfu_is_the_mfu_module_s_count_of_the_predicted_throughput():
    plan = llama70b()
    p = predict(plan)
    assert p.tokens_per_s == pytest.approx(plan.global_batch * plan.seq_len / p.step_time_s)
    expected = mfu.mfu(plan.n_params, p.tokens_per_s, plan.n_gpus, 989e12,
                       plan.n_layers, plan.d_model, plan.seq_len)
    assert p.mfu == pytest.approx(expected, rel=1e-12)
    assert 0.25 < p.mfu < 0.6  # a well-configured dense run


def test_hfu_counts_the_recomputed_forward():
    full = predict(llama70b(recompute="full"))
    assert full.hfu / full.mfu == pytest.approx(4 / 3)
    none = predict(llama70b(recompute="none", micro_batch=1))
    assert none.hfu == pytest.approx(none.mfu)
    assert none.breakdown["recompute"] == 0 < full.breakdown["recompute"]


def test_days_energy_carbon_and_cost_follow_from_the_step():
    plan = llama70b(gpu_hour_price=2.0)
    p = predict(plan)
    assert p.train_time_s == pytest.approx(plan.train_tokens / p.tokens_per_s)
    assert p.gpu_hours == pytest.approx(plan.n_gpus * p.train_time_s / 3600)
    # uncapped: the TDP, plus the rest of a DGX H100 per GPU, (10.2 kW - 8 x 700 W) / 8 = 575 W
    assert p.host_power_w_per_gpu == pytest.approx(575.0)
    assert p.it_energy_j == pytest.approx(plan.n_gpus * (700 + 575) * p.train_time_s)
    assert any("system figure" in note for note in p.notes)
    assert "10.2 kW" in presets.hardware_by_key("h100-sxm").host_power_source
    own = predict(plan.with_changes(host_overhead_w_per_gpu=0.0))
    assert own.it_energy_j == pytest.approx(plan.n_gpus * 700 * own.train_time_s)
    assert p.facility_energy_j == pytest.approx(p.it_energy_j * plan.pue)
    assert p.co2e_kg == pytest.approx(p.facility_energy_kwh * plan.grid_g_per_kwh / 1000)
    assert p.total_cost == pytest.approx(p.facility_energy_kwh * 0.10 + p.gpu_hours * 2.0)


def test_the_interconnect_changes_the_plan():
    slow = predict(llama70b(inter_node="nic-100g"))
    fast = predict(llama70b(inter_node="nic-800g"))
    assert slow.breakdown["data_parallel"] > fast.breakdown["data_parallel"]
    assert slow.step_time_s > fast.step_time_s
    override = predict(llama70b(inter_node_bw=12.5e9))
    assert override.breakdown["data_parallel"] == pytest.approx(slow.breakdown["data_parallel"])


def test_a_tensor_parallel_group_across_nodes_uses_the_nics():
    inside = predict(llama70b(tp=8, pp=4, gpus_per_node=8))
    across = predict(llama70b(tp=8, pp=4, gpus_per_node=4))
    # Two nodes of 4: the ring runs at min(NVLink 360 GB/s, 4 NICs x 48 GB/s) = 192 GB/s.
    ratio = across.breakdown["tensor_parallel"] / inside.breakdown["tensor_parallel"]
    assert ratio == pytest.approx(360 / 192, rel=0.05)


def test_a_power_cap_slows_flop_bound_work_and_not_the_network():
    free = predict(llama70b())
    capped = predict(llama70b(power_cap_w=500.0))
    f = capped.clock_fraction
    assert 0 < f < 1 and capped.gpu_power_w == pytest.approx(500.0, rel=1e-6)
    # FLOP-bound work slows by 1/f at most (memory-bound parts of it do not slow)
    for term in ("compute", "recompute"):
        assert free.breakdown[term] < capped.breakdown[term] <= free.breakdown[term] / f * (1 + 1e-12)
    for term in ("tensor_parallel", "pipeline_p2p", "optimizer"):
        assert capped.breakdown[term] == pytest.approx(free.breakdown[term])
    assert capped.train_time_s > free.train_time_s
    # the power model's share reproduces the capped step: t(f) = t(1) (share / f + 1 - share)
    share = capped.compute_bound_share
    assert capped.step_time_s == pytest.approx(free.step_time_s * (share / f + 1 - share), rel=1e-9)
    assert capped.uncapped_tokens_per_s == pytest.approx(free.tokens_per_s)


def test_a_cap_below_what_the_gpu_can_hold_names_the_plan_s_field():
    with pytest.raises(InputError, match="W") as info:
        predict(llama70b(power_cap_w=50.0))
    assert info.value.parameter == "power_cap_w"


def test_a_cap_on_hardware_without_a_tdp_is_refused():
    tpu = RunPlan(n_params=1e9, n_layers=16, d_model=2048, n_heads=16, seq_len=2048,
                  hardware="tpu-v3", n_gpus=1, global_batch=8, power_cap_w=150.0)
    with pytest.raises(InputError, match="no TDP") as info:
        predict(tpu)
    assert info.value.parameter == "power_cap_w"
    p = predict(tpu.with_changes(power_cap_w=None))
    assert p.it_energy_j == 0 and any("no TDP" in note for note in p.notes)


def test_data_loading_and_checkpoints_stall_only_when_storage_is_slow():
    plan = llama70b()
    assert predict(plan).breakdown["data_loading"] == 0
    starved = predict(plan.with_changes(storage_read_bw=1e6))  # 1 MB/s for 33 MB per step
    assert starved.breakdown["data_loading"] > 0
    ckpt = predict(plan.with_changes(checkpoint_interval_s=3600.0, checkpoint_write_bw=10e9))
    save = 70.6e9 * 14 / 10e9  # 14 bytes per parameter, workbench.pipeline
    rest = ckpt.step_time_s - ckpt.breakdown["checkpoint"]
    assert ckpt.breakdown["checkpoint"] == pytest.approx(save * rest / 3600, rel=1e-9)


def test_what_if_orders_the_fixes_by_mfu_gained():
    p = predict(llama70b())
    fixes = what_if(p)
    assert [f.term for f in fixes] == sorted((f.term for f in fixes), key=lambda t: -p.mfu * p.step_time_s / (p.step_time_s - p.breakdown[t]))
    assert fixes[0].term == p.largest_drag
    assert all(f.mfu >= p.mfu for f in fixes)
    assert fixes[0].describe(p.mfu).startswith("overlap the tensor-parallel communication: 41.")
    assert what_if(llama70b())[0].mfu == pytest.approx(fixes[0].mfu)


# -- memory -------------------------------------------------------------------------------------
def test_activation_memory_follows_korthikanti():
    plan = llama70b(recompute="none", flash_attention=False)
    s, b, h, a, t = 8192, 1, 8192, 64, 8
    assert P.layer_activation_bytes(plan) == pytest.approx(s * b * h * 34 / t + 5 * a * s * s * b / t)
    no_sp = plan.with_changes(sequence_parallel=False)
    assert P.layer_activation_bytes(no_sp) == pytest.approx(s * b * h * (10 + 24 / t) + 5 * a * s * s * b / t)
    assert P.layer_activation_bytes(plan, "selective") == pytest.approx(s * b * h * 34 / t)
    assert P.layer_activation_bytes(plan, "full") == pytest.approx(2 * s * b * h / t)


def test_training_state_is_sharded_as_zero_says():
    plan = llama70b(zero=0, pp=1, tp=8, global_batch=1024)  # dp = 128
    shard = 70.6e9 / 8
    m0 = P.memory_per_gpu(plan)
    # FP32 main gradients (grad_reduce_precision "fp32") take 4 bytes
    assert (m0.weights, m0.gradients, m0.optimizer) == pytest.approx((2 * shard, 4 * shard, 12 * shard))
    m3 = P.memory_per_gpu(plan.with_changes(zero=3))
    assert (m3.weights, m3.gradients, m3.optimizer) == pytest.approx((2 * shard / 128, 4 * shard / 128, 12 * shard / 128))
    bf16 = P.memory_per_gpu(plan.with_changes(grad_reduce_precision="bf16"))
    assert bf16.gradients == pytest.approx(2 * shard)


def test_the_busiest_pipeline_stage_holds_its_whole_layers_and_an_embedding():
    plan = llama70b(pp=3, n_gpus=24 * 32, global_batch=32 * 32)  # 80 layers: 27 on the busiest stage
    edge = 128256 * 8192
    assert P.stage_params(plan) == pytest.approx(27 * (70.6e9 - 2 * edge) / 80 + edge)
    assert P.stage_params(llama70b(pp=1, n_gpus=128, global_batch=1024)) == 70.6e9


def test_context_parallel_ranks_share_the_gradient_sync_and_the_sharding():
    plan = llama70b(tp=8, pp=1, cp=2, n_gpus=256, global_batch=128)  # dp 16, 32 replicas
    assert plan.replicas == 32
    one = P.memory_per_gpu(plan)
    assert one.optimizer == pytest.approx(12 * 70.6e9 / 8 / 32)
    p = predict(plan.with_changes(cp=8, n_gpus=64, global_batch=1))  # dp 1: only cp reduces
    assert p.breakdown["data_parallel"] > 0


def test_not_fitting_is_an_answer_with_what_would_make_it_fit():
    plan = llama70b(tp=1, pp=1, n_gpus=64, zero=0, sequence_parallel=False, global_batch=64)
    p = predict(plan)
    assert not p.fits_memory and p.memory.shortfall > 0
    assert p.memory.shortfall == pytest.approx(p.memory.total - 80e9)
    # No one change is enough for 70B without model parallelism: a chain of them is offered.
    assert len(p.memory_fixes) == 1 and " + " in p.memory_fixes[0]
    assert p.memory_fixes[0].startswith("ZeRO stage 3 + full recomputation")
    assert predict(llama70b()).memory_fixes == ()
    # One change enough: every such change is listed, each with the memory it leaves.
    tight = predict(llama70b(recompute="none", micro_batch=4, global_batch=4096))
    assert not tight.fits_memory
    assert tight.memory_fixes and all("GiB per GPU" in fix and " + " not in fix for fix in tight.memory_fixes)


# -- properties ---------------------------------------------------------------------------------
@st.composite
def plans(draw, **fixed):
    heads = draw(st.sampled_from([8, 16, 32, 64]))
    kv = draw(st.sampled_from([h for h in (1, 2, 4, 8, heads) if heads % h == 0]))
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if heads % t == 0]))
    layers = draw(st.sampled_from([8, 16, 32]))
    pp = draw(st.sampled_from([1, 2, 4]))
    cp = draw(st.sampled_from([1, 2]))
    dp = fixed.get("dp", draw(st.sampled_from([1, 2, 4, 8, 16])))
    mb = draw(st.sampled_from([1, 2, 4]))
    m = draw(st.sampled_from([1, 2, 4, 8]))
    d = heads * 128
    d_ffn = draw(st.sampled_from([4 * d, 7 * d // 2]))
    vocab = draw(st.sampled_from([0, 32000]))
    gated = d_ffn != 4 * d
    d_kv = kv * 128
    n_params = layers * (d * (d + 2 * d_kv) + d * d + (3 if gated else 2) * d * d_ffn + 2 * d) + 2 * vocab * d
    plan = dict(
        n_params=float(n_params), n_layers=layers, d_model=d, n_heads=heads, n_kv_heads=kv,
        d_ffn=d_ffn, vocab_size=vocab,
        seq_len=draw(st.sampled_from([1024, 4096])), hardware=draw(st.sampled_from(["h100-sxm", "a100-sxm-80gb", "b200"])),
        n_gpus=tp * pp * cp * dp, gpus_per_node=draw(st.sampled_from([4, 8])), tp=tp, pp=pp, cp=cp,
        zero=draw(st.sampled_from([0, 1, 2, 3])), sequence_parallel=tp > 1 and draw(st.booleans()),
        global_batch=dp * mb * m, micro_batch=mb, recompute=draw(st.sampled_from(P.RECOMPUTE_MODES)),
        inter_node=draw(st.sampled_from(["nic-200g", "nic-400g"])),
    )
    return RunPlan(**plan)


@settings(max_examples=60, deadline=None)
@given(plans())
def test_the_breakdown_always_sums_to_the_step(plan):
    p = predict(plan)
    assert all(t >= 0 and math.isfinite(t) for t in p.breakdown.values())
    assert sum(p.breakdown.values()) == pytest.approx(p.step_time_s, rel=1e-9)
    assert 0 < p.mfu <= p.hfu < 1


@settings(max_examples=60, deadline=None)
@given(plans())
def test_removing_a_drag_never_lowers_mfu(plan):
    p = predict(plan)
    for fix in what_if(p):
        assert fix.mfu >= p.mfu
        assert fix.step_time_s <= p.step_time_s


@settings(max_examples=60, deadline=None)
@given(plans(dp=4))
def test_more_gpus_never_lower_the_step_s_communication(plan):
    # Twice the data-parallel replicas, each with the same work: no collective gets cheaper.
    bigger = plan.with_changes(n_gpus=plan.n_gpus * 2, global_batch=plan.global_batch * 2)
    small, big = predict(plan), predict(bigger)
    for term in COMM_TERMS:
        assert big.breakdown[term] >= small.breakdown[term] * (1 - 1e-12), term
    hw = presets.hardware_by_key(plan.hardware)
    catalog = presets.catalog.BUILTIN
    links = P.resolve_links(plan, hw, catalog)
    t1 = P.data_parallel_traffic(plan, links, 1.0, 1.0)
    t2 = P.data_parallel_traffic(bigger, links, 1.0, 1.0)
    assert t2.per_step_s >= t1.per_step_s and t2.per_microbatch_s >= t1.per_microbatch_s


@settings(max_examples=60, deadline=None)
@given(plans())
def test_memory_falls_with_more_sharding(plan):
    before = P.memory_per_gpu(plan).total
    if plan.zero < 3:
        assert P.memory_per_gpu(plan.with_changes(zero=plan.zero + 1)).total <= before
    more_tp = plan.with_changes(tp=plan.tp * 2, n_gpus=plan.n_gpus * 2) if plan.n_heads % (plan.tp * 2) == 0 else None
    if more_tp is not None:
        assert P.memory_per_gpu(more_tp).total <= before * (1 + 1e-12)
    if plan.pp * 2 <= plan.n_layers:
        assert P.memory_per_gpu(plan.with_changes(pp=plan.pp * 2, n_gpus=plan.n_gpus * 2)).total <= before * (1 + 1e-12)
    if plan.recompute != "full":
        assert P.memory_per_gpu(plan.with_changes(recompute="full")).total <= before


# -- catalogs -------------------------------------------------------------------------------------
class OneGpuCatalog:
    """A user's own preset, as the app's project file would supply it."""

    def __init__(self):
        base = presets.hardware_by_key("h100-sxm")
        self.gpu = base.with_changes(key="my-h100", name="My H100", builtin=False)

    def hardware(self, key):
        if key == "my-h100":
            return self.gpu
        raise KeyError(key)

    def interconnect(self, key):
        return presets.interconnect_by_key(key)


def test_a_catalog_of_one_s_own_presets_can_be_passed():
    catalog = OneGpuCatalog()
    mine = predict(llama70b(hardware="my-h100"), catalog=catalog)
    assert mine.step_time_s == pytest.approx(predict(llama70b()).step_time_s)
    with pytest.raises(InputError, match="no hardware preset 'h100-sxm'"):
        predict(llama70b(), catalog=chain(catalog))


def test_no_catalog_at_all_says_how_to_get_one():
    empty = chain()
    with pytest.raises(InputError, match="no preset catalog is installed"):
        predict(llama70b(), catalog=empty)


# -- a measured throughput --------------------------------------------------------------------
def test_a_measured_throughput_sets_the_step_and_everything_after_it():
    plan = llama70b(gpu_hour_price=2.0)
    model = predict(plan)
    rate = 0.8 * model.tokens_per_s  # the run came in slower than the model
    p = predict(plan.with_changes(measured_tokens_per_s=rate, measured_source="run-42.log"))
    assert p.uses_measured and not model.uses_measured
    assert p.step_time_s == pytest.approx(plan.tokens_per_step / rate, rel=1e-12)
    assert p.train_time_s == pytest.approx(plan.train_tokens / rate, rel=1e-12)
    assert p.train_days == pytest.approx(plan.train_tokens / rate / 86400, rel=1e-12)
    assert p.tokens_per_s == pytest.approx(rate) and p.tokens_per_s_per_gpu == pytest.approx(rate / plan.n_gpus)
    # every downstream number scales with the time: 1 / 0.8 longer, MFU 0.8 of the model's
    for name in ("gpu_hours", "it_energy_j", "facility_energy_j", "co2e_kg", "energy_cost", "compute_cost",
                 "total_cost"):
        assert getattr(p, name) == pytest.approx(getattr(model, name) / 0.8, rel=1e-9), name
    assert p.mfu == pytest.approx(0.8 * model.mfu) and p.hfu == pytest.approx(0.8 * model.hfu)
    # the model's terms stay; the rest of the measured step is its own term, and it all sums up
    assert p.model_step_time_s == pytest.approx(model.step_time_s)
    for term in P.TERMS[:-1]:
        assert p.breakdown[term] == pytest.approx(model.breakdown[term]), term
    assert p.breakdown[P.MEASURED_TERM] == pytest.approx(p.step_time_s - model.step_time_s)
    assert sum(p.breakdown.values()) == pytest.approx(p.step_time_s, rel=1e-9)
    assert p.largest_drag == model.largest_drag  # the unexplained rest is not a drag with a fix
    assert "measured throughput from run-42.log" in p.notes[0]
    # memory and the ladder's drags are the model's
    assert p.memory == model.memory
    assert [w.term for w in what_if(p)] == [w.term for w in what_if(model)]
    assert all(w.saved_s == pytest.approx(m.saved_s) for w, m in zip(what_if(p), what_if(model), strict=True))


def test_a_run_faster_than_the_model_says_so_instead_of_a_negative_term():
    plan = llama70b()
    model = predict(plan)
    p = predict(plan.with_changes(measured_tokens_per_s=1.25 * model.tokens_per_s))
    assert p.step_time_s == pytest.approx(model.step_time_s / 1.25)
    assert p.breakdown[P.MEASURED_TERM] == 0.0
    assert all(t >= 0 for t in p.breakdown.values())
    assert "20.0% faster than the model" in p.notes[0] and " from " not in p.notes[0].split(":")[0]


def test_without_a_measured_throughput_the_prediction_is_the_model_s():
    plan = llama70b()
    p = predict(plan)
    assert plan.measured_tokens_per_s is None and plan.measured_source == ""
    assert p.model_step_time_s is None and p.breakdown[P.MEASURED_TERM] == 0.0
    assert not any("measured" in note for note in p.notes)
    cleared = plan.with_changes(measured_tokens_per_s=5e6, measured_source="a.log").with_changes(
        measured_tokens_per_s=None)
    assert cleared == plan  # a source without a rate means nothing, so it goes
    assert predict(cleared).step_time_s == p.step_time_s


def test_a_measured_throughput_round_trips_and_old_plans_open_unchanged():
    plan = llama70b(measured_tokens_per_s=3.2e6, measured_source="megatron 1024 GPUs.log")
    data = json.loads(plan.to_json())
    assert data["schema_version"] == 1 and data["measured_tokens_per_s"] == 3.2e6
    assert RunPlan.from_dict(data) == plan
    old = json.loads(llama70b().to_json())
    del old["measured_tokens_per_s"], old["measured_source"]  # saved before the fields existed
    opened = RunPlan.from_dict(old)
    assert opened == llama70b() and opened.measured_tokens_per_s is None
    assert predict(opened).step_time_s == predict(llama70b()).step_time_s


@pytest.mark.parametrize(("changes", "field"), [
    ({"measured_tokens_per_s": 0.0}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": -5.0}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": 1e-4}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": 2e15}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": math.nan}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": "fast"}, "measured_tokens_per_s"),
    ({"measured_tokens_per_s": 1e6, "measured_source": 7}, "measured_source"),
    ({"measured_tokens_per_s": 1e6, "measured_source": "x" * 201}, "measured_source"),
])
def test_a_bad_measured_throughput_names_its_field(changes, field):
    with pytest.raises(InputError) as info:
        llama70b(**changes)
    assert info.value.parameter == field


def test_editing_what_was_measured_drops_the_measured_throughput():
    from workbench.catalog import default_catalog
    from workbench.workspace import edit_plan

    measured = llama70b(measured_tokens_per_s=3e6, measured_source="run.log")

    def lookup(key):
        return default_catalog().hardware(key)

    # a longer run or another price: the same run, the measurement holds
    kept = edit_plan(measured, lookup, train_tokens=2e13, gpu_hour_price=2.5, tp=8)
    assert kept.measured_tokens_per_s == 3e6 and kept.measured_source == "run.log"
    # another GPU count, parallel layout or cap: another run, the model answers again
    for changes in ({"n_gpus": 2048}, {"pp": 8}, {"power_cap_w": 500.0}, {"hardware": "b200"}):
        other = edit_plan(measured, lookup, **changes)
        assert other.measured_tokens_per_s is None and other.measured_source == "", changes
    assert edit_plan(measured, lookup, measured_tokens_per_s=None).measured_tokens_per_s is None
