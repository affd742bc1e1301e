"""Project file at scale: 10,000 scenarios and 500 presets; prints build, open, list and save times.

Not part of the default run (pytest addopts ignores tests/benchmarks). Run with
``.venv/bin/python -m pytest tests/benchmarks -s``. Speed is printed, never asserted.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from storage import Project
from workbench.hardware import ComputeRate, Hardware, MemoryLevel
from workbench.scenarios import (
    AllReduceScenario,
    CollectiveScenario,
    PowerScenario,
    RooflineScenario,
    ScalingScenario,
)

N_SCENARIOS = 10_000
N_PRESETS = 500


def _hardware(i: int) -> Hardware:
    return Hardware(
        name=f"Bench GPU {i:03d}",
        vendor="Bench",
        compute=(ComputeRate("bf16", 100e12 + i * 1e12, "bench"), ComputeRate("fp32", 50e12, "bench")),
        memory=(MemoryLevel("HBM", 1e12 + i * 1e9, "bench", capacity=80e9),),
        tdp_w=300.0 + i,
        tdp_source="bench",
    )


def _scenario(i: int):
    kind = i % 5
    if kind == 0:
        return RooflineScenario()
    if kind == 1:
        return ScalingScenario(n_gpus=8 + i % 1000)
    if kind == 2:
        return CollectiveScenario(n_ranks=2 + i % 60)
    if kind == 3:
        return AllReduceScenario()
    return PowerScenario()


class Clock:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []

    def time(self, label: str, fn, repeat: int = 1):
        best = float("inf")
        result = None
        for _ in range(repeat):
            start = time.perf_counter()
            result = fn()
            best = min(best, time.perf_counter() - start)
        self.rows.append((label, best))
        return result

    def report(self) -> None:
        print()
        for label, seconds in self.rows:
            print(f"  {label:<48} {seconds * 1000:9.1f} ms")


@pytest.fixture(scope="module")
def big_project(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bench") / "big.swbproj"
    clock = Clock()

    def build() -> None:
        with Project.create(path, seed=False) as project:
            for i in range(N_PRESETS):
                project.add_preset(_hardware(i))
            for i in range(N_SCENARIOS):
                project.save_scenario(f"Scenario {i:05d}", _scenario(i), notes=f"note {i}")
            project.save()

    clock.time(f"build ({N_SCENARIOS} scenarios, {N_PRESETS} presets)", build)
    clock.report()
    print(f"  file size: {path.stat().st_size / 2**20:.1f} MiB")
    return path


def test_open_list_save(big_project):
    clock = Clock()
    opened = []
    project = clock.time("open (copy to memory, integrity check)",
                         lambda: opened.append(Project.open(big_project)) or opened[-1], repeat=3)
    for extra in opened[:-1]:
        extra.close()
    try:
        records = clock.time("list_scenarios() all", project.list_scenarios, repeat=5)
        assert len(records) == N_SCENARIOS
        by_kind = clock.time("list_scenarios('scaling')", lambda: project.list_scenarios("scaling"), repeat=5)
        assert len(by_kind) == N_SCENARIOS // 5
        problems = clock.time("problems (first look: parse all payloads)", lambda: project.problems)
        assert problems == []
        presets = clock.time("list_presets()", project.list_presets, repeat=5)
        assert len(presets) == N_PRESETS
        clock.time("load_scenario by (kind, name)",
                   lambda: project.load_scenario(("scaling", "Scenario 05001")), repeat=5)
        clock.time("save_scenario (replace one)",
                   lambda: project.save_scenario("Scenario 05001", ScalingScenario(n_gpus=64)), repeat=5)
        clock.time("save() (atomic, fsync)", project.save, repeat=3)
        clock.time("write_recovery()", lambda: (project.set_notes(1, "n"), project.write_recovery()), repeat=3)
    finally:
        project.close()
    clock.report()
