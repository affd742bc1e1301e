"""workbench.scenarios: validation, immutability, JSON round-trips, versions, undo labels."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench import _validate as v
from workbench._validate import InputError
from workbench.hardware import PRECISIONS
from workbench.kernels import Kernel
from workbench.measured import MeasuredScenario
from workbench.plan import RunPlan
from workbench.scenarios import (
    BINARY_FIELDS,
    CHOICES,
    COLLECTIVES,
    FIELD_LABELS,
    FIELD_UNITS,
    SCENARIO_TYPES,
    UPGRADERS,
    VALUE_LABELS,
    AllReduceScenario,
    CollectiveScenario,
    PowerScenario,
    RooflineScenario,
    ScalingScenario,
    Scenario,
    ScenarioVersionError,
    describe_change,
    register_upgrader,
    scenario_from_dict,
    scenario_from_json,
)
from workbench.units import UNITS
from workbench.workspace import DEFAULT_PLAN

ALL_TYPES = list(SCENARIO_TYPES.values())
#: How to make each type's default value (the run plan has required fields).
_DEFAULT_MAKERS = {RunPlan: lambda: DEFAULT_PLAN}


def make(cls):
    return _DEFAULT_MAKERS.get(cls, cls)()


# -- defaults and the contract -----------------------------------------------------------------
def test_the_six_kinds():
    assert SCENARIO_TYPES == {
        "roofline": RooflineScenario,
        "collective": CollectiveScenario,
        "allreduce": AllReduceScenario,
        "scaling": ScalingScenario,
        "power": PowerScenario,
        "run_plan": RunPlan,
        "measured": MeasuredScenario,
    }
    for cls in ALL_TYPES:
        assert issubclass(cls, Scenario)
        assert cls.schema_version == {PowerScenario: 3, CollectiveScenario: 2}.get(cls, 1)


@pytest.mark.parametrize("cls", ALL_TYPES)
def test_defaults_are_valid_and_hashable(cls):
    scenario = make(cls)
    assert hash(scenario) == hash(make(cls))
    assert scenario == make(cls)


def test_default_values():
    assert RooflineScenario().hardware == ("h100-sxm",)
    assert RooflineScenario().primary == "h100-sxm"
    assert CollectiveScenario().message_bytes == 256 * 2**20
    assert AllReduceScenario().size_bytes == 2**30
    assert AllReduceScenario().size_max == 16 * 2**30
    assert ScalingScenario().n_gpus == 8
    assert not ScalingScenario().six_n_only
    assert ScalingScenario(n_layers=0, d_model=0, seq_len=0).six_n_only
    assert PowerScenario().power_cap_w is None


CONTRACT_FIELDS = {
    "roofline": ["hardware", "precision", "sparse", "show_precision_ceilings", "show_l2", "kernels"],
    "collective": ["collective", "n_ranks", "schedule", "message_bytes", "root", "step", "link_bw", "alpha",
                   "interconnect"],
    "allreduce": ["collective", "size_bytes", "n_ranks", "link_bw", "alpha", "interconnect",
                  "size_min", "size_max", "measured_log"],
    "scaling": ["hardware", "precision", "sparse", "n_gpus", "n_params", "n_layers", "d_model",
                "seq_len", "tokens_per_s", "recompute", "serial_fraction", "mode", "measured",
                "pipeline_stages", "microbatches", "comm_time_s", "overlap", "dataloader_wait_s",
                "bytes_per_token", "checkpoint_bytes", "checkpoint_interval_s"],
    "power": ["hardware", "n_gpus", "power_cap_w", "static_fraction", "min_voltage_fraction",
              "compute_bound_share", "tokens_per_s_per_gpu", "train_tokens",
              "host_overhead_w_per_gpu", "pue", "grid_g_per_kwh", "region",
              "energy_price_per_kwh", "gpu_hour_price", "currency"],
}


@pytest.mark.parametrize("kind", CONTRACT_FIELDS)
def test_contract_field_names(kind):
    names = SCENARIO_TYPES[kind].field_names()
    for name in CONTRACT_FIELDS[kind]:
        assert name in names


def test_every_field_has_a_label_and_units_are_known():
    for cls in ALL_TYPES:
        for name in cls.field_names():
            assert FIELD_LABELS[name]
    assert set(FIELD_UNITS.values()) <= set(UNITS)
    assert BINARY_FIELDS <= {k for k, u in FIELD_UNITS.items() if u == "B"}
    for field, options in CHOICES.items():
        assert set(options) <= set(VALUE_LABELS[field])
    assert COLLECTIVES == ("all_reduce", "reduce", "reduce_scatter", "all_gather", "broadcast",
                           "scatter", "all_to_all")


# -- immutability and editing ---------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL_TYPES)
def test_assignment_raises(cls):
    scenario = make(cls)
    name = cls.field_names()[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(scenario, name, getattr(scenario, name))


def test_with_changes_makes_a_new_validated_value():
    old = ScalingScenario()
    new = old.with_changes(n_gpus=512)
    assert new.n_gpus == 512 and old.n_gpus == 8
    assert type(new) is ScalingScenario
    with pytest.raises(InputError) as info:
        old.with_changes(n_gpus=0)
    assert info.value.parameter == "n_gpus"
    with pytest.raises(InputError) as info:
        old.with_changes(gpus=4)
    assert info.value.parameter == "gpus"
    with pytest.raises(InputError):
        old.with_changes(kind="power")


def test_values_are_normalised():
    s = ScalingScenario(n_gpus=8.0, n_params=8_000_000_000, measured=[[8, 100], [16, 190.5]])
    assert type(s.n_gpus) is int and type(s.n_params) is float
    assert s.measured == ((8, 100.0), (16, 190.5))
    r = RooflineScenario(hardware=["h100-sxm", " a100-sxm "],
                         kernels=[{"name": "gemm", "flops": 1e12, "bytes": 1e9}])
    assert r.hardware == ("h100-sxm", "a100-sxm")
    assert r.kernels == (Kernel("gemm", 1e12, 1e9),)
    # raw logs are kept exactly
    assert AllReduceScenario(measured_log="  # nccl\n").measured_log == "  # nccl\n"


# -- validation: field named ---------------------------------------------------------------
INVALID = [
    (RooflineScenario, {"hardware": ()}, "hardware"),
    (RooflineScenario, {"hardware": ("a", "b", "c", "d", "e")}, "hardware"),
    (RooflineScenario, {"hardware": ("a", "a")}, "hardware"),
    (RooflineScenario, {"hardware": "h100-sxm"}, "hardware"),
    (RooflineScenario, {"hardware": ("h100", "")}, "hardware[1]"),
    (RooflineScenario, {"hardware": ("h100", 3)}, "hardware[1]"),
    (RooflineScenario, {"precision": "fp12"}, "precision"),
    (RooflineScenario, {"precision": "BF16"}, "precision"),
    (RooflineScenario, {"sparse": 1}, "sparse"),
    (RooflineScenario, {"show_l2": "yes"}, "show_l2"),
    (RooflineScenario, {"show_precision_ceilings": None}, "show_precision_ceilings"),
    (RooflineScenario, {"kernels": [1]}, "kernels[0]"),
    (RooflineScenario, {"kernels": "gemm"}, "kernels"),
    (RooflineScenario, {"kernels": [{"name": "g", "flops": -1, "bytes": 1}]}, "kernels[0].flops"),
    (RooflineScenario, {"kernels": [{"name": "g", "bytes": 1}]}, "kernels[0].flops"),
    (RooflineScenario, {"kernels": [{"name": "g", "flops": 1, "bytes": 1, "x": 1}]}, "kernels[0].x"),
    (CollectiveScenario, {"collective": "all_reduce_x"}, "collective"),
    (CollectiveScenario, {"n_ranks": 1}, "n_ranks"),
    (CollectiveScenario, {"n_ranks": 65}, "n_ranks"),
    (CollectiveScenario, {"n_ranks": 4.5}, "n_ranks"),
    (CollectiveScenario, {"n_ranks": "4"}, "n_ranks"),
    (CollectiveScenario, {"n_ranks": True}, "n_ranks"),
    (CollectiveScenario, {"schedule": "tree"}, "schedule"),
    (CollectiveScenario, {"message_bytes": 0}, "message_bytes"),
    (CollectiveScenario, {"message_bytes": float("nan")}, "message_bytes"),
    (CollectiveScenario, {"root": 4}, "root"),
    (CollectiveScenario, {"root": -1}, "root"),
    (CollectiveScenario, {"step": -1}, "step"),
    (CollectiveScenario, {"link_bw": 0.5}, "link_bw"),
    (CollectiveScenario, {"link_bw": 2e18}, "link_bw"),
    (CollectiveScenario, {"link_bw": float("inf")}, "link_bw"),
    (CollectiveScenario, {"alpha": -1e-6}, "alpha"),
    (CollectiveScenario, {"alpha": 11.0}, "alpha"),
    (CollectiveScenario, {"interconnect": 5}, "interconnect"),
    (CollectiveScenario, {"interconnect": "n" * 101}, "interconnect"),
    (AllReduceScenario, {"collective": "gather"}, "collective"),
    (AllReduceScenario, {"size_bytes": 0.0}, "size_bytes"),
    (AllReduceScenario, {"n_ranks": 1_000_001}, "n_ranks"),
    (AllReduceScenario, {"link_bw": 0}, "link_bw"),
    (AllReduceScenario, {"alpha": -1e-6}, "alpha"),
    (AllReduceScenario, {"interconnect": 5}, "interconnect"),
    (AllReduceScenario, {"size_min": 1e6, "size_max": 1e6}, "size_max"),
    (AllReduceScenario, {"size_min": 0}, "size_min"),
    (AllReduceScenario, {"measured_log": None}, "measured_log"),
    (ScalingScenario, {"hardware": ""}, "hardware"),
    (ScalingScenario, {"n_gpus": 0}, "n_gpus"),
    (ScalingScenario, {"n_params": 0}, "n_params"),
    (ScalingScenario, {"n_layers": -1}, "n_layers"),
    (ScalingScenario, {"d_model": 1.5}, "d_model"),
    (ScalingScenario, {"seq_len": -8}, "seq_len"),
    (ScalingScenario, {"tokens_per_s": 0}, "tokens_per_s"),
    (ScalingScenario, {"recompute": "selective"}, "recompute"),
    (ScalingScenario, {"serial_fraction": 1.5}, "serial_fraction"),
    (ScalingScenario, {"mode": "sideways"}, "mode"),
    (ScalingScenario, {"measured": [(0, 1.0)]}, "measured[0].gpus"),
    (ScalingScenario, {"measured": [(1, 0.0)]}, "measured[0].throughput"),
    (ScalingScenario, {"measured": [(1, 2.0, 3.0)]}, "measured[0]"),
    (ScalingScenario, {"measured": [5]}, "measured[0]"),
    (ScalingScenario, {"pipeline_stages": 0}, "pipeline_stages"),
    (ScalingScenario, {"microbatches": 0}, "microbatches"),
    (ScalingScenario, {"comm_time_s": -1}, "comm_time_s"),
    (ScalingScenario, {"overlap": -0.1}, "overlap"),
    (ScalingScenario, {"dataloader_wait_s": -1}, "dataloader_wait_s"),
    (ScalingScenario, {"bytes_per_token": -1}, "bytes_per_token"),
    (ScalingScenario, {"checkpoint_bytes": -1}, "checkpoint_bytes"),
    (ScalingScenario, {"checkpoint_interval_s": 0}, "checkpoint_interval_s"),
    (PowerScenario, {"n_gpus": 0}, "n_gpus"),
    (PowerScenario, {"power_cap_w": 0}, "power_cap_w"),
    (PowerScenario, {"power_cap_w": "700 W"}, "power_cap_w"),
    (PowerScenario, {"static_fraction": 1.0}, "static_fraction"),
    (PowerScenario, {"min_voltage_fraction": 0.0}, "min_voltage_fraction"),
    (PowerScenario, {"min_voltage_fraction": 1.01}, "min_voltage_fraction"),
    (PowerScenario, {"compute_bound_share": 2}, "compute_bound_share"),
    (PowerScenario, {"tokens_per_s_per_gpu": 0}, "tokens_per_s_per_gpu"),
    (PowerScenario, {"train_tokens": -1}, "train_tokens"),
    (PowerScenario, {"host_overhead_w_per_gpu": -1}, "host_overhead_w_per_gpu"),
    (PowerScenario, {"pue": 0.9}, "pue"),
    (PowerScenario, {"pue": 5.1}, "pue"),
    (PowerScenario, {"grid_g_per_kwh": -1}, "grid_g_per_kwh"),
    (PowerScenario, {"region": ""}, "region"),
    (PowerScenario, {"energy_price_per_kwh": -0.1}, "energy_price_per_kwh"),
    (PowerScenario, {"gpu_hour_price": float("inf")}, "gpu_hour_price"),
    (PowerScenario, {"currency": ""}, "currency"),
    (PowerScenario, {"currency": "dollars and cents"}, "currency"),
]


@pytest.mark.parametrize(("cls", "fields", "parameter"), INVALID,
                         ids=[f"{c.kind}-{p}-{i}" for i, (c, _, p) in enumerate(INVALID)])
def test_invalid_fields_are_named(cls, fields, parameter):
    with pytest.raises(InputError) as info:
        cls(**fields)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"{parameter}: ")
    # the same value arriving through JSON fails the same way
    data = {**make(cls).to_dict(), **{k: _jsonish(val) for k, val in fields.items()}}
    try:
        text = json.dumps(data)
    except (TypeError, ValueError):
        return
    if "NaN" in text or "Infinity" in text:
        return
    with pytest.raises(InputError) as info:
        scenario_from_json(text)
    assert info.value.parameter == parameter


def _jsonish(value):
    return list(value) if isinstance(value, tuple) else value


def test_message_reads_well():
    with pytest.raises(InputError, match=r"^n_ranks: must be >= 2, got 1$"):
        CollectiveScenario(n_ranks=1)
    with pytest.raises(InputError, match=r"root: must be < n_ranks \(4\), got 4"):
        CollectiveScenario(root=4)


# -- JSON round-trips ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ALL_TYPES)
def test_to_dict_shape(cls):
    data = make(cls).to_dict()
    assert data["kind"] == cls.kind and data["schema_version"] == cls.schema_version
    assert set(data) == {"kind", "schema_version", *cls.field_names()}
    json.dumps(data, allow_nan=False)  # JSON-safe as is


def test_to_json_is_stable_and_sorted():
    s = RooflineScenario(kernels=(Kernel("gemm", 1e12, 1e9, 1e-3),))
    text = s.to_json()
    assert text == RooflineScenario(kernels=[{"name": "gemm", "flops": 1e12, "bytes": 1e9,
                                              "time_s": 1e-3}]).to_json()
    keys = list(json.loads(text))
    assert keys == sorted(keys)
    assert json.loads(text)["kernels"] == [{"name": "gemm", "flops": 1e12, "bytes": 1e9, "time_s": 1e-3}]
    assert json.loads(text)["hardware"] == ["h100-sxm"]


finite = st.floats(allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0.0, max_value=1e300) | st.just(0.0)


def within(low, high):
    """Any float a field bounded to [low, high] accepts (low itself excluded when it is 0)."""
    values = st.floats(min_value=low, max_value=high, exclude_min=low == 0)
    return values | st.just(0.0) if low == 0 else values


def up_to(high):
    """A field that may be 0 and goes up to ``high``."""
    return st.floats(min_value=0.0, max_value=high)


tokens_per_s = within(v.MIN_TOKENS_PER_S, v.MAX_TOKENS_PER_S)
unit_interval = st.floats(min_value=0.0, max_value=1.0)
keys = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
               max_size=20).filter(lambda t: t.strip() == t and t)
texts = st.text(max_size=200)
# counts whose ratios (intensity, achieved rate) stay inside the float range, as Kernel requires
kernel_counts = st.floats(min_value=1e-150, max_value=1e150, allow_nan=False, allow_infinity=False)
kernels = st.builds(Kernel, name=keys, flops=kernel_counts, bytes=kernel_counts,
                    time_s=st.none() | kernel_counts)

roofline = st.builds(
    RooflineScenario,
    hardware=st.lists(keys, min_size=1, max_size=4, unique=True).map(tuple),
    precision=st.sampled_from(PRECISIONS),
    sparse=st.booleans(),
    show_precision_ceilings=st.booleans(),
    show_l2=st.booleans(),
    kernels=st.lists(kernels, max_size=5).map(tuple),
)


@st.composite
def collective(draw):
    n = draw(st.integers(2, 64))
    return CollectiveScenario(
        collective=draw(st.sampled_from(COLLECTIVES)),
        n_ranks=n,
        schedule=draw(st.sampled_from(("conceptual", "ring"))),
        message_bytes=draw(within(1e-300, v.MAX_BYTES)),
        root=draw(st.integers(0, n - 1)),
        step=draw(st.integers(0, 10**6)),
        link_bw=draw(within(1.0, v.MAX_BANDWIDTH)),
        alpha=draw(up_to(10.0)),
        interconnect=draw(st.just("") | keys),
    )


@st.composite
def allreduce(draw):
    lo = draw(st.floats(min_value=1.0, max_value=1e12))
    hi = draw(st.floats(min_value=lo * 2, max_value=1e15))
    return AllReduceScenario(
        collective=draw(st.sampled_from(COLLECTIVES)),
        size_bytes=draw(within(1e-300, v.MAX_BYTES)),
        n_ranks=draw(st.integers(2, 1_000_000)),
        link_bw=draw(within(1.0, v.MAX_BANDWIDTH)),
        alpha=draw(up_to(10.0)),
        interconnect=draw(st.just("") | keys),
        size_min=lo,
        size_max=hi,
        measured_log=draw(texts),
    )


scaling = st.builds(
    ScalingScenario,
    hardware=keys,
    precision=st.sampled_from(PRECISIONS),
    sparse=st.booleans(),
    n_gpus=st.integers(1, 10_000_000),
    n_params=within(1e-300, v.MAX_PARAMS),
    n_layers=st.integers(0, 1000),
    d_model=st.integers(0, 100_000),
    seq_len=st.integers(0, 10**7),
    tokens_per_s=tokens_per_s,
    recompute=st.sampled_from(("none", "full")),
    serial_fraction=unit_interval,
    mode=st.sampled_from(("strong", "weak")),
    measured=st.lists(st.tuples(st.integers(1, 100_000), tokens_per_s), max_size=6).map(tuple),
    pipeline_stages=st.integers(1, 64),
    microbatches=st.integers(1, 1024),
    comm_time_s=up_to(v.MAX_SECONDS),
    overlap=unit_interval,
    dataloader_wait_s=up_to(v.MAX_SECONDS),
    bytes_per_token=up_to(1e6),
    checkpoint_bytes=up_to(v.MAX_BYTES),
    checkpoint_interval_s=within(1.0, v.MAX_SECONDS),
)

power = st.builds(
    PowerScenario,
    hardware=keys,
    n_gpus=st.integers(1, 10**6),
    power_cap_w=st.none() | within(1e-300, v.MAX_GPU_POWER_W),
    static_fraction=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    min_voltage_fraction=st.floats(min_value=0.0, max_value=1.0, exclude_min=True),
    compute_bound_share=unit_interval,
    tokens_per_s_per_gpu=tokens_per_s,
    train_tokens=within(1e-300, v.MAX_TOKENS),
    host_overhead_w_per_gpu=up_to(v.MAX_GPU_POWER_W),
    pue=st.floats(min_value=1.0, max_value=5.0),
    grid_g_per_kwh=up_to(v.MAX_GRID_G_PER_KWH),
    region=keys,
    energy_price_per_kwh=up_to(v.MAX_PRICE),
    gpu_hour_price=up_to(v.MAX_PRICE),
    currency=st.sampled_from(("USD", "EUR", "GBP", "€", "CHF")),
)

any_scenario = st.one_of(roofline, collective(), allreduce(), scaling, power)


@given(any_scenario)
def test_json_round_trip_is_lossless(scenario):
    text = scenario.to_json()
    back = scenario_from_json(text)
    assert back == scenario and type(back) is type(scenario)
    assert back.to_json() == text
    assert scenario_from_dict(scenario.to_dict()) == scenario
    assert type(scenario).from_dict(json.loads(text)) == scenario


@given(any_scenario)
def test_with_no_changes_is_equal(scenario):
    assert scenario.with_changes() == scenario


# -- bad documents -----------------------------------------------------------------------------
def test_unknown_kind():
    with pytest.raises(InputError) as info:
        scenario_from_dict({"kind": "teleport", "schema_version": 1})
    assert info.value.parameter == "kind" and "roofline" in str(info.value)
    with pytest.raises(InputError) as info:
        scenario_from_dict({"schema_version": 1})
    assert info.value.parameter == "kind"
    with pytest.raises(InputError) as info:
        scenario_from_dict({"kind": ["roofline"], "schema_version": 1})
    assert info.value.parameter == "kind"


def test_class_from_dict_checks_kind():
    with pytest.raises(InputError) as info:
        RooflineScenario.from_dict(PowerScenario().to_dict())
    assert info.value.parameter == "kind"


def test_unknown_field():
    data = ScalingScenario().to_dict() | {"n_gpu": 4}
    with pytest.raises(InputError) as info:
        scenario_from_dict(data)
    assert info.value.parameter == "n_gpu"
    assert "not a field of scaling scenarios" in str(info.value)


def test_missing_version():
    data = RooflineScenario().to_dict()
    del data["schema_version"]
    with pytest.raises(InputError) as info:
        scenario_from_dict(data)
    assert info.value.parameter == "schema_version"


@pytest.mark.parametrize("version", ["1", 1.0, True, None, -1])
def test_bad_version(version):
    data = RooflineScenario().to_dict() | {"schema_version": version}
    with pytest.raises(InputError) as info:
        scenario_from_dict(data)
    assert info.value.parameter == "schema_version"


def test_missing_fields_take_defaults():
    assert scenario_from_dict({"kind": "power", "schema_version": 3, "n_gpus": 64}) == PowerScenario(n_gpus=64)
    # a version-2 scenario keeps its best cap by tokens per joule
    assert scenario_from_dict({"kind": "power", "schema_version": 2, "n_gpus": 64}) == PowerScenario(
        n_gpus=64, cap_objective="energy")


def test_power_version_1_keeps_planning_from_its_measured_throughput():
    old = {"kind": "power", "schema_version": 1, "n_gpus": 64, "tokens_per_s_per_gpu": 6500.0}
    upgraded = scenario_from_dict(old)
    assert upgraded == PowerScenario(n_gpus=64, tokens_per_s_per_gpu=6500.0, throughput_mfu=None,
                                     cap_objective="energy")
    assert upgraded.to_dict()["schema_version"] == 3
    assert scenario_from_dict(upgraded.to_dict()) == upgraded
    with pytest.raises(InputError) as info:
        PowerScenario(throughput_mfu=1.5)
    assert info.value.parameter == "throughput_mfu"


def test_newer_version_is_refused_naming_both_versions():
    data = ScalingScenario().to_dict() | {"schema_version": 7}
    with pytest.raises(ScenarioVersionError) as info:
        scenario_from_dict(data)
    err = info.value
    assert isinstance(err, InputError) and err.parameter == "schema_version"
    assert "version 7" in str(err) and "version 1" in str(err)


def test_wrong_types_through_json():
    for field, value in [("n_gpus", "8"), ("sparse", "true"), ("measured", {"8": 1}),
                         ("precision", 16), ("n_params", None), ("hardware", ["a"])]:
        data = ScalingScenario().to_dict() | {field: value}
        with pytest.raises(InputError) as info:
            scenario_from_json(json.dumps(data))
        assert info.value.parameter.split("[")[0].split(".")[0] == field, field


# -- upgraders -------------------------------------------------------------------------------
def test_fake_v0_to_v1_upgrader(monkeypatch):
    monkeypatch.setattr("workbench.scenarios.UPGRADERS", dict(UPGRADERS))
    from workbench import scenarios

    @scenarios.register_upgrader("collective", 0)
    def rename_ranks(data):
        data["n_ranks"] = data.pop("ranks")
        return data

    old = {"kind": "collective", "schema_version": 0, "ranks": 16, "collective": "all_gather"}
    assert scenario_from_dict(old) == CollectiveScenario(n_ranks=16, collective="all_gather")
    assert scenario_from_json(json.dumps(old)).n_ranks == 16
    assert old["ranks"] == 16  # the caller's dict is not modified


def test_a_version_1_collective_opens_on_the_calculator_s_default_link():
    # as version 1 wrote it: no link (the panel held one, and lost a typed one on saving)
    text = ('{"collective": "broadcast", "kind": "collective", "message_bytes": 67108864, "n_ranks": 8, '
            '"root": 2, "schedule": "ring", "schema_version": 1, "step": 5}')
    s = scenario_from_json(text)
    assert (s.collective, s.n_ranks, s.root, s.step, s.message_bytes) == ("broadcast", 8, 2, 5, 64 * 2**20)
    calculator = AllReduceScenario()
    assert (s.link_bw, s.alpha, s.interconnect) == (calculator.link_bw, calculator.alpha, "")
    assert s == CollectiveScenario(collective="broadcast", n_ranks=8, root=2, step=5, message_bytes=64 * 2**20)
    # and it saves as version 2, link and all
    again = json.loads(s.with_changes(link_bw=450e9, alpha=3e-6).to_json())
    assert again["schema_version"] == 2 and (again["link_bw"], again["alpha"]) == (450e9, 3e-6)
    assert scenario_from_dict(again).link_bw == 450e9


def test_the_collective_link_has_the_calculator_s_defaults_and_bounds():
    default, calculator = CollectiveScenario(), AllReduceScenario()
    assert (default.link_bw, default.alpha) == (calculator.link_bw, calculator.alpha)
    assert default.interconnect == ""
    s = CollectiveScenario(link_bw=1, alpha=10.0, interconnect=" nvlink-4 ")
    assert (s.link_bw, s.alpha, s.interconnect) == (1.0, 10.0, "nvlink-4") and type(s.link_bw) is float
    with pytest.raises(InputError, match="between 1 and 1e"):
        CollectiveScenario(link_bw=1e-300)
    assert describe_change(default, default.with_changes(alpha=2e-5)) == "Change latency per step to 20 µs"


def test_no_upgrade_path(monkeypatch):
    monkeypatch.setattr("workbench.scenarios.UPGRADERS", {})
    with pytest.raises(ScenarioVersionError, match="no upgrade from version 0"):
        scenario_from_dict({"kind": "power", "schema_version": 0})


def test_upgrader_chain_applied_in_order(monkeypatch):
    from workbench import scenarios

    monkeypatch.setattr(scenarios, "UPGRADERS", {})
    monkeypatch.setattr(PowerScenario, "schema_version", 3)
    seen = []

    def step(version):
        def upgrade(data):
            seen.append(version)
            data["trail"] = data.get("trail", "") + str(version)
            if version == 2:
                data["region"] = data.pop("trail")
            return data
        return upgrade

    for version in (2, 0, 1):  # registration order does not matter
        register_upgrader("power", version)(step(version))
    upgraded = scenario_from_dict({"kind": "power", "schema_version": 0})
    assert seen == [0, 1, 2]
    assert upgraded.region == "012"
    assert upgraded.to_dict()["schema_version"] == 3
    seen.clear()
    assert scenario_from_dict({"kind": "power", "schema_version": 2, "trail": "x"}).region == "x2"
    assert seen == [2]
    assert scenario_from_dict(upgraded.to_dict()) == upgraded  # current version: no upgrade
    assert seen == [2]


def test_upgrader_must_return_a_dict(monkeypatch):
    from workbench import scenarios

    monkeypatch.setattr(scenarios, "UPGRADERS", {("roofline", 0): lambda data: None})
    with pytest.raises(ScenarioVersionError):
        scenario_from_dict({"kind": "roofline", "schema_version": 0})


# -- hostile JSON ----------------------------------------------------------------------------
HOSTILE = [
    "",
    "not json",
    "[1, 2]",
    '"roofline"',
    "null",
    "{" * 100_000,
    "[" * 100_000 + "]" * 100_000,
    '{"kind": "roofline", "schema_version": 1, "hardware": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"kind": "roofline", "schema_version": 1, "kernels": ' + "[" * 900 + "]" * 900 + "}",
    '{"kind": "scaling", "schema_version": 1, "n_params": NaN}',
    '{"kind": "scaling", "schema_version": 1, "n_params": Infinity}',
    '{"kind": "scaling", "schema_version": 1, "n_params": -Infinity}',
    '{"kind": "scaling", "schema_version": 1, "n_params": 1e999}',
    '{"kind": "scaling", "schema_version": 1, "n_params": ' + "9" * 400 + "}",
    '{"kind": "scaling", "schema_version": 1, "n_gpus": ' + "9" * 400 + "}",
    '{"kind": "scaling", "schema_version": 1, "n_gpus": ' + "9" * 5000 + "}",
    '{"kind": "scaling", "schema_version": ' + "9" * 400 + "}",
    '{"kind": "scaling", "schema_version": 1, "n_gpus": 8, "n_gpus": 0}',
    '{"kind": "scaling", "schema_version": 1, "measured": [[8, NaN]]}',
    '{"kind": "roofline", "schema_version": 1, "kernels": [{"name": "k", "flops": 1e999, "bytes": 1}]}',
    '{"kind": "roofline", "schema_version": 1, "kernels": [{"name": "k", "flops": ' + "9" * 400 + ', "bytes": 1}]}',
    '{"kind": "roofline", "schema_version": 1, "__class__": "os.system"}',
    '{"kind": "power", "schema_version": 1, "power_cap_w": {"$eval": "1+1"}}',
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_hostile_json_is_rejected_cleanly(text):
    with pytest.raises(InputError):
        scenario_from_json(text)


def test_hostile_json_messages():
    with pytest.raises(InputError, match="NaN is not allowed"):
        scenario_from_json('{"kind": "scaling", "schema_version": 1, "n_params": NaN}')
    with pytest.raises(InputError) as info:
        scenario_from_json('{"kind": "scaling", "schema_version": 1, "n_params": 1e999}')
    assert info.value.parameter == "n_params"
    with pytest.raises(InputError, match="appears twice"):
        scenario_from_json('{"kind": "scaling", "schema_version": 1, "n_gpus": 8, "n_gpus": 0}')
    with pytest.raises(InputError, match="nested too deeply"):
        scenario_from_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError) as info:
        scenario_from_json("{not json")
    assert info.value.parameter == "json" and "line 1" in str(info.value)


def test_json_size_limit_and_bytes(monkeypatch):
    from workbench import scenarios

    text = AllReduceScenario(measured_log="x" * 1000).to_json()
    assert scenario_from_json(text.encode("utf-8")).measured_log == "x" * 1000
    with pytest.raises(InputError, match="UTF-8"):
        scenario_from_json(b"\xff\xfe{}")
    with pytest.raises(InputError, match="must be text"):
        scenario_from_json(12)
    monkeypatch.setattr(scenarios, "MAX_JSON_CHARS", 100)
    with pytest.raises(InputError, match="too long"):
        scenario_from_json(text)


# -- undo labels -----------------------------------------------------------------------------
def test_describe_change_one_field():
    s = ScalingScenario()
    assert describe_change(s, s.with_changes(n_gpus=512)) == "Change GPU count to 512"
    assert describe_change(s, s.with_changes(n_gpus=16384)) == "Change GPU count to 16 384"
    assert describe_change(s, s.with_changes(precision="fp8")) == "Change precision to FP8"
    assert describe_change(s, s.with_changes(sparse=True)) == "Turn sparsity on"
    assert describe_change(s.with_changes(sparse=True), s) == "Turn sparsity off"
    assert describe_change(s, s.with_changes(serial_fraction=0.05)) == "Change serial fraction to 5%"
    assert describe_change(s, s.with_changes(n_params=70e9)) == "Change parameters to 70B"
    assert describe_change(s, s.with_changes(mode="weak")) == "Change scaling mode to weak scaling"
    assert describe_change(s, s.with_changes(measured=((8, 1.0),))) == "Edit measured throughput"
    assert describe_change(s, s.with_changes(comm_time_s=0.25)) == "Change communication time per step to 250 ms"
    assert describe_change(s, s) == "No change"

    c = CollectiveScenario()
    assert describe_change(c, c.with_changes(collective="reduce_scatter")) == "Change collective to reduce-scatter"
    assert describe_change(c, c.with_changes(message_bytes=64 * 2**20)) == "Change message size to 64 MiB"

    a = AllReduceScenario(interconnect="nvlink4")
    assert describe_change(a, a.with_changes(link_bw=450e9)) == "Change link bandwidth to 450 GB/s"
    assert describe_change(a, a.with_changes(interconnect="")) == "Clear interconnect"
    assert describe_change(a, a.with_changes(measured_log="# nccl-tests\n...")) == "Edit measured log"

    p = PowerScenario()
    assert describe_change(p, p.with_changes(power_cap_w=500)) == "Change power cap to 500 W"
    assert describe_change(p.with_changes(power_cap_w=500), p) == "Remove power cap"
    assert describe_change(p, p.with_changes(pue=1.3)) == "Change PUE to 1.3"
    assert describe_change(p, p.with_changes(grid_g_per_kwh=300.0)) == "Change grid carbon intensity to 300"

    r = RooflineScenario()
    gemm = Kernel("gemm", 1e12, 1e9)
    with_gemm = r.with_changes(kernels=(gemm,))
    assert describe_change(r, with_gemm) == "Add kernel 'gemm'"
    assert describe_change(with_gemm, r) == "Remove kernel 'gemm'"
    assert describe_change(with_gemm, r.with_changes(kernels=(Kernel("gemm", 2e12, 1e9),))) == "Edit kernels"
    assert describe_change(r, r.with_changes(show_l2=True)) == "Turn L2 roofline on"
    assert describe_change(r, r.with_changes(hardware=("h100-sxm", "mi300x"))) == "Change hardware to h100-sxm, mi300x"


def test_describe_change_several_fields_and_errors():
    s = ScalingScenario()
    assert describe_change(s, s.with_changes(n_gpus=16, precision="fp8")) == "Change precision and GPU count"
    assert describe_change(s, s.with_changes(n_gpus=16, precision="fp8", sparse=True)) == "Change 3 scaling settings"
    with pytest.raises(InputError):
        describe_change(s, PowerScenario())
    with pytest.raises(InputError):
        describe_change(s, {"n_gpus": 8})


@given(any_scenario, any_scenario)
def test_describe_change_always_gives_a_label(a, b):
    if type(a) is type(b):
        label = describe_change(a, b)
        assert label and label[0].isupper()


def test_editing_a_roofline_keeps_its_validated_kernels_and_still_checks_new_ones():
    from workbench.kernels import Kernel
    from workbench.scenarios import RooflineScenario

    kernels = tuple(Kernel(f"k{i}", 1e9 + i, 1e6) for i in range(1000))
    first = RooflineScenario(kernels=kernels)
    edited = first.with_changes(sparse=True)
    assert edited.kernels is first.kernels  # Kernel values validate themselves; not redone per edit
    with pytest.raises(ValueError, match=r"kernels\[1\]"):
        first.with_changes(kernels=(kernels[0], {"name": "bad", "flops": -1, "bytes": 1}))
