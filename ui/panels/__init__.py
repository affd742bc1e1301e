"""The five panels, one module each. The main window docks them in this order."""

from __future__ import annotations

from ui.panels.allreduce import AllReducePanel
from ui.panels.collective import CollectivePanel
from ui.panels.power import PowerPanel
from ui.panels.roofline import RooflinePanel
from ui.panels.scaling import ScalingPanel

#: Panel classes in dock order; each has ``kind`` (its scenario kind) and ``title``.
PANEL_CLASSES = (RooflinePanel, CollectivePanel, AllReducePanel, ScalingPanel, PowerPanel)
PANEL_BY_KIND = {cls.kind: cls for cls in PANEL_CLASSES}

__all__ = ["PANEL_CLASSES", "PANEL_BY_KIND", "RooflinePanel", "CollectivePanel", "AllReducePanel",
           "ScalingPanel", "PowerPanel"]
