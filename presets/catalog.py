"""The built-in presets as a ``workbench.catalog`` catalog: how ``workbench.plan.predict`` finds
"h100-sxm" or "nic-400g" without importing this package (registered as an entry point)."""

from __future__ import annotations

from presets.loader import hardware_by_key, interconnect_by_key
from workbench.hardware import Hardware, Interconnect


class BuiltinCatalog:
    """Hardware and interconnect presets shipped in ``presets/data``."""

    def hardware(self, key: str) -> Hardware:
        return hardware_by_key(key)

    def interconnect(self, key: str) -> Interconnect:
        return interconnect_by_key(key)


BUILTIN = BuiltinCatalog()
