"""The shared context: what every panel agrees on unless it overrides it locally.

Changing the GPU in one place updates every panel; the context is a value like a scenario,
so it can be saved in the project, compared, and edited through the undo stack.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from workbench import _validate as v
from workbench.hardware import PRECISION_LABELS, PRECISIONS

CONTEXT_LABELS: dict[str, str] = {
    "hardware": "hardware",
    "n_gpus": "GPU count",
    "precision": "precision",
    "sparse": "sparsity",
    "interconnect": "interconnect",
    "model_params": "model size",
    "train_tokens": "training tokens",
}


@dataclass(frozen=True)
class RunContext:
    """The hardware, scale and training run being planned (SI units; counts are plain numbers)."""

    hardware: str = "h100-sxm"  # preset key
    n_gpus: int = 8
    precision: str = "bf16"
    sparse: bool = False
    interconnect: str = "nvlink-4"  # interconnect preset key, "" for none
    model_params: float = 8e9  # parameters
    train_tokens: float = 1e12  # tokens in the whole run

    def __post_init__(self) -> None:
        v.text("hardware", self.hardware)
        object.__setattr__(self, "n_gpus", v.gpu_count("n_gpus", self.n_gpus))
        v.choice("precision", self.precision, PRECISIONS)
        if not isinstance(self.sparse, bool):
            raise v.InputError("sparse", f"must be true or false, got {self.sparse!r}")
        v.text("interconnect", self.interconnect, allow_empty=True)
        object.__setattr__(self, "model_params", v.bounded("model_params", self.model_params, 0, v.MAX_PARAMS,
                                                           "parameters", low_open=True))
        object.__setattr__(self, "train_tokens", v.bounded("train_tokens", self.train_tokens, 0, v.MAX_TOKENS,
                                                           "tokens", low_open=True))

    def with_changes(self, **changes: Any) -> RunContext:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunContext:
        if not isinstance(data, dict):
            raise v.InputError("context", f"must be a mapping, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise v.InputError(sorted(unknown)[0], "is not a context field")
        return cls(**data)


def describe_context_change(old: RunContext, new: RunContext) -> str:
    """Readable undo label: 'Change GPU count to 512', 'Turn sparsity on'."""
    v.instance("old", old, RunContext)
    v.instance("new", new, RunContext)
    changed = [f.name for f in fields(RunContext) if getattr(old, f.name) != getattr(new, f.name)]
    if not changed:
        return "No change"
    if len(changed) > 1:
        return "Change " + ", ".join(CONTEXT_LABELS[name] for name in changed)
    name = changed[0]
    value = getattr(new, name)
    if name == "sparse":
        return "Turn sparsity on" if value else "Turn sparsity off"
    if name == "precision":
        return f"Change precision to {PRECISION_LABELS[value]}"
    if name == "n_gpus":
        return f"Change GPU count to {value:,}"
    if name in ("model_params", "train_tokens"):
        return f"Change {CONTEXT_LABELS[name]} to {value:.3g}"
    return f"Change {CONTEXT_LABELS[name]} to {value}"
