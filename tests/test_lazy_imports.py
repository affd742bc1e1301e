"""What the window imports before its first paint stays small: the database layer and the
modules of panels nobody has opened load when they are first needed (issue 15)."""

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env={"QT_QPA_PLATFORM": "offscreen",
                                                                          "PATH": "/usr/bin:/bin"})
    return set(out.stdout.split())


def test_the_storage_package_loads_sqlalchemy_only_for_a_project():
    light = _modules_after("import storage, storage.errors, storage.fileio, storage.recovery\n"
                           "assert storage.FILE_SUFFIX == '.swbproj' and storage.SCHEMA_VERSION >= 1")
    assert "sqlalchemy" not in light
    full = _modules_after("import storage\nassert storage.Project.open")
    assert "sqlalchemy" in full and "storage.project" in full


def test_import_workbench_names_every_module_and_loads_each_when_used():
    mods = _modules_after("import workbench\nassert 'link_health' in dir(workbench)\n"
                          "assert callable(workbench.link_health.node_layout)")
    assert "workbench.link_health" in mods
    light = _modules_after("import workbench")
    assert "workbench.link_health" not in light and "workbench.comms_sweep" not in light
    # the kinds a saved file can name are known without importing their modules by hand
    assert {"workbench.plan", "workbench.measured"} <= light


def test_the_main_window_module_imports_no_panel_and_no_database():
    mods = _modules_after("import ui.main_window")
    assert "sqlalchemy" not in mods
    assert not [m for m in mods if m.startswith("ui.panels.") and m != "ui.panels.measured_files"]
    assert "ui.export" not in mods and "ui.preset_manager" not in mods  # for the first export, the first edit


def test_the_all_reduce_and_scaling_analyses_do_not_load_numpy_ma():
    # numpy's unique asks numpy.ma on its first call (7-18 ms, paid by the first All-reduce or
    # Scaling drawing of a session); the model sorts and compares instead (workbench._arrays)
    mods = _modules_after(
        "import presets.catalog\n"
        "from workbench.analyses import allreduce, scaling\n"
        "from workbench.scenarios import AllReduceScenario, ScalingScenario\n"
        "allreduce.analyse(AllReduceScenario(), None, presets.catalog.BUILTIN)\n"
        "scaling.analyse(ScalingScenario(), None, presets.catalog.BUILTIN)")
    assert "workbench.comms_sweep" in mods and "workbench.scaling_analysis" in mods
    assert "numpy.ma" not in mods
