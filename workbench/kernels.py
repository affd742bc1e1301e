"""Kernels as roofline points: a kernel is the FLOPs it does and the bytes it moves.

Builders (gemm, elementwise, layer_norm, attention_unfused, attention_fused) return honest
counts: a multiply-add counts as 2 FLOPs, and bytes are the minimum traffic to device memory
(each input read once, each output written once). Units: FLOPs, bytes, seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbench import _validate as v
from workbench.hardware import PRECISION_BYTES, PRECISIONS


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
        ratio = self.flops / self.bytes
        if not (0.0 < ratio < math.inf):  # 1e-300 FLOPs over 1e300 bytes underflows to 0
            raise v.InputError("bytes", f"gives an arithmetic intensity (flops / bytes) of {ratio:g} FLOP/B "
                                        f"with {self.flops:g} FLOPs: out of range; check the units")
        if self.time_s is not None:
            object.__setattr__(self, "time_s", v.positive("time_s", self.time_s))
            rate = self.flops / self.time_s
            if not (0.0 < rate < math.inf):
                raise v.InputError("time_s", f"gives an achieved rate (flops / time) of {rate:g} FLOP/s: "
                                             "out of range; check the units")

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
        return v.from_mapping(cls, data, "kernel")


# -- builders ----------------------------------------------------------------------------
# Counting convention for every builder below:
#   - FLOPs count a multiply-add as 2 (one multiply, one add); exp, max and division count 1.
#   - bytes are the minimum traffic to device memory: every input read once and every output
#     written once, at ``dtype``'s width (workbench.hardware.PRECISION_BYTES). Real kernels move
#     at least this much; caches can only make the measured traffic higher, not lower.

def _dtype(value: object) -> tuple[str, float]:
    """A precision name of workbench.hardware.PRECISIONS and its width in bytes."""
    name = value.strip().lower() if isinstance(value, str) else value
    name = v.choice("dtype", name, PRECISIONS)
    return name, float(PRECISION_BYTES[name])


def _name(name: object, default: str) -> str:
    return default if name is None else v.text("name", name)


@v.public
def gemm(m: int, n: int, k: int, dtype: str = "bf16", name: str | None = None) -> Kernel:
    """C[m, n] = A[m, k] @ B[k, n]: 2mnk FLOPs, (mk + kn + mn) elements of traffic."""
    m = v.integer("m", m, minimum=1)
    n = v.integer("n", n, minimum=1)
    k = v.integer("k", k, minimum=1)
    dt, width = _dtype(dtype)
    return Kernel(
        name=_name(name, f"GEMM {m}x{n}x{k} {dt.upper()}"),
        flops=2.0 * m * n * k,
        bytes=float(m * k + k * n + m * n) * width,
    )


@v.public
def elementwise(
    n_elements: int,
    dtype: str = "bf16",
    reads: int = 2,
    writes: int = 1,
    flops_per_element: float = 1,
    name: str | None = None,
) -> Kernel:
    """An elementwise op over ``n_elements``: ``reads`` input and ``writes`` output tensors.

    The default (2 reads, 1 write, 1 FLOP) is ``c = a + b``: 1 / (3 x width) FLOP/byte.
    """
    count = v.integer("n_elements", n_elements, minimum=1)
    dt, width = _dtype(dtype)
    n_reads = v.integer("reads", reads, minimum=0)
    n_writes = v.integer("writes", writes, minimum=0)
    if n_reads + n_writes == 0:
        raise v.InputError("reads", "reads + writes must be at least 1")
    # a millionth to a million FLOPs per element: the intensity stays a number (5e-324 would be 0)
    per_element = v.bounded("flops_per_element", flops_per_element, 1e-6, 1e6, "FLOP")
    return Kernel(
        name=_name(name, f"elementwise {n_reads}in/{n_writes}out x{count} {dt.upper()}"),
        flops=per_element * count,
        bytes=float(count) * (n_reads + n_writes) * width,
    )


# Layer norm FLOPs per element: mean 1 (add), variance 3 (subtract, then a multiply-add),
# normalise 2 (subtract, multiply by 1/std), affine 2 (gamma * x + beta as a multiply-add).
LAYER_NORM_FLOPS_PER_ELEMENT = 8


@v.public
def layer_norm(rows: int, cols: int, dtype: str = "bf16", name: str | None = None) -> Kernel:
    """Layer norm over the last axis of a [rows, cols] tensor (forward).

    FLOPs: 8 per element (LAYER_NORM_FLOPS_PER_ELEMENT); the per-row square root is ignored.
    Bytes: read x, write y (rows x cols each), read gamma and beta (cols each). The per-row
    mean and 1/std that training saves for the backward pass are not counted.
    """
    r = v.integer("rows", rows, minimum=1)
    c = v.integer("cols", cols, minimum=1)
    dt, width = _dtype(dtype)
    return Kernel(
        name=_name(name, f"layer norm {r}x{c} {dt.upper()}"),
        flops=float(LAYER_NORM_FLOPS_PER_ELEMENT) * r * c,
        bytes=float(2 * r * c + 2 * c) * width,
    )


# Softmax (with the 1/sqrt(d) scaling) per score: scale, max, subtract, exp, sum, divide ~ 5.
SOFTMAX_FLOPS_PER_SCORE = 5


def _attention_shape(batch: object, heads: object, seq_len: object, head_dim: object):
    return (
        v.integer("batch", batch, minimum=1),
        v.integer("heads", heads, minimum=1),
        v.integer("seq_len", seq_len, minimum=1),
        v.integer("head_dim", head_dim, minimum=1),
    )


def _attention_flops(b: int, h: int, s: int, d: int) -> float:
    # Q K^T and P V are each 2 * s * s * d per head; softmax adds a few per score.
    return float(b * h) * (4.0 * s * s * d + SOFTMAX_FLOPS_PER_SCORE * s * s)


@v.public
def attention_unfused(
    batch: int, heads: int, seq_len: int, head_dim: int, dtype: str = "bf16", name: str | None = None
) -> Kernel:
    """Full (non-causal) self-attention forward as three kernels: Q K^T, softmax, P V.

    FLOPs: 4 * s^2 * d per head for the two matmuls plus SOFTMAX_FLOPS_PER_SCORE per score.
    Bytes: Q, K, V read and O written (4 * s * d per head), plus the s x s score matrix written
    by Q K^T, read and written back by softmax, and read by P V (4 * s^2 per head). At long
    sequences the score traffic dominates, which makes it memory-bound on an H100.
    """
    b, h, s, d = _attention_shape(batch, heads, seq_len, head_dim)
    dt, width = _dtype(dtype)
    return Kernel(
        name=_name(name, f"attention unfused b{b} h{h} s{s} d{d} {dt.upper()}"),
        flops=_attention_flops(b, h, s, d),
        bytes=float(b * h) * (4.0 * s * d + 4.0 * s * s) * width,
    )


@v.public
def attention_fused(
    batch: int, heads: int, seq_len: int, head_dim: int, dtype: str = "bf16", name: str | None = None
) -> Kernel:
    """The same attention fused into one kernel (FlashAttention-style): scores stay on chip.

    FLOPs as :func:`attention_unfused`; bytes only Q, K, V read and O written (4 * s * d per
    head), so the intensity grows with the sequence length and it is compute-bound.
    """
    b, h, s, d = _attention_shape(batch, heads, seq_len, head_dim)
    dt, width = _dtype(dtype)
    return Kernel(
        name=_name(name, f"attention fused b{b} h{h} s{s} d{d} {dt.upper()}"),
        flops=_attention_flops(b, h, s, d),
        bytes=float(b * h) * 4.0 * s * d * width,
    )


def seed_examples() -> list[Kernel]:
    """A few kernels spanning the roofline, for a new project's roofline panel."""
    return [
        elementwise(1 << 26, "bf16", name="elementwise add (64 Mi BF16)"),
        layer_norm(8 * 4096, 8192, "bf16", name="layer norm (32768 x 8192 BF16)"),
        gemm(8192, 8192, 8192, "bf16", name="GEMM 8192^3 BF16"),
        attention_unfused(8, 32, 4096, 128, "bf16", name="attention unfused (b8 h32 s4096 d128 BF16)"),
        attention_fused(8, 32, 4096, 128, "bf16", name="attention fused (b8 h32 s4096 d128 BF16)"),
    ]
