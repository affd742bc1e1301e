"""Scenarios: one validated, immutable value per panel holding all of that panel's inputs.

Every quantity is in SI units (bytes, bytes/s, seconds, watts, FLOP/s). A scenario is a
frozen dataclass; editing makes a new value (``with_changes``), which is validated again, so
an invalid scenario never exists. Each round-trips through JSON with its ``kind`` and
``schema_version``::

    s = ScalingScenario(n_gpus=512)
    text = s.to_json()                      # sorted keys, stable
    assert scenario_from_json(text) == s

Reading older data: ``UPGRADERS[(kind, v)]`` turns a version-``v`` dict into a version
``v + 1`` dict; :func:`scenario_from_dict` applies them in order up to the class's
``schema_version``. Data from a newer version raises :class:`ScenarioVersionError`.
JSON is data: it is parsed with :mod:`json` (NaN/Infinity literals and duplicate keys
refused), never evaluated or unpickled.

Hardware fields hold preset keys ("h100-sxm"). They are checked for form here (non-empty
text); whether a key exists is the preset library's business (``workbench`` cannot import
``presets``), so a scenario naming a user's own preset stays valid.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from workbench import _validate as v
from workbench import footprint as fp
from workbench import power as pw
from workbench.hardware import MAX_LATENCY_S, PRECISION_LABELS, PRECISIONS
from workbench.kernels import Kernel
from workbench.units import format_quantity

__all__ = [
    "Scenario",
    "RooflineScenario",
    "CollectiveScenario",
    "AllReduceScenario",
    "ScalingScenario",
    "PowerScenario",
    "SCENARIO_TYPES",
    "register_scenario_type",
    "UPGRADERS",
    "register_upgrader",
    "ScenarioVersionError",
    "scenario_from_dict",
    "scenario_from_json",
    "describe_change",
    "FIELD_LABELS",
    "FIELD_UNITS",
    "BINARY_FIELDS",
    "CHOICES",
    "VALUE_LABELS",
    "COLLECTIVES",
    "MAX_JSON_CHARS",
]

MiB = 2**20
GiB = 2**30

#: Collective operations, by the names nccl-tests and ``workbench.comms`` use.
COLLECTIVES: tuple[str, ...] = (
    "all_reduce", "reduce", "reduce_scatter", "all_gather", "broadcast", "scatter", "all_to_all",
)
SCHEDULES: tuple[str, ...] = ("conceptual", "ring")
RECOMPUTE: tuple[str, ...] = ("none", "full")
SCALING_MODES: tuple[str, ...] = ("strong", "weak")
#: What the Power panel's best cap optimises.
CAP_OBJECTIVES = pw.CAP_OBJECTIVES

#: Allowed values of each choice field (for combo boxes).
CHOICES: dict[str, tuple[str, ...]] = {
    "precision": PRECISIONS,
    "collective": COLLECTIVES,
    "schedule": SCHEDULES,
    "recompute": RECOMPUTE,
    "mode": SCALING_MODES,
    "cap_objective": CAP_OBJECTIVES,
}

#: Display names of choice values (for combo boxes and undo labels).
VALUE_LABELS: dict[str, dict[str, str]] = {
    "precision": dict(PRECISION_LABELS),
    "collective": {
        "all_reduce": "all-reduce",
        "reduce": "reduce",
        "reduce_scatter": "reduce-scatter",
        "all_gather": "all-gather",
        "broadcast": "broadcast",
        "scatter": "scatter",
        "all_to_all": "all-to-all",
    },
    "schedule": {"conceptual": "conceptual", "ring": "ring"},
    "recompute": {"none": "no recomputation", "full": "full recomputation",
                  "selective": "selective recomputation (attention core)",
                  "op": "op-level recomputation (every other matmul)"},
    "mode": {"strong": "strong scaling", "weak": "weak scaling"},
    "cap_objective": {"energy_time": "energy and time (Zeus, eta 0.5)", "energy": "energy only (tokens per joule)"},
}

#: Human name of every scenario field, for form labels and undo text (sentence case).
FIELD_LABELS: dict[str, str] = {
    # roofline
    "hardware": "Hardware",
    "precision": "Precision",
    "sparse": "Sparsity",
    "show_precision_ceilings": "Precision ceilings",
    "show_l2": "L2 roofline",
    "kernels": "Kernels",
    # collective
    "collective": "Collective",
    "n_ranks": "Ranks",
    "schedule": "Schedule",
    "message_bytes": "Message size",
    "root": "Root rank",
    "step": "Step",
    # allreduce
    "size_bytes": "Message size",
    "link_bw": "Link bandwidth",
    "alpha": "Latency per step",
    "interconnect": "Interconnect",
    "size_min": "Smallest size",
    "size_max": "Largest size",
    "measured_log": "Measured log",
    "measured_log_name": "Measured log name",
    "more_logs": "More measured logs",
    # scaling
    "n_gpus": "GPU count",
    "n_params": "Parameters",
    "n_layers": "Layers",
    "d_model": "Model width",
    "seq_len": "Sequence length",
    "tokens_per_s": "Throughput (tokens/s)",
    "recompute": "Recomputation",
    "serial_fraction": "Serial fraction",
    "mode": "Scaling mode",
    "measured": "Measured throughput",
    "pipeline_stages": "Pipeline stages",
    "microbatches": "Microbatches",
    "comm_time_s": "Communication time per step",
    "overlap": "Communication overlap",
    "dataloader_wait_s": "Data-loader wait per step",
    "bytes_per_token": "Bytes per token",
    "checkpoint_bytes": "Checkpoint size",
    "checkpoint_interval_s": "Checkpoint interval",
    "throughput_source": "Throughput source",
    "measured_on": "Throughput measured on",
    # power
    "power_cap_w": "Power cap",
    "static_fraction": "Static power fraction",
    "min_voltage_fraction": "Minimum voltage fraction",
    "compute_bound_share": "Compute-bound share",
    "tokens_per_s_per_gpu": "Measured throughput per GPU (tokens/s)",
    # run plan: a measured throughput adopted from a training log
    "measured_tokens_per_s": "Measured throughput (tokens/s)",
    "measured_source": "Measured throughput from",
    "throughput_mfu": "MFU",
    "train_tokens": "Training tokens",
    "host_overhead_w_per_gpu": "Host power per GPU",
    "pue": "PUE",
    "grid_g_per_kwh": "Grid carbon intensity (gCO2e/kWh)",
    "region": "Region",
    "cap_objective": "Best cap by",
    "energy_price_per_kwh": "Energy price per kWh",
    "gpu_hour_price": "Price per GPU-hour",
    "currency": "Currency",
    "capped_gpus": "Capped GPUs",
    "zeus_eta": "Energy weight η",
    "idle_s": "Idle allocation",
    "idle_power_w_per_gpu": "Idle power per GPU",
    "network_w_per_gpu": "Network power per GPU",
    "embodied_gpu_g": "Embodied emissions per GPU",
    "embodied_server_g": "Embodied emissions per server",
    "embodied_gpus_per_server": "GPUs per server",
    "embodied_lifetime_s": "Hardware lifetime",
    "embodied_use_fraction": "Share of the lifetime in use",
    "hourly_g_per_kwh": "Hourly grid intensity",
    "profile_name": "Intensity profile name",
    # run plan
    "n_heads": "Attention heads",
    "n_kv_heads": "Key/value heads",
    "d_ffn": "MLP width",
    "vocab_size": "Vocabulary",
    "gated_mlp": "Gated MLP (SwiGLU)",
    "global_batch": "Global batch (sequences)",
    "micro_batch": "Micro-batch (sequences)",
    "gpus_per_node": "GPUs per node",
    "intra_node": "Node link",
    "inter_node": "Network",
    "intra_node_bw": "Node link bandwidth (per GPU, one way)",
    "inter_node_bw": "Network bandwidth (per GPU, one way)",
    "gpu_memory_bytes": "GPU memory",
    "tp": "Tensor parallel (TP)",
    "pp": "Pipeline stages (PP)",
    "cp": "Context parallel (CP)",
    "vp": "Virtual stages (VP)",
    "zero": "ZeRO stage",
    "sequence_parallel": "Sequence parallelism",
    "tp_comm_overlap": "Hidden TP communication",
    "overlap_dp_comm": "Overlap gradient sync with backward",
    "grad_reduce_precision": "Gradient reduce precision",
    "zero3_gather": "ZeRO 3 gathers",
    "flash_attention": "FlashAttention",
    "fused_kernels": "Fused kernels",
    "storage_read_bw": "Storage read bandwidth",
    "checkpoint_write_bw": "Checkpoint write bandwidth",
}

#: The :mod:`workbench.units` unit of each numeric field, for parse_quantity/format_quantity
#: ("%" fields hold fractions shown as percentages; "" is a plain number with k/M/B suffixes).
#: Integer fields (counts, ranks) are absent: they are plain whole numbers.
FIELD_UNITS: dict[str, str] = {
    "message_bytes": "B",
    "size_bytes": "B",
    "link_bw": "B/s",
    "alpha": "s",
    "size_min": "B",
    "size_max": "B",
    "n_params": "",
    "tokens_per_s": "",
    "serial_fraction": "%",
    "comm_time_s": "s",
    "overlap": "%",
    "dataloader_wait_s": "s",
    "bytes_per_token": "B",
    "checkpoint_bytes": "B",
    "checkpoint_interval_s": "s",
    "power_cap_w": "W",
    "static_fraction": "%",
    "min_voltage_fraction": "%",
    "compute_bound_share": "%",
    "tokens_per_s_per_gpu": "",
    "throughput_mfu": "%",
    "train_tokens": "",
    "host_overhead_w_per_gpu": "W",
    "pue": "",
    "grid_g_per_kwh": "",
    "energy_price_per_kwh": "",
    "gpu_hour_price": "",
    "zeus_eta": "",
    "idle_s": "s",
    "idle_power_w_per_gpu": "W",
    "network_w_per_gpu": "W",
    "embodied_gpu_g": "g",
    "embodied_server_g": "g",
    "embodied_lifetime_s": "s",
    "embodied_use_fraction": "%",
    "intra_node_bw": "B/s",
    "inter_node_bw": "B/s",
    "gpu_memory_bytes": "B",
    "tp_comm_overlap": "%",
    "storage_read_bw": "B/s",
    "checkpoint_write_bw": "B/s",
}

#: Size fields shown with binary prefixes (MiB, GiB): message and memory sizes.
BINARY_FIELDS: frozenset[str] = frozenset(
    {"message_bytes", "size_bytes", "size_min", "size_max", "checkpoint_bytes"}
)

#: Most bytes one token may take to read (pre-tokenised ids take 2 or 4).
MAX_BYTES_PER_TOKEN = 1e6
#: Lowest MFU a plan may assume (a millionth): below it a run would outlast any float.
MIN_MFU = 1e-6
#: Largest scenario JSON accepted (a raw nccl-tests log fits many times over).
MAX_JSON_CHARS = 16 * 2**20


class ScenarioVersionError(v.InputError):
    """Scenario data written by a newer version of the program (or with no upgrade path)."""


# -- field checks (each returns the cleaned value or raises InputError naming the field) ----
def _float(name: str, value: Any, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False, unit: str = "") -> float:
    """A finite number, optionally bounded; with both bounds the message states the range
    ("must be between 1 and 1e+18 B/s")."""
    if low is not None and high is not None:
        return v.bounded(name, value, low, high, unit, low_open=low_open, high_open=high_open)
    result = v.number(name, value)
    if low is not None and (result < low or (low_open and result == low)):
        raise v.InputError(name, f"must be {'>' if low_open else '>='} {low:g}, got {result:g}")
    if high is not None and (result > high or (high_open and result == high)):
        raise v.InputError(name, f"must be {'<' if high_open else '<='} {high:g}, got {result:g}")
    return result


def _int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    return v.integer(name, value, low, high)


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise v.InputError(name, f"must be true or false, got {v._describe(value)}")
    return value


def _key(name: str, value: Any) -> str:
    result = v.text(name, value)
    if len(result) > 100:
        raise v.InputError(name, f"must be at most 100 characters, got {len(result)}")
    return result


def _sequence(name: str, value: Any) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise v.InputError(name, f"must be a list, got {v._describe(value)}")
    return tuple(value)


def _nested_error(name: str, exc: v.InputError) -> v.InputError:
    inner = str(exc)
    prefix = f"{exc.parameter}: "
    message = inner[len(prefix):] if inner.startswith(prefix) else inner
    return v.InputError(f"{name}.{exc.parameter}", message)


# -- the base class --------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """Base of every scenario type: validation, JSON, editing.

    Subclasses are frozen dataclasses whose every field has a default, with a ``kind`` and a
    ``schema_version``, and implement ``_check()`` which validates and normalises fields
    through ``self._set``.
    """

    kind: ClassVar[str] = ""
    schema_version: ClassVar[int] = 1

    def __post_init__(self) -> None:
        self._check()

    def _check(self) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # -- introspection --------------------------------------------------------------------
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The scenario's fields, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    # -- editing ----------------------------------------------------------------------------
    def with_changes(self, **changes: Any) -> Self:
        """A new scenario with ``changes`` applied and validated again (this one is unchanged)."""
        known = self.field_names()
        for name in changes:
            if name not in known:
                raise v.InputError(name, f"is not a field of {self.kind} scenarios")
        return dataclasses.replace(self, **changes)

    # -- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: {"kind", "schema_version", **fields}, tuples as lists."""
        out: dict[str, Any] = {"kind": self.kind, "schema_version": self.schema_version}
        for name in self.field_names():
            out[name] = _jsonable(getattr(self, name))
        return out

    def to_json(self, *, indent: int | None = None) -> str:
        """The scenario as JSON text: sorted keys, so equal scenarios give equal text."""
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False, indent=indent,
                          ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read ``to_dict`` output (of this or an older schema version) back into a scenario."""
        if not isinstance(data, Mapping):
            raise v.InputError(cls.kind or "scenario", f"must be a JSON object, got {type(data).__name__}")
        if "kind" not in data:
            raise v.InputError("kind", "is required")
        if data["kind"] != cls.kind:
            raise v.InputError("kind", f"must be {cls.kind!r} for {cls.__name__}, got {v._describe(data['kind'])}")
        fields = _upgrade(cls, dict(data))
        known = cls.field_names()
        for name in sorted(fields, key=str):
            if not isinstance(name, str) or name not in known:
                raise v.InputError(str(name), f"is not a field of {cls.kind} scenarios")
        v.required_fields(cls, fields)
        try:
            return cls(**fields)
        except RecursionError:  # a pathologically nested value, e.g. from hostile JSON
            raise v.InputError(cls.kind, "a field is nested too deeply") from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Kernel):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_jsonable(item) for item in value]
    return value


# -- versions and upgraders ----------------------------------------------------------------
#: ``UPGRADERS[(kind, n)]`` turns the dict of a version-n scenario (without "kind" and
#: "schema_version") into the dict of version n + 1.
UPGRADERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def register_upgrader(kind: str, from_version: int):
    """Decorator: ``@register_upgrader("roofline", 1)`` upgrades roofline v1 dicts to v2."""

    kind = v.text("kind", kind)
    from_version = v.integer("from_version", from_version, 0, 10**6)

    def decorate(fn: Callable[[dict[str, Any]], dict[str, Any]]):
        UPGRADERS[(kind, from_version)] = v.function("fn", fn, "an upgrade function dict -> dict")
        return fn

    return decorate


def _upgrade(cls: type[Scenario], data: dict[str, Any]) -> dict[str, Any]:
    """Fields of ``data`` brought to ``cls.schema_version`` (kind and version removed)."""
    if "schema_version" not in data:
        raise v.InputError("schema_version", "is required")
    version = data.pop("schema_version")
    data.pop("kind", None)
    if isinstance(version, bool) or not isinstance(version, int):
        raise v.InputError("schema_version", f"must be a whole number, got {v._describe(version)}")
    current = cls.schema_version
    if version > 10**6:
        raise ScenarioVersionError("schema_version", f"is not a plausible version (this program reads up to {current})")
    if version < 0:
        raise v.InputError("schema_version", f"must be >= 0, got {version}")
    if version > current:
        raise ScenarioVersionError(
            "schema_version",
            f"this {cls.kind} scenario is version {version}, written by a newer Scaling Workbench; "
            f"this version reads up to version {current}. Update the program to open it.",
        )
    while version < current:
        step = UPGRADERS.get((cls.kind, version))
        if step is None:
            raise ScenarioVersionError(
                "schema_version",
                f"no upgrade from version {version} of {cls.kind} scenarios to version {version + 1}",
            )
        upgraded = step(dict(data))
        if not isinstance(upgraded, dict):
            raise ScenarioVersionError(
                "schema_version", f"the upgrade of {cls.kind} version {version} returned no fields"
            )
        upgraded.pop("kind", None)
        upgraded.pop("schema_version", None)
        data = upgraded
        version += 1
    return data


# -- the five scenario types ---------------------------------------------------------------
#: the last tuple of kernels found to hold only Kernel values (frozen: the same tuple again needs
#: no second look, and an edit of another field of a 10,000-kernel roofline passes it on)
_checked_kernels: tuple = ()


@dataclass(frozen=True)
class RooflineScenario(Scenario):
    """Roofline panel: up to four devices (the first is primary), a precision, kernels."""

    kind: ClassVar[str] = "roofline"
    schema_version: ClassVar[int] = 1

    hardware: tuple[str, ...] = ("h100-sxm",)
    precision: str = "bf16"
    sparse: bool = False
    show_precision_ceilings: bool = False
    show_l2: bool = False
    kernels: tuple[Kernel, ...] = ()

    MAX_HARDWARE: ClassVar[int] = 4

    def _check(self) -> None:
        keys = tuple(_key(f"hardware[{i}]", k) for i, k in enumerate(_sequence("hardware", self.hardware)))
        if not 1 <= len(keys) <= self.MAX_HARDWARE:
            raise v.InputError("hardware", f"must list 1 to {self.MAX_HARDWARE} devices, got {len(keys)}")
        if len(set(keys)) != len(keys):
            raise v.InputError("hardware", f"must not list a device twice, got {list(keys)}")
        self._set("hardware", keys)
        v.choice("precision", self.precision, PRECISIONS)
        _bool("sparse", self.sparse)
        _bool("show_precision_ceilings", self.show_precision_ceilings)
        _bool("show_l2", self.show_l2)
        global _checked_kernels
        if self.kernels is _checked_kernels:
            return  # the tuple an edit of another field passed on (a tuple of frozen Kernels)
        if isinstance(self.kernels, tuple) and set(map(type, self.kernels)) <= {Kernel}:
            # already validated Kernel values (each checks itself): an edit need not redo 10,000
            _checked_kernels = self.kernels
            return
        kernels = []
        for i, item in enumerate(_sequence("kernels", self.kernels)):
            name = f"kernels[{i}]"
            try:
                if isinstance(item, Kernel):
                    kernels.append(item)
                elif isinstance(item, Mapping):
                    for required in ("name", "flops", "bytes"):
                        if required not in item:
                            raise v.InputError(f"{name}.{required}", "is required")
                    kernels.append(Kernel.from_dict(dict(item)))
                else:
                    raise v.InputError(name, f"must be a kernel, got {v._describe(item)}")
            except v.InputError as exc:
                raise exc if exc.parameter.startswith(name) else _nested_error(name, exc) from None
            except (TypeError, OverflowError) as exc:
                raise v.InputError(name, f"is not a valid kernel ({exc})") from None
        self._set("kernels", tuple(kernels))

    @property
    def primary(self) -> str:
        """The primary device's preset key."""
        return self.hardware[0]


@dataclass(frozen=True)
class CollectiveScenario(Scenario):
    """Collectives panel: one collective on a few ranks, stepped through a schedule, every
    step costed with the alpha-beta model on one link.

    The link is ``link_bw`` (bytes/s of one link in one direction) and ``alpha`` (seconds of
    latency per step), within the All-reduce calculator's bounds; ``interconnect`` is the
    preset key of the link they were taken from ("" when typed, or for a GPU's own link). In
    the window they follow the run plan's data-parallel ring until the user types a link of
    their own (the panel then keeps its inputs: Local override). Version 1 kept no link (the
    panel held it, and a typed one was lost on saving); it reads as the calculator's defaults,
    the link the version-1 panel used without a plan.
    """

    kind: ClassVar[str] = "collective"
    schema_version: ClassVar[int] = 2

    collective: str = "all_reduce"
    n_ranks: int = 4
    schedule: str = "ring"
    message_bytes: float = float(256 * MiB)
    root: int = 0
    step: int = 0
    #: the All-reduce calculator's default link (AllReduceScenario.link_bw and .alpha)
    link_bw: float = 360e9
    alpha: float = 5e-6
    interconnect: str = ""

    def _check(self) -> None:
        v.choice("collective", self.collective, COLLECTIVES)
        n = _int("n_ranks", self.n_ranks, 2, 64)
        self._set("n_ranks", n)
        v.choice("schedule", self.schedule, SCHEDULES)
        self._set("message_bytes", _float("message_bytes", self.message_bytes, low=0, low_open=True,
                                          high=v.MAX_BYTES, unit="bytes"))
        root = _int("root", self.root, 0)
        if root >= n:
            raise v.InputError("root", f"must be < n_ranks ({n}), got {root}")
        self._set("root", root)
        self._set("step", _int("step", self.step, 0))
        self._set("link_bw", _float("link_bw", self.link_bw, low=1, high=v.MAX_BANDWIDTH, unit="B/s"))
        self._set("alpha", _float("alpha", self.alpha, low=0, high=MAX_LATENCY_S, unit="s"))
        link = v.text("interconnect", self.interconnect, allow_empty=True)
        self._set("interconnect", _key("interconnect", link) if link else "")


@register_upgrader("collective", 1)
def _collective_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    # Version 1 kept no link: without a plan its panel costed the steps on the All-reduce
    # calculator's default link, which a saved scenario now holds.
    return {**data, "link_bw": 360e9, "alpha": 5e-6, "interconnect": ""}


@dataclass(frozen=True)
class AllReduceScenario(Scenario):
    """All-reduce cost model panel: alpha-beta model over a size sweep, measured nccl-tests logs.

    Logs are kept as the text read from the file: the first in ``measured_log`` (named
    ``measured_log_name``, as version 1 stored its only log), the others in ``more_logs`` as
    (name, text) pairs; :attr:`logs` lists them all. ``inter_node`` is the NIC preset assumed
    between nodes for logs whose ranks sit on several hosts. The three were added to version
    1 with defaults, so a scenario saved with one unnamed log opens unchanged.
    """

    kind: ClassVar[str] = "allreduce"
    schema_version: ClassVar[int] = 1

    collective: str = "all_reduce"
    size_bytes: float = float(GiB)
    n_ranks: int = 8
    link_bw: float = 360e9
    alpha: float = 5e-6
    interconnect: str = ""
    size_min: float = 1024.0
    size_max: float = float(16 * GiB)
    measured_log: str = ""
    measured_log_name: str = ""
    more_logs: tuple[tuple[str, str], ...] = ()
    inter_node: str = "nic-400g"

    #: The most logs a scenario holds (one colour and marker each on the charts).
    MAX_LOGS: ClassVar[int] = 6
    #: Longest log name kept (a file name).
    MAX_LOG_NAME: ClassVar[int] = 255

    def _check(self) -> None:
        v.choice("collective", self.collective, COLLECTIVES)
        self._set("size_bytes", _float("size_bytes", self.size_bytes, low=0, low_open=True, high=v.MAX_BYTES,
                                       unit="bytes"))
        self._set("n_ranks", _int("n_ranks", self.n_ranks, 2, 1_000_000))
        self._set("link_bw", _float("link_bw", self.link_bw, low=1, high=v.MAX_BANDWIDTH, unit="B/s"))
        self._set("alpha", _float("alpha", self.alpha, low=0, high=MAX_LATENCY_S, unit="s"))
        self._set("interconnect", v.text("interconnect", self.interconnect, allow_empty=True))
        lo = _float("size_min", self.size_min, low=0, low_open=True, high=v.MAX_BYTES, unit="bytes")
        hi = _float("size_max", self.size_max, low=0, low_open=True, high=v.MAX_BYTES, unit="bytes")
        if not lo < hi:
            raise v.InputError("size_max", f"must be > size_min ({lo:g}), got {hi:g}")
        self._set("size_min", lo)
        self._set("size_max", hi)
        if not isinstance(self.measured_log, str):  # raw text: kept exactly, not stripped
            raise v.InputError("measured_log", f"must be text, got {v._describe(self.measured_log)}")
        self._set("measured_log_name", self._log_name("measured_log_name", self.measured_log_name))
        entries = []
        for i, item in enumerate(_sequence("more_logs", self.more_logs)):
            name = f"more_logs[{i}]"
            pair = _sequence(name, item)
            if len(pair) != 2:
                raise v.InputError(name, f"must be a (name, text) pair, got {len(pair)} values")
            if not isinstance(pair[1], str) or not pair[1]:
                raise v.InputError(f"{name}.text", f"must be the text of a log, got {v._describe(pair[1])}")
            entries.append((self._log_name(f"{name}.name", pair[0]), pair[1]))
        if entries and not self.measured_log:
            raise v.InputError("more_logs", "must be empty when there is no first log (measured_log)")
        if 1 + len(entries) > self.MAX_LOGS:
            raise v.InputError("more_logs", f"holds at most {self.MAX_LOGS - 1} logs besides the first, "
                                            f"got {len(entries)}")
        self._set("more_logs", tuple(entries))
        self._set("inter_node", _key("inter_node", self.inter_node))

    @classmethod
    def _log_name(cls, field: str, value: Any) -> str:
        name = v.text(field, value, allow_empty=True)
        if len(name) > cls.MAX_LOG_NAME:
            raise v.InputError(field, f"must be at most {cls.MAX_LOG_NAME} characters, got {len(name)}")
        return name

    @property
    def logs(self) -> tuple[tuple[str, str], ...]:
        """Every measured log as (name, text), the first one first (empty without a log)."""
        if not self.measured_log:
            return ()
        return ((self.measured_log_name, self.measured_log), *self.more_logs)

    @staticmethod
    def log_fields(logs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, Any]:
        """The field values that hold ``logs`` ((name, text) pairs, first one first), for
        ``with_changes``: adding and removing a log is one edit."""
        logs = tuple(logs)
        if not logs:
            return {"measured_log": "", "measured_log_name": "", "more_logs": ()}
        (name, text), *rest = logs
        return {"measured_log": text, "measured_log_name": name, "more_logs": tuple(rest)}


@dataclass(frozen=True)
class ScalingScenario(Scenario):
    """Scaling panel: a training run's model, throughput and the overheads that limit scaling.

    ``tokens_per_s`` is either planned (the run plan's model predicts it for this hardware, so
    it follows a change of GPU) or measured on one device, ``measured_on``: a measured number
    kept after the hardware changes belongs to the old device, and the panel says so.
    ``measured`` holds the measured scaling table, (GPUs, tokens/s of the whole job) rows in
    the order the user keeps them; the first row is the base the others are read against.
    Both fields came after version 1 without a new version: data that lacks them (every
    scenario saved before) reads as a throughput measured on its own hardware.
    """

    kind: ClassVar[str] = "scaling"
    schema_version: ClassVar[int] = 1
    #: where ``tokens_per_s`` comes from
    THROUGHPUT_SOURCES: ClassVar[tuple[str, ...]] = ("planned", "measured")

    hardware: str = "h100-sxm"
    precision: str = "bf16"
    sparse: bool = False
    n_gpus: int = 8
    n_params: float = 8e9
    n_layers: int = 32
    d_model: int = 4096
    seq_len: int = 8192
    tokens_per_s: float = 5e4  # the whole job's; ~38% MFU for the defaults (8B on 8 H100, BF16)
    recompute: str = "none"
    serial_fraction: float = 0.02
    mode: str = "strong"
    measured: tuple[tuple[int, float], ...] = ()
    pipeline_stages: int = 1
    microbatches: int = 1
    comm_time_s: float = 0.0
    overlap: float = 0.0
    dataloader_wait_s: float = 0.0
    bytes_per_token: float = 4.0
    checkpoint_bytes: float = 0.0
    checkpoint_interval_s: float = 3600.0
    throughput_source: str = "measured"
    #: the hardware key the measured throughput was measured on ("" reads as ``hardware``)
    measured_on: str = ""

    MAX_GPUS: ClassVar[int] = 10_000_000

    def _check(self) -> None:
        self._set("hardware", _key("hardware", self.hardware))
        v.choice("precision", self.precision, PRECISIONS)
        _bool("sparse", self.sparse)
        self._set("n_gpus", _int("n_gpus", self.n_gpus, 1, self.MAX_GPUS))
        self._set("n_params", _float("n_params", self.n_params, low=0, low_open=True, high=v.MAX_PARAMS,
                                     unit="parameters"))
        self._set("n_layers", _int("n_layers", self.n_layers, 0, 1_000_000))
        self._set("d_model", _int("d_model", self.d_model, 0, 100_000_000))
        self._set("seq_len", _int("seq_len", self.seq_len, 0, 1_000_000_000))
        self._set("tokens_per_s", _float("tokens_per_s", self.tokens_per_s, low=v.MIN_TOKENS_PER_S,
                                         high=v.MAX_TOKENS_PER_S, unit="tokens/s"))
        v.choice("recompute", self.recompute, RECOMPUTE)
        self._set("serial_fraction", v.fraction("serial_fraction", self.serial_fraction))
        v.choice("mode", self.mode, SCALING_MODES)
        pairs = []
        for i, item in enumerate(_sequence("measured", self.measured)):
            name = f"measured[{i}]"
            pair = _sequence(name, item)
            if len(pair) != 2:
                raise v.InputError(name, f"must be a (gpus, throughput) pair, got {len(pair)} values")
            gpus = _int(f"{name}.gpus", pair[0], 1, self.MAX_GPUS)
            throughput = _float(f"{name}.throughput", pair[1], low=v.MIN_TOKENS_PER_S,
                                high=v.MAX_TOKENS_PER_S, unit="tokens/s")
            pairs.append((gpus, throughput))
        self._set("measured", tuple(pairs))
        self._set("pipeline_stages", _int("pipeline_stages", self.pipeline_stages, 1, self.MAX_GPUS))
        self._set("microbatches", _int("microbatches", self.microbatches, 1, 1_000_000))
        self._set("comm_time_s", _float("comm_time_s", self.comm_time_s, low=0, high=v.MAX_SECONDS, unit="s"))
        self._set("overlap", v.fraction("overlap", self.overlap))
        self._set("dataloader_wait_s", _float("dataloader_wait_s", self.dataloader_wait_s, low=0,
                                              high=v.MAX_SECONDS, unit="s"))
        self._set("bytes_per_token", _float("bytes_per_token", self.bytes_per_token, low=0,
                                            high=MAX_BYTES_PER_TOKEN, unit="bytes"))
        self._set("checkpoint_bytes", _float("checkpoint_bytes", self.checkpoint_bytes, low=0, high=v.MAX_BYTES,
                                             unit="bytes"))
        self._set("checkpoint_interval_s", _float("checkpoint_interval_s", self.checkpoint_interval_s,
                                                  low=1, high=v.MAX_SECONDS, unit="s"))
        v.choice("throughput_source", self.throughput_source, self.THROUGHPUT_SOURCES)
        if self.throughput_source == "planned":
            self._set("measured_on", "")  # a planned throughput was measured nowhere
        else:
            on = v.text("measured_on", self.measured_on, allow_empty=True)
            if len(on) > 100:
                raise v.InputError("measured_on", f"must be at most 100 characters, got {len(on)}")
            self._set("measured_on", on or self.hardware)

    @property
    def measured_elsewhere(self) -> bool:
        """True when the throughput is a measured one from another device than ``hardware``."""
        return self.throughput_source == "measured" and self.measured_on != self.hardware

    @property
    def six_n_only(self) -> bool:
        """True when no architecture is given: FLOPs per token is just 6N."""
        return self.n_layers == 0 and self.d_model == 0 and self.seq_len == 0


@dataclass(frozen=True)
class PowerScenario(Scenario):
    """Power and carbon panel: power cap, energy, emissions and cost of a training run.

    The uncapped throughput of one GPU is planned from an MFU (``throughput_mfu``, a
    fraction): MFU x the dense peak of ``hardware`` at ``precision`` / 6 ``n_params`` FLOPs
    per token, so it follows the model size. With ``throughput_mfu`` None it is the measured
    ``tokens_per_s_per_gpu``. Version 1 had only the measured throughput.
    """

    kind: ClassVar[str] = "power"
    schema_version: ClassVar[int] = 3

    hardware: str = "h100-sxm"
    n_gpus: int = 8
    power_cap_w: float | None = None
    static_fraction: float = 0.3
    min_voltage_fraction: float = 0.6
    compute_bound_share: float = 0.7
    tokens_per_s_per_gpu: float = 3000.0
    train_tokens: float = 1e12
    #: planning assumption, not a published figure: large dense LLM runs report ~0.35-0.55
    throughput_mfu: float | None = 0.4
    n_params: float = 8e9
    precision: str = "bf16"
    host_overhead_w_per_gpu: float = 0.0
    pue: float = 1.2
    grid_g_per_kwh: float = 475.0
    region: str = "world"
    #: what the best cap optimises (workbench.power.CAP_OBJECTIVES): energy and time by default
    cap_objective: str = "energy_time"
    energy_price_per_kwh: float = 0.10
    gpu_hour_price: float = 0.0
    currency: str = "USD"
    # -- the whole footprint (workbench.footprint): added within version 3, since a scenario
    # saved before reads them as these defaults, which add nothing to its numbers
    #: GPUs under the cap, at least 1 (None: every GPU); fewer than all are stragglers the
    #: others wait for
    capped_gpus: int | None = None
    #: Zeus's weight of energy against time, in [0, 1] (workbench.power.zeus_cost)
    zeus_eta: float = pw.ZEUS_ETA
    #: time the reservation is held but not training (s), and what a held, idle GPU slot draws
    #: (W, GPU with its share of host and network; None: not known, no figure assumed)
    idle_s: float = 0.0
    idle_power_w_per_gpu: float | None = None
    #: NICs, optics and switch ports spread over the GPUs (W per GPU)
    network_w_per_gpu: float = 0.0
    #: manufacturing emissions of one GPU and of one server without its GPUs (g CO2e; None: not
    #: set), amortised over the lifetime (s) at the share of it the hardware is in use
    embodied_gpu_g: float | None = None
    embodied_server_g: float = 0.0
    embodied_gpus_per_server: int = 8
    embodied_lifetime_s: float = 6 * 365 * 86400.0
    embodied_use_fraction: float = 1.0
    #: 24 hourly grid intensities, gCO2e/kWh, midnight first (empty: no profile), and where
    #: they came from (a file name, or empty when typed)
    hourly_g_per_kwh: tuple[float, ...] = ()
    profile_name: str = ""

    MAX_EMBODIED_G: ClassVar[float] = 1e10  # 10,000 t: beyond any one device or server

    def _check(self) -> None:
        self._set("hardware", _key("hardware", self.hardware))
        self._set("n_gpus", _int("n_gpus", self.n_gpus, 1, ScalingScenario.MAX_GPUS))
        if self.power_cap_w is not None:
            self._set("power_cap_w", _float("power_cap_w", self.power_cap_w, low=0, low_open=True,
                                            high=v.MAX_GPU_POWER_W, unit="W"))
        self._set("static_fraction",
                  _float("static_fraction", self.static_fraction, low=0, high=1, high_open=True))
        self._set("min_voltage_fraction",
                  _float("min_voltage_fraction", self.min_voltage_fraction, low=0, high=1, low_open=True))
        self._set("compute_bound_share", v.fraction("compute_bound_share", self.compute_bound_share))
        self._set("tokens_per_s_per_gpu",
                  _float("tokens_per_s_per_gpu", self.tokens_per_s_per_gpu, low=v.MIN_TOKENS_PER_S,
                         high=v.MAX_TOKENS_PER_S, unit="tokens/s"))
        self._set("train_tokens", _float("train_tokens", self.train_tokens, low=0, low_open=True,
                                         high=v.MAX_TOKENS, unit="tokens"))
        if self.throughput_mfu is not None:
            self._set("throughput_mfu", _float("throughput_mfu", self.throughput_mfu, low=MIN_MFU, high=1))
        self._set("n_params", _float("n_params", self.n_params, low=0, low_open=True, high=v.MAX_PARAMS,
                                     unit="parameters"))
        v.choice("precision", self.precision, PRECISIONS)
        self._set("host_overhead_w_per_gpu",
                  _float("host_overhead_w_per_gpu", self.host_overhead_w_per_gpu, low=0, high=v.MAX_GPU_POWER_W,
                         unit="W"))
        self._set("pue", _float("pue", self.pue, low=1, high=5))
        self._set("grid_g_per_kwh", _float("grid_g_per_kwh", self.grid_g_per_kwh, low=0,
                                           high=v.MAX_GRID_G_PER_KWH, unit="gCO2e/kWh"))
        self._set("region", _key("region", self.region))
        self._set("cap_objective", v.choice("cap_objective", self.cap_objective, CAP_OBJECTIVES))
        self._set("energy_price_per_kwh", _float("energy_price_per_kwh", self.energy_price_per_kwh, low=0,
                                                 high=v.MAX_PRICE))
        self._set("gpu_hour_price", _float("gpu_hour_price", self.gpu_hour_price, low=0, high=v.MAX_PRICE))
        currency = v.text("currency", self.currency)
        if len(currency) > 10:
            raise v.InputError("currency", f"must be a short code such as 'USD', got {v._describe(currency)}")
        self._set("currency", currency)
        if self.capped_gpus is not None:
            self._set("capped_gpus", _int("capped_gpus", self.capped_gpus, 1, ScalingScenario.MAX_GPUS))
        self._set("zeus_eta", v.fraction("zeus_eta", self.zeus_eta))
        self._set("idle_s", _float("idle_s", self.idle_s, low=0, high=v.MAX_SECONDS, unit="s"))
        if self.idle_power_w_per_gpu is not None:
            self._set("idle_power_w_per_gpu", _float("idle_power_w_per_gpu", self.idle_power_w_per_gpu, low=0,
                                                     high=v.MAX_GPU_POWER_W, unit="W"))
        self._set("network_w_per_gpu", _float("network_w_per_gpu", self.network_w_per_gpu, low=0,
                                              high=v.MAX_GPU_POWER_W, unit="W"))
        if self.embodied_gpu_g is not None:
            self._set("embodied_gpu_g", _float("embodied_gpu_g", self.embodied_gpu_g, low=0,
                                               high=self.MAX_EMBODIED_G, unit="g"))
        self._set("embodied_server_g", _float("embodied_server_g", self.embodied_server_g, low=0,
                                              high=self.MAX_EMBODIED_G, unit="g"))
        self._set("embodied_gpus_per_server", _int("embodied_gpus_per_server", self.embodied_gpus_per_server,
                                                   1, 100_000))
        self._set("embodied_lifetime_s", _float("embodied_lifetime_s", self.embodied_lifetime_s, low=86400.0,
                                                high=100 * 365 * 86400.0, unit="s"))
        self._set("embodied_use_fraction", _float("embodied_use_fraction", self.embodied_use_fraction, low=0,
                                                  low_open=True, high=1))
        profile = _sequence("hourly_g_per_kwh", self.hourly_g_per_kwh)
        self._set("hourly_g_per_kwh", fp.hourly_profile(profile) if profile else ())
        name = v.text("profile_name", self.profile_name, allow_empty=True)
        if len(name) > 200:
            raise v.InputError("profile_name", f"must be at most 200 characters, got {len(name)}")
        self._set("profile_name", name)


@register_upgrader("power", 1)
def _power_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    # Version 1 planned from the measured throughput only: a saved scenario keeps it, and
    # so gives the same numbers as before (the model size and precision are then unused).
    return {**data, "throughput_mfu": None, "n_params": 8e9, "precision": "bf16"}


@register_upgrader("power", 2)
def _power_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    # Version 2's best cap was the most tokens per joule: a saved scenario keeps that.
    return {**data, "cap_objective": "energy"}


#: Every scenario type by its ``kind`` (``workbench.plan`` adds the run plan's).
SCENARIO_TYPES: dict[str, type[Scenario]] = {
    cls.kind: cls
    for cls in (RooflineScenario, CollectiveScenario, AllReduceScenario, ScalingScenario, PowerScenario)
}


def register_scenario_type(cls: type[Scenario]) -> type[Scenario]:
    """Make a new kind of scenario readable by :func:`scenario_from_dict` (and so by the
    project file, exports and the scenario browser). Returns ``cls``, to use as a decorator."""
    if not (isinstance(cls, type) and issubclass(cls, Scenario)) or not cls.kind:
        raise v.InputError("cls", f"must be a Scenario subclass with a kind, got {v._describe(cls)}")
    SCENARIO_TYPES[cls.kind] = cls
    return cls


# -- reading --------------------------------------------------------------------------------
def scenario_from_dict(data: Mapping[str, Any]) -> Scenario:
    """The scenario a ``to_dict`` result describes, dispatched on its "kind" (older versions upgraded)."""
    if not isinstance(data, Mapping):
        raise v.InputError("scenario", f"must be a JSON object, got {type(data).__name__}")
    if "kind" not in data:
        raise v.InputError("kind", f"is required (one of {', '.join(SCENARIO_TYPES)})")
    kind = data["kind"]
    if not isinstance(kind, str) or kind not in SCENARIO_TYPES:
        raise v.InputError("kind", f"must be one of {', '.join(SCENARIO_TYPES)}; got {v._describe(kind)}")
    return SCENARIO_TYPES[kind].from_dict(data)


def _reject_constant(name: str) -> Any:
    raise v.InputError("json", f"{name} is not allowed: every number must be finite")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise v.InputError("json", f"the key {key!r} appears twice")
        out[key] = value
    return out


def scenario_from_json(text: str | bytes) -> Scenario:
    """The scenario in JSON ``text`` (from ``to_json``); hostile or broken text raises InputError."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise v.InputError("json", f"is not UTF-8 text ({exc.reason})") from None
    if not isinstance(text, str):
        raise v.InputError("json", f"must be text, got {type(text).__name__}")
    if len(text) > MAX_JSON_CHARS:
        raise v.InputError("json", f"is too long ({len(text)} characters; at most {MAX_JSON_CHARS})")
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise v.InputError("json", f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise v.InputError("json", "is nested too deeply to be a scenario") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        if isinstance(exc, v.InputError):
            raise
        if "digits" in str(exc):
            raise v.InputError("json", "holds a number with too many digits") from None
        raise v.InputError("json", f"is not usable: {exc}") from None
    if not isinstance(data, dict):
        raise v.InputError("json", f"must hold a JSON object (a scenario), got {type(data).__name__}")
    return scenario_from_dict(data)


# -- undo labels ------------------------------------------------------------------------------
def _label_in_sentence(name: str) -> str:
    label = FIELD_LABELS.get(name, name.replace("_", " ")).split(" (", 1)[0]
    first = label.split(" ", 1)[0]
    if len(first) > 1 and first[1:].islower() or len(first) == 1:
        return label[0].lower() + label[1:]
    return label  # starts with an acronym: "GPU count", "PUE", "L2 roofline"


def _show_value(name: str, value: Any) -> str | None:
    """The value as a person reads it, or None when it is too long to put in a label."""
    if name in VALUE_LABELS and isinstance(value, str):
        return VALUE_LABELS[name].get(value, value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}".replace(",", " ") if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        unit = FIELD_UNITS.get(name)
        if unit is None:
            return format_quantity(value, "")
        return format_quantity(value, unit, binary=name in BINARY_FIELDS)
    if isinstance(value, str):
        if "\n" in value or len(value) > 30:
            return None
        return f"'{value}'" if value == "" else value
    if isinstance(value, tuple) and all(isinstance(x, str) for x in value):
        text = ", ".join(value)
        return text if len(text) <= 40 else None
    return None


def describe_change(old: Scenario, new: Scenario) -> str:
    """A readable undo label for the edit from ``old`` to ``new``.

    One field: "Change GPU count to 512", "Change precision to FP8", "Turn sparsity on",
    "Add kernel 'gemm'", "Remove power cap". Several: "Change GPU count and precision" or
    "Change 3 scaling settings". None: "No change".
    """
    v.instance("old", old, Scenario, "a scenario")
    v.instance("new", new, Scenario, "a scenario")
    if type(old) is not type(new):
        raise v.InputError("new", f"cannot compare a {old.kind} scenario (old) with a {new.kind} scenario")
    changed = [n for n in old.field_names() if getattr(old, n) != getattr(new, n)]
    if not changed:
        return "No change"
    if len(changed) > 1:
        labels = [_label_in_sentence(n) for n in changed]
        if len(labels) == 2:
            return f"Change {labels[0]} and {labels[1]}"
        return f"Change {len(labels)} {old.kind} settings"
    name = changed[0]
    before, after = getattr(old, name), getattr(new, name)
    label = _label_in_sentence(name)
    if isinstance(after, bool):
        return f"Turn {label} {'on' if after else 'off'}"
    if name == "kernels":
        added = [k for k in after if k not in before]
        removed = [k for k in before if k not in after]
        if len(added) == 1 and not removed:
            return f"Add kernel '{added[0].name}'"
        if len(removed) == 1 and not added:
            return f"Remove kernel '{removed[0].name}'"
        return "Edit kernels"
    if name == "power_cap_w":
        if after is None:
            return "Remove power cap"
    if isinstance(after, str) and not after:
        return f"Clear {label}"
    shown = _show_value(name, after)
    if shown is None:
        return f"Edit {label}"
    return f"Change {label} to {shown}"

