"""The workspace: the document a project saves. One run plan at the centre, each panel's
scenario beside it, and which panels override the plan.

No Qt here: ``ui/document.py`` wraps this for the window (undo, signals, the cached
prediction). What lives here:

- :class:`Workspace`, a value with versioned ``to_dict`` / ``from_dict``. Version 1 (the
  shared-context workspace of earlier releases) is read and migrated: its context becomes
  the plan.
- :func:`edit_plan`: the one set of rules for changing the plan from the toolbar or a panel
  (a new device keeps the precision it has, or falls back by :func:`precision_fallback`; a
  GPU count the parallel layout cannot split is refused with what would work; a model size
  reshapes the model in its proportions).
- :func:`follow_plan`: how each panel's scenario follows the plan, one function per kind in
  ``FOLLOWERS``, tested without Qt.
- :func:`analyse`: what each kind's view shows, worked out from its scenario and the plan by
  one function per kind (``workbench.analyses.<kind>``); :class:`AnalysisCache` keeps each
  kind's last one, so it is computed once per change however often it is read.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from workbench import _validate as v
from workbench import collectives
from workbench import power as pw
from workbench.catalog import Catalog, check_catalog
from workbench.context import RunContext
from workbench.hardware import PRECISION_LABELS, Hardware
from workbench.plan import Prediction, RunPlan, scaled_shape, sync_link_rate
from workbench.scenarios import (
    AllReduceScenario,
    CollectiveScenario,
    PowerScenario,
    RooflineScenario,
    ScalingScenario,
    Scenario,
    scenario_from_dict,
)

WORKSPACE_VERSION = 2

#: The plan a new project starts from: Llama 3 8B (Dubey et al. 2024, Table 3) on one node of
#: 8 H100, fully sharded (ZeRO 3), one 8,192-token sequence per micro-batch, 1T tokens.
DEFAULT_PLAN = RunPlan(
    n_params=8_030_261_248, n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_ffn=14336,
    vocab_size=128256, seq_len=8192, gated_mlp=True,
    hardware="h100-sxm", n_gpus=8, gpus_per_node=8, intra_node="nvlink-4", inter_node="nic-400g",
    zero=3, global_batch=64, micro_batch=1, precision="bf16", train_tokens=1e12,
)

#: Training precisions in the order a device without the chosen one falls back to them.
PRECISION_FALLBACK_ORDER: tuple[str, ...] = ("bf16", "fp16", "fp8", "tf32", "fp32", "fp64", "int8", "fp4")


def precision_fallback(hw: Hardware, wanted: str) -> str:
    """``wanted`` where ``hw`` has it, else the first of ``PRECISION_FALLBACK_ORDER`` it has."""
    v.instance("hw", hw, Hardware)
    if wanted in hw.precisions:
        return wanted
    return next((p for p in PRECISION_FALLBACK_ORDER if p in hw.precisions), hw.precisions[0])


# -- the document ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workspace:
    """Plan, the roofline's 2:4 sparsity switch, each panel's scenario, overrides, active panel."""

    plan: RunPlan = DEFAULT_PLAN
    sparse: bool = False
    scenarios: Mapping[str, Scenario] = field(default_factory=dict)
    overrides: frozenset[str] = frozenset()
    active: str = ""

    def __post_init__(self) -> None:
        v.instance("plan", self.plan, RunPlan)
        v.flag("sparse", self.sparse)
        if not isinstance(self.scenarios, Mapping):
            raise v.InputError("scenarios", f"must be a mapping of panel kind to scenario, got "
                                            f"{v._describe(self.scenarios)}")
        for kind, scenario in self.scenarios.items():
            v.text("scenarios", kind)
            v.instance(f"scenarios[{kind!r}]", scenario, Scenario, "a scenario")
        if isinstance(self.overrides, (str, bytes)) or not isinstance(self.overrides, (set, frozenset, list, tuple)):
            raise v.InputError("overrides", f"must be a set of panel kinds, got {v._describe(self.overrides)}")
        for kind in self.overrides:
            v.text("overrides", kind)
        object.__setattr__(self, "overrides", frozenset(self.overrides))
        v.text("active", self.active, allow_empty=True)

    def with_scenario(self, kind: str, scenario: Scenario) -> Workspace:
        kind = v.text("kind", kind)
        v.instance("scenario", scenario, Scenario, "a scenario")
        return replace(self, scenarios={**self.scenarios, kind: scenario})

    def with_override(self, kind: str, on: bool) -> Workspace:
        kind = v.text("kind", kind)
        on = v.flag("on", on)
        overrides = set(self.overrides)
        (overrides.add if on else overrides.discard)(kind)
        return replace(self, overrides=frozenset(overrides))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": WORKSPACE_VERSION,
            "plan": self.plan.to_dict(),
            "sparse": self.sparse,
            "panels": {kind: s.to_dict() for kind, s in self.scenarios.items()},
            "overrides": {kind: True for kind in sorted(self.overrides)},
            "active": self.active,
        }

    @classmethod
    def from_dict(cls, data: Any, kinds: tuple[str, ...] | None = None) -> tuple[Workspace, list[str]]:
        """Read a saved workspace (this version or version 1), keeping what can be read.

        Returns the workspace and the problems met (a panel's scenario that could not be read
        is left out and named). Data from a newer version, or that is not a workspace at all,
        raises :class:`workbench.InputError`. ``kinds`` limits the panels kept to those known.
        """
        if not isinstance(data, Mapping):
            raise v.InputError("workspace", f"must be a JSON object, got {type(data).__name__}")
        version = data.get("version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise v.InputError("workspace", f"has no valid version, got {v._describe(version)}")
        if version > WORKSPACE_VERSION:
            raise v.InputError("workspace", f"was written by a newer version of the program "
                                            f"(workspace {version}, this one reads up to {WORKSPACE_VERSION})")
        problems: list[str] = []
        if version == 1:
            context = RunContext.from_dict(data.get("context") or {})
            plan, note = plan_from_context(context)
            if note:
                problems.append(note)
            sparse = context.sparse
        else:
            plan = RunPlan.from_dict(data.get("plan") or {})
            sparse = data.get("sparse", False)
            if not isinstance(sparse, bool):
                raise v.InputError("sparse", f"must be true or false, got {v._describe(sparse)}")
        scenarios: dict[str, Scenario] = {}
        panels = data.get("panels") or {}
        if not isinstance(panels, Mapping):
            raise v.InputError("panels", "must be an object of scenarios by panel")
        for kind, raw in panels.items():
            if kinds is not None and kind not in kinds:
                continue
            try:
                scenario = scenario_from_dict(raw)
                if scenario.kind != kind:
                    raise v.InputError("kind", f"is {scenario.kind!r}, not the panel's {kind!r}")
                scenarios[kind] = scenario
            except (ValueError, TypeError, KeyError) as exc:
                problems.append(f"{kind}: {exc}")
        raw_overrides = data.get("overrides") or {}
        if not isinstance(raw_overrides, Mapping):
            raise v.InputError("overrides", "must be an object of panel: true/false")
        overrides = frozenset(k for k, on in raw_overrides.items() if on is True and (kinds is None or k in kinds))
        active = data.get("active") or ""
        if not isinstance(active, str):
            active = ""
        return cls(plan=plan, sparse=sparse, scenarios=scenarios, overrides=overrides, active=active), problems


# -- the shared context as earlier releases saw it -----------------------------------------------
def dp_spans_nodes(plan: RunPlan) -> bool:
    """Whether the replicas of one GPU's shard (dp x cp, tp apart) sit on more than one node."""
    v.instance("plan", plan, RunPlan)
    return plan.tp * plan.replicas > plan.gpus_per_node


def sync_link(plan: RunPlan) -> str:
    """Preset key of the link the gradient synchronisation crosses ("" for the GPU's own link)."""
    v.instance("plan", plan, RunPlan)
    return plan.inter_node if dp_spans_nodes(plan) else (plan.intra_node or "")


def context_of(plan: RunPlan, sparse: bool = False) -> RunContext:
    """The plan as the shared context of version 1 (what a panel's old-style fields read)."""
    v.instance("plan", plan, RunPlan)
    return RunContext(hardware=plan.hardware, n_gpus=plan.n_gpus, precision=plan.precision,
                      sparse=sparse, interconnect=sync_link(plan), model_params=plan.n_params,
                      train_tokens=plan.train_tokens)


@v.public
def plan_from_context(context: RunContext, base: RunPlan = DEFAULT_PLAN) -> tuple[RunPlan, str]:
    """Migrate a version-1 context: hardware, GPUs, precision, tokens and the link carry over;
    the model is ``base``'s shape scaled to the context's size. Returns the plan and a note
    of anything adjusted to make the layout valid ("" when nothing was)."""
    v.instance("context", context, RunContext)
    v.instance("base", base, RunPlan)
    notes: list[str] = []
    plan = base
    # field by field: one that cannot be carried over is named, the rest still are
    steps: list[tuple[str, dict[str, Any]]] = [
        ("hardware", {"hardware": context.hardware, "precision": context.precision,
                      "intra_node": base.intra_node if context.hardware == base.hardware else None}),
        ("training tokens", {"train_tokens": context.train_tokens}),
    ]
    if context.interconnect.startswith("nic"):
        steps.append(("network", {"inter_node": context.interconnect}))
    elif context.interconnect.startswith("pcie"):
        steps.append(("node link", {"intra_node": context.interconnect}))
    if context.model_params != base.n_params:
        steps.append(("model size", scaled_shape(base, context.model_params)))
    for label, changes in steps:
        try:
            plan = plan.with_changes(**changes)
        except v.InputError as exc:
            notes.append(f"{label} not carried over ({exc})")
    try:
        plan, note = fit_gpus(plan, context.n_gpus)
        if note:
            notes.append(note)
    except v.InputError as exc:
        notes.append(f"GPU count not carried over ({exc})")
    return plan, "; ".join(notes)


@v.public
def fit_gpus(plan: RunPlan, n_gpus: int) -> tuple[RunPlan, str]:
    """``plan`` on ``n_gpus`` GPUs, keeping tp x pp x cp and each replica's batch.

    The global batch grows or shrinks with the data-parallel replicas (same micro-batches per
    replica); a GPU count tp x pp x cp does not divide raises InputError saying which would.
    """
    v.instance("plan", plan, RunPlan)
    count = v.gpu_count("n_gpus", n_gpus)
    split = plan.tp * plan.pp * plan.cp
    if count % split:
        below = max(split, count // split * split)
        raise v.InputError("n_gpus", f"tp x pp x cp = {split} must divide the GPU count: use {below:,} or "
                                     f"{below + split:,}, or change the parallel layout in the Run plan panel")
    per_replica = plan.global_batch // plan.dp
    new = plan.with_changes(n_gpus=count, global_batch=per_replica * (count // split))
    note = ""
    if new.global_batch != plan.global_batch:
        note = f"global batch {plan.global_batch:,} -> {new.global_batch:,} sequences (same per replica)"
    return new, note


# -- editing the plan -----------------------------------------------------------------------------
#: Fields of the version-1 context -> plan fields (the rest have the same name).
CONTEXT_TO_PLAN = {"model_params": "n_params"}


#: Plan fields whose change leaves a measured throughput true (the run is the same; only its
#: length, accounting or memory ceiling differ). Changing any other field drops it.
KEEPS_MEASURED: frozenset[str] = frozenset({
    "train_tokens", "pue", "grid_g_per_kwh", "energy_price_per_kwh", "gpu_hour_price", "currency",
    "host_overhead_w_per_gpu", "gpu_memory_bytes", "measured_source",
})


@v.public
def edit_plan(plan: RunPlan, lookup: Callable[[str], Hardware | None], /, **changes: Any) -> RunPlan:
    """``plan`` with ``changes`` (plan field names; ``model_params`` also accepted), checked.

    - ``hardware``: the device keeps the plan's precision when it has it, else takes
      :func:`precision_fallback`; a precision the device lacks, asked for, is refused with the
      ones it has.
    - ``n_gpus``: :func:`fit_gpus` (the batch per replica stays).
    - ``n_params`` alone: the model is reshaped in its proportions (:func:`scaled_shape`);
      a new ``d_model`` alone keeps the head size, the grouping and the MLP ratio.
    - a measured throughput (``measured_tokens_per_s``) is dropped by a change of anything
      but the fields in :data:`KEEPS_MEASURED`: it was measured on the plan as it was.
    ``lookup(key)`` finds a hardware preset (None when unknown). Raises InputError naming the
    field.
    """
    v.instance("plan", plan, RunPlan)
    v.function("lookup", lookup, "a function key -> Hardware or None")
    given = {CONTEXT_TO_PLAN.get(k, k): k for k in changes}  # plan field -> the name the caller used
    try:
        return _edit_plan(plan, lookup, {CONTEXT_TO_PLAN.get(k, k): val for k, val in changes.items()})
    except v.InputError as exc:
        if exc.parameter in given and given[exc.parameter] != exc.parameter:
            raise type(exc)(given[exc.parameter], str(exc).split(": ", 1)[-1]) from None
        raise


def _edit_plan(plan: RunPlan, lookup: Callable[[str], Hardware | None], changes: dict[str, Any]) -> RunPlan:
    key = changes.get("hardware", plan.hardware)
    hw = lookup(key)
    if hw is not None:
        precision = changes.get("precision", plan.precision)
        if precision not in hw.precisions:
            if "precision" in changes:
                have = ", ".join(PRECISION_LABELS.get(p, p) for p in hw.precisions)
                raise v.InputError("precision", f"{hw.name} has no {PRECISION_LABELS.get(precision, precision)} "
                                                f"rate; it has {have}")
            changes["precision"] = precision_fallback(hw, precision)
    if "d_model" in changes and "n_heads" not in changes and changes["d_model"] != plan.d_model:
        changes.update(_rewidth(plan, changes["d_model"], keep_ffn="d_ffn" in changes))
    shape_keys = {"n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn"}
    if "n_params" in changes and not shape_keys & set(changes):
        n_params = v.positive("n_params", changes["n_params"])
        if n_params != plan.n_params:
            changes.update(scaled_shape(plan, n_params))
    if "hardware" in changes and changes["hardware"] != plan.hardware and "intra_node" not in changes:
        changes["intra_node"] = None  # the new device's own link (NVLink 4 is not an A100's)
    if changes.get("power_cap_w") is not None and hw is not None and hw.tdp_w is not None:
        lowest = pw.min_power_cap(hw.tdp_w, changes.get("static_fraction", plan.static_fraction),
                                  changes.get("min_voltage_fraction", plan.min_voltage_fraction))
        cap = v.positive("power_cap_w", changes["power_cap_w"])
        if cap < lowest:
            raise v.InputError("power_cap_w", f"must be at least {math.ceil(lowest):.0f} W on {hw.name}, the "
                                              "lowest cap the power model can honour; clear it for no cap")
    if plan.measured_tokens_per_s is not None and "measured_tokens_per_s" not in changes \
            and {k for k, val in changes.items() if getattr(plan, k, val) != val} - KEEPS_MEASURED:
        # a throughput measured on one configuration says nothing of another: the model answers
        changes.update(measured_tokens_per_s=None, measured_source="")
    n_gpus = changes.pop("n_gpus", None)
    new = plan.with_changes(**changes) if changes else plan
    if n_gpus is not None and n_gpus != new.n_gpus:
        new, _ = fit_gpus(new, n_gpus)
    return new


def _rewidth(plan: RunPlan, d_model: Any, keep_ffn: bool) -> dict[str, Any]:
    """A new width keeps the head size, the query/key-value grouping and the MLP's ratio."""
    width = v.integer("d_model", d_model, 1, 1_000_000)
    group = max(1, plan.n_heads // plan.n_kv_heads)
    heads = max(group, width // plan.head_dim // group * group)
    if width % heads:
        heads = next((h for h in range(heads, 0, -1) if width % h == 0 and h % group == 0), 1)
    out: dict[str, Any] = {"n_heads": heads, "n_kv_heads": max(1, heads // group)}
    if not keep_ffn:
        out["d_ffn"] = max(128, round(plan.d_ffn / plan.d_model * width / 128) * 128)
    return out


# -- panels following the plan ------------------------------------------------------------------
@dataclass(frozen=True)
class PlanView:
    """What a panel's scenario follows: the plan, its resolved presets and its prediction."""

    plan: RunPlan
    sparse: bool = False
    hardware: Hardware | None = None  # the plan's device (None: not in the catalog)
    prediction: Prediction | None = None  # None when the plan cannot be predicted
    has_hardware: Callable[[str], bool] = lambda _key: True
    problem: str = ""  # why there is no prediction

    def __post_init__(self) -> None:
        v.instance("plan", self.plan, RunPlan)
        v.flag("sparse", self.sparse)
        if self.hardware is not None:
            v.instance("hardware", self.hardware, Hardware, "a Hardware or None")
        if self.prediction is not None:
            v.instance("prediction", self.prediction, Prediction, "a Prediction or None")
        v.function("has_hardware", self.has_hardware, "a function key -> bool")
        v.text("problem", self.problem, allow_empty=True)


def _roofline(s: RooflineScenario, view: PlanView) -> RooflineScenario:
    """The plan's device first (a compared device that becomes primary swaps places), its
    precision where the device has it (else the one fallback), 2:4 sparsity where it can."""
    plan, hw = view.plan, view.hardware
    changes: dict[str, Any] = {}
    if plan.hardware != s.primary and view.has_hardware(plan.hardware):
        others = tuple(s.primary if k == plan.hardware else k for k in s.hardware[1:])
        changes["hardware"] = (plan.hardware, *others)[: RooflineScenario.MAX_HARDWARE]
    if hw is not None:
        precision = precision_fallback(hw, plan.precision)
        if precision != s.precision:
            changes["precision"] = precision
        sparse = view.sparse and hw.supports_sparsity(precision)
        if sparse != s.sparse:
            changes["sparse"] = sparse
    return s.with_changes(**changes) if changes else s


def _collective(s: CollectiveScenario, view: PlanView) -> CollectiveScenario:
    """The plan's GPU count, clamped to the animator's 2..64 ranks, and the link its steps are
    costed on: the ring of the plan's data-parallel collectives, at the rate and latency the
    plan's term uses (the All-reduce calculator's link, as :func:`_allreduce` sets it)."""
    plan = view.plan
    n = max(collectives.MIN_RANKS, min(collectives.MAX_RANKS, plan.n_gpus))
    changes: dict[str, Any] = {"n_ranks": n, "root": min(s.root, n - 1)}
    if view.prediction is not None:
        bw, alpha = sync_link_rate(plan, view.prediction.links)
        changes.update(link_bw=float(bw), alpha=float(alpha), interconnect=sync_link(plan))
    changes = {k: val for k, val in changes.items() if getattr(s, k) != val}
    return s.with_changes(**changes) if changes else s


def _allreduce(s: AllReduceScenario, view: PlanView) -> AllReduceScenario:
    """The plan's gradient synchronisation: its ranks (dp x cp, at least 2), one GPU's
    gradient shard as the message, and the ring rate and latency the plan assumes for it."""
    plan = view.plan
    changes: dict[str, Any] = {"n_ranks": max(2, plan.replicas)}
    grad_bytes = 4.0 if plan.grad_reduce_precision == "fp32" else 2.0
    size = plan.n_params / (plan.tp * plan.pp) * grad_bytes
    changes["size_bytes"] = float(size)
    # the sweep reaches the plan's message (and comes back when the plan shrinks again)
    changes["size_max"] = max(AllReduceScenario.size_max, float(2 ** math.ceil(math.log2(size))))
    if view.prediction is not None:
        # the ring rate and latency the plan's data-parallel term uses
        changes["link_bw"], changes["alpha"] = sync_link_rate(plan, view.prediction.links)
    key = sync_link(plan)
    if key:
        changes["interconnect"] = key
    changes = {k: val for k, val in changes.items() if getattr(s, k) != val}
    return s.with_changes(**changes) if changes else s


def _scaling(s: ScalingScenario, view: PlanView) -> ScalingScenario:
    """The plan's run, with the predicted throughput: every overhead is already in it, so the
    panel's own overhead fields are zero while it follows the plan."""
    plan = view.plan
    changes: dict[str, Any] = {
        "hardware": plan.hardware, "precision": plan.precision, "n_gpus": plan.n_gpus,
        "n_params": plan.n_params, "n_layers": plan.n_layers, "d_model": plan.d_model,
        "seq_len": plan.seq_len, "recompute": "full" if plan.recompute == "full" else "none",
        "pipeline_stages": 1, "microbatches": 1, "comm_time_s": 0.0, "overlap": 0.0,
        "dataloader_wait_s": 0.0, "bytes_per_token": plan.bytes_per_token,
    }
    hw = view.hardware
    changes["sparse"] = bool(view.sparse and hw is not None and plan.precision in hw.precisions
                             and hw.supports_sparsity(plan.precision))
    if view.prediction is not None:
        # the plan's number, said so: a throughput typed earlier no longer applies
        changes["tokens_per_s"] = view.prediction.tokens_per_s
        changes["throughput_source"] = "planned"
    changes = {k: val for k, val in changes.items() if getattr(s, k) != val}
    return s.with_changes(**changes) if changes else s


#: Power-panel fields that are the plan's (same names in both).
POWER_PLAN_FIELDS: tuple[str, ...] = (
    "hardware", "n_gpus", "train_tokens", "n_params", "precision", "power_cap_w", "static_fraction",
    "min_voltage_fraction", "host_overhead_w_per_gpu", "pue", "grid_g_per_kwh",
    "energy_price_per_kwh", "gpu_hour_price", "currency",
)


def _power(s: PowerScenario, view: PlanView) -> PowerScenario:
    """The plan's run and facility, with the predicted uncapped throughput per GPU and the
    share of the step a cap slows (so the panel's accounting is the plan's)."""
    plan = view.plan
    changes = {name: getattr(plan, name) for name in POWER_PLAN_FIELDS}
    if changes["host_overhead_w_per_gpu"] is None:  # the preset's system figure, as predicted
        changes["host_overhead_w_per_gpu"] = (view.prediction.host_power_w_per_gpu
                                              if view.prediction is not None else 0.0)
    if view.prediction is not None:
        changes["throughput_mfu"] = None
        changes["tokens_per_s_per_gpu"] = view.prediction.uncapped_tokens_per_s / plan.n_gpus
        changes["compute_bound_share"] = view.prediction.compute_bound_share
    changes = {k: val for k, val in changes.items() if getattr(s, k) != val}
    return s.with_changes(**changes) if changes else s


def _run_plan(_s: RunPlan, view: PlanView) -> RunPlan:
    """The Run plan panel shows the plan itself."""
    return view.plan


#: How each kind of scenario follows the plan.
FOLLOWERS: dict[str, Callable[[Any, PlanView], Any]] = {
    "run_plan": _run_plan,
    "roofline": _roofline,
    "collective": _collective,
    "allreduce": _allreduce,
    "scaling": _scaling,
    "power": _power,
}


def register_follower(kind: str, follow: Callable[[Any, PlanView], Any]) -> None:
    """How a new kind of panel follows the plan (kinds without one keep their scenario)."""
    FOLLOWERS[v.text("kind", kind)] = v.function("follow", follow, "a function (scenario, PlanView) -> scenario")


def follow_plan(kind: str, scenario: Any, view: PlanView) -> Any:
    """``scenario`` as it follows ``view``'s plan (itself for a kind with no follower, or when
    the plan's values do not fit the scenario: a bad value never replaces a good one)."""
    kind = v.text("kind", kind)
    v.instance("view", view, PlanView)
    if scenario is not None and not isinstance(getattr(scenario, "kind", None), str):
        # any object with a kind is a scenario here: a panel's own type need not subclass Scenario
        raise v.InputError("scenario", f"must be a scenario (an object with a kind) or None, got {type(scenario).__name__}")
    follow = FOLLOWERS.get(kind)
    if follow is None or scenario is None:
        return scenario
    try:
        return follow(scenario, view)
    except (ValueError, ArithmeticError):
        return scenario


def follows_alike(before: PlanView, after: PlanView) -> bool:
    """Whether following ``after`` gives the same scenario with or without having followed
    ``before`` first. A follower sets every plan field from the view, except what the view
    cannot give: the predicted numbers of a plan that cannot be predicted, the link of a plan
    whose gradient sync has none. Those keep the scenario's last values, so a view that lacks
    one of them must be followed from the scenario as the view before it left it."""
    v.instance("before", before, PlanView)
    v.instance("after", after, PlanView)
    return ((before.prediction is None) == (after.prediction is None)
            and bool(sync_link(before.plan)) == bool(sync_link(after.plan)))


def differs_from_plan(kind: str, scenario: Any, view: PlanView) -> bool:
    """Whether ``scenario`` is not what following the plan would make of it."""
    followed = follow_plan(kind, scenario, view)
    if followed is scenario:
        return False
    return followed != scenario and not _close(followed, scenario)


def _close(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    da, db = a.to_dict(), b.to_dict()
    for key, value in da.items():
        other = db.get(key)
        if isinstance(value, float) and isinstance(other, float):
            if not math.isclose(value, other, rel_tol=1e-9, abs_tol=0.0):
                return False
        elif value != other:
            return False
    return True


# -- what each kind's view shows ------------------------------------------------------------------
#: Analyses registered by kind. A kind not here has its analysis in ``workbench.analyses.<kind>``
#: (an ``analyse(scenario, view, catalog)`` function), imported when first asked for.
ANALYSES: dict[str, Callable[[Any, PlanView | None, Catalog], Any]] = {}
_FOUND: dict[str, Callable[[Any, PlanView | None, Catalog], Any] | None] = {}


def register_analysis(kind: str, analyse: Callable[[Any, PlanView | None, Catalog], Any]) -> None:
    """What a new kind of panel shows: ``analyse(scenario, view, catalog)`` -> its results."""
    ANALYSES[v.text("kind", kind)] = v.function("analyse", analyse,
                                                "a function (scenario, PlanView or None, catalog) -> results")


def analysis_function(kind: str) -> Callable[[Any, PlanView | None, Catalog], Any] | None:
    """Kind ``kind``'s analysis (None for a kind whose view computes nothing of its own)."""
    kind = v.text("kind", kind)
    if kind in ANALYSES:
        return ANALYSES[kind]
    if not kind.isidentifier():
        raise v.InputError("kind", f"must be a panel kind (letters, digits and _), got {kind!r}")
    if kind not in _FOUND:
        name = f"workbench.analyses.{kind}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise  # the module is there but something it imports is not: a real error
            module = None
        _FOUND[kind] = getattr(module, "analyse", None)
    return _FOUND[kind]


def analyse(kind: str, scenario: Any, view: PlanView | None, catalog: Catalog) -> Any:
    """What the view of ``kind`` shows for ``scenario`` under the plan ``view`` (None: no plan,
    a panel on its own), its presets looked up in ``catalog``. None for a kind without an
    analysis; raises ValueError naming what to fix when the scenario cannot be analysed."""
    analyse_kind = analysis_function(kind)
    if view is not None:
        v.instance("view", view, PlanView, "a PlanView or None")
    check_catalog(catalog)
    if scenario is None:
        return None
    if getattr(scenario, "kind", None) != kind:
        raise v.InputError("scenario", f"must be a scenario of kind {kind!r}, got {v._describe(scenario)}")
    return analyse_kind(scenario, view, catalog) if analyse_kind is not None else None


#: values with nothing to make read-only, by exact type (the common leaves, without isinstance;
#: frozensets, the rank sets of the collectives' steps, were never walked either)
_LEAVES = frozenset({str, bytes, int, float, bool, type(None), frozenset})


def _read_only(value: Any, depth: int = 0) -> None:
    """Make the numpy arrays of a kept analysis read-only (a few levels deep): every reader gets
    the same result, so one that wrote into an array would change what the others are shown.
    Written to, it now says so (ValueError) instead. Leaves are skipped before the call: most
    of a result's values are numbers and texts (an animated collective's steps hold hundreds)."""
    kind = type(value)
    if depth > 5 or kind in _LEAVES:
        return
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
        return
    leaves, deeper = _LEAVES, depth + 1
    names = v.field_names(kind)
    if names is not None:
        if isinstance(value, (Scenario, RunPlan)):
            return  # a scenario or a plan is immutable already (and may hold 10,000 kernels)
        for name in names:
            item = getattr(value, name)
            if type(item) not in leaves:
                _read_only(item, deeper)
    elif isinstance(value, (str, bytes, int, float, bool)):
        return
    elif isinstance(value, (tuple, list)):
        if len(value) <= 64:  # rows of figures, not data: their arrays are what is shared
            for item in value:
                if type(item) not in leaves:
                    _read_only(item, deeper)
    elif isinstance(value, Mapping):
        for item in value.values():
            if type(item) not in leaves:
                _read_only(item, deeper)


class AnalysisCache:
    """Each kind's last analysis, kept while its scenario, its plan view and the catalog's
    revision are the same objects: a view that reads its results twice in one change (a redraw,
    then an export) computes them once. ``computed`` counts the computations by kind."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Any, Any, Any, Any, BaseException | None]] = {}
        self.computed: Counter[str] = Counter()

    def get(self, kind: str, scenario: Any, view: PlanView | None, catalog: Catalog, revision: Any = None) -> Any:
        """:func:`analyse` of these, from the cache when nothing changed since the last time.
        An analysis that raised raises the same error again until something changes."""
        entry = self._entries.get(kind)
        if entry is not None and entry[0] is scenario and entry[1] is view and entry[2] == revision:
            value, error = entry[3], entry[4]
        else:
            try:
                value, error = analyse(kind, scenario, view, catalog), None
                _read_only(value)
            except (ValueError, ArithmeticError) as exc:
                value, error = None, exc
            self._entries[kind] = (scenario, view, revision, value, error)
            self.computed[kind] += 1
        if error is not None:
            raise error.with_traceback(None)
        return value


__all__ = [
    "WORKSPACE_VERSION", "DEFAULT_PLAN", "Workspace", "PlanView", "FOLLOWERS", "POWER_PLAN_FIELDS", "follows_alike",
    "precision_fallback", "edit_plan", "fit_gpus", "follow_plan", "differs_from_plan",
    "register_follower", "context_of", "ANALYSES", "register_analysis", "analysis_function", "analyse",
    "AnalysisCache", "plan_from_context", "sync_link", "dp_spans_nodes", "KEEPS_MEASURED",
]
