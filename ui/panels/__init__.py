"""The panels, one module each, and the one registry the rest of the program iterates over.

A panel is one :class:`PanelRecord`: its kind (the scenario kind it shows), its title (dock
tab, exports), a short name (menus, browser groups), its scenario type and its view class.
The window docks them in this order; the scenario browser, the command line's help, headless
export and the screenshots read the same records. Adding a panel touches its scenario type,
its view module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ui.panels.allreduce import AllReducePanel
from ui.panels.collective import CollectivePanel
from ui.panels.measured import MEASURED_SUFFIXES, OPEN_FILTER_ENTRY, MeasuredPanel
from ui.panels.power import PowerPanel
from ui.panels.roofline import RooflinePanel
from ui.panels.run_plan import RunPlanPanel
from ui.panels.scaling import ScalingPanel
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
    """One panel: what it shows and how to build it."""

    kind: str
    title: str
    short: str
    scenario_type: type
    view: type
    #: the scenario a new project's panel starts from
    default: Callable[[], Any]
    #: data files the panel reads (suffixes, and their File > Open filter entry): the window
    #: sends a dropped or opened file of these to ``view.load_files(paths)``
    opens: tuple[str, ...] = ()
    open_filter: str = ""


PANELS: list[PanelRecord] = [
    PanelRecord("run_plan", "Run plan", "Run plans", RunPlan, RunPlanPanel, lambda: DEFAULT_PLAN),
    PanelRecord("roofline", "Roofline", "Roofline", RooflineScenario, RooflinePanel, RooflineScenario),
    PanelRecord("collective", "Collectives", "Collectives", CollectiveScenario, CollectivePanel, CollectiveScenario),
    PanelRecord("allreduce", "All-reduce", "All-reduce", AllReduceScenario, AllReducePanel, AllReduceScenario),
    PanelRecord("scaling", "Scaling and MFU", "Scaling and MFU", ScalingScenario, ScalingPanel, ScalingScenario),
    PanelRecord("power", "Power and carbon", "Power and carbon", PowerScenario, PowerPanel, PowerScenario),
    PanelRecord("measured", "Plan vs actual", "Plan vs actual", MeasuredScenario, MeasuredPanel, MeasuredScenario,
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


# Names kept for the code and tests written before the registry.
PANEL_CLASSES = panel_classes()
PANEL_BY_KIND = panel_by_kind()

__all__ = ["PANELS", "PanelRecord", "register_panel", "record", "panel_classes", "panel_by_kind",
           "kind_labels", "PANEL_CLASSES", "PANEL_BY_KIND", "RunPlanPanel", "RooflinePanel",
           "CollectivePanel", "AllReducePanel", "ScalingPanel", "PowerPanel"]
