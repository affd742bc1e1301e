"""Scenarios that pass validation but whose numbers cannot be computed (values that overflow)
never take the window down: the panel says what is wrong, the scenario stays for the user to
change or undo, and a headless export fails with one line (issue 14 item 5)."""

from __future__ import annotations

import dataclasses
import numbers

import pytest
from PySide6.QtCore import Qt

from presets import sample_scenarios
from storage import Project
from ui import cli, dialogs
from ui.catalog import HardwareCatalog
from ui.main_window import MainWindow
from ui.panels import PANELS
from workbench.scenarios import AllReduceScenario

#: validation bounds every field, so no saved scenario overflows today; these tests make the
#: collective model fail as an overflow does, to check what the window does when one slips through
SLOW = AllReduceScenario().with_changes(link_bw=1.0)


@pytest.fixture
def overflowing(monkeypatch):
    from workbench import comms_sweep
    from workbench._validate import InputError

    real = comms_sweep.sweep

    def sweep(op, n_ranks, link_bw, *args, **kwargs):
        if link_bw == SLOW.link_bw:
            raise InputError("inputs", "the result overflows (values too large or too small to compute)")
        return real(op, n_ranks, link_bw, *args, **kwargs)

    monkeypatch.setattr(comms_sweep, "sweep", sweep)


def _extreme_variants(base):
    """Each numeric field of ``base`` set to each extreme value the scenario type accepts."""
    for f in dataclasses.fields(base):
        value = getattr(base, f.name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            continue
        for extreme in (1e300, 1e-300, 10**15):
            candidate = int(extreme) if isinstance(value, int) and extreme >= 1 else extreme
            try:
                yield f.name, base.with_changes(**{f.name: candidate})
            except (ValueError, TypeError):
                continue


def _base(record):
    samples = [s for _n, s in sample_scenarios() if s.kind == record.kind]
    return samples[0] if samples else record.default()


@pytest.mark.parametrize("record", [r for r in PANELS if any(True for _ in _extreme_variants(_base(r)))],
                         ids=lambda r: r.kind)
def test_no_extreme_value_raises_out_of_a_panel(qtbot, record):
    base = _base(record)
    catalog = HardwareCatalog()
    panel = record.view(catalog, base)
    qtbot.addWidget(panel)
    tried = 0
    for name, scenario in _extreme_variants(base):
        panel.set_scenario(scenario)  # raises out of here before the guard
        tried += 1
        assert panel.scenario() is scenario, name
    assert tried > 0
    panel.set_scenario(base)
    assert panel.draw_problem() == ""


def test_an_overflowing_scenario_is_reported_in_the_panel_and_undo_brings_the_chart_back(qtbot, overflowing):
    record = next(r for r in PANELS if r.kind == "allreduce")
    panel = record.view(HardwareCatalog(), AllReduceScenario())
    qtbot.addWidget(panel)
    panel.show()
    assert panel.edit(link_bw=SLOW.link_bw)
    assert panel.scenario().link_bw == SLOW.link_bw  # kept: nothing the user typed is lost
    assert "Cannot draw this scenario" in panel.status_text()
    assert "overflow" in panel.status_text()
    panel.undo_stack().undo()
    assert panel.status_text() == ""
    assert panel.draw_problem() == ""
    panel.undo_stack().redo()  # a redo that cannot draw reports it too
    assert "Cannot draw this scenario" in panel.status_text()


def test_a_project_holding_an_overflowing_scenario_opens_and_exports_with_one_line(qtbot, tmp_path, monkeypatch,
                                                                                  capsys, overflowing):
    path = tmp_path / "extreme.swbproj"
    project = Project.create(path)
    project.save_scenario("Slow link", SLOW)
    project.save()
    project.close()

    code = cli.main(["export", str(path), "--scenario", "Slow link", "--png", str(tmp_path / "x.png")])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1
    assert "cannot be drawn" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()

    monkeypatch.setattr(dialogs, "ask_save_changes", lambda parent, name: dialogs.DISCARD)
    window = MainWindow(Project.open(path))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    row = next(r for r in window.project.list_scenarios() if r.name == "Slow link")
    assert window.open_saved_scenario(row.id)
    panel = window.panel("allreduce")
    assert panel.scenario().link_bw == SLOW.link_bw
    assert "Cannot draw this scenario" in panel.status_text()
    # the rest of the window still works
    window.raise_panel("run_plan")
    assert window.panel("run_plan").draw_problem() == ""
    assert window.summary_label.text()
    assert window.summary_label.textFormat() == Qt.TextFormat.RichText
