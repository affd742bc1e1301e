"""Scaling Workbench model: every formula, scenario type and parser, in SI units, without Qt.

``import workbench`` gives the notebook interface: ``workbench.roofline``, ``workbench.mfu``,
``workbench.comms``, ``workbench.collectives``, ``workbench.scaling``, ``workbench.carbon`` ...
and the run plan, ``workbench.plan.RunPlan`` / ``workbench.plan.predict``.
"""

__version__ = "0.1.0"

import importlib

#: The notebook interface, ``workbench.<module>.<name>``: each module is imported the first time
#: it is named (``import workbench`` stays quick for a program that needs three of them).
MODULES = (
    "carbon", "catalog", "collectives", "comms", "comms_sweep", "context", "energy", "footprint", "hardware",
    "kernel_import", "kernels", "link_health", "measure", "measured", "measured_scaling", "mfu", "nccl",
    "pipeline", "plan", "power", "roofline", "scaling", "scaling_analysis", "scenarios", "trainlog", "units",
    "workspace",
)

from workbench import measured, plan  # noqa: E402,F401 - they register the scenario kinds saved files name
from workbench._validate import InputError  # noqa: E402


def __getattr__(name: str):
    if name in MODULES:
        return importlib.import_module(f"workbench.{name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *MODULES})


__all__ = ["InputError", "__version__", *MODULES]
