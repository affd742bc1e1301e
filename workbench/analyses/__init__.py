"""What each panel shows, one module per kind: ``workbench.analyses.<kind>.analyse``.

Each module has one function, ``analyse(scenario, view, catalog)``: the kind's scenario, the
run plan it follows (a :class:`workbench.workspace.PlanView`, or None for a view on its own)
and a catalog that resolves preset keys (:class:`workbench.catalog.Catalog`). It returns one
immutable value holding every number the view draws or lists, so the view only renders it, and
raises ValueError (an :class:`workbench.InputError` naming the field) when the scenario cannot
be analysed. ``workbench.workspace.analyse`` finds the module by kind and
``workbench.workspace.AnalysisCache`` keeps the last result, so each analysis runs once per
change. No Qt here: a notebook gets the same numbers as the panel.
"""
