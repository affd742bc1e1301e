"""Load the built-in data files into validated ``workbench`` values, in SI units.

The files under ``presets/data`` hold figures in the human units of their sources (TFLOP/s,
TB/s, GB, GB/s, Gbit/s, microseconds) so a reviewer can check them line by line; this module
converts them to SI (FLOP/s, bytes/s, bytes, seconds) and checks every entry. A bad file fails
loudly with :class:`PresetError`, whose message names the file, the entry and the field.

Every loader takes an optional ``path`` (a data file elsewhere, used by tests and by anyone
who wants to check an edited file); without it the packaged file is read through
``importlib.resources``, so it works from an installed wheel or a bundled build.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from workbench import _validate as v
from workbench.footprint import SECONDS_PER_YEAR
from workbench.hardware import (
    DEVICE_MEMORY,
    PRECISIONS,
    ComputeRate,
    Hardware,
    Interconnect,
    MemoryLevel,
)
from workbench.plan import ModelShape

# Unit conversions from the files' human units to SI.
TERA = 1e12
GIGA = 1e9
GIB = 2**30
MIB = 2**20
BITS_PER_BYTE = 8

DATA_PACKAGE = "presets"
DATA_DIR = "data"


class PresetError(ValueError):
    """A data file is malformed. ``file``, ``entry`` and ``field`` say where."""

    def __init__(self, file: str, entry: str, field: str, message: str):
        where = file
        if entry:
            where += f": entry '{entry}'"
        if field:
            where += f": field '{field}'"
        super().__init__(f"{where}: {message}")
        self.file = file
        self.entry = entry
        self.field = field


# -- value types --------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridIntensity:
    """Carbon intensity of a grid (or of one generation source), gCO2e per kWh."""

    key: str
    name: str
    g_per_kwh: float  # grams CO2e per kWh
    year: int | None  # the year the data describes; None where the source gives none
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        object.__setattr__(self, "g_per_kwh", v.non_negative("g_per_kwh", self.g_per_kwh))
        if self.year is not None:
            object.__setattr__(self, "year", v.integer("year", self.year, 1900, 2100))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)


@dataclass(frozen=True)
class PueClass:
    """A power usage effectiveness class (facility energy / IT energy, >= 1)."""

    key: str
    name: str
    pue: float
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        object.__setattr__(self, "pue", v.in_range("pue", self.pue, 1.0, 5.0))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)


# -- reading ------------------------------------------------------------------------------------
def _data_text(name: str, path: str | Path | None) -> tuple[str, str]:
    """(file label for messages, text) of a packaged data file or of ``path``."""
    if path is not None:
        p = Path(path)
        try:
            return str(p), p.read_text(encoding="utf-8")
        except OSError as exc:
            raise PresetError(str(p), "", "", f"cannot read ({exc.strerror or exc})") from None
    resource = resources.files(DATA_PACKAGE).joinpath(DATA_DIR, name)
    label = f"presets/{DATA_DIR}/{name}"
    try:
        return label, resource.read_text(encoding="utf-8")
    except OSError as exc:
        raise PresetError(label, "", "", f"cannot read ({exc})") from None


def _read_toml(name: str, path: str | Path | None) -> tuple[str, dict[str, Any]]:
    label, text = _data_text(name, path)
    try:
        return label, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(label, "", "", f"not valid TOML ({exc})") from None


class _Entry:
    """Typed field access on one table of a data file; every failure names file/entry/field."""

    def __init__(self, file: str, entry: str, data: object, prefix: str = ""):
        self.file = file
        self.entry = entry
        self.prefix = prefix
        if not isinstance(data, Mapping):
            raise PresetError(file, entry, prefix.rstrip("."), f"must be a table, got {type(data).__name__}")
        self.data = data

    def error(self, field: str, message: str) -> PresetError:
        return PresetError(self.file, self.entry, self.prefix + field, message)

    def sub(self, field: str, required: bool = True) -> _Entry | None:
        if field not in self.data:
            if required:
                raise self.error(field, "is missing")
            return None
        return _Entry(self.file, self.entry, self.data[field], self.prefix + field + ".")

    def has(self, field: str) -> bool:
        return field in self.data

    def text(self, field: str, default: str | None = None) -> str:
        if field not in self.data:
            if default is None:
                raise self.error(field, "is missing")
            return default
        value = self.data[field]
        if not isinstance(value, str):
            raise self.error(field, f"must be text, got {value!r}")
        if default is None and not value.strip():
            raise self.error(field, "must not be empty")
        return value.strip()

    def number(self, field: str, *, low: float = 0.0, strict: bool = True, high: float = math.inf) -> float:
        """A finite number > low (>= low when not ``strict``) and <= high."""
        if field not in self.data:
            raise self.error(field, "is missing")
        value = self.data[field]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(field, f"must be a number, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise self.error(field, f"must be finite, got {value}")
        if value < low or (strict and value == low):
            raise self.error(field, f"must be {'>' if strict else '>='} {low:g}, got {value:g}")
        if value > high:
            raise self.error(field, f"must be <= {high:g}, got {value:g}")
        return value

    def optional_number(self, field: str, **bounds: Any) -> float | None:
        return self.number(field, **bounds) if field in self.data else None

    def integer(self, field: str) -> int:
        value = self.data.get(field)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(field, f"must be a whole number, got {value!r}" if field in self.data else "is missing")
        return value

    def only(self, allowed: set[str]) -> None:
        unknown = sorted(set(self.data) - allowed)
        if unknown:
            raise self.error(unknown[0], f"is not a known field (allowed: {', '.join(sorted(allowed))})")

    def exactly_one(self, *fields: str) -> str:
        present = [f for f in fields if f in self.data]
        if len(present) != 1:
            raise self.error(fields[0], f"give exactly one of {', '.join(fields)} (got {len(present)})")
        return present[0]


def _build(entry: _Entry, make: Callable[[], Any]) -> Any:
    """Run a workbench constructor, turning its InputError into a PresetError."""
    try:
        return make()
    except v.InputError as exc:
        raise PresetError(entry.file, entry.entry, entry.prefix + exc.parameter, str(exc)) from None


def _top_tables(label: str, data: dict[str, Any], section: str | None) -> dict[str, Any]:
    if section is None:
        return data
    tables = data.get(section)
    if not isinstance(tables, dict) or not tables:
        raise PresetError(label, "", section, "is missing or empty")
    return tables


# -- hardware -----------------------------------------------------------------------------------
_HARDWARE_FIELDS = {"name", "vendor", "note", "compute", "memory", "power", "interconnect"}
_RATE_FIELDS = {"dense_tflops", "sparsity_factor", "mamf_tflops", "source", "note"}


_LEVEL_FIELDS = {"memory_gb", "memory_gib", "capacity_mib", "mem_bw_tbs", "technology", "source", "note"}
_CAPACITY_UNITS = {"memory_gb": GIGA, "memory_gib": GIB, "capacity_mib": MIB}


def _parse_memory_level(mem: _Entry, name: str, device: bool) -> MemoryLevel:
    """One memory level; device memory must give its capacity, a cache level may."""
    given = [f for f in _CAPACITY_UNITS if mem.has(f)]
    if device or given:
        cap_field = mem.exactly_one(*_CAPACITY_UNITS)
        capacity = mem.number(cap_field) * _CAPACITY_UNITS[cap_field]
    else:
        capacity = None
    bandwidth = mem.number("mem_bw_tbs") * TERA
    source = mem.text("source")
    return _build(mem, lambda: MemoryLevel(
        name=name, bandwidth=bandwidth, source=source, capacity=capacity,
        technology=mem.text("technology", ""), note=mem.text("note", "")))


def _parse_memory_levels(e: _Entry) -> tuple[MemoryLevel, ...]:
    """``[key.memory]`` (device memory alone, the older form) or ``[[key.memory]]`` (one table
    per level, each with a ``name``: device memory is the level named DEVICE_MEMORY)."""
    if not e.has("memory"):
        raise e.error("memory", "is missing")
    raw = e.data["memory"]
    if isinstance(raw, Mapping):
        mem = _Entry(e.file, e.entry, raw, "memory.")
        mem.only(_LEVEL_FIELDS)
        return (_parse_memory_level(mem, DEVICE_MEMORY, device=True),)
    if not isinstance(raw, list) or not raw:
        raise e.error("memory", "must be a table, or one [[memory]] table per level")
    entries = [_Entry(e.file, e.entry, item, f"memory[{i}].") for i, item in enumerate(raw)]
    names = []
    for mem in entries:
        mem.only(_LEVEL_FIELDS | {"name"})
        name = mem.text("name")
        if name in names:
            raise mem.error("name", f"is used by two levels ('{name}')")
        names.append(name)
    if DEVICE_MEMORY not in names:
        raise e.error("memory", f"has no level named '{DEVICE_MEMORY}' (device memory, whatever its "
                                f"technology; levels: {', '.join(names)})")
    return tuple(_parse_memory_level(mem, name, device=name == DEVICE_MEMORY)
                 for mem, name in zip(entries, names, strict=True))


def _parse_hardware(label: str, key: str, raw: object) -> Hardware:
    e = _Entry(label, key, raw)
    e.only(_HARDWARE_FIELDS)
    name = e.text("name")
    vendor = e.text("vendor")

    comp = e.sub("compute")
    assert comp is not None
    comp.only(set(PRECISIONS) | {"source", "note", "mamf_source"})
    group_source = comp.text("source", "")
    mamf_source = comp.text("mamf_source", "")
    group_note = comp.text("note", "")
    rates = []
    for precision in PRECISIONS:
        r = comp.sub(precision, required=False)
        if r is None:
            continue
        r.only(_RATE_FIELDS)
        source = r.text("source", "") or group_source
        if not source:
            raise r.error("source", "is missing (give it here or once for the whole compute table)")
        note = " ".join(n for n in (group_note, r.text("note", "")) if n)  # each note is a sentence
        dense = r.number("dense_tflops") * TERA
        factor = r.optional_number("sparsity_factor", low=1.0, high=16.0)
        mamf = r.optional_number("mamf_tflops")
        if mamf is not None and not mamf_source:
            raise comp.error("mamf_source", "is missing (where the measured matmul rate was read)")
        achieved = None if mamf is None else mamf * TERA
        rates.append(_build(r, lambda p=precision, d=dense, s=source, f=factor, n=note, a=achieved: ComputeRate(
            precision=p, dense_flops=d, source=s, sparsity_factor=f, note=n,
            achievable_flops=a, achievable_source=mamf_source if a is not None else "")))
    if not rates:
        raise PresetError(label, key, "compute", f"no precision rates (expected some of {', '.join(PRECISIONS)})")

    memory = _parse_memory_levels(e)

    tdp_w = None
    tdp_source = ""
    host_w = None
    host_source = ""
    notes = [e.text("note", "")]
    power = e.sub("power", required=False)
    if power is not None:
        power.only({"tdp_w", "source", "note", "system_max_w", "system_gpus", "system_source"})
        tdp_w = power.number("tdp_w")
        tdp_source = power.text("source")
        if power.has("system_max_w"):
            system_w, gpus = power.number("system_max_w"), power.integer("system_gpus")
            if system_w <= gpus * tdp_w:
                raise power.error("system_max_w", f"must exceed its {gpus} GPUs' {gpus * tdp_w:g} W")
            host_w = (system_w - gpus * tdp_w) / gpus
            host_source = (power.text("system_source") + f": ({system_w:g} W - {gpus} x {tdp_w:g} W) / {gpus} "
                           f"= {host_w:g} W per GPU for the rest of the node")
        if power.text("note", ""):
            notes.append("Power: " + power.text("note", ""))

    link_bw = None
    link_name = ""
    link_source = ""
    link = e.sub("interconnect", required=False)
    if link is not None:
        link.only({"name", "interconnect_gbs", "interconnect_gbps", "source", "note"})
        link_name = link.text("name")
        link_source = link.text("source", "")
        if link.has("interconnect_gbs") and link.has("interconnect_gbps"):
            raise link.error("interconnect_gbs", "give interconnect_gbs or interconnect_gbps, not both")
        if link.has("interconnect_gbs"):
            link_bw = link.number("interconnect_gbs") * GIGA
        elif link.has("interconnect_gbps"):
            link_bw = link.number("interconnect_gbps") * GIGA / BITS_PER_BYTE
        if link_bw is not None and not link_source:
            raise link.error("source", "is missing")
        if link.text("note", ""):
            notes.append("Interconnect: " + link.text("note", ""))

    return _build(e, lambda: Hardware(
        name=name, vendor=vendor, compute=tuple(rates), memory=memory,
        tdp_w=tdp_w, tdp_source=tdp_source, host_power_w=host_w, host_power_source=host_source,
        interconnect_bw=link_bw, interconnect=link_name, interconnect_source=link_source,
        note=" ".join(n for n in notes if n), builtin=True, key=key))


def _load_hardware(path: str | Path | None) -> tuple[Hardware, ...]:
    label, data = _read_toml("hardware.toml", path)
    if not data:
        raise PresetError(label, "", "", "holds no hardware entries")
    return tuple(_parse_hardware(label, key, raw) for key, raw in data.items())


@lru_cache(maxsize=1)
def _builtin_hardware() -> tuple[Hardware, ...]:
    return _load_hardware(None)


def load_hardware(path: str | Path | None = None) -> tuple[Hardware, ...]:
    """Every built-in accelerator (``builtin=True``), in file order; or those of ``path``."""
    return _builtin_hardware() if path is None else _load_hardware(path)


def hardware_by_key(key: str, path: str | Path | None = None) -> Hardware:
    """The built-in accelerator with this key (e.g. ``"h100-sxm"``); ``KeyError`` if none."""
    for hw in load_hardware(path):
        if hw.key == key:
            return hw
    known = ", ".join(hw.key for hw in load_hardware(path))
    raise KeyError(f"no hardware preset '{key}'; known: {known}")


# -- grids --------------------------------------------------------------------------------------
def _parse_grid(label: str, key: str, raw: object, *, need_year: bool) -> GridIntensity:
    e = _Entry(label, key, raw)
    e.only({"name", "g_per_kwh", "year", "source", "note"})
    year = e.integer("year") if (need_year or e.has("year")) else None
    g = e.number("g_per_kwh", strict=False)
    return _build(e, lambda: GridIntensity(
        key=key, name=e.text("name"), g_per_kwh=g, year=year,
        source=e.text("source"), note=e.text("note", "")))


@lru_cache(maxsize=1)
def _builtin_grid_file() -> tuple[str, dict[str, Any]]:
    return _read_toml("grids.toml", None)


def _grid_file(path: str | Path | None) -> tuple[str, dict[str, Any]]:
    return _builtin_grid_file() if path is None else _read_toml("grids.toml", path)


def _load_grid_section(path: str | Path | None, section: str) -> tuple[GridIntensity, ...]:
    label, data = _grid_file(path)
    tables = _top_tables(label, data, section)
    need_year = section == "grids"
    return tuple(_parse_grid(label, k, raw, need_year=need_year) for k, raw in tables.items())


@lru_cache(maxsize=2)
def _builtin_grid_section(section: str) -> tuple[GridIntensity, ...]:
    return _load_grid_section(None, section)


def load_grids(path: str | Path | None = None) -> tuple[GridIntensity, ...]:
    """Grid carbon intensities (world average first), each with its data year and source."""
    if path is None:
        return _builtin_grid_section("grids")
    return _load_grid_section(path, "grids")


def load_generation_intensities(path: str | Path | None = None) -> tuple[GridIntensity, ...]:
    """Life-cycle intensity of each generation source (coal, gas, ...), ``year`` None."""
    if path is None:
        return _builtin_grid_section("generation_sources")
    return _load_grid_section(path, "generation_sources")


def grid_by_key(key: str) -> GridIntensity:
    for grid in load_grids():
        if grid.key == key:
            return grid
    raise KeyError(f"no grid preset '{key}'")


# -- PUE ----------------------------------------------------------------------------------------
def load_pue_classes(path: str | Path | None = None) -> tuple[PueClass, ...]:
    """PUE classes from best liquid-cooled to IT-only, each with its source."""
    return _builtin_pue() if path is None else _load_pue(path)


def _load_pue(path: str | Path | None) -> tuple[PueClass, ...]:
    label, data = _read_toml("pue.toml", path)
    out = []
    for key, raw in _top_tables(label, data, "pue").items():
        e = _Entry(label, key, raw)
        e.only({"name", "pue", "source", "note"})
        pue = e.number("pue", low=1.0, strict=False)
        out.append(_build(e, lambda e=e, k=key, p=pue: PueClass(
            key=k, name=e.text("name"), pue=p, source=e.text("source"), note=e.text("note", ""))))
    return tuple(out)


@lru_cache(maxsize=1)
def _builtin_pue() -> tuple[PueClass, ...]:
    return _load_pue(None)


# -- interconnects -----------------------------------------------------------------------------
def load_interconnects(path: str | Path | None = None) -> tuple[Interconnect, ...]:
    """Links with per-direction bandwidth (bytes/s) and per-step latency (s)."""
    return _builtin_interconnects() if path is None else _load_interconnects(path)


def _load_interconnects(path: str | Path | None) -> tuple[Interconnect, ...]:
    label, data = _read_toml("interconnects.toml", path)
    out = []
    for key, raw in _top_tables(label, data, "interconnects").items():
        e = _Entry(label, key, raw)
        e.only({"name", "total_gbs", "per_direction_gbs", "line_rate_gbit", "source", "latency_us",
                "latency_source", "achievable_fraction", "achievable_source", "note"})
        bw_field = e.exactly_one("total_gbs", "per_direction_gbs", "line_rate_gbit")
        figure = e.number(bw_field)
        if bw_field == "total_gbs":
            bw = figure * GIGA / 2
        elif bw_field == "per_direction_gbs":
            bw = figure * GIGA
        else:
            bw = figure * GIGA / BITS_PER_BYTE
        latency = e.number("latency_us", strict=False) / 1e6
        fraction = e.optional_number("achievable_fraction", high=1.0)
        if fraction is not None and not e.has("achievable_source"):
            raise e.error("achievable_source", "is missing (where the achievable fraction was read)")
        out.append(_build(e, lambda e=e, k=key, b=bw, lat=latency, f=fraction: Interconnect(
            key=k, name=e.text("name"), bw_per_direction=b, latency_s=lat, source=e.text("source"),
            note=e.text("note", ""), achievable_fraction=f, latency_source=e.text("latency_source"),
            achievable_source=e.text("achievable_source", ""))))
    return tuple(out)


@lru_cache(maxsize=1)
def _builtin_interconnects() -> tuple[Interconnect, ...]:
    return _load_interconnects(None)


def interconnect_by_key(key: str) -> Interconnect:
    for link in load_interconnects():
        if link.key == key:
            return link
    known = ", ".join(link.key for link in load_interconnects())
    raise KeyError(f"no interconnect preset '{key}'; known: {known}")


# -- model shapes -------------------------------------------------------------------------------
_MODEL_INTS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn", "vocab_size", "seq_len")


def load_models(path: str | Path | None = None) -> tuple[ModelShape, ...]:
    """Model shapes for the run plan (Llama 3 8B / 70B / 405B, GPT-3 175B), each with its source."""
    return _builtin_models() if path is None else _load_models(path)


def _load_models(path: str | Path | None) -> tuple[ModelShape, ...]:
    label, data = _read_toml("models.toml", path)
    out = []
    for key, raw in _top_tables(label, data, "models").items():
        e = _Entry(label, key, raw)
        e.only({"name", "n_params", *_MODEL_INTS, "gated_mlp", "source", "note"})
        counts = {name: e.integer(name) for name in _MODEL_INTS}
        gated = e.data.get("gated_mlp")
        if not isinstance(gated, bool):
            raise e.error("gated_mlp", f"must be true or false, got {gated!r}")
        n_params = e.number("n_params")
        out.append(_build(e, lambda e=e, k=key, c=counts, g=gated, n=n_params: ModelShape(
            key=k, name=e.text("name"), n_params=n, gated_mlp=g, source=e.text("source"), **c)))
    return tuple(out)


@lru_cache(maxsize=1)
def _builtin_models() -> tuple[ModelShape, ...]:
    return _load_models(None)


def model_by_key(key: str) -> ModelShape:
    for model in load_models():
        if model.key == key:
            return model
    raise KeyError(f"no model preset '{key}'")


# -- sample scenarios ---------------------------------------------------------------------------
def load_sample_dicts(path: str | Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The raw (name, scenario dict) pairs of samples.json, checked for shape only."""
    label, text = _data_text("samples.json", path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PresetError(label, "", "", f"not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise PresetError(label, "", "samples", "must be a list under the key 'samples'")
    out = []
    names: set[str] = set()
    for i, item in enumerate(data["samples"]):
        where = f"#{i}"
        if not isinstance(item, dict):
            raise PresetError(label, where, "", "must be an object with 'name' and 'scenario'")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise PresetError(label, where, "name", "must be non-empty text")
        if name in names:
            raise PresetError(label, name, "name", "is used twice")
        names.add(name)
        scenario = item.get("scenario")
        if not isinstance(scenario, dict) or not isinstance(scenario.get("kind"), str):
            raise PresetError(label, name, "scenario", "must be an object with a 'kind'")
        out.append((name, scenario))
    return out


def sample_scenarios(path: str | Path | None = None) -> list[tuple[str, Any]]:
    """The sample scenarios as (name, scenario), each parsed by ``scenario_from_dict``."""
    from workbench.scenarios import scenario_from_dict  # written alongside; imported lazily

    label = str(path) if path is not None else f"presets/{DATA_DIR}/samples.json"
    out = []
    for name, d in load_sample_dicts(path):
        try:
            out.append((name, scenario_from_dict(d)))
        except v.InputError as exc:
            raise PresetError(label, name, exc.parameter, str(exc)) from None
        except (ValueError, TypeError, KeyError) as exc:
            raise PresetError(label, name, "scenario", str(exc)) from None
    return out



# -- the whole footprint: embodied emissions and network power -----------------------------------
@dataclass(frozen=True)
class EmbodiedFigure:
    """Manufacturing emissions of a GPU and of the server it sits in (grams CO2e), with the
    lifetime (s) and use share its source amortises them over."""

    key: str
    name: str
    gpu_g: float
    server_g: float
    gpus_per_server: int
    lifetime_s: float
    use_fraction: float
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        object.__setattr__(self, "gpu_g", v.non_negative("gpu_g", self.gpu_g))
        object.__setattr__(self, "server_g", v.non_negative("server_g", self.server_g))
        object.__setattr__(self, "gpus_per_server", v.gpu_count("gpus_per_server", self.gpus_per_server))
        object.__setattr__(self, "lifetime_s", v.positive("lifetime_s", self.lifetime_s))
        object.__setattr__(self, "use_fraction",
                           v.fraction("use_fraction", self.use_fraction, allow_zero=False))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)


@dataclass(frozen=True)
class NetworkFigure:
    """A network part's power (W) and the ports it serves."""

    key: str
    name: str
    watts: float
    ports: int
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        object.__setattr__(self, "watts", v.positive("watts", self.watts))
        object.__setattr__(self, "ports", v.gpu_count("ports", self.ports))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)

    @property
    def per_port_w(self) -> float:
        return self.watts / self.ports


def _footprint_file(path: str | Path | None) -> tuple[str, dict[str, Any]]:
    return _read_toml("footprint.toml", path)


def load_embodied_figures(path: str | Path | None = None) -> tuple[EmbodiedFigure, ...]:
    """Sourced embodied-emission figures (grams CO2e, lifetime in seconds)."""
    return _builtin_embodied() if path is None else _load_embodied(path)


def _load_embodied(path: str | Path | None) -> tuple[EmbodiedFigure, ...]:
    label, data = _footprint_file(path)
    out = []
    for key, raw in _top_tables(label, data, "embodied").items():
        e = _Entry(label, key, raw)
        e.only({"name", "gpu_kg", "server_kg", "gpus_per_server", "lifetime_years", "use_fraction",
                "source", "note"})
        gpu = e.number("gpu_kg", strict=False)
        server = e.number("server_kg", strict=False)
        per_server = e.integer("gpus_per_server")
        years = e.number("lifetime_years", high=100.0)
        use = e.number("use_fraction", high=1.0)
        out.append(_build(e, lambda e=e, k=key, g=gpu, s=server, n=per_server, y=years, u=use: EmbodiedFigure(
            key=k, name=e.text("name"), gpu_g=g * 1000.0, server_g=s * 1000.0, gpus_per_server=n,
            lifetime_s=y * SECONDS_PER_YEAR, use_fraction=u, source=e.text("source"), note=e.text("note", ""))))
    return tuple(out)


@lru_cache(maxsize=1)
def _builtin_embodied() -> tuple[EmbodiedFigure, ...]:
    return _load_embodied(None)


def load_network_figures(path: str | Path | None = None) -> tuple[NetworkFigure, ...]:
    """Sourced power figures of network parts (W, and the ports each serves)."""
    return _builtin_network() if path is None else _load_network(path)


def _load_network(path: str | Path | None) -> tuple[NetworkFigure, ...]:
    label, data = _footprint_file(path)
    out = []
    for key, raw in _top_tables(label, data, "network").items():
        e = _Entry(label, key, raw)
        e.only({"name", "watts", "ports", "source", "note"})
        watts = e.number("watts")
        ports = e.integer("ports")
        out.append(_build(e, lambda e=e, k=key, w=watts, p=ports: NetworkFigure(
            key=k, name=e.text("name"), watts=w, ports=p, source=e.text("source"), note=e.text("note", ""))))
    return tuple(out)


@lru_cache(maxsize=1)
def _builtin_network() -> tuple[NetworkFigure, ...]:
    return _load_network(None)


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
    "EmbodiedFigure",
    "NetworkFigure",
    "load_embodied_figures",
    "load_network_figures",
]
