"""Kernels as roofline points: a kernel is the FLOPs it does and the bytes it moves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench import _validate as v


@dataclass(frozen=True)
class Kernel:
    """One kernel: work (FLOPs), traffic to device memory (bytes), optionally a measured time."""

    name: str
    flops: float
    bytes: float
    time_s: float | None = None

    def __post_init__(self) -> None:
        v.text("name", self.name)
        object.__setattr__(self, "flops", v.positive("flops", self.flops))
        object.__setattr__(self, "bytes", v.positive("bytes", self.bytes))
        if self.time_s is not None:
            object.__setattr__(self, "time_s", v.positive("time_s", self.time_s))

    @property
    def intensity(self) -> float:
        """Arithmetic intensity in FLOP/byte."""
        return self.flops / self.bytes

    @property
    def achieved_flops(self) -> float | None:
        """Measured FLOP/s, or None without a measured time."""
        return None if self.time_s is None else self.flops / self.time_s

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "flops": self.flops, "bytes": self.bytes}
        if self.time_s is not None:
            out["time_s"] = self.time_s
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Kernel:
        if not isinstance(data, dict):
            raise v.InputError("kernel", f"must be a mapping, got {type(data).__name__}")
        unknown = set(data) - {"name", "flops", "bytes", "time_s"}
        if unknown:
            raise v.InputError(sorted(unknown)[0], "is not a kernel field")
        return cls(**data)
