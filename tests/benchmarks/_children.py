"""The benchmark's child processes: ``python -m tests.benchmarks._children MODE [ARGS]``.

Started by :mod:`tests.benchmarks.bench` (the one command), each in a fresh process with the
driver's environment (offscreen platform on a 1920x1080 screen, a private HOME). Every mode
prints one JSON object on its last stdout line. Only the standard library is imported at the
top: the start-up modes must not pay for anything the measured program does not import.

Modes:

- ``bare`` / ``app``: start-up to the first finished paint of the window (``bare``: a
  PySide6 + pyqtgraph main window with one plotted curve, the size of the app's window;
  ``app``: ``ui.cli.main([])``, the real entry point, on the default project). A paint probe
  is installed at the window's ``show()`` (an application event filter from the start would
  cost the app ~40,000 filtered events), after the program's own first imports, so that it
  changes neither what is imported nor in which order; at the first paint event it posts a
  zero timer, which fires once that repaint has been flushed; the process then reports its CPU time, the
  monotonic clock and exits at once (``os._exit``: no teardown in the figures; the driver
  reads the peak memory from ``wait4``). ``app --until project`` waits instead for the
  first paint after the project is in the window (when the project opens after the first
  paint, the two differ).
- ``window``: the main window at 1920x1080; per panel, change -> finished repaint; the GPU
  count typed in the toolbar; the Collectives animation stepping at 16 and 64 ranks; the
  All-reduce PNG export at 1920 and 3840 px.
- ``build PATH``: a project of 10,000 scenarios (the storage benchmark's mix).
- ``browser PATH``: the scenario browser filling from that project; File > Open of it, and
  ``Project.problems`` in one go (the status bar's count, which the window works out after the
  open in steps of 250 scenarios).
- ``roofline``: the Roofline panel with 10,000 kernels, redraw after a change.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _report(result: dict) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


# -- start-up --------------------------------------------------------------------------------
def _install_first_paint_probe(until_project: bool) -> None:
    """Patch QWidget.show so the first shown top-level window gets a paint probe."""
    import resource

    from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
    from PySide6.QtWidgets import QWidget

    paint = QEvent.Type.Paint
    state: dict = {"window": None, "probe": None}

    def finish() -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        window = state["window"]
        _report({"cpu_s": time.process_time(), "mono": time.monotonic(),
                 "self_maxrss_mib": usage.ru_maxrss / 1024,
                 "window": [window.width(), window.height()],
                 "title": window.windowTitle()})
        os._exit(0)

    class Probe(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt naming
            if event.type() == paint:
                window = state["window"]
                if until_project and getattr(window, "project", None) is None:
                    return False
                QCoreApplication.instance().removeEventFilter(self)
                QTimer.singleShot(0, finish)  # after this repaint is flushed
            return False

    real_show = QWidget.show

    def show(self) -> None:
        if state["window"] is None and self.isWindow():
            state["window"] = self
            state["probe"] = Probe()
            QCoreApplication.instance().installEventFilter(state["probe"])
        real_show(self)

    QWidget.show = show


def bare(width: int, height: int) -> None:
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication, QMainWindow

    _install_first_paint_probe(False)  # after the program's own imports (see app)
    app = QApplication(sys.argv[:1])
    window = QMainWindow()
    plot = pg.PlotWidget()
    plot.plot([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
    window.setCentralWidget(plot)
    window.resize(width, height)
    window.show()
    app.exec()


def app(until: str) -> None:
    # the entry point first, as the app starts: it imports the model (numpy, workbench) before
    # Qt. The probe imports PySide6, whose import hook (for ``from __feature__ import``) then
    # reads the source of every module imported after it: probing first made the app pay
    # for reading ~150 modules' source (~25 ms) that it does not read when started itself.
    from ui.cli import main

    _install_first_paint_probe(until == "project")
    main([])


# -- helpers for the in-process modes --------------------------------------------------------
def _application():
    from ui.app import create_application

    return create_application(sys.argv[:1])


def _window(project_path):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from storage import Project
    from ui.app import freeze_start_up_objects
    from ui.main_window import MainWindow

    # the whole screen, as the issue measures: not the layout the warm-up start saved on close
    QSettings().remove("window")
    window = MainWindow(Project.open(project_path))
    screen = QApplication.primaryScreen().availableGeometry()
    window.setGeometry(screen)
    window.show()
    freeze_start_up_objects()  # as the app does once its project is open
    return window


def _alternate(n: int, first, second):
    return [first if i % 2 == 0 else second for i in range(n)]


# -- the main window: panels, toolbar, animation, export -------------------------------------
def window_mode(tmp: str, samples: int) -> None:
    _application()
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from storage import Project
    from tests.benchmarks._timing import PaintWatch, grab, measure, probe_now, stats_ms
    from ui import export

    mib = 2**20
    path = os.path.join(tmp, "panels.swbproj")
    Project.create(path, overwrite=True).close()
    window = _window(path)
    watch = PaintWatch().install()
    watch.settle(200)
    out: dict = {"window": [window.width(), window.height()]}

    def panel_edits(kind: str, field: str, a, b):
        panel = window.panel(kind)
        window.raise_panel(kind)
        watch.settle(200)
        values = _alternate(samples, a, b)
        # as typing in the field does: a field that is the plan's (the power panel's static
        # share) changes the plan, every other the panel's own scenario
        changes = [lambda v=v: window.document.edit_scenario(kind, **{field: v}) for v in values]
        result = measure(watch, changes, panel.chart_area)
        result["chart"] = [panel.chart_area.width(), panel.chart_area.height()]
        return result

    roofline = window.panel("roofline")
    flip = [not roofline.scenario().show_precision_ceilings]
    out["roofline ceilings"] = panel_edits("roofline", "show_precision_ceilings",
                                           flip[0], not flip[0])
    out["collective size"] = panel_edits("collective", "message_bytes", 64 * mib, 256 * mib)
    out["all-reduce size"] = panel_edits("allreduce", "size_bytes", 256 * mib, 1024 * mib)
    out["scaling serial fraction"] = panel_edits("scaling", "serial_fraction", 0.05, 0.02)
    out["power static share"] = panel_edits("power", "static_fraction", 0.4, 0.3)

    # the GPU count typed in the toolbar (Return timed; the digits typed before it)
    window.raise_panel("run_plan")
    watch.settle(200)
    edit = window.context_toolbar.gpu_field.edit
    texts = _alternate(samples, "64", "512")

    def typed(text):
        def change():
            QTest.keyClick(edit, Qt.Key.Key_Return)
        edit.setFocus()
        edit.selectAll()
        QTest.keyClicks(edit, text)
        return change

    run_plan = window.panel("run_plan")
    probe = probe_now()
    before = grab(run_plan.chart_area)
    walls, cpus, paints, unchanged = [], [], [], 0
    for text in texts:
        change = typed(text)
        wall, cpu, painted = watch.time_change(change)
        walls.append(wall)
        cpus.append(cpu)
        paints.append(painted)
        after = grab(run_plan.chart_area)
        unchanged += after == before
        before = after
    toolbar = stats_ms(walls)
    toolbar["cpu_median"] = stats_ms(cpus)["median"]
    toolbar["unpainted"] = sum(1 for p in paints if p == 0)
    toolbar["pixels_unchanged"] = unchanged
    toolbar["plan_gpus"] = window.document.plan().n_gpus
    toolbar["probe"] = probe
    out["toolbar GPU count"] = toolbar

    # the Collectives animation: one step forward, as the play timer does
    collective = window.panel("collective")
    window.raise_panel("collective")
    for ranks in (16, 64):
        collective.edit(n_ranks=ranks, _merge=False)
        watch.settle(200)
        last = collective.last_step()
        steps = [1 + i % max(1, last) for i in range(samples)]
        changes = [lambda s=s: collective.go_to(s) for s in steps]
        result = measure(watch, changes, collective.view)
        result["steps"] = last
        out[f"animation step, {ranks} ranks"] = result

    # PNG export of the All-reduce chart
    allreduce = window.panel("allreduce")
    window.raise_panel("allreduce")
    watch.settle(200)
    watch.remove()
    for width in (1920, 3840):
        walls, cpus = [], []
        for i in range(max(3, samples // 6)):
            target = os.path.join(tmp, f"allreduce-{width}-{i}.png")
            c0, t0 = time.process_time(), time.perf_counter()
            export.export_panel(allreduce, "png", target, width_px=width)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        result = stats_ms(walls)
        result["cpu_median"] = stats_ms(cpus)["median"]
        out[f"All-reduce PNG {width} px"] = result
    _report(out)
    os._exit(0)


# -- 10,000 scenarios ----------------------------------------------------------------------------
def build(path: str, n: int) -> None:
    from storage import Project
    from workbench.scenarios import (
        AllReduceScenario,
        CollectiveScenario,
        PowerScenario,
        RooflineScenario,
        ScalingScenario,
    )

    start = time.perf_counter()
    with Project.create(path, overwrite=True) as project:
        for i in range(n):
            kind = i % 5
            scenario = (RooflineScenario(), ScalingScenario(n_gpus=8 + i % 1000),
                        CollectiveScenario(n_ranks=2 + i % 60), AllReduceScenario(),
                        PowerScenario(n_gpus=8 + i % 500))[kind]
            project.save_scenario(f"Scenario {i:05d}", scenario, notes=f"note {i}")
        project.save()
    _report({"build_s": time.perf_counter() - start, "size_mib": os.path.getsize(path) / 2**20})


def browser_mode(path: str, small: str, samples: int) -> None:
    _application()
    from storage import Project
    from tests.benchmarks._timing import PaintWatch, grab, stats_ms
    from ui.scenario_browser import ScenarioBrowser

    watch = PaintWatch().install()
    browser = ScenarioBrowser(None)
    browser.resize(330, 1000)
    browser.show()
    watch.settle(200)
    fills, cpus, counts, unchanged = [], [], [], 0
    for _ in range(samples):
        project = Project.open(path)  # a fresh first look each time
        empty = grab(browser.tree)
        wall, cpu, paints = watch.time_change(lambda p=project: browser.set_project(p))
        unchanged += grab(browser.tree) == empty or paints == 0
        fills.append(wall)
        cpus.append(cpu)
        counts.append(sum(browser.group_item(k).childCount() for k in ("roofline", "scaling", "power",
                                                                         "allreduce", "collective")))
        browser.set_project(None)
        watch.settle(20)
        project.close()
    out: dict = {}
    fill = stats_ms(fills)
    fill["cpu_median"] = stats_ms(cpus)["median"]
    fill["rows"] = max(counts)
    fill["pixels_unchanged"] = unchanged
    out["browser fill"] = fill
    browser.close()

    # the problem count for the status bar, a first look at every payload, in one go; the
    # window counts it after the open a batch at a time (Project.check_items_step)
    looks, cpus = [], []
    for _ in range(samples):
        project = Project.open(path)
        c0, t0 = time.process_time(), time.perf_counter()
        assert project.problems == []
        looks.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        project.close()
    look = stats_ms(looks)
    look["cpu_median"] = stats_ms(cpus)["median"]
    out["Project.problems in one go"] = look

    window = _window(small)
    watch.settle(300)
    opens, cpus = [], []
    for _ in range(samples):
        wall, cpu, paints = watch.time_change(lambda: window.open_path(path, confirm=False))
        opens.append(wall)
        cpus.append(cpu)
        assert window.project.path.name == os.path.basename(path)
        window.open_path(small, confirm=False)  # away again, untimed
        watch.settle(50)
    opened = stats_ms(opens)
    opened["cpu_median"] = stats_ms(cpus)["median"]
    out["File > Open"] = opened
    out["Project.problems in one go"] = out.pop("Project.problems in one go")
    _report(out)
    os._exit(0)


# -- the roofline with 10,000 kernels ------------------------------------------------------------
def roofline_mode(tmp: str, samples: int) -> None:
    _application()
    import numpy as np
    from PySide6.QtGui import QUndoStack

    from tests.benchmarks._timing import PaintWatch, measure
    from ui.catalog import HardwareCatalog
    from ui.panels.roofline import RooflinePanel
    from workbench.scenarios import RooflineScenario

    n = 10_000
    rng = np.random.default_rng(1)
    flops = 10 ** rng.uniform(6, 13, n)
    intensity = 10 ** rng.uniform(-1.5, 3.8, n)
    lines = ["name,flops,bytes,time_s"]
    for i in range(n):
        t = "" if i % 3 else f"{flops[i] / 1e14 * (1 + i % 7):.6g}"
        lines.append(f"kernel_{i},{flops[i]:.6g},{flops[i] / intensity[i]:.6g},{t}")
    csv = os.path.join(tmp, "kernels.csv")
    with open(csv, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")

    panel = RooflinePanel(HardwareCatalog(), RooflineScenario(hardware=("h100-sxm", "b200")),
                          undo_stack=QUndoStack())
    panel.resize(1920, 1080)
    panel.show()
    watch = PaintWatch().install()
    watch.settle(200)
    start = time.perf_counter()
    panel.import_kernels_from(csv)
    watch.settle()
    imported = (watch.last_paint_end or time.perf_counter()) - start
    assert len(panel.kernels()) == n
    changes = []
    for i in range(samples):
        if i % 2 == 0:
            changes.append(lambda: panel.edit(sparse=not panel.scenario().sparse))
        else:
            changes.append(lambda: panel.edit(precision="fp8" if panel.scenario().precision == "bf16"
                                              else "bf16"))
    result = measure(watch, changes, panel.chart)
    result["import_ms"] = imported * 1e3
    _report({"roofline 10k kernels": result})
    os._exit(0)


def main(argv: list[str]) -> None:
    mode, *args = argv
    if mode == "bare":
        bare(int(args[0]), int(args[1]))
    elif mode == "app":
        app(args[0] if args else "paint")
    elif mode == "window":
        window_mode(args[0], int(args[1]))
    elif mode == "build":
        build(args[0], int(args[1]))
    elif mode == "browser":
        browser_mode(args[0], args[1], int(args[2]))
    elif mode == "roofline":
        roofline_mode(args[0], int(args[1]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
