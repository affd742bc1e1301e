"""The hardware catalog every panel reads: built-in presets plus the project's own.

Panels never load presets themselves: they ask the catalog, so a user preset added in the
preset manager (or "This machine (measured)" from the roofline panel) appears everywhere.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

import presets
from workbench.hardware import Hardware


class HardwareCatalog(QObject):
    """Hardware presets by key, backed by a project when one is open."""

    changed = Signal()

    def __init__(self, project=None, parent: QObject | None = None):
        super().__init__(parent)
        #: counts the changes: what was worked out from the presets is kept while it is the same
        self.revision = 0
        self.changed.connect(self._count_change)
        self._project = None
        self._cache: dict[str, Hardware] = {}
        self.set_project(project)

    def set_project(self, project) -> None:
        """Read presets from ``project`` (a storage.Project) or, without one, the built-ins."""
        self._project = project
        self.reload()

    def reload(self) -> None:
        cache: dict[str, Hardware] = {hw.key: hw for hw in presets.load_hardware()}
        if self._project is not None:
            cache.update(self._project.usable_presets())  # those that do not load: project.problems
        self._cache = cache
        self.changed.emit()

    def _count_change(self) -> None:
        self.revision += 1

    def keys(self) -> list[str]:
        return list(self._cache)

    def items(self) -> list[Hardware]:
        return list(self._cache.values())

    def get(self, key: str) -> Hardware:
        try:
            return self._cache[key]
        except KeyError:
            raise KeyError(f"no hardware preset with key {key!r}") from None

    def __contains__(self, key: str) -> bool:
        return key in self._cache

    def name(self, key: str) -> str:
        return self._cache[key].name if key in self._cache else key

    def add_user_preset(self, hardware: Hardware) -> str:
        """Add (or replace) a user preset; stored in the project when one is open."""
        hw = hardware.with_changes(builtin=False)
        if self._project is not None:
            existing = {r.key for r in self._project.list_presets()}
            if hw.key in existing:
                self._project.update_preset(hw.key, hw)
                key = hw.key
            else:
                key = self._project.add_preset(hw)
        else:
            key = hw.key
            self._cache[key] = hw
            self.changed.emit()
            return key
        self.reload()
        return key
