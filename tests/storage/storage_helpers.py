"""Helpers shared by the project file tests (importable: tests/storage is on sys.path)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.scenarios import CollectiveScenario, RooflineScenario, ScalingScenario

SAMPLES = [
    ("Default roofline", RooflineScenario()),
    ("Big run", ScalingScenario(n_gpus=512)),
    ("Ring of 8", CollectiveScenario(n_ranks=8)),
]


def make_hardware(name: str = "Test GPU", key: str = "", builtin: bool = False) -> Hardware:
    return Hardware(
        name=name,
        vendor="Acme",
        compute=(ComputeRate("bf16", 500e12, "test sheet"),),
        memory=(MemoryLevel("HBM", 2e12, "test sheet", capacity=80e9),),
        tdp_w=400.0,
        tdp_source="test sheet",
        builtin=builtin,
        key=key,
    )


def file_state(path: Path) -> tuple[str, int, int]:
    """Hash, size and mtime of a file: equal before and after means it was not touched."""
    data = path.read_bytes()
    st = path.stat()
    return hashlib.sha256(data).hexdigest(), st.st_size, st.st_mtime_ns


def folder_listing(folder: Path) -> set[str]:
    return set(os.listdir(folder))


