"""Hardware description: one validated, immutable value per accelerator.

Every figure is in SI units (FLOP/s, bytes, bytes/s, watts) and carries the source it was
read from. Dense and structured-sparse rates are kept apart: ``dense_flops`` is always the
dense rate, and a precision with 2:4 sparsity support records the factor (2.0 on NVIDIA)
by which the sparse rate exceeds it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from workbench import _validate as v

# Canonical precision names, widest first. Display names live in PRECISION_LABELS.
PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
PRECISION_LABELS: dict[str, str] = {
    "fp64": "FP64",
    "fp32": "FP32",
    "tf32": "TF32",
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
    "int8": "INT8",
    "fp4": "FP4",
}
# Bytes per element, used by kernel builders.
PRECISION_BYTES: dict[str, float] = {
    "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp4": 0.5,
}


#: The most a structured-sparse rate may exceed the dense one (NVIDIA's 2:4 is 2).
MAX_SPARSITY_FACTOR = 16.0
#: The longest latency per algorithm step a link may have, in seconds.
MAX_LATENCY_S = 10.0


@dataclass(frozen=True)
class ComputeRate:
    """Peak rate of one precision on one accelerator."""

    precision: str
    dense_flops: float  # FLOP/s, dense (no structured sparsity)
    source: str
    sparsity_factor: float | None = None  # sparse rate / dense rate, None if unsupported
    note: str = ""
    # The largest dense matmul rate measured on the device (a benchmark that scans large GEMM
    # shapes, e.g. ml-engineering's MAMF finder); None where no measurement is published.
    achievable_flops: float | None = None  # FLOP/s
    achievable_source: str = ""

    def __post_init__(self) -> None:
        v.choice("precision", self.precision, PRECISIONS)
        object.__setattr__(self, "dense_flops", v.bounded("dense_flops", self.dense_flops, 1.0, v.MAX_FLOPS, "FLOP/s"))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)
        v.text("achievable_source", self.achievable_source, allow_empty=True)
        if self.sparsity_factor is not None:
            factor = v.in_range("sparsity_factor", self.sparsity_factor, 1.0, MAX_SPARSITY_FACTOR,
                                low_inclusive=False)
            object.__setattr__(self, "sparsity_factor", factor)
        if self.achievable_flops is not None:
            rate = v.number("achievable_flops", self.achievable_flops)
            if not 0 < rate <= self.dense_flops:
                raise v.InputError("achievable_flops", f"must be more than 0 and at most dense_flops "
                                                       f"({self.dense_flops:g} FLOP/s), got {rate:g}")
            object.__setattr__(self, "achievable_flops", rate)
            v.text("achievable_source", self.achievable_source)

    @property
    def matmul_fraction(self) -> float | None:
        """Measured best dense matmul rate / dense peak (0.80 for H100 BF16), None if unmeasured."""
        if self.achievable_flops is None:
            return None
        return self.achievable_flops / self.dense_flops

    def flops(self, sparse: bool = False) -> float:
        """Peak FLOP/s; the sparse rate only where the precision supports it."""
        if sparse and self.sparsity_factor is not None:
            return self.dense_flops * self.sparsity_factor
        return self.dense_flops


#: The name of the device-memory level (HBM, GDDR or LPDDR alike: what the technology is,
#: ``MemoryLevel.technology`` says). Every other level is a cache in front of it (L2, AMD's
#: Infinity Cache, ...), drawn as a roof of its own.
DEVICE_MEMORY = "HBM"


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy: device memory at least, caches (L2, ...) optional.

    A cache level's bandwidth is what its source gives (a vendor peak or a microbenchmark's
    plateau, said in ``source``/``note``); its capacity is optional.
    """

    name: str  # DEVICE_MEMORY ("HBM", whatever the technology) or a cache: "L2", "Infinity Cache"
    bandwidth: float  # bytes/s
    source: str
    capacity: float | None = None  # bytes
    technology: str = ""  # e.g. "HBM3", "GDDR6X"
    note: str = ""

    def __post_init__(self) -> None:
        v.text("name", self.name)
        object.__setattr__(self, "bandwidth", v.bounded("bandwidth", self.bandwidth, 1.0, v.MAX_BANDWIDTH, "B/s"))
        v.text("source", self.source)
        if self.capacity is not None:
            object.__setattr__(self, "capacity", v.bounded("capacity", self.capacity, 1.0, v.MAX_BYTES, "bytes"))
        v.text("technology", self.technology, allow_empty=True)
        v.text("note", self.note, allow_empty=True)


@dataclass(frozen=True)
class Hardware:
    """An accelerator: peak rates per precision, memory levels, power and interconnect."""

    name: str
    vendor: str
    compute: tuple[ComputeRate, ...]
    memory: tuple[MemoryLevel, ...]
    tdp_w: float | None = None  # watts, board/module power
    tdp_source: str = ""
    # The rest of a node's power (CPUs, memory, NICs, fans) per GPU, from a system's maximum
    # power less its GPUs' (a DGX H100: (10.2 kW - 8 x 700 W) / 8 = 575 W); None where unknown.
    host_power_w: float | None = None
    host_power_source: str = ""
    # Interconnect bandwidth per GPU as the vendor prints it: total of both directions
    # (NVLink 4 "900 GB/s" is 450 GB/s each way). None where there is no GPU-GPU link.
    interconnect_bw: float | None = None
    interconnect: str = ""  # e.g. "NVLink 4"
    interconnect_source: str = ""
    note: str = ""
    builtin: bool = False
    key: str = ""  # stable identifier, e.g. "h100-sxm"; defaults to a slug of the name

    def __post_init__(self) -> None:
        v.text("name", self.name)
        v.text("vendor", self.vendor)
        compute = v.items("compute", self.compute, "a list of ComputeRate values")
        memory = v.items("memory", self.memory, "a list of MemoryLevel values")
        for name in ("tdp_source", "host_power_source", "interconnect", "interconnect_source", "note", "key"):
            v.text(name, getattr(self, name), allow_empty=True)
        if not compute:
            raise v.InputError("compute", "at least one precision rate is required")
        if not memory:
            raise v.InputError("memory", "at least one memory level (device memory) is required")
        for c in compute:
            if not isinstance(c, ComputeRate):
                raise v.InputError("compute", f"entries must be ComputeRate values, got {type(c).__name__}")
        for m in memory:
            if not isinstance(m, MemoryLevel):
                raise v.InputError("memory", f"entries must be MemoryLevel values, got {type(m).__name__}")
        if not isinstance(self.builtin, bool):
            raise v.InputError("builtin", f"must be True or False, got {self.builtin!r}")
        seen = [c.precision for c in compute]
        if len(set(seen)) != len(seen):
            raise v.InputError("compute", f"a precision is listed twice: {seen}")
        levels = [m.name for m in memory]
        if len(set(levels)) != len(levels):
            raise v.InputError("memory", f"a memory level is listed twice: {levels}")
        object.__setattr__(self, "compute", compute)
        object.__setattr__(self, "memory", memory)
        if self.tdp_w is not None:
            object.__setattr__(self, "tdp_w", v.bounded("tdp_w", self.tdp_w, v.MIN_GPU_POWER_W,
                                                        v.MAX_GPU_POWER_W, "W"))
            v.text("tdp_source", self.tdp_source)
        if self.host_power_w is not None:
            object.__setattr__(self, "host_power_w", v.bounded("host_power_w", self.host_power_w, 0.0,
                                                               v.MAX_GPU_POWER_W, "W"))
            v.text("host_power_source", self.host_power_source)
        if self.interconnect_bw is not None:
            object.__setattr__(self, "interconnect_bw", v.bounded("interconnect_bw", self.interconnect_bw, 1.0,
                                                                  v.MAX_BANDWIDTH, "B/s"))
            v.text("interconnect_source", self.interconnect_source)
        if not self.key:
            object.__setattr__(self, "key", slug(self.name))

    # -- look-ups -------------------------------------------------------------------------
    @property
    def precisions(self) -> tuple[str, ...]:
        """Precisions this device has a rate for, in canonical order."""
        have = {c.precision for c in self.compute}
        return tuple(p for p in PRECISIONS if p in have)

    def rate(self, precision: str) -> ComputeRate:
        for c in self.compute:
            if c.precision == precision:
                return c
        raise v.InputError("precision", f"{self.name} has no {precision} rate; it has {', '.join(self.precisions)}")

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Peak FLOP/s at ``precision``; ``sparse`` applies the 2:4 factor where supported."""
        return self.rate(precision).flops(v.flag("sparse", sparse))

    def supports_sparsity(self, precision: str) -> bool:
        return self.rate(precision).sparsity_factor is not None

    def memory_level(self, name: str = "HBM") -> MemoryLevel:
        for m in self.memory:
            if m.name == name:
                return m
        raise v.InputError("name", f"{self.name} has no memory level {v._describe(name)}; "
                                   f"it has {', '.join(m.name for m in self.memory)}")

    @property
    def device_memory(self) -> MemoryLevel:
        """The device-memory level: the one named ``DEVICE_MEMORY`` wherever it is listed, else
        the first level."""
        return next((m for m in self.memory if m.name == DEVICE_MEMORY), self.memory[0])

    @property
    def cache_levels(self) -> tuple[MemoryLevel, ...]:
        """Every level but device memory (L2 and other caches), fastest first."""
        device = self.device_memory
        return tuple(sorted((m for m in self.memory if m is not device), key=lambda m: -m.bandwidth))

    @property
    def mem_bw(self) -> float:
        """Device memory bandwidth in bytes/s (the "HBM" level, else the first memory level)."""
        return self.device_memory.bandwidth

    @property
    def mem_capacity(self) -> float | None:
        return self.device_memory.capacity

    def with_changes(self, **changes: Any) -> Hardware:
        """A copy with fields replaced (validated again)."""
        return replace(self, **changes)

    # -- JSON-friendly form -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "vendor": self.vendor,
            "compute": [
                {k: val for k, val in c.__dict__.items() if val not in (None, "")} for c in self.compute
            ],
            "memory": [
                {k: val for k, val in m.__dict__.items() if val not in (None, "")} for m in self.memory
            ],
            "tdp_w": self.tdp_w,
            "tdp_source": self.tdp_source,
            "host_power_w": self.host_power_w,
            "host_power_source": self.host_power_source,
            "interconnect_bw": self.interconnect_bw,
            "interconnect": self.interconnect,
            "interconnect_source": self.interconnect_source,
            "note": self.note,
            "builtin": self.builtin,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hardware:
        if not isinstance(data, dict):
            raise v.InputError("hardware", f"must be a mapping, got {type(data).__name__}")
        compute = tuple(v.from_mapping(ComputeRate, c, "compute rate", f"compute[{i}]")
                        for i, c in enumerate(v.items("compute", data.get("compute", ()), "a list of rates")))
        memory = tuple(v.from_mapping(MemoryLevel, m, "memory level", f"memory[{i}]")
                       for i, m in enumerate(v.items("memory", data.get("memory", ()), "a list of memory levels")))
        return v.from_mapping(cls, {**data, "compute": compute, "memory": memory}, "hardware")


@dataclass(frozen=True)
class Interconnect:
    """A link between GPUs: per-direction bandwidth and per-step latency (alpha).

    Inside a node (NVLink, PCIe) the bandwidth is per GPU; a NIC's is its line rate.
    """

    key: str
    name: str
    bw_per_direction: float  # bytes/s, one direction
    latency_s: float  # seconds per step (alpha)
    source: str  # of the bandwidth
    note: str = ""
    achievable_fraction: float | None = None  # typical share of bw_per_direction reached
    latency_source: str = ""
    achievable_source: str = ""

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        object.__setattr__(self, "bw_per_direction", v.bounded("bw_per_direction", self.bw_per_direction, 1.0,
                                                               v.MAX_BANDWIDTH, "B/s"))
        # a second per step is already a slow wide-area link (NCCL's are microseconds)
        object.__setattr__(self, "latency_s", v.bounded("latency_s", self.latency_s, 0.0, MAX_LATENCY_S, "s"))
        v.text("source", self.source)
        v.text("note", self.note, allow_empty=True)
        v.text("latency_source", self.latency_source, allow_empty=True)
        v.text("achievable_source", self.achievable_source, allow_empty=True)
        if self.achievable_fraction is not None:
            fraction = v.fraction("achievable_fraction", self.achievable_fraction, allow_zero=False)
            object.__setattr__(self, "achievable_fraction", fraction)

    @property
    def achievable_bw(self) -> float:
        """Per-direction bytes/s after the achievable fraction (the nominal rate if none)."""
        return self.bw_per_direction * (self.achievable_fraction or 1.0)


def slug(name: str) -> str:
    """'NVIDIA H100 SXM' -> 'nvidia-h100-sxm'."""
    name = v.text("name", name, allow_empty=True)
    out = []
    for ch in name.lower():
        out.append(ch if ch.isalnum() else "-")
    return "-".join(part for part in "".join(out).split("-") if part)


__all__ = [
    "DEVICE_MEMORY",
    "PRECISIONS",
    "PRECISION_LABELS",
    "PRECISION_BYTES",
    "ComputeRate",
    "MemoryLevel",
    "Hardware",
    "Interconnect",
    "slug",
]
