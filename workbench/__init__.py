"""Scaling Workbench model: every formula, scenario type and parser, in SI units, without Qt.

``import workbench`` gives the notebook interface: ``workbench.roofline``, ``workbench.mfu``,
``workbench.comms``, ``workbench.collectives``, ``workbench.scaling``, ``workbench.carbon`` ...
and the run plan, ``workbench.plan.RunPlan`` / ``workbench.plan.predict``.
"""

__version__ = "0.1.0"

from workbench import (  # noqa: E402,F401  (the notebook interface: workbench.<module>.<name>)
    _validate,
    carbon,
    catalog,
    collectives,
    comms,
    comms_sweep,
    context,
    energy,
    footprint,
    hardware,
    kernel_import,
    kernels,
    link_health,
    measure,
    measured,
    measured_scaling,
    mfu,
    nccl,
    pipeline,
    plan,
    power,
    roofline,
    scaling,
    scaling_analysis,
    scenarios,
    trainlog,
    units,
    workspace,
)
from workbench._validate import InputError  # noqa: E402,F401
