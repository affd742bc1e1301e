"""The run-plan model against published training runs.

``python -m workbench.plan_check [published-runs.json]`` prints, for every run whose
configuration is complete, the published MFU, the predicted one in the run's own convention,
the error and the largest drag. The file is the references' ``published-runs.json`` (one
object per run, SI units, unknown fields null); :func:`plan_from_published` reads only the
configuration of a run, never its result.

Convention: a run's ``derived_mfu_6n_attn`` is tokens/s x (6N + 12 L H Q T) / (GPUs x
``derived_peak_flops``); some sources count Float8 runs against the BF16 peak, so the
prediction is put in the same terms (:func:`predicted_mfu_in_convention`).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench import _validate as v
from workbench.catalog import Catalog
from workbench.plan import RunPlan, predict

#: GPU names of the published runs -> hardware preset keys, most specific first.
GPU_PRESETS: tuple[tuple[str, str], ...] = (
    ("A100 40GB", "a100-sxm-40gb"),
    ("A100", "a100-sxm-80gb"),
    ("H200", "h200-sxm"),
    ("H100", "h100-sxm"),
    ("GB300", "gb300"),
    ("GB200", "gb200"),
    ("B200", "b200"),
    ("TPU v4", "tpu-v4"),
    ("TPU v5p", "tpu-v5p"),
)
#: GB200 and GB300 NVL72 racks join 72 GPUs in one NVLink domain.
NVL72 = ("GB200", "GB300")


def _hardware_key(gpu_type: str) -> str:
    for needle, key in GPU_PRESETS:
        if needle in gpu_type:
            return key
    raise v.InputError("gpu_type", f"no hardware preset for {gpu_type!r}")


def _zero_stage(text: str, framework: str) -> int:
    lowered = text.lower()
    if "nemo" in framework.lower() and "fsdp=0" in lowered:
        return 1  # Megatron-Core's distributed optimizer, on in NeMo's performance recipes
    if "shard_grad_op" in lowered or "zero-2" in lowered:
        return 2
    if "full_shard" in lowered or "zero-3" in lowered or "fsdp2" in lowered or "fsdp=1" in lowered:
        return 3
    if "zero-1" in lowered:
        return 1
    return 0


def _run(name: str, run: object) -> Mapping[str, Any]:
    if not isinstance(run, Mapping):
        raise v.InputError(name, f"must be a run object (a mapping), got {v._describe(run)}")
    return run


def _required(run: Mapping[str, Any], key: str) -> Any:
    if run.get(key) is None:
        raise v.InputError(f"run.{key}", "is required to plan the run")
    return run[key]


def _rows(rows: object) -> list[Comparison]:
    rows = list(v.items("rows", rows, "a list of Comparison rows"))
    if not rows:
        raise v.InputError("rows", "must hold at least one comparison")
    for i, row in enumerate(rows):
        v.instance(f"rows[{i}]", row, Comparison)
    return rows


def _recompute(text: str | None) -> str:
    lowered = (text or "").lower()
    if lowered.startswith("full"):
        return "full"
    if lowered.startswith("selective") and "sac" in lowered:
        return "op"  # torchtitan's op-level selective checkpointing
    if lowered.startswith("selective"):
        return "selective"
    return "none"


@v.public
def plan_from_published(run: Mapping[str, Any], train_tokens: float = 1e12) -> RunPlan:
    """The RunPlan a published run's configuration describes (its results are not read).

    Unstated fields take the plan's defaults; a per-node NIC figure is shared by the node's
    GPUs; NVL72 systems are one 72-GPU NVLink domain; a power limit named in the GPU type
    (torchtitan's 500 W, 96 GB H100s) becomes the plan's cap, a memory size the GPU's memory;
    NeMo's data parallelism without FSDP uses Megatron-Core's distributed optimizer (ZeRO 1). Async tensor parallelism is not
    credited: no public figure says how much of the communication it hides. What the run's framework implies is read from its name:
    DeepSpeed's on-demand ZeRO-3 gathers, FlashAttention from 2022 on, eager kernels for Composer and torchtitan without
    torch.compile, sequence parallelism in torchtitan's and NeMo's tensor parallelism.
    """
    run = _run("run", run)
    v.positive("train_tokens", train_tokens)
    gpu_type = v.text("run.gpu_type", _required(run, "gpu_type"))
    gpus_per_node = run.get("gpus_per_node") or 8
    if any(name in gpu_type for name in NVL72):
        gpus_per_node = 72
    inter_bw = run.get("inter_node_bw_bytes_per_s_per_gpu")
    if inter_bw is None and run.get("inter_node_bw_bytes_per_s_per_node"):
        inter_bw = run["inter_node_bw_bytes_per_s_per_node"] / (run.get("gpus_per_node") or 8)
    tp = run.get("tp") or 1
    power_cap = 500.0 if "500 W power limit" in gpu_type else None
    memory = 96e9 if "96GB" in gpu_type else None
    precision_text = (run.get("precision") or "").lower()
    precision = "fp8" if ("fp8" in precision_text or "float8" in precision_text) else "bf16"
    zero_text = run.get("zero_or_fsdp") or ""
    framework = run.get("framework") or ""
    family = run.get("source_family") or ""
    sequence_parallel = run.get("sp")
    if sequence_parallel is None:  # torchtitan's and NeMo's tensor parallelism shard the norms too
        sequence_parallel = "torchtitan" in framework or "NeMo" in framework
    # FlashAttention (2022) came after the Megatron-LM 2021 and 2022 papers' runs.
    flash = not family.startswith("Megatron-LM 202")
    # Eager PyTorch: torchtitan without torch.compile, and Composer's MPT models.
    eager = ("torchtitan" in framework and "compile" not in framework) or "Composer" in framework
    return RunPlan(
        n_params=_required(run, "params"), n_layers=_required(run, "layers"), d_model=_required(run, "hidden_size"),
        n_heads=_required(run, "attention_heads"), n_kv_heads=run.get("kv_heads"), d_ffn=run.get("ffn_size"),
        vocab_size=run.get("vocab_size") or 0, seq_len=_required(run, "seq_len"),
        hardware=_hardware_key(gpu_type), n_gpus=_required(run, "gpu_count"), gpus_per_node=gpus_per_node,
        inter_node_bw=inter_bw, gpu_memory_bytes=memory,
        tp=tp, pp=run.get("pp") or 1, cp=run.get("cp") or 1, vp=run.get("vp") or 1,
        zero=_zero_stage(zero_text, framework), sequence_parallel=bool(sequence_parallel) and tp > 1,
        flash_attention=flash, fused_kernels=not eager,
        zero3_gather="per_tensor" if "DeepSpeed" in framework else "per_layer",
        overlap_dp_comm="no grad all-reduce overlap" not in zero_text,
        global_batch=_required(run, "global_batch_seqs"), micro_batch=run.get("micro_batch") or 1,
        recompute=_recompute(run.get("recompute")), precision=precision,
        train_tokens=train_tokens, power_cap_w=power_cap,
    )


def checkable(runs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Runs with a complete configuration and a published MFU in the uniform convention."""
    runs = [_run(f"runs[{i}]", r) for i, r in enumerate(v.items("runs", runs, "a list of run objects"))]
    return [r for r in runs if r.get("config_complete") and r.get("derived_mfu_6n_attn")
            and r.get("derived_peak_flops")]


@v.public
def predicted_mfu_in_convention(run: Mapping[str, Any], tokens_per_s: float) -> float:
    """tokens/s x (6N + 12 L H Q T) / (GPUs x derived_peak_flops), as the file derives its MFU."""
    run = _run("run", run)
    rate = v.non_negative("tokens_per_s", tokens_per_s)
    n, layers, width, seq, gpus, peak = (
        v.positive(f"run.{key}", _required(run, key))
        for key in ("params", "layers", "hidden_size", "seq_len", "gpu_count", "derived_peak_flops"))
    return rate * (6.0 * n + 12.0 * layers * width * seq) / (gpus * peak)


@dataclass(frozen=True)
class Comparison:
    run_id: str
    published: float
    predicted: float
    largest_drag: str

    @property
    def error(self) -> float:
        """Predicted minus published, in MFU points (0.01 = one point)."""
        return self.predicted - self.published


@v.public
def compare(runs: Iterable[Mapping[str, Any]], catalog: Catalog | None = None) -> list[Comparison]:
    out = []
    for i, run in enumerate(checkable(runs)):
        try:
            prediction = predict(plan_from_published(run), catalog)
        except v.InputError as exc:  # name the run in the list the caller passed
            raise v.InputError(f"runs[{i}]", str(exc)) from None
        out.append(Comparison(
            run_id=run["run_id"], published=run["derived_mfu_6n_attn"],
            predicted=predicted_mfu_in_convention(run, prediction.tokens_per_s),
            largest_drag=prediction.largest_drag,
        ))
    return out


@v.public
def summary(rows: list[Comparison]) -> tuple[float, float]:
    """(share of runs within 5 points, mean absolute error in points)."""
    rows = _rows(rows)
    within = sum(abs(r.error) <= 0.05 for r in rows) / len(rows)
    mae = statistics.fmean(abs(r.error) for r in rows) * 100
    return within, mae


def format_table(rows: list[Comparison]) -> str:
    rows = _rows(rows)
    width = max(len(r.run_id) for r in rows)
    lines = [f"{'run':<{width}}  published  predicted   error  largest drag"]
    for r in rows:
        lines.append(f"{r.run_id:<{width}}  {r.published:9.1%}  {r.predicted:9.1%}  "
                     f"{r.error * 100:+6.1f}  {r.largest_drag or '-'}")
    within, mae = summary(rows)
    lines.append(f"{len(rows)} runs: {within:.0%} within 5 points, mean absolute error {mae:.2f} points")
    return "\n".join(lines)


def load_runs(path: str | Path) -> list[dict[str, Any]]:
    if not isinstance(path, (str, Path)):
        raise v.InputError("path", f"must be a file path, got {v._describe(path)}")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise v.InputError("path", f"cannot be read: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise v.InputError("path", f"is not JSON: {exc}") from None
    if not isinstance(data, list):
        raise v.InputError("path", "must hold a JSON list of run objects (the published runs)")
    return data


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(v.items("argv", argv, "a list of command-line arguments"))
    if not all(isinstance(arg, str) for arg in args):
        raise v.InputError("argv", "must hold text arguments only")
    path = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "shared/references/published-runs.json"
    if not path.exists():
        print(f"{path}: not found; pass the path of published-runs.json", file=sys.stderr)
        return 2
    print(format_table(compare(load_runs(path))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
