"""Built-in data: hardware specs, grid carbon intensities, PUE classes, sample scenarios.

Every figure carries its source. The data files live in ``presets/data`` in the human units
of their sources; :mod:`presets.loader` turns them into validated ``workbench`` values in SI.
"""

from presets.loader import (
    GridIntensity,
    Interconnect,
    PresetError,
    PueClass,
    grid_by_key,
    hardware_by_key,
    interconnect_by_key,
    load_generation_intensities,
    load_grids,
    load_hardware,
    load_interconnects,
    load_models,
    load_pue_classes,
    load_sample_dicts,
    model_by_key,
    sample_scenarios,
)

__all__ = [
    "PresetError",
    "GridIntensity",
    "PueClass",
    "Interconnect",
    "load_hardware",
    "hardware_by_key",
    "load_grids",
    "load_generation_intensities",
    "grid_by_key",
    "load_pue_classes",
    "load_interconnects",
    "interconnect_by_key",
    "load_models",
    "model_by_key",
    "load_sample_dicts",
    "sample_scenarios",
]
