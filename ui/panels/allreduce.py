"""All-reduce panel (placeholder until its own module lands)."""

from __future__ import annotations

from ui.charts import Chart
from ui.panel import PanelBase
from workbench.scenarios import AllReduceScenario


class AllReducePanel(PanelBase):
    kind = "allreduce"
    title = "All-reduce"

    def __init__(self, catalog, scenario=None, parent=None, *, undo_stack=None):
        self.catalog = catalog
        super().__init__(scenario if scenario is not None else AllReduceScenario(), parent, undo_stack=undo_stack)
        self.chart = Chart(title=self.title)
        self.add_chart(self.chart)
        self.refresh()
