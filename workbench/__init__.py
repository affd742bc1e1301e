"""Scaling Workbench model: every formula, scenario type and parser, in SI units, without Qt.

``import workbench`` gives the notebook interface: ``workbench.roofline``, ``workbench.mfu``,
``workbench.comms``, ``workbench.collectives``, ``workbench.scaling``, ``workbench.carbon`` ...
"""

__version__ = "0.1.0"

from workbench import _validate, hardware  # noqa: E402,F401
from workbench._validate import InputError  # noqa: E402,F401
