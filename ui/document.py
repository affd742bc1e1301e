"""The window's document: the workspace's plan, its undo steps, and its one prediction.

``Document`` owns the run plan (with the roofline's 2:4 switch), pushes one mergeable undo
command per plan edit, and computes ``workbench.plan.predict`` once per change: the status bar,
the Run plan panel and every panel that follows the plan read that same prediction. Panels
attach themselves; after each change the document hands each following panel the plan
(``PanelBase.follow_plan``) and then emits ``planChanged``.

Saving and opening go through :class:`workbench.workspace.Workspace` (``workspace_json`` /
``restore``), so the window holds no workspace JSON of its own.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

import presets
from workbench import plan as plan_model
from workbench import units
from workbench._validate import InputError
from workbench.context import RunContext
from workbench.hardware import PRECISION_LABELS, Hardware, Interconnect
from workbench.plan import Prediction, RunPlan
from workbench.scenarios import FIELD_LABELS
from workbench.workspace import (
    DEFAULT_PLAN,
    AnalysisCache,
    PlanView,
    Workspace,
    context_of,
    edit_plan,
    follow_plan,
    follows_alike,
    plan_from_context,
)

log = logging.getLogger(__name__)

#: id() of mergeable plan edits.
PLAN_EDIT_ID = 0x504C  # "PL"
#: Plan fields set by picking rather than typing: each pick is its own undo step.
CHOICE_FIELDS = frozenset({
    "hardware", "precision", "intra_node", "inter_node", "recompute", "zero", "sequence_parallel", "sparse",
    "gated_mlp", "grad_reduce_precision", "zero3_gather", "flash_attention", "fused_kernels", "overlap_dp_comm",
    "currency",
})

#: Undo labels of plan fields the scenario tables do not name.
PLAN_LABELS: dict[str, str] = {
    "n_params": "model size", "n_gpus": "GPU count", "hardware": "hardware", "precision": "precision",
    "sparse": "sparsity", "intra_node": "node link", "inter_node": "network", "train_tokens": "training tokens",
    "tp": "tensor parallelism", "pp": "pipeline stages", "cp": "context parallelism", "vp": "virtual stages",
    "zero": "ZeRO stage", "global_batch": "global batch", "micro_batch": "micro-batch",
    "recompute": "recomputation", "sequence_parallel": "sequence parallelism", "gpus_per_node": "GPUs per node",
}


def plan_field_label(name: str) -> str:
    if name in PLAN_LABELS:
        return PLAN_LABELS[name]
    label = FIELD_LABELS.get(name, name.replace("_", " "))
    return label.split(" (", 1)[0].lower() if not label[:3].isupper() else label.split(" (", 1)[0]


class PresetCatalog:
    """``workbench.catalog`` look-ups over the window's hardware catalog (a project's own
    presets beside the built-in ones) and the built-in links."""

    def __init__(self, hardware_catalog):
        self._hardware = hardware_catalog

    def hardware(self, key: str) -> Hardware:
        if key not in self._hardware:
            raise InputError("hardware", f"there is no hardware preset {key!r} in this project; "
                                         "pick one in the toolbar or add it in Hardware > Hardware Presets")
        return self._hardware.get(key)

    def items(self) -> list[Hardware]:
        """Every device of the catalog (an analysis comparing one device with the others)."""
        return self._hardware.items()

    def interconnect(self, key: str) -> Interconnect:
        try:
            return presets.interconnect_by_key(key)
        except KeyError as exc:
            raise InputError("interconnect", str(exc.args[0]) if exc.args else f"no preset {key!r}") from None


class PlanCommand(QUndoCommand):
    """Replace the plan (and sparsity) ``old`` by ``new``; edits of one same field merge."""

    def __init__(self, document: Document, old: tuple[RunPlan, bool], new: tuple[RunPlan, bool], text: str,
                 *, mergeable: bool = True):
        super().__init__(text)
        self.document = document
        self.old = old
        self.new = new
        # Typed and dragged edits of the same fields merge (512 then 1k GPUs: GPU count and
        # global batch both times; a power-cap drag); a choice (a device, a preset, a mode) is
        # a step of its own, and so is an edit with a label of its own.
        changed = frozenset(_changed(old, new))
        self.field = changed if mergeable and changed and not changed & CHOICE_FIELDS else None

    def redo(self) -> None:
        self.document.set_plan(*self.new)

    def undo(self) -> None:
        self.document.set_plan(*self.old)

    def id(self) -> int:
        return PLAN_EDIT_ID if self.field is not None else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt naming
        if not isinstance(other, PlanCommand) or other.document is not self.document:
            return False
        if other.field is None or other.field != self.field:
            return False
        self.new = other.new
        self.setText(self.document.describe(self.old, self.new))
        if self.new == self.old:
            self.setObsolete(True)
        return True


def _changed(old: tuple[RunPlan, bool], new: tuple[RunPlan, bool]) -> list[str]:
    a, b = old[0], new[0]
    # the fields themselves (their JSON forms compare alike, and cost a dict per plan per call)
    names = [k for k in a.field_names() if getattr(a, k) != getattr(b, k)]
    if old[1] != new[1]:
        names.append("sparse")
    return names


class Document(QObject):
    """The plan at the centre of the window, its undo steps and its cached prediction."""

    #: the new plan, after the panels that follow it have been updated
    planChanged = Signal(object)
    #: the kinds whose scenario changed (an edit, an undo, or following the plan)
    kindsChanged = Signal(list)

    def __init__(self, hardware_catalog, undo_stack: QUndoStack, parent: QObject | None = None):
        super().__init__(parent)
        self.hardware_catalog = hardware_catalog
        self.catalog = PresetCatalog(hardware_catalog)
        self.undo_stack = undo_stack
        self._plan = DEFAULT_PLAN
        self._sparse = False
        self._prediction: Prediction | None = None
        self._problem = ""
        self._fresh = False
        self._panels: dict[str, Any] = {}
        self._kinds: dict[str, bool] = {}  # kind -> whether its scenario is saved in the workspace
        #: kinds whose view is not built yet (a tab nobody opened): their scenario and Local
        #: override, kept here until the view is built (:meth:`attach`)
        self._pending: dict[str, tuple[Any, bool]] = {}
        self._build_view = None
        self._last_view: PlanView | None = None  # the view the kept scenarios follow when read
        self._view: PlanView | None = None  # this change's view, one object for every reader
        self._followed: dict[str, tuple[Any, PlanView, Any]] = {}  # a kept scenario as it follows
        #: each kind's analysis, computed once per change (views read theirs from here)
        self.analyses = AnalysisCache()
        self._paused = False
        self.interconnect_name = lambda key: key
        hardware_catalog.changed.connect(self._catalog_changed)

    # -- reading --------------------------------------------------------------------------------
    def plan(self) -> RunPlan:
        return self._plan

    def sparse(self) -> bool:
        return self._sparse

    def context(self) -> RunContext:
        """The plan as the shared context of earlier releases (hardware, GPUs, precision ...)."""
        return context_of(self._plan, self._sparse)

    def prediction(self) -> Prediction | None:
        """The plan's prediction, computed once per change (None when it cannot be: see
        :meth:`prediction_problem`)."""
        if not self._fresh:
            self._fresh = True
            try:
                self._prediction = plan_model.predict(self._plan, self.catalog)
                self._problem = ""
            except (ValueError, ArithmeticError) as exc:
                self._prediction = None
                self._problem = str(exc)
        return self._prediction

    def prediction_problem(self) -> str:
        self.prediction()
        return self._problem

    def hardware(self, key: str | None = None) -> Hardware | None:
        key = key or self._plan.hardware
        return self.hardware_catalog.get(key) if key in self.hardware_catalog else None

    def view(self) -> PlanView:
        """What a panel follows: the plan, its device and its prediction (one object per
        change, so what is worked out from it can be kept until the next)."""
        if self._view is None:
            prediction = self.prediction()
            self._view = PlanView(plan=self._plan, sparse=self._sparse, hardware=self.hardware(),
                                  prediction=prediction,
                                  has_hardware=lambda key: key in self.hardware_catalog, problem=self._problem)
        return self._view

    def analysis(self, kind: str) -> Any:
        """What panel ``kind`` shows (``workbench.workspace.analyse``), computed once per change:
        its view's scenario and plan, or for a view not built yet the kept scenario as it
        follows the plan. None for a kind without an analysis; raises ValueError with what
        to fix when its scenario cannot be analysed."""
        if kind in self._panels:
            return self._panels[kind].analysis()
        return self.analyses.get(kind, self.scenario(kind), self.view(), self.catalog,
                                 getattr(self.hardware_catalog, "revision", None))

    # -- editing --------------------------------------------------------------------------------
    def describe(self, old: tuple[RunPlan, bool], new: tuple[RunPlan, bool]) -> str:
        names = _changed(old, new)
        if not names:
            return "No change"
        shape = {"n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn", "vocab_size", "seq_len", "gated_mlp"}
        if "n_params" in names and set(names) - {"n_params"} <= shape:
            return f"Change model size to {units.format_quantity(new[0].n_params, '')}"
        if "hardware" in names:
            return f"Change hardware to {self.hardware_catalog.name(new[0].hardware)}" + (
                f" ({PRECISION_LABELS.get(new[0].precision, new[0].precision)})" if "precision" in names else "")
        if "n_gpus" in names and set(names) <= {"n_gpus", "global_batch"}:
            return f"Change GPU count to {new[0].n_gpus:,}"
        if len(names) > 1:
            return "Change " + ", ".join(plan_field_label(n) for n in names[:4]) + ("…" if len(names) > 4 else "")
        name = names[0]
        if name == "sparse":
            return "Turn sparsity on" if new[1] else "Turn sparsity off"
        value = getattr(new[0], name)
        if name == "hardware":
            return f"Change hardware to {self.hardware_catalog.name(value)}"
        if name == "precision":
            return f"Change precision to {PRECISION_LABELS.get(value, value)}"
        if name in ("intra_node", "inter_node"):
            return f"Change {plan_field_label(name)} to {self.interconnect_name(value) if value else 'the GPU link'}"
        if isinstance(value, float):
            return f"Change {plan_field_label(name)} to {units.format_quantity(value, '')}"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"Change {plan_field_label(name)} to {value:,}"
        return f"Change {plan_field_label(name)} to {value}"

    def planned(self, **changes: Any) -> tuple[RunPlan, bool]:
        """The plan and sparsity ``changes`` would give, checked (raises InputError naming the
        field): a new device keeps the precision it has or takes the one fallback, and drops
        2:4 sparsity it has no rate for; sparsity asked for where there is none is refused."""
        sparse = changes.pop("sparse", None)
        plan = edit_plan(self._plan, self.hardware, **changes) if changes else self._plan
        hw = self.hardware(plan.hardware)
        can_sparse = hw is not None and plan.precision in hw.precisions and hw.supports_sparsity(plan.precision)
        if sparse is None:
            sparse = self._sparse and can_sparse
        elif sparse and not can_sparse and hw is not None:
            raise InputError("sparse", f"{hw.name} has no 2:4 sparse rate at "
                                       f"{PRECISION_LABELS.get(plan.precision, plan.precision)}")
        return plan, bool(sparse)

    def edit_plan(self, _text: str | None = None, **changes: Any) -> bool:
        """Change plan fields (``sparse`` and the old context's ``model_params`` too) as one
        undo step. Raises ValueError with what to fix; returns whether anything changed."""
        new = self.planned(**changes)
        old = (self._plan, self._sparse)
        if new == old:
            return False
        self.undo_stack.push(PlanCommand(self, old, new, _text or self.describe(old, new), mergeable=_text is None))
        return True

    def replace_plan(self, plan: RunPlan, text: str) -> bool:
        """Make ``plan`` the run plan as one undo step (opening a saved plan)."""
        if not isinstance(plan, RunPlan):
            raise InputError("plan", f"must be a RunPlan, got {type(plan).__name__}")
        old = (self._plan, self._sparse)
        new = (plan, self._sparse)
        if new == old:
            return False
        self.undo_stack.push(PlanCommand(self, old, new, text))
        return True

    def set_plan(self, plan: RunPlan, sparse: bool | None = None) -> None:
        """Show ``plan`` (undo/redo, opening a project): no undo step."""
        sparse = self._sparse if sparse is None else bool(sparse)
        if plan == self._plan and sparse == self._sparse:
            return
        self._plan, self._sparse = plan, sparse
        self._changed()

    def set_context(self, context: RunContext) -> None:
        """Take a version-1 shared context (no undo step)."""
        plan, _ = plan_from_context(context, self._plan)
        self.set_plan(plan, context.sparse)

    def _catalog_changed(self) -> None:
        if self._paused:
            self._fresh, self._view = False, None  # a project is being opened: restore() follows once
            return
        self._changed()

    def pause(self, on: bool) -> None:
        """While a project opens, its catalog's change waits for :meth:`restore`."""
        self._paused = bool(on)

    def _changed(self) -> None:
        self._fresh, self._view = False, None
        self._advance_pending(self.view())
        self.follow_all()
        self.planChanged.emit(self._plan)

    def _advance_pending(self, view: PlanView) -> None:
        """A kind without a view follows the plan when it is read, from its kept scenario. A view
        that cannot give everything (no prediction, no link) keeps the scenario's last values:
        before it, the kept scenarios follow the last view, as a built panel would have."""
        last, self._last_view = self._last_view, view
        if last is None or follows_alike(last, view):
            return
        for kind, (scenario, override) in self._pending.items():
            if scenario is not None and not override and self._kinds.get(kind, True):
                self._pending[kind] = (follow_plan(kind, scenario, last), override)

    # -- panels ---------------------------------------------------------------------------------
    def declare(self, kind: str, scenario: Any, *, saves_scenario: bool = True) -> None:
        """A kind whose view is built later (when its tab is first shown): until then the
        document keeps its scenario, and :meth:`scenario` gives it as it follows the plan."""
        self._kinds[kind] = bool(saves_scenario)
        if kind not in self._panels:
            self._pending[kind] = (scenario, False)

    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self._kinds, *self._panels]))

    def attach(self, panel) -> None:
        """A panel that follows the plan (unless it overrides it). A declared kind's view takes
        the scenario and the Local override the document kept for it, then follows the plan."""
        kind = panel.kind
        pending = kind in self._pending and self._kinds.get(kind, True)
        expected = self.scenario(kind) if pending else None  # as it follows the plan
        override = self._pending.pop(kind, (None, False))[1]
        self._panels[kind] = panel
        self._followed.pop(kind, None)
        self._kinds.setdefault(kind, bool(getattr(panel, "saves_scenario", True)))
        use_cache = getattr(panel, "use_analysis_cache", None)
        if callable(use_cache):
            use_cache(self.analyses)
        if pending:
            panel.set_override_context(override, follow=False)
            if expected is not None and expected != panel.scenario():
                panel.set_scenario(expected)
        panel.scenarioChanged.connect(lambda _s, kind=kind: self.kindsChanged.emit([kind]))
        try:
            panel.follow_plan(self.view())
        except Exception:  # noqa: BLE001 - a panel's bug must not stop the window
            log.exception("panel %s failed to follow the plan", kind)

    def is_built(self, kind: str) -> bool:
        return kind in self._panels

    def set_view_builder(self, build) -> None:
        """``build(kind)`` builds and attaches the view of a declared kind (the window's)."""
        self._build_view = build

    def built_view(self, kind: str):
        if kind not in self._panels and kind in self._pending and self._build_view is not None:
            self._build_view(kind)
        return self._panels[kind]

    def scenario(self, kind: str) -> Any:
        """Panel ``kind``'s scenario: its view's, or for a view not built yet the kept one, as
        it follows the plan (what the view will show when it is built)."""
        if kind in self._panels:
            return self._panels[kind].scenario()
        scenario, override = self._pending[kind]
        if not self._kinds.get(kind, True):
            return self._plan
        if override or scenario is None:
            return scenario
        view = self.view()
        kept = self._followed.get(kind)
        if kept is None or kept[0] is not scenario or kept[1] is not view:
            kept = (scenario, view, follow_plan(kind, scenario, view))
            self._followed[kind] = kept
        return kept[2]

    def override(self, kind: str) -> bool:
        if kind in self._panels:
            return self._panels[kind].override_context()
        return self._pending[kind][1]

    def edit_scenario(self, kind: str, _text: str | None = None, **changes: Any) -> bool:
        """Change fields of panel ``kind``'s scenario as one mergeable undo step (a plan field
        of that panel changes the plan instead, as typing it in the panel does). Raises
        ValueError with what to fix; returns whether anything changed."""
        panel = self.built_view(kind)  # an undo step edits a view: built now if it was not
        plan_changes = {panel.CONTEXT_FIELDS[k]: val for k, val in changes.items()
                        if k in panel.CONTEXT_FIELDS and panel.follows_plan()}
        own = {k: val for k, val in changes.items() if not (k in panel.CONTEXT_FIELDS and panel.follows_plan())}
        changed = bool(plan_changes) and self.edit_plan(_text=_text, **plan_changes)
        if own:
            new = panel.scenario().with_changes(**own)  # raises ValueError naming the field
            if new != panel.scenario():
                changed = panel.edit(_text=_text, **own) or changed
        return changed

    def panels(self) -> dict[str, Any]:
        return dict(self._panels)

    def follow_all(self, only: list[str] | None = None) -> None:
        view = self.view()
        for kind, panel in self._panels.items():
            if only is not None and kind not in only:
                continue
            try:
                panel.follow_plan(view)
            except Exception:  # noqa: BLE001 - one panel's bug must not stop the others
                log.exception("panel %s failed to follow the plan", kind)

    # -- saving and opening --------------------------------------------------------------------
    def workspace(self, active: str = "") -> Workspace:
        saved = [kind for kind in self.kinds() if self._kinds.get(kind, True)]
        scenarios = {kind: sc for kind in saved if (sc := self.scenario(kind)) is not None}
        overrides = frozenset(kind for kind in saved if self.override(kind))
        return Workspace(plan=self._plan, sparse=self._sparse, scenarios=scenarios, overrides=overrides,
                         active=active)

    def workspace_json(self, active: str = "") -> str:
        return json.dumps(self.workspace(active).to_dict(), sort_keys=True)

    def restore(self, text: str | None, defaults: dict[str, Any]) -> tuple[str, list[str]]:
        """Put a saved workspace back (defaults where there is none). ``defaults`` gives each
        panel's default scenario by kind. Returns the active panel and the problems met."""
        problems: list[str] = []
        workspace = Workspace()
        if text:
            try:
                workspace, problems = Workspace.from_dict(json.loads(text), kinds=self.kinds())
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                problems = [f"the saved workspace was not restored ({exc}); showing defaults"]
                workspace = Workspace()
        self._plan, self._sparse = workspace.plan, workspace.sparse
        self._fresh, self._view = False, None
        for kind in self._pending:
            self._pending[kind] = (workspace.scenarios.get(kind, defaults.get(kind)), kind in workspace.overrides)
        for kind, panel in self._panels.items():
            if not self._kinds.get(kind, True):
                continue  # the Run plan panel shows the plan itself
            panel.set_override_context(kind in workspace.overrides, follow=False)
            clear = getattr(panel, "clear_comparison", None)
            if callable(clear):
                clear()
            scenario = workspace.scenarios.get(kind, defaults.get(kind))
            if scenario is not None and scenario != panel.scenario():
                panel.set_scenario(scenario)
        # A saved panel that follows the plan shows the plan's numbers (its own fields stay).
        self._last_view = self.view()
        self.follow_all()
        self.planChanged.emit(self._plan)
        return workspace.active, problems


__all__ = ["Document", "PlanCommand", "PresetCatalog", "PLAN_EDIT_ID"]
