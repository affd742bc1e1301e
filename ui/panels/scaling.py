"""Scaling and MFU panel (placeholder until its own module lands)."""

from __future__ import annotations

from ui.charts import Chart
from ui.panel import PanelBase
from workbench.scenarios import ScalingScenario


class ScalingPanel(PanelBase):
    kind = "scaling"
    title = "Scaling and MFU"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        super().__init__(scenario if scenario is not None else ScalingScenario(), parent, undo_stack=undo_stack)
        self.chart = Chart(title=self.title)
        self.add_chart(self.chart)
        self.refresh()
