"""The notebook interface of design.md: these names are a contract users' scripts rely on, and
every public callable of the model keeps the design's promise for bad input: a finite, valid
result, or a ValueError (or TypeError) that names the parameter the caller passed."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math

import numpy as np
import pytest
from bad_input import BAD_VALUES, bad_value_problem, call, non_finite
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import presets
import presets.catalog
import workbench
from workbench import (
    _validate,
    carbon,
    catalog,
    comms,
    comms_sweep,
    context,
    hardware,
    kernels,
    measure,
    mfu,
    pipeline,
    plan,
    plan_check,
    power,
    roofline,
    scaling,
    scaling_analysis,
    scenarios,
    units,
    workspace,
)

CONTRACT = {
    "roofline.ridge_point": ["peak_flops", "mem_bw"],
    "roofline.attainable": ["ai", "peak_flops", "mem_bw"],
    "mfu.flops_per_token": ["n_params", "n_layers", "d_model", "seq_len"],
    "mfu.mfu": ["n_params", "tokens_per_s", "n_gpus", "peak_flops", "n_layers", "d_model", "seq_len"],
    "comms.ring_allreduce_time": ["size_bytes", "n_ranks", "link_bw", "alpha"],
    "comms.tree_allreduce_time": ["size_bytes", "n_ranks", "link_bw", "alpha"],
    "comms.bus_factor": ["collective", "n_ranks"],
    "comms.parse_nccl_tests": ["text"],
    "scaling.amdahl_speedup": ["serial_fraction", "n"],
    "scaling.gustafson_speedup": ["serial_fraction", "n"],
    "scaling.scaling_efficiency": ["throughput_n", "n", "throughput_1"],
    "scaling.karp_flatt": ["speedup", "n"],
    "carbon.facility_energy_kwh": ["it_energy_kwh", "pue"],
    "carbon.emissions_kg": ["facility_energy_kwh", "grid_g_per_kwh"],
    "trainlog.parse_training_log": ["text", "seq_len", "n_gpus"],
    "energy.parse_energy_log": ["text"],
}


@pytest.mark.parametrize("dotted", sorted(CONTRACT))
def test_contract_name_and_parameters(dotted):
    module_name, func_name = dotted.split(".")
    func = getattr(getattr(workbench, module_name), func_name)  # plain `import workbench` suffices
    params = list(inspect.signature(func).parameters)
    assert params[: len(CONTRACT[dotted])] == CONTRACT[dotted]


def test_contract_values_from_design():
    assert workbench.roofline.ridge_point(989e12, 3.35e12) == pytest.approx(295.22, rel=1e-3)
    assert workbench.comms.ring_allreduce_time(1e9, 8, 1e11, 5e-6) == pytest.approx(
        2 * 7 / 8 * 1e9 / 1e11 + 2 * 7 * 5e-6)
    assert workbench.comms.tree_allreduce_time(1e9, 8, 1e11, 5e-6) == pytest.approx(
        2 * 1e9 / 1e11 + 2 * 3 * 5e-6)
    assert workbench.comms.bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert workbench.comms.bus_factor(workbench.collectives.Collective.ALL_GATHER, 8) == pytest.approx(7 / 8)
    # PaLM 540B passes d_model = 48 heads x 256 = 12288.
    assert workbench.mfu.flops_per_token(540e9, 118, 12288, 2048) == pytest.approx(
        6 * 540e9 + 12 * 118 * 12288 * 2048)
    assert workbench.carbon.emissions_kg(workbench.carbon.facility_energy_kwh(1000, 1.2), 475) == pytest.approx(570)


# -- every public callable, walked with bad values ------------------------------------------------
#
# One good call of every public callable of the modules below (keyword arguments naming every
# parameter, so each one is walked). bad_input.BAD_VALUES then replaces one parameter at a time.

#: The modules walked here. nccl, kernel_import, trainlog, energy and collectives have owners of
#: their own and their own tests.
MODULES = (carbon, catalog, comms, comms_sweep, context, hardware, kernels, measure, mfu, pipeline,
           plan, plan_check, power, roofline, scaling, scaling_analysis, scenarios, units, workspace)

H100 = presets.hardware_by_key("h100-sxm")
CATALOG = presets.catalog.BUILTIN
PLAN = workspace.DEFAULT_PLAN
PREDICTION = plan.predict(PLAN, CATALOG)
KERNEL = kernels.gemm(4096, 4096, 4096)
RATE = hardware.ComputeRate("bf16", 989e12, "datasheet", sparsity_factor=2.0)
HBM = hardware.MemoryLevel("HBM", 3.35e12, "datasheet", capacity=80e9)
ALPHA_BETA = comms.fit_alpha_beta([1e3, 1e6, 1e9], [1e-5, 2e-5, 1.1e-2])
AMDAHL = scaling.fit_serial_fraction([1, 8, 64], [1e3, 7.4e3, 40e3])
SWEEP = power.power_cap_sweep(700.0, 3000.0)
BREAKDOWN = mfu.step_decomposition(1.0, 0.2, 0.5, 4, 8, 0.01)
MEASURED = ((8, 85e3), (64, 610e3))
SCALING = scenarios.ScalingScenario(measured=MEASURED)
POWER = scenarios.PowerScenario()
VIEW = workspace.PlanView(plan=PLAN, hardware=H100, prediction=PREDICTION)
WORKSPACE = workspace.Workspace(plan=PLAN, scenarios={"scaling": SCALING})
ROOF = roofline.ceilings(H100, "bf16")[1]
NCCL_LOG = """\
# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 32(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid   1 on a device  0 [0x01] GPU
#  Rank  1 Group  0 Pid   2 on b device  0 [0x01] GPU
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    10.00    0.10    0.10      0    10.00    0.10    0.10      0
       32768          8192     float     sum      -1    12.00    2.73    2.73      0    12.00    2.73    2.73      0
     1048576        262144     float     sum      -1    60.00   17.48   17.48      0    60.00   17.48   17.48      0
"""
MEASURED_LOG = comms_sweep.analyze_log(NCCL_LOG)
#: A published run as ../shared/references/published-runs.json holds one (configuration only).
RUN = {
    "run_id": "llama3-8b-like", "gpu_type": "H100 SXM", "params": 8.03e9, "layers": 32,
    "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "ffn_size": 14336, "vocab_size": 128256,
    "seq_len": 8192, "gpu_count": 64, "global_batch_seqs": 512, "tp": 1, "pp": 1,
    "config_complete": True, "derived_mfu_6n_attn": 0.4, "derived_peak_flops": 989e12,
}
COMPARISON = plan_check.Comparison("run", 0.40, 0.42, "data_parallel")


def _lookup(key):
    try:
        return presets.hardware_by_key(key)
    except (KeyError, ValueError):
        return None


def _restoring(func, container):
    """``func`` run with ``container`` (a list or dict of module state) put back afterwards."""
    def wrapper(*args, **kwargs):
        saved = container.copy()
        try:
            return func(*args, **kwargs)
        finally:
            container.clear()
            (container.extend if isinstance(container, list) else container.update)(saved)
    return functools.wraps(func)(wrapper)


def _fields(value):
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _known(func, **good):
    """``good`` without the arguments ``func`` does not take (yet): a parameter another change
    adds is walked once it is there, and the call stays good before."""
    params = inspect.signature(func).parameters
    return {k: val for k, val in good.items() if k in params}


def _if_defined(module, name, **good):
    """The CALLS entry of ``module.name`` if the module defines it (one being added elsewhere)."""
    func = getattr(module, name, None)
    return [(f"{module.__name__.rsplit('.', 1)[-1]}.{name}", func, good)] if func is not None else []


PROGRESS = {"progress": lambda fraction, message: None, "cancelled": lambda: False}
SHAPE_8B = dict(n_params=8.03e9, n_layers=32, d_model=4096, seq_len=8192)
ROOFLINE_RATES = dict(peak_flops=989e12, mem_bw=3.35e12)
LINK = dict(n_ranks=8, link_bw=360e9, alpha=5e-6)
CAP = dict(compute_bound_share=0.7, static_fraction=0.3, min_voltage_fraction=0.6, min_clock_fraction=0.2)
PLAN_RUN = dict(hardware_tdp_w=700.0, n_gpus=8, train_tokens=1e12, tokens_per_s_per_gpu=3000.0,
                power_cap_w=500.0, pue=1.2, grid_g_per_kwh=475.0, energy_price_per_kwh=0.1,
                gpu_hour_price=2.0, host_overhead_w_per_gpu=100.0, **CAP)

#: (label, callable, good keyword arguments naming every parameter).
CALLS = [
    # carbon
    ("carbon.facility_energy_kwh", carbon.facility_energy_kwh, dict(it_energy_kwh=1000.0, pue=1.2)),
    ("carbon.emissions_kg", carbon.emissions_kg, dict(facility_energy_kwh=1200.0, grid_g_per_kwh=475.0)),
    ("carbon.it_energy_j", carbon.it_energy_j,
     dict(n_gpus=8, gpu_power_w=700.0, duration_s=3600.0, host_overhead_w_per_gpu=100.0)),
    ("carbon.duration_from_tokens", carbon.duration_from_tokens, dict(tokens=1e12, tokens_per_s=1e6)),
    ("carbon.llama3_style_energy_kwh", carbon.llama3_style_energy_kwh, dict(gpu_hours=1e3, peak_power_w=700.0)),
    ("carbon.run_summary", carbon.run_summary,
     dict(n_gpus=8, duration_s=86400.0, gpu_power_w=600.0, pue=1.2, grid_g_per_kwh=475.0,
          energy_price_per_kwh=0.1, gpu_hour_price=2.0, host_overhead_w_per_gpu=100.0)),
    ("carbon.plan_run", carbon.plan_run, PLAN_RUN),
    ("carbon.plan_summary", carbon.plan_summary, PLAN_RUN),
    ("carbon.plan_peak_flops", carbon.plan_peak_flops, dict(scenario=POWER, hardware=H100)),
    ("carbon.scenario_tokens_per_s", carbon.scenario_tokens_per_s, dict(scenario=POWER, peak_flops=989e12)),
    ("carbon.plan_for_scenario", carbon.plan_for_scenario,
     dict(scenario=POWER, hardware_tdp_w=700.0, peak_flops=989e12, n_gpus=16, train_tokens=2e12)),
    # catalog
    ("catalog.chain", catalog.chain, dict(catalogs=(CATALOG,))),
    ("catalog.default_catalog", catalog.default_catalog, {}),
    ("catalog.check_catalog", catalog.check_catalog, dict(catalog=CATALOG, name="catalog")),
    ("catalog.register", _restoring(catalog.register, catalog._registered), dict(catalog=CATALOG)),
    # comms
    ("comms.ring_allreduce_time", comms.ring_allreduce_time, dict(size_bytes=1e9, **LINK)),
    ("comms.hierarchical_link", comms.hierarchical_link,
     dict(ranks_per_node=8, n_ranks=16, intra_bw=360e9, intra_alpha=3e-6, inter_bw=48e9, inter_alpha=1e-5)),
    ("comms_sweep.rank_sweep", comms_sweep.rank_sweep,
     dict(collective="all_reduce", size_bytes=2.0**30, link_bw=360e9, alpha=5e-6, n_min=2, n_max=100_000,
          points_per_decade=8)),
    ("comms_sweep.bandwidth_sweep", comms_sweep.bandwidth_sweep,
     dict(collective="all_reduce", size_bytes=2.0**30, n_ranks=8, alpha=5e-6, bw_min=1e9, bw_max=2e12,
          points_per_decade=8)),
    ("comms_sweep.latency_takes_over", comms_sweep.latency_takes_over,
     dict(collective="all_reduce", size_bytes=2.0**30, link_bw=360e9, alpha=5e-6, n_max=100_000)),
    ("comms.tree_allreduce_time", comms.tree_allreduce_time, dict(size_bytes=1e9, **LINK)),
    ("comms.ring_time", comms.ring_time, dict(collective="all_gather", size_bytes=1e9, **LINK)),
    ("comms.crossover_size", comms.crossover_size, LINK),
    ("comms.best_algorithm", comms.best_algorithm, dict(size_bytes=1e6, **LINK)),
    ("comms.bus_factor", comms.bus_factor, dict(collective="all_reduce", n_ranks=8)),
    ("comms.algbw", comms.algbw, dict(size_bytes=1e9, time_s=0.01)),
    ("comms.busbw", comms.busbw, dict(collective="all_reduce", size_bytes=1e9, time_s=0.01, n_ranks=8)),
    ("comms.fit_alpha_beta", comms.fit_alpha_beta,
     _known(comms.fit_alpha_beta, sizes=[1e3, 1e6, 1e9], times=[1e-5, 2e-5, 1.1e-2], weighting="relative",
            min_per_region=1)),
    *_if_defined(comms, "hierarchical_link", ranks_per_node=8, n_ranks=64, intra_bw=450e9, intra_alpha=3.4e-6,
                 inter_bw=50e9, inter_alpha=9.6e-6),
    ("comms.FitResult.predict", ALPHA_BETA.predict, dict(size_bytes=1e6)),
    # comms_sweep
    ("comms_sweep.has_tree", comms_sweep.has_tree, dict(collective="all_reduce")),
    ("comms_sweep.size_grid", comms_sweep.size_grid, dict(size_min=1024.0, size_max=2.0**30, points_per_decade=8)),
    ("comms_sweep.ring_steps", comms_sweep.ring_steps, dict(collective="all_gather", n_ranks=8)),
    ("comms_sweep.sweep", comms_sweep.sweep,
     dict(collective="all_reduce", size_min=1024.0, size_max=2.0**30, points_per_decade=8, **LINK)),
    ("comms_sweep.operating_point", comms_sweep.operating_point,
     dict(collective="all_reduce", size_bytes=2.0**30, **LINK)),
    ("comms_sweep.ring_parameters_from_fit", comms_sweep.ring_parameters_from_fit,
     dict(fit=ALPHA_BETA, collective="all_reduce", n_ranks=8)),
    ("comms_sweep.analyze_log", comms_sweep.analyze_log, dict(text=NCCL_LOG, collective="all_reduce")),
    ("comms_sweep.MeasuredLog.fit_curve", MEASURED_LOG.fit_curve, dict(sizes=[1e3, 1e6])),
    ("comms_sweep.MeasuredLog.fitted_ring_parameters", MEASURED_LOG.fitted_ring_parameters,
     dict(collective="all_reduce", n_ranks=8)),
    # context
    ("context.RunContext", context.RunContext, _fields(context.RunContext())),
    ("context.RunContext.with_changes", context.RunContext().with_changes, dict(n_gpus=16, train_tokens=2e12)),
    ("context.describe_context_change", context.describe_context_change,
     dict(old=context.RunContext(), new=context.RunContext(n_gpus=16))),
    # hardware
    ("hardware.ComputeRate", hardware.ComputeRate,
     dict(precision="bf16", dense_flops=989e12, source="datasheet", sparsity_factor=2.0, note="",
          achievable_flops=700e12, achievable_source="MAMF")),
    ("hardware.MemoryLevel", hardware.MemoryLevel,
     dict(name="HBM", bandwidth=3.35e12, source="datasheet", capacity=80e9, technology="HBM3", note="")),
    ("hardware.Hardware", hardware.Hardware,
     dict(name="X1", vendor="V", compute=(RATE,), memory=(HBM,), tdp_w=700.0, tdp_source="datasheet",
          host_power_w=575.0, host_power_source="system", interconnect_bw=900e9, interconnect="NVLink 4",
          interconnect_source="datasheet", note="", builtin=False, key="x1")),
    ("hardware.Interconnect", hardware.Interconnect,
     dict(key="nic", name="NIC", bw_per_direction=50e9, latency_s=5e-6, source="datasheet", note="",
          achievable_fraction=0.8, latency_source="nccl", achievable_source="nccl")),
    ("hardware.slug", hardware.slug, dict(name="NVIDIA H100 SXM")),
    ("hardware.Hardware.rate", H100.rate, dict(precision="bf16")),
    ("hardware.Hardware.peak_flops", H100.peak_flops, dict(precision="bf16", sparse=True)),
    ("hardware.Hardware.supports_sparsity", H100.supports_sparsity, dict(precision="bf16")),
    ("hardware.Hardware.memory_level", H100.memory_level, dict(name="HBM")),
    ("hardware.Hardware.with_changes", H100.with_changes, dict(tdp_w=600.0, host_power_w=500.0)),
    # kernels
    ("kernels.Kernel", kernels.Kernel, dict(name="k", flops=1e12, bytes=1e9, time_s=1e-3)),
    ("kernels.gemm", kernels.gemm, dict(m=1024, n=1024, k=1024, dtype="fp8", name="g")),
    ("kernels.elementwise", kernels.elementwise,
     dict(n_elements=1 << 20, dtype="bf16", reads=2, writes=1, flops_per_element=1.0, name="add")),
    ("kernels.layer_norm", kernels.layer_norm, dict(rows=1024, cols=4096, dtype="bf16", name="ln")),
    ("kernels.attention_unfused", kernels.attention_unfused,
     dict(batch=1, heads=8, seq_len=1024, head_dim=128, dtype="bf16", name="a")),
    ("kernels.attention_fused", kernels.attention_fused,
     dict(batch=1, heads=8, seq_len=1024, head_dim=128, dtype="bf16", name="a")),
    ("kernels.seed_examples", kernels.seed_examples, {}),
    # measure (tiny sizes: milliseconds)
    ("measure.stream_triad", measure.stream_triad, dict(n_elements=4096, dtype="float64", repeats=1, **PROGRESS)),
    ("measure.matmul_peak", measure.matmul_peak, dict(n=16, dtype="float32", repeats=1, **PROGRESS)),
    ("measure.measure_machine", measure.measure_machine, dict(size="tiny", **PROGRESS)),
    # mfu
    ("mfu.flops_per_token", mfu.flops_per_token, SHAPE_8B),
    ("mfu.mfu", mfu.mfu, dict(tokens_per_s=5e4, n_gpus=8, peak_flops=989e12, **SHAPE_8B)),
    ("mfu.hfu", mfu.hfu, dict(tokens_per_s=5e4, n_gpus=8, peak_flops=989e12, recompute="full", **SHAPE_8B)),
    ("mfu.tokens_per_s_at_mfu", mfu.tokens_per_s_at_mfu, dict(mfu_fraction=0.4, peak_flops=989e12, **SHAPE_8B)),
    ("mfu.tokens_per_s_from_mfu", mfu.tokens_per_s_from_mfu, dict(mfu=0.4, n_gpus=8, peak_flops=989e12, **SHAPE_8B)),
    ("mfu.transformer_params", mfu.transformer_params,
     dict(n_layers=32, d_model=4096, vocab_size=128256, ffn_mult=3.5, gated=True, d_ff=14336, n_kv_heads=8,
          n_heads=32, tied_embeddings=False)),
    ("mfu.step_time", mfu.step_time, dict(flops_per_step=1e18, n_gpus=8, peak_flops=989e12, mfu=0.4)),
    ("mfu.training_time", mfu.training_time, dict(total_tokens=1e12, tokens_per_s=5e4)),
    ("mfu.step_decomposition", mfu.step_decomposition,
     dict(compute_s=1.0, comm_s=0.2, overlap=0.5, pipeline_stages=4, microbatches=8, dataloader_wait_s=0.01)),
    ("mfu.predicted_mfu", mfu.predicted_mfu, dict(ideal_mfu=0.5, breakdown=BREAKDOWN)),
    # pipeline
    ("pipeline.required_read_bandwidth", pipeline.required_read_bandwidth,
     dict(n_gpus=8, tokens_per_s_per_gpu=3000.0, bytes_per_token=4.0)),
    ("pipeline.checkpoint_bytes", pipeline.checkpoint_bytes, dict(n_params=8e9, bytes_per_param=14.0)),
    ("pipeline.checkpoint_write_bandwidth", pipeline.checkpoint_write_bandwidth,
     dict(checkpoint_bytes=1e11, interval_s=3600.0)),
    ("pipeline.storage_traffic", pipeline.storage_traffic,
     dict(n_gpus=8, tokens_per_s_per_gpu=3000.0, bytes_per_token=4.0, n_params=8e9,
          checkpoint_interval_s=3600.0, bytes_per_param=14.0, write_window_s=60.0)),
    # plan
    ("plan.RunPlan", plan.RunPlan, _fields(PLAN)),
    ("plan.RunPlan.with_changes", PLAN.with_changes, dict(n_gpus=16, global_batch=128, train_tokens=2e12)),
    ("plan.ModelShape", plan.ModelShape,
     dict(key="llama-3-8b", name="Llama 3 8B", n_params=8.03e9, n_layers=32, d_model=4096, n_heads=32,
          n_kv_heads=8, d_ffn=14336, vocab_size=128256, seq_len=8192, gated_mlp=True, source="paper")),
    ("plan.predict", plan.predict, dict(plan=PLAN, catalog=CATALOG)),
    ("plan.what_if", plan.what_if, dict(plan=PLAN, catalog=CATALOG)),
    ("plan.mfu_rating", plan.mfu_rating, dict(mfu=0.4)),
    ("plan.memory_per_gpu", plan.memory_per_gpu, dict(plan=PLAN, capacity=80e9)),
    # plan_check
    ("plan_check.plan_from_published", plan_check.plan_from_published, dict(run=RUN, train_tokens=1e12)),
    ("plan_check.checkable", plan_check.checkable, dict(runs=[RUN])),
    ("plan_check.predicted_mfu_in_convention", plan_check.predicted_mfu_in_convention,
     dict(run=RUN, tokens_per_s=1e6)),
    ("plan_check.compare", plan_check.compare, dict(runs=[RUN], catalog=CATALOG)),
    ("plan_check.summary", plan_check.summary, dict(rows=[COMPARISON])),
    ("plan_check.format_table", plan_check.format_table, dict(rows=[COMPARISON])),
    ("plan_check.load_runs", plan_check.load_runs, dict(path="__RUNS_FILE__")),
    ("plan_check.main", plan_check.main, dict(argv=["__RUNS_FILE__"])),
    # power
    ("power.power_at_clock", power.power_at_clock,
     dict(clock_fraction=0.8, tdp_w=700.0, static_fraction=0.3, min_voltage_fraction=0.6)),
    ("power.min_power_cap", power.min_power_cap,
     dict(tdp_w=700.0, static_fraction=0.3, min_voltage_fraction=0.6, min_clock_fraction=0.2)),
    ("power.clock_fraction_for_cap", power.clock_fraction_for_cap,
     dict(cap_w=500.0, tdp_w=700.0, static_fraction=0.3, min_voltage_fraction=0.6, min_clock_fraction=0.2)),
    ("power.capped_performance", power.capped_performance, dict(cap_w=500.0, tdp_w=700.0, tokens_per_s=3000.0, **CAP)),
    ("power.power_cap_sweep", power.power_cap_sweep,
     dict(tdp_w=700.0, tokens_per_s=3000.0, caps=None, step_w=25.0, **CAP)),
    ("power.power_cap_sweep(caps)", power.power_cap_sweep,
     dict(tdp_w=700.0, tokens_per_s=3000.0, caps=[300.0, 500.0, 700.0], step_w=25.0, **CAP)),
    ("power.best_cap_for_efficiency", power.best_cap_for_efficiency,
     dict(tdp_w=700.0, tokens_per_s=3000.0, caps=None, step_w=25.0, **CAP)),
    ("power.best_cap", power.best_cap,
     dict(objective="energy_time", tdp_w=700.0, tokens_per_s=3000.0, eta=0.5, caps=None, step_w=25.0, **CAP)),
    ("power.best_of_sweep", power.best_of_sweep, dict(sweep=SWEEP, objective="energy_time", tdp_w=700.0, eta=0.5)),
    ("power.zeus_cost", power.zeus_cost, dict(energy_j=1.0, time_s=1.0, max_power_w=700.0, eta=0.5)),
    # roofline
    ("roofline.ridge_point", roofline.ridge_point, ROOFLINE_RATES),
    ("roofline.attainable", roofline.attainable, dict(ai=[1.0, 1000.0], **ROOFLINE_RATES)),
    ("roofline.bound", roofline.bound, dict(ai=100.0, **ROOFLINE_RATES)),
    ("roofline.Roof", roofline.Roof,
     dict(label="BF16 peak", kind="compute", precision="bf16", sparse=False, **ROOFLINE_RATES)),
    ("roofline.Roof.segment", ROOF.segment, dict(ai_min=0.1, ai_max=1e4)),
    ("roofline.ceilings", roofline.ceilings,
     dict(hardware=H100, precision="bf16", sparse=True, extra_precisions=True, include_l2=True)),
    ("roofline.roof_curve", roofline.roof_curve, dict(ai_min=0.1, ai_max=1e4, n=64, **ROOFLINE_RATES)),
    ("roofline.place", roofline.place, dict(kernel=KERNEL, **ROOFLINE_RATES)),
    ("roofline.place_many", roofline.place_many, dict(kernels=[KERNEL], **ROOFLINE_RATES)),
    ("roofline.time_may_be_stale", roofline.time_may_be_stale,
     dict(old=kernels.Kernel("k", 1e12, 1e9, 1e-3), new=kernels.Kernel("k", 2e12, 1e9, 1e-3))),
    # scaling
    ("scaling.amdahl_speedup", scaling.amdahl_speedup, dict(serial_fraction=0.05, n=64)),
    ("scaling.gustafson_speedup", scaling.gustafson_speedup, dict(serial_fraction=0.05, n=64)),
    ("scaling.karp_flatt", scaling.karp_flatt, dict(speedup=20.0, n=64)),
    ("scaling.speedup_curve", scaling.speedup_curve, dict(serial_fraction=0.05, n_max=64, mode="weak")),
    ("scaling.scaling_efficiency", scaling.scaling_efficiency, dict(throughput_n=7000.0, n=8, throughput_1=1000.0)),
    ("scaling.strong_scaling_efficiency", scaling.strong_scaling_efficiency, dict(time_1=10.0, time_n=1.5, n=8)),
    ("scaling.weak_scaling_efficiency", scaling.weak_scaling_efficiency, dict(time_1=1.0, time_n=1.1)),
    ("scaling.fit_serial_fraction", scaling.fit_serial_fraction,
     dict(gpus=[1, 8, 64], throughputs=[1e3, 7.4e3, 40e3])),
    ("scaling.FitResult.predict", AMDAHL.predict, dict(n=16)),
    # scaling_analysis
    ("scaling_analysis.speedup_at", scaling_analysis.speedup_at, dict(serial_fraction=0.05, n=64, mode="strong")),
    ("scaling_analysis.speedup_sweep", scaling_analysis.speedup_sweep,
     dict(serial_fraction=0.05, n_max=1024.0, mode="weak", points=64)),
    ("scaling_analysis.measured_speedups", scaling_analysis.measured_speedups, dict(measured=MEASURED)),
    ("scaling_analysis.analyse_scaling", scaling_analysis.analyse_scaling,
     dict(scenario=SCALING, peak_flops=989e12, train_tokens=1e12)),
    ("scaling_analysis.parse_measured", scaling_analysis.parse_measured, dict(text="8: 85k; 64: 610k")),
    ("scaling_analysis.format_measured", scaling_analysis.format_measured, dict(pairs=MEASURED)),
    # scenarios
    ("scenarios.RooflineScenario", scenarios.RooflineScenario,
     dict(_fields(scenarios.RooflineScenario()), kernels=(KERNEL,), hardware=("h100-sxm", "a100-sxm-80gb"))),
    ("scenarios.CollectiveScenario", scenarios.CollectiveScenario, _fields(scenarios.CollectiveScenario(root=1))),
    ("scenarios.AllReduceScenario", scenarios.AllReduceScenario,
     _fields(scenarios.AllReduceScenario(measured_log=NCCL_LOG))),
    ("scenarios.ScalingScenario", scenarios.ScalingScenario, _fields(SCALING)),
    ("scenarios.PowerScenario", scenarios.PowerScenario, _fields(scenarios.PowerScenario(power_cap_w=500.0))),
    ("scenarios.Scenario.with_changes", SCALING.with_changes, dict(n_gpus=16, n_params=9e9)),
    ("scenarios.register_scenario_type", scenarios.register_scenario_type, dict(cls=scenarios.ScalingScenario)),
    ("scenarios.register_upgrader", scenarios.register_upgrader, dict(kind="power", from_version=1)),
    ("scenarios.describe_change", scenarios.describe_change, dict(old=SCALING, new=SCALING.with_changes(n_gpus=16))),
    ("scenarios.scenario_from_json", scenarios.scenario_from_json, dict(text=SCALING.to_json())),
    # units
    ("units.parse_quantity", units.parse_quantity, dict(text="3.35 TB/s", unit="B/s", name="link_bw")),
    ("units.format_quantity", units.format_quantity, dict(value=3.35e12, unit="B/s", digits=3, binary=False)),
    ("units.unit_label", units.unit_label, dict(unit="B", prefix="Mi")),
    ("units.best_prefix", units.best_prefix, dict(value=3.35e12, unit="B/s", binary=False)),
    # workspace
    ("workspace.Workspace", workspace.Workspace,
     dict(plan=PLAN, sparse=False, scenarios={"scaling": SCALING}, overrides=frozenset({"scaling"}), active="scaling")),
    ("workspace.Workspace.with_scenario", WORKSPACE.with_scenario, dict(kind="power", scenario=POWER)),
    ("workspace.Workspace.with_override", WORKSPACE.with_override, dict(kind="scaling", on=True)),
    ("workspace.PlanView", workspace.PlanView,
     dict(plan=PLAN, sparse=False, hardware=H100, prediction=PREDICTION, has_hardware=lambda key: True, problem="")),
    ("workspace.precision_fallback", workspace.precision_fallback, dict(hw=H100, wanted="fp4")),
    ("workspace.edit_plan", workspace.edit_plan,
     dict(plan=PLAN, lookup=_lookup, n_gpus=16, power_cap_w=600.0, train_tokens=2e12)),
    ("workspace.edit_plan(n_params)", workspace.edit_plan, dict(plan=PLAN, lookup=_lookup, model_params=70e9)),
    ("workspace.edit_plan(d_model)", workspace.edit_plan, dict(plan=PLAN, lookup=_lookup, d_model=5120)),
    ("workspace.fit_gpus", workspace.fit_gpus, dict(plan=PLAN, n_gpus=16)),
    ("workspace.follow_plan", workspace.follow_plan, dict(kind="scaling", scenario=SCALING, view=VIEW)),
    ("workspace.differs_from_plan", workspace.differs_from_plan, dict(kind="scaling", scenario=SCALING, view=VIEW)),
    ("workspace.follows_alike", workspace.follows_alike, dict(before=VIEW, after=VIEW)),
    ("workspace.register_follower", _restoring(workspace.register_follower, workspace.FOLLOWERS),
     dict(kind="scaling", follow=workspace.FOLLOWERS["scaling"])),
    ("workspace.register_analysis", _restoring(workspace.register_analysis, workspace.ANALYSES),
     dict(kind="scaling", analyse=lambda scenario, view, catalog: scenario.n_gpus)),
    ("workspace.analysis_function", workspace.analysis_function, dict(kind="scaling")),
    ("workspace.analyse", workspace.analyse, dict(kind="scaling", scenario=SCALING, view=VIEW, catalog=CATALOG)),
    ("workspace.AnalysisCache", workspace.AnalysisCache, {}),
    ("workspace.context_of", workspace.context_of, dict(plan=PLAN, sparse=True)),
    ("workspace.plan_from_context", workspace.plan_from_context, dict(context=context.RunContext(), base=PLAN)),
    ("workspace.sync_link", workspace.sync_link, dict(plan=PLAN)),
    ("workspace.dp_spans_nodes", workspace.dp_spans_nodes, dict(plan=PLAN)),
]

#: Text parsers whose errors name the field the text is, not their parameter: the Scaling
#: panel's "measured" field, a scenario's JSON as the project file reports it, and the field a
#: caller names with parse_quantity(name=...) (also when another valid unit makes the text wrong).
FIELD_NAMED = {
    ("scaling_analysis.parse_measured", "text"): "measured",
    ("scenarios.scenario_from_json", "text"): "json",
    ("units.parse_quantity", "text"): "link_bw",
    ("units.parse_quantity", "unit"): ("unit", "link_bw"),
}

#: Readers of saved data: bad values go into the fields of the data (see the readers' test).
READERS = {
    "context.RunContext.from_dict": context.RunContext.from_dict,
    "hardware.Hardware.from_dict": hardware.Hardware.from_dict,
    "kernels.Kernel.from_dict": kernels.Kernel.from_dict,
    "scenarios.Scenario.from_dict": scenarios.Scenario.from_dict,
    "scenarios.scenario_from_dict": scenarios.scenario_from_dict,
    "workspace.Workspace.from_dict": workspace.Workspace.from_dict,
}

#: Public names that are not called with inputs: result records (plain values the functions
#: above return, never built from user input), exceptions and protocols.
NOT_CALLED = {
    carbon.RunSummary, carbon.PlannedRun, comms.FitResult, comms_sweep.CommsSweep, comms_sweep.MeasuredLog,
    comms_sweep.OperatingPoint, catalog.Catalog, measure.MeasurementCancelled, mfu.StepBreakdown,
    pipeline.StorageTraffic, plan.Prediction, plan.MemoryEstimate, plan.WhatIf, plan_check.Comparison,
    power.CappedPerformance, roofline.Placement, roofline.Placements, scaling.FitResult,
    scaling_analysis.ScalingAnalysis, scaling_analysis.MeasuredSpeedups, scenarios.Scenario,
    scenarios.ScenarioVersionError, units.UnitError,
}


def public_callables(module):
    """The module's public callables: its ``__all__`` where it has one, else every name without a
    leading underscore defined in it."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if callable(obj) and getattr(obj, "__module__", None) == module.__name__:
            yield name, obj


def test_every_public_callable_of_the_walked_modules_has_a_good_call():
    called = {id(func) for _, func, _ in CALLS} | {id(getattr(f, "__wrapped__", f)) for _, f, _ in CALLS}
    missing = [f"{module.__name__}.{name}" for module in MODULES for name, obj in public_callables(module)
               if id(obj) not in called and obj not in NOT_CALLED and obj not in READERS.values()]
    assert not missing, f"add a good call to CALLS (or the name to NOT_CALLED with a reason): {missing}"


@pytest.mark.parametrize(("label", "func", "good"), CALLS, ids=[c[0] for c in CALLS])
def test_the_good_call_names_every_parameter_and_gives_a_finite_result(label, func, good, runs_file):
    good = _with_runs_file(good, runs_file)
    params = inspect.signature(func).parameters
    unnamed = [n for n, p in params.items() if n not in good and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert not unnamed, f"{label}: the good call leaves out {unnamed}"
    assert non_finite(call(func, good)) is None


def _walked():
    for label, func, good in CALLS:
        for param in good:
            yield pytest.param(label, func, good, param, id=f"{label}-{param}")


@pytest.mark.parametrize(("label", "func", "good", "param"), list(_walked()))
def test_bad_values_raise_an_error_naming_the_parameter_or_give_a_finite_result(label, func, good, param,
                                                                                runs_file):
    good = _with_runs_file(good, runs_file)
    named = FIELD_NAMED.get((label, param))
    problems = [f"{param}={bad!r:.30}: {problem}" for bad in BAD_VALUES
                if (problem := bad_value_problem(func, good, param, bad, named))]
    assert not problems, f"{label}:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def runs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("runs") / "published-runs.json"
    path.write_text(json.dumps([RUN]), encoding="utf-8")
    return str(path)


def _with_runs_file(good, runs_file):
    return {k: (runs_file if v == "__RUNS_FILE__" else [runs_file] if v == ["__RUNS_FILE__"] else v)
            for k, v in good.items()}


# -- readers of saved data: bad values inside the data ----------------------------------------------
#
# A project file or a scenario file is data from anyone: every field of a valid to_dict(), at any
# depth, is replaced by each bad value (and removed). The reader gives a finite, valid value or
# raises the module's InputError naming that field, never OverflowError, TypeError or KeyError.

WORKSPACE_FULL = workspace.Workspace(
    plan=PLAN.with_changes(power_cap_w=600.0, storage_read_bw=5e9, checkpoint_interval_s=3600.0,
                           checkpoint_write_bw=10e9, host_overhead_w_per_gpu=500.0),
    sparse=True,
    scenarios={"scaling": SCALING, "power": POWER.with_changes(power_cap_w=500.0),
               "roofline": scenarios.RooflineScenario(kernels=(kernels.Kernel("k", 1e12, 1e9, 1e-3),))},
    overrides=frozenset({"power"}), active="power",
)
WORKSPACE_V1 = {
    "version": 1,
    "context": context.RunContext(n_gpus=64, model_params=70e9).to_dict(),
    "panels": {"scaling": SCALING.to_dict()},
    "overrides": {"scaling": True},
    "active": "scaling",
}
READER_DATA = [
    ("context.RunContext.from_dict", context.RunContext.from_dict, context.RunContext(n_gpus=16).to_dict()),
    ("hardware.Hardware.from_dict", hardware.Hardware.from_dict, H100.to_dict()),
    ("kernels.Kernel.from_dict", kernels.Kernel.from_dict, kernels.Kernel("k", 1e12, 1e9, 1e-3).to_dict()),
    ("scenarios.scenario_from_dict(run_plan)", scenarios.scenario_from_dict, WORKSPACE_FULL.plan.to_dict()),
    *[(f"scenarios.Scenario.from_dict({s.kind})", type(s).from_dict, s.to_dict())
      for s in WORKSPACE_FULL.scenarios.values()],
    ("scenarios.scenario_from_dict(allreduce)", scenarios.scenario_from_dict,
     scenarios.AllReduceScenario(measured_log=NCCL_LOG).to_dict()),
    ("scenarios.scenario_from_dict(collective)", scenarios.scenario_from_dict,
     scenarios.CollectiveScenario(root=1).to_dict()),
    ("workspace.Workspace.from_dict", workspace.Workspace.from_dict, WORKSPACE_FULL.to_dict()),
    ("workspace.Workspace.from_dict(version 1)", workspace.Workspace.from_dict, WORKSPACE_V1),
]
assert {label.split("(")[0] for label, _, _ in READER_DATA} >= set(READERS) - {"scenarios.Scenario.from_dict"} | {
    "scenarios.Scenario.from_dict"}


def _leaves(data, path=()):
    """Paths to every value of nested dicts and lists (the containers themselves included)."""
    if path:
        yield path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _leaves(value, (*path, key))


def _replaced(data, path, value):
    """A deep copy of ``data`` with the value at ``path`` replaced (``_DELETE`` removes it)."""
    data = json.loads(json.dumps(data))
    inner = data
    for key in path[:-1]:
        inner = inner[key]
    if value is _DELETE:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return data


_DELETE = object()


def _field_of(path) -> str:
    """The field a path ends in: its last name ("compute", 0, "dense_flops" -> "dense_flops")."""
    names = [key for key in path if isinstance(key, str)]
    return names[-1] if names else "data"


def _reader_problem(reader, data, path, bad) -> str | None:
    field = _field_of(path)
    try:
        result = reader(_replaced(data, path, bad))
    except workbench.InputError as exc:
        # the field itself, or the enclosing entry that holds it (e.g. "compute" for its rates)
        names = {field, *(k for k in path if isinstance(k, str))}
        if any(n in str(exc) for n in names) or exc.parameter in ("kind", "schema_version", "version"):
            return None
        return f"InputError that names none of {sorted(names)}: {exc}"
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        return f"{type(exc).__name__}: {exc}"
    where = non_finite(result)
    if where:
        return f"returned a NaN or an infinity at {where}"
    if isinstance(result, tuple) and isinstance(result[0], workspace.Workspace):
        ws, problems = result
        panels = data.get("panels", {})
        removed = bad is _DELETE and len(path) == 2  # a panel left out of the file is simply absent
        if len(path) >= 2 and path[0] == "panels" and path[1] not in ws.scenarios and path[1] in panels \
                and not removed:
            if not any(field in p or path[1] in p for p in problems):
                return f"dropped panel {path[1]!r} without naming {field!r}: {problems}"
    return None


@pytest.mark.parametrize(("label", "reader", "data"), READER_DATA, ids=[r[0] for r in READER_DATA])
def test_readers_refuse_bad_fields_with_an_input_error_naming_the_field(label, reader, data):
    assert non_finite(reader(data)) is None  # the data itself reads back
    problems = []
    for path in _leaves(data):
        for bad in (*BAD_VALUES, 1e300, -1e300, 2**63, _DELETE):
            if (problem := _reader_problem(reader, data, path, bad)):
                problems.append(f"{'.'.join(map(str, path))}={'<deleted>' if bad is _DELETE else repr(bad)[:20]}: "
                                f"{problem}")
    assert not problems, f"{label}: {len(problems)} problems\n" + "\n".join(problems[:40])


@pytest.mark.parametrize(("label", "reader", "data"), READER_DATA, ids=[r[0] for r in READER_DATA])
@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_readers_refuse_data_that_is_not_an_object(label, reader, data, bad):
    if isinstance(bad, dict):
        bad = []  # an empty object is data whose fields are missing, covered above
    with pytest.raises(workbench.InputError):
        reader(bad)


# -- extreme but valid values: refused at the boundary, or finite all the way down -----------------
#
# Every numeric field of each scenario type is set to values from the smallest float to the
# largest. What the scenario accepts must give finite numbers in everything computed from it (the
# panel's analysis, the plan's prediction), or an InputError naming that field.

FLOAT_EXTREMES = (5e-324, 1e-300, 1e-30, 1e-9, 1e-3, 0.5, 1.0, 1e3, 1e9, 1e15, 1e16, 1e18, 1e21, 1e30,
                  1e100, 1e300, 1.7976931348623157e308)
INT_EXTREMES = (0, 1, 2, 3, 7, 8, 64, 1024, 2**20, 2**24, 2**30, 10**7, 10**8, 2**53)

PLAN_70B = plan.RunPlan(
    n_params=70.6e9, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ffn=28672, vocab_size=128256,
    seq_len=8192, hardware="h100-sxm", n_gpus=1024, intra_node="nvlink-4", tp=8, pp=4, cp=2, vp=2, zero=1,
    sequence_parallel=True, global_batch=512, recompute="selective", train_tokens=15e12, power_cap_w=600.0,
    storage_read_bw=5e9, checkpoint_interval_s=3600.0, checkpoint_write_bw=10e9, gpu_hour_price=2.0,
)


def _predict_all(p):
    prediction = plan.predict(p, CATALOG)
    return prediction, plan.what_if(prediction)


DOWNSTREAM = {
    "run_plan": _predict_all,
    "scaling": lambda s: (scaling_analysis.analyse_scaling(s, 989e12, 1e12),
                          scaling_analysis.speedup_sweep(s.serial_fraction, s.n_gpus, s.mode)),
    "power": lambda s: (carbon.plan_for_scenario(s, 700.0, peak_flops=989e12),
                        power.best_cap(s.cap_objective, 700.0, carbon.scenario_tokens_per_s(s, 989e12),
                                       compute_bound_share=s.compute_bound_share, static_fraction=s.static_fraction,
                                       min_voltage_fraction=s.min_voltage_fraction)),
    "allreduce": lambda s: (comms_sweep.sweep(s.collective, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max),
                            comms_sweep.operating_point(s.collective, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)),
    "collective": lambda s: comms.ring_time(s.collective, s.message_bytes, s.n_ranks, 1e11, 5e-6),
    "context": lambda c: _predict_all(workspace.plan_from_context(c)[0]),
}
EXTREME_BASES = [
    ("run_plan", PLAN), ("run_plan", PLAN_70B), ("scaling", SCALING), ("power", POWER),
    ("power", POWER.with_changes(throughput_mfu=None, power_cap_w=400.0)),
    ("allreduce", scenarios.AllReduceScenario()), ("collective", scenarios.CollectiveScenario()),
    ("context", context.RunContext()),
]


def _numeric_fields(value):
    for f in dataclasses.fields(value):
        current = getattr(value, f.name)
        if isinstance(current, bool) or f.name == "zero":
            continue
        if isinstance(current, int):
            yield f.name, INT_EXTREMES
        elif isinstance(current, float) or (current is None and "float" in str(f.type)):
            yield f.name, FLOAT_EXTREMES


@pytest.mark.parametrize(("kind", "base"), EXTREME_BASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(EXTREME_BASES)])
def test_extreme_valid_fields_give_finite_results_or_are_refused_naming_the_field(kind, base):
    problems = []
    for field, values in _numeric_fields(base):
        for value in values:
            try:
                changed = base.with_changes(**{field: value})
            except workbench.InputError:
                continue  # refused at the boundary
            try:
                with np.errstate(all="ignore"):
                    result = DOWNSTREAM[kind](changed)
            except workbench.InputError as exc:
                if exc.parameter != field and field not in str(exc):
                    problems.append(f"{field}={value!r}: the error names another input: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - the finding
                problems.append(f"{field}={value!r}: {type(exc).__name__}: {exc}")
                continue
            if (where := non_finite(result)) is not None:
                problems.append(f"{field}={value!r}: NaN or infinity at {where}")
    assert not problems, f"{kind}: {len(problems)} problems\n" + "\n".join(problems[:40])


class _ExtremeCatalog:
    """One device and one NIC, with whatever figures a test draws (the built-in links besides)."""

    def __init__(self, hw, nic):
        self._hw, self._nic = hw, nic

    def hardware(self, key):
        return self._hw

    def interconnect(self, key):
        return self._nic if key == "nic-test" else CATALOG.interconnect(key)


def _shape_params(n_layers, d_model, d_kv, d_ffn, vocab, gated):
    attention = d_model * (d_model + 2 * d_kv) + d_model * d_model
    return n_layers * (attention + (3 if gated else 2) * d_model * d_ffn + 2 * d_model) + 2 * vocab * d_model


def _log_floats(low, high):
    """Floats spread over every decade from ``low`` to ``high`` (not bunched near the top)."""
    return st.floats(math.log10(low), math.log10(high)).map(lambda e: min(high, max(low, 10.0**e)))


@st.composite
def extreme_plans(draw):
    """A valid RunPlan of any size the bounds allow, on a device of any figures they allow."""
    tp = draw(st.sampled_from([1, 2, 4, 8, 16]))
    pp = draw(st.sampled_from([1, 2, 4, 16, 64]))
    vp = draw(st.sampled_from([1, 2])) if pp > 1 else 1
    cp = draw(st.sampled_from([1, 2, 4]))
    dp = draw(st.sampled_from([1, 2, 3, 64, 1000, 10_000]))
    group = draw(st.sampled_from([1, 2, 8]))
    heads = tp * group * draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([1, 64, 128, 512]))
    d_model = heads * head_dim
    d_ffn = tp * draw(st.integers(1, 2**16))
    n_layers = pp * vp * draw(st.integers(1, 40))
    seq_len = cp * draw(st.sampled_from([1, 128, 8192, 2**20]))
    micro_batch = draw(st.sampled_from([1, 2, 16]))
    m = draw(st.sampled_from([1, 2, 8, 256])) * (pp if vp > 1 else 1)
    vocab = draw(st.sampled_from([0, 32000, 10**6]))
    gated = draw(st.booleans())
    held = _shape_params(n_layers, d_model, heads // group * head_dim, d_ffn, vocab, gated)
    n_gpus, global_batch = tp * pp * cp * dp, dp * micro_batch * m
    assume(0 < held <= 1e16 and n_gpus <= _validate.MAX_GPUS and global_batch <= 2**30
           and seq_len <= 2**24 and d_model <= 10**6 and n_layers <= 10_000)
    rate = _log_floats(1.0, _validate.MAX_FLOPS)
    hw = hardware.Hardware(
        name="Test device", vendor="test",
        compute=(hardware.ComputeRate("bf16", draw(rate), "test", sparsity_factor=2.0),),
        memory=(hardware.MemoryLevel("HBM", draw(_log_floats(1.0, _validate.MAX_BANDWIDTH)), "test",
                                     capacity=draw(st.none() | _log_floats(1.0, _validate.MAX_BYTES))),),
        tdp_w=draw(st.none() | _log_floats(1e-3, _validate.MAX_GPU_POWER_W)), tdp_source="test",
        host_power_w=draw(st.none() | st.floats(0.0, _validate.MAX_GPU_POWER_W)), host_power_source="test",
        interconnect_bw=draw(_log_floats(1.0, _validate.MAX_BANDWIDTH)), interconnect_source="test",
    )
    nic = hardware.Interconnect("nic-test", "Test NIC", draw(_log_floats(1.0, _validate.MAX_BANDWIDTH)),
                                draw(st.floats(0.0, hardware.MAX_LATENCY_S)), "test",
                                achievable_fraction=draw(st.floats(1e-6, 1.0)))
    bandwidth = st.none() | _log_floats(1.0, _validate.MAX_BANDWIDTH)
    checkpoint = draw(st.booleans())
    p = plan.RunPlan(
        n_params=held * draw(st.floats(0.76, 1.3)), n_layers=n_layers, d_model=d_model, n_heads=heads,
        n_kv_heads=heads // group, d_ffn=d_ffn, vocab_size=vocab, gated_mlp=gated, seq_len=seq_len,
        hardware="test", n_gpus=n_gpus, gpus_per_node=draw(st.sampled_from([1, 8, 72])), inter_node="nic-test",
        intra_node_bw=draw(bandwidth), inter_node_bw=draw(bandwidth),
        gpu_memory_bytes=draw(st.none() | _log_floats(1.0, _validate.MAX_BYTES)),
        tp=tp, pp=pp, cp=cp, vp=vp, zero=draw(st.sampled_from([0, 1, 2, 3])),
        sequence_parallel=tp > 1 and draw(st.booleans()), tp_comm_overlap=draw(st.floats(0.0, 1.0)),
        overlap_dp_comm=draw(st.booleans()), grad_reduce_precision=draw(st.sampled_from(["fp32", "bf16"])),
        zero3_gather=draw(st.sampled_from(["per_layer", "per_tensor"])), flash_attention=draw(st.booleans()),
        fused_kernels=draw(st.booleans()), micro_batch=micro_batch, global_batch=global_batch,
        recompute=draw(st.sampled_from(["none", "selective", "op", "full"])),
        train_tokens=draw(_log_floats(1e-300, _validate.MAX_TOKENS)),
        bytes_per_token=draw(_log_floats(1e-300, 1e6)), storage_read_bw=draw(bandwidth),
        checkpoint_interval_s=draw(_log_floats(1.0, _validate.MAX_SECONDS)) if checkpoint else None,
        checkpoint_write_bw=draw(_log_floats(1.0, _validate.MAX_BANDWIDTH)) if checkpoint else None,
        power_cap_w=draw(st.one_of(st.none(), st.none(), _log_floats(1e-300, _validate.MAX_GPU_POWER_W))),
        host_overhead_w_per_gpu=draw(st.none() | st.floats(0.0, _validate.MAX_GPU_POWER_W)),
        pue=draw(st.floats(1.0, 5.0)), grid_g_per_kwh=draw(st.floats(0.0, _validate.MAX_GRID_G_PER_KWH)),
        energy_price_per_kwh=draw(st.floats(0.0, _validate.MAX_PRICE)),
        gpu_hour_price=draw(st.floats(0.0, _validate.MAX_PRICE)),
    )
    return p, _ExtremeCatalog(hw, nic)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(extreme_plans())
def test_any_valid_plan_predicts_finite_days_energy_and_cost_or_names_the_field(plan_and_catalog):
    p, cat = plan_and_catalog
    try:
        prediction = plan.predict(p, cat)
    except workbench.InputError as exc:
        # only what the device cannot do for this plan: a cap below its lowest, a missing link
        assert exc.parameter in ("power_cap_w", "intra_node"), str(exc)
        event(f"refused: {exc.parameter}")
        return
    event("predicted")
    assert non_finite(prediction) is None, non_finite(prediction)
    assert prediction.train_time_s > 0 and prediction.step_time_s > 0 and 0 < prediction.mfu
    assert non_finite(plan.what_if(prediction)) is None


# -- the same contract for values hypothesis draws -----------------------------------------------
ANY_VALUE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([10**400, -(10**400), 2**53 + 1, 2**63, 2**64, 5e-324, -0.0]),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=3),
    st.lists(st.integers(-(10**20), 10**20), max_size=3),
)
#: Calls left out of the random walk: benchmarks that run for their size (bounded, but seconds
#: at the top) and the command line (it reads sys.argv and prints).
NOT_FUZZED = {"measure.stream_triad", "measure.matmul_peak", "measure.measure_machine", "plan_check.main"}
FUZZED = [c for c in CALLS if c[0] not in NOT_FUZZED and c[2]]


@pytest.mark.parametrize(("label", "func", "good"), FUZZED, ids=[c[0] for c in FUZZED])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_value_gives_a_finite_result_or_an_error_naming_the_parameter(label, func, good, runs_file, data):
    good = _with_runs_file(good, runs_file)
    param = data.draw(st.sampled_from(sorted(good)), label="param")
    value = data.draw(ANY_VALUE, label="value")
    problem = bad_value_problem(func, good, param, value, FIELD_NAMED.get((label, param)))
    assert problem is None, f"{label}({param}={value!r}): {problem}"
