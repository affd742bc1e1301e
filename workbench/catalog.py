"""Where a plan's preset keys ("h100-sxm", "nic-400g") are looked up.

``workbench`` holds the formulas and cannot import the preset library above it, so the
look-up is a small interface that data packages fill: anything with ``hardware(key)`` and
``interconnect(key)`` methods. The built-in presets register one under the entry-point group
``scaling_workbench.catalogs`` (see ``pyproject.toml``), so ``predict(plan)`` works in a
notebook with nothing to set up; a caller with its own presets (the app's project file, a
test) passes a catalog explicitly or registers one with :func:`register`.
"""

from __future__ import annotations

from typing import Protocol

from workbench import _validate as v
from workbench.hardware import Hardware, Interconnect

ENTRY_POINT_GROUP = "scaling_workbench.catalogs"


class Catalog(Protocol):
    def hardware(self, key: str) -> Hardware: ...

    def interconnect(self, key: str) -> Interconnect: ...


_registered: list[Catalog] = []
_discovered: list[Catalog] | None = None


def check_catalog(catalog: object, name: str = "catalog") -> Catalog:
    """``catalog`` if it has callable ``hardware(key)`` and ``interconnect(key)`` methods."""
    if not (callable(getattr(catalog, "hardware", None)) and callable(getattr(catalog, "interconnect", None))):
        raise v.InputError(name, f"must have hardware(key) and interconnect(key) methods, got {v._describe(catalog)}")
    return catalog


def register(catalog: Catalog) -> None:
    """Put ``catalog`` first in the look-up order of :func:`default_catalog`."""
    _registered.insert(0, check_catalog(catalog))


def _entry_point_catalogs() -> list[Catalog]:
    global _discovered
    if _discovered is None:
        from importlib import metadata  # 17 ms to import: only when a catalog is looked up

        found = []
        for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.append(entry.load())
        _discovered = found
    return _discovered


class _Chain:
    """Ask each catalog in turn; the first that knows the key answers."""

    def __init__(self, catalogs: list[Catalog]):
        self._catalogs = catalogs

    def _find(self, kind: str, key: str):
        known = ""
        for catalog in self._catalogs:
            try:
                return getattr(catalog, kind)(key)
            except KeyError as exc:
                text = str(exc.args[0]) if exc.args else ""
                known = known or (text.split("known: ", 1)[1] if "known: " in text else "")
                continue
        if not self._catalogs:
            raise v.InputError(kind, "no preset catalog is installed; install the package with "
                               "'pip install -e .' or pass catalog=... to predict")
        raise v.InputError(kind, f"there is no {kind} preset {key!r}" + (f"; known: {known}" if known else ""))

    def hardware(self, key: str) -> Hardware:
        return self._find("hardware", key)

    def interconnect(self, key: str) -> Interconnect:
        return self._find("interconnect", key)


def chain(*catalogs: Catalog) -> Catalog:
    """One catalog that asks ``catalogs`` in order (a project's own presets, then the built-in)."""
    return _Chain([check_catalog(c, "catalogs") for c in catalogs])


def default_catalog() -> Catalog:
    """Registered catalogs first, then the installed ones (the built-in presets)."""
    return _Chain(list(_registered) + _entry_point_catalogs())


__all__ = ["Catalog", "ENTRY_POINT_GROUP", "chain", "check_catalog", "default_catalog", "register"]
