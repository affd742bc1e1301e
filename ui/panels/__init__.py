"""The panels, one module each, and the one registry the rest of the program iterates over.

A panel is one :class:`PanelRecord`: its kind (the scenario kind it shows), its title (dock
tab, exports), a short name (menus, browser groups), its scenario type and its view class.
The window docks them in this order; the scenario browser, the command line's help, headless
export and the screenshots read the same records. Adding a panel touches its scenario type,
its view module and one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ui.panels.measured_files import MEASURED_SUFFIXES, OPEN_FILTER_ENTRY
from workbench.measured import MeasuredScenario
from workbench.plan import RunPlan
from workbench.scenarios import (
    AllReduceScenario,
    CollectiveScenario,
    PowerScenario,
    RooflineScenario,
    ScalingScenario,
)
from workbench.workspace import DEFAULT_PLAN


@dataclass(frozen=True)
class PanelRecord:
    """One panel: what it shows and how to build it.

    ``view`` is the view class, or where it lives (``"ui.panels.power:PowerPanel"``): a view
    module is imported when the panel is first built, so that the window shows itself
    before it has imported seven panels' charts."""

    kind: str
    title: str
    short: str
    scenario_type: type
    view_ref: type | str = field(repr=False)
    #: the scenario a new project's panel starts from
    default: Callable[[], Any] = lambda: None
    #: data files the panel reads (suffixes, and their File > Open filter entry): the window
    #: sends a dropped or opened file of these to ``view.load_files(paths)``
    opens: tuple[str, ...] = ()
    open_filter: str = ""
    #: False for a panel that shows the run plan itself (nothing of its own to save)
    saves_scenario: bool = True

    def build(self, document) -> Any:
        """The view of this kind for ``document`` (a :class:`ui.document.Document`): it shows the
        scenario the document keeps for the kind and edits through the document's undo stack.
        The caller wires it into its window, then ``document.attach``-es it."""
        return self.view(document.hardware_catalog, document.scenario(self.kind), undo_stack=document.undo_stack)

    @property
    def view(self) -> type:
        if isinstance(self.view_ref, str):
            module, _, name = self.view_ref.partition(":")
            return getattr(importlib.import_module(module), name)
        return self.view_ref


PANELS: list[PanelRecord] = [
    PanelRecord("run_plan", "Run plan", "Run plans", RunPlan, "ui.panels.run_plan:RunPlanPanel",
                lambda: DEFAULT_PLAN, saves_scenario=False),
    PanelRecord("roofline", "Roofline", "Roofline", RooflineScenario, "ui.panels.roofline:RooflinePanel",
                RooflineScenario),
    PanelRecord("collective", "Collectives", "Collectives", CollectiveScenario,
                "ui.panels.collective:CollectivePanel", CollectiveScenario),
    PanelRecord("allreduce", "All-reduce", "All-reduce", AllReduceScenario, "ui.panels.allreduce:AllReducePanel",
                AllReduceScenario),
    PanelRecord("scaling", "Scaling and MFU", "Scaling and MFU", ScalingScenario, "ui.panels.scaling:ScalingPanel",
                ScalingScenario),
    PanelRecord("power", "Power and carbon", "Power and carbon", PowerScenario, "ui.panels.power:PowerPanel",
                PowerScenario),
    PanelRecord("measured", "Plan vs actual", "Plan vs actual", MeasuredScenario,
                "ui.panels.measured:MeasuredPanel", MeasuredScenario,
                opens=MEASURED_SUFFIXES, open_filter=OPEN_FILTER_ENTRY),
]


def register_panel(record: PanelRecord) -> PanelRecord:
    """Add a panel (its scenario type must be registered with workbench.scenarios)."""
    if any(r.kind == record.kind for r in PANELS):
        raise ValueError(f"a panel of kind {record.kind!r} is already registered")
    PANELS.append(record)
    return record


def record(kind: str) -> PanelRecord:
    for r in PANELS:
        if r.kind == kind:
            return r
    raise KeyError(f"no panel of kind {kind!r}")


def panel_classes() -> tuple[type, ...]:
    """View classes in dock order."""
    return tuple(r.view for r in PANELS)


def panel_by_kind() -> dict[str, type]:
    return {r.kind: r.view for r in PANELS}


def kind_labels() -> dict[str, str]:
    """Short names by kind, in dock order (scenario browser groups)."""
    return {r.kind: r.short for r in PANELS}


#: The view classes by name, for ``from ui.panels import PowerPanel`` (imported on first use).
_VIEWS = {"RunPlanPanel": "run_plan", "RooflinePanel": "roofline", "CollectivePanel": "collective",
          "AllReducePanel": "allreduce", "ScalingPanel": "scaling", "PowerPanel": "power", "MeasuredPanel": "measured"}


def __getattr__(name: str):
    # Names kept for the code and tests written before the registry, resolved when asked for.
    if name == "PANEL_CLASSES":
        return panel_classes()
    if name == "PANEL_BY_KIND":
        return panel_by_kind()
    if name in _VIEWS:
        return record(_VIEWS[name]).view
    raise AttributeError(f"module 'ui.panels' has no attribute {name!r}")


__all__ = ["PANELS", "PanelRecord", "register_panel", "record", "panel_classes", "panel_by_kind",
           "kind_labels", "PANEL_CLASSES", "PANEL_BY_KIND", "RunPlanPanel", "RooflinePanel",
           "CollectivePanel", "AllReducePanel", "ScalingPanel", "PowerPanel", "MeasuredPanel"]
