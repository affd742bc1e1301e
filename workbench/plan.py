"""The run plan: one model of a training step, from configuration to days, energy, CO2e and cost.

``RunPlan`` is the planner's question as a value (model shape, hardware and links,
parallelism, batch, recomputation, precision, tokens, power, facility, prices) and
:func:`predict` the one answer every panel, the status bar, the command line and a notebook
read::

    from workbench.plan import RunPlan, predict, what_if
    plan = RunPlan(n_params=70.6e9, n_layers=80, d_model=8192, n_heads=64, seq_len=8192,
                   hardware="h100-sxm", n_gpus=1024, global_batch=1024, n_kv_heads=8,
                   d_ffn=28672, vocab_size=128256, tp=8, pp=4, zero=1,
                   sequence_parallel=True, recompute="selective", train_tokens=15e12)
    p = predict(plan)
    p.tokens_per_s, p.mfu, p.breakdown, p.memory.total, p.train_time_s / 86400

How one step is modelled (SI units; every term is a function below with its formula):

- dp = n_gpus / (tp x pp x cp) replicas each train global_batch / dp sequences per step, in
  m = global_batch / (dp x micro_batch) micro-batches. One GPU runs n_layers / pp layers of
  each micro-batch on T / cp tokens of it, with every weight matrix split tp ways.
- **compute**: each layer's GEMMs at the roofline of their real shapes after tensor
  parallelism, under a ceiling of the device's *measured* best matmul rate (MAMF, a sourced
  preset figure), plus the attention core at FlashAttention's efficiency and the non-matmul
  work (norms, activations, residuals, casts) as memory traffic. **recompute** adds the
  forward work recomputed (full; or the attention core only, "selective").
- **tensor_parallel**, **context_parallel**, **pipeline_p2p**, **data_parallel**:
  alpha-beta collectives of :mod:`workbench.comms` over the link the group really uses
  (inside a node, or each GPU's NIC when the group spans nodes); data-parallel traffic hides
  behind backward compute and only the remainder counts.
- **pipeline_bubble**: (pp - 1) / vp micro-batch slots of fill and drain.
- **optimizer**, **data_loading**, **checkpoint**: memory-bound Adam update, input reads beyond
  what prefetch hides, checkpoint writes amortised per step.
- A power cap lowers the clock (:mod:`workbench.power`): FLOP-bound work slows by the clock
  fraction, memory-bound work and communication do not; energy, emissions and cost come from
  :mod:`workbench.carbon`.
- A **measured** throughput in the plan (``measured_tokens_per_s``, say a training log's steady
  rate) replaces the modelled step: step = tokens per step / measured rate, and everything
  after it (tokens/s, MFU, HFU, days, GPU-hours, energy, CO2e, cost) follows; the model's
  terms stay in the breakdown, with **measured_gap** the part of the measured step they do not
  explain. Memory and the what-if drags remain the model's.

The constants below that are not read from a preset are few, physical and sourced; the one
fitted constant (the non-matmul memory traffic) says so, and ``python -m workbench.plan_check``
prints the comparison with the published runs it was checked on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from workbench import _validate as v
from workbench import carbon, comms
from workbench import power as pw
from workbench.catalog import Catalog, chain, check_catalog, default_catalog
from workbench.hardware import PRECISION_BYTES, PRECISIONS, Hardware
from workbench.pipeline import checkpoint_bytes as _checkpoint_bytes
from workbench.scenarios import (
    MAX_BYTES_PER_TOKEN,
    Scenario,
    _bool,
    _float,
    _int,
    _key,
    register_scenario_type,
)

# -- constants (each with where it comes from) ------------------------------------------------

#: Share of the dense peak a large dense matmul reaches where the preset has no measurement:
#: the median of the NVIDIA rows (A100 to GB200, BF16) of ml-engineering's Maximum Achievable
#: Matmul FLOPS table, whose rows the presets carry as ``achievable_flops``.
DEFAULT_MATMUL_FRACTION = 0.80
#: Share of the measured best matmul rate (MAMF) a layer's matmuls reach in a training step
#: (tiles that do not fill the last wave, launch gaps, communication kernels sharing the SMs).
#: Fitted against published runs (workbench/plan_check.py).
MATMUL_FRACTION_OF_MAMF = 0.85
#: FlashAttention-3 (Shah et al. 2024): "FlashAttention-2 achieves only 35% utilization on the
#: H100"; the causal attention core of a training step is taken at that share of the 16-bit
#: peak (the FlashAttention-2 paper gives 50-73% on the A100, so this errs slow there).
ATTENTION_EFFICIENCY = 0.35
#: FlashAttention-2's backward pass runs 5 matmuls to the forward's 2: backward = 2.5 x forward.
ATTENTION_BACKWARD_FACTOR = 2.5
#: Memory traffic of the non-matmul work of one layer, forward and backward, as a multiple of
#: the activation bytes Korthikanti et al. 2022 count for that layer: each saved tensor is
#: written once and read again, and the elementwise kernels around it touch it several times
#: more, fewer when the kernels are fused (torch.compile, Transformer Engine, Megatron's fused
#: kernels) than in eager PyTorch. Fitted against published runs (workbench/plan_check.py).
NONMATMUL_TRAFFIC_FACTOR: dict[bool, float] = {True: 12.0, False: 20.0}
#: Adam step per parameter: read FP32 master, m, v and the FP32 gradient (16 bytes), write
#: master, m, v (12) and the 16-bit weight (2).
OPTIMIZER_BYTES_PER_PARAM = 30.0
#: Mixed-precision Adam training state in GPU memory per parameter (ZeRO paper, Rajbhandari
#: et al. 2020): 16-bit weights 2 + 16-bit gradients 2 + FP32 master, m and v 12 (FP32
#: gradients take 4).
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_STATE_BYTES = 2.0, 2.0, 12.0
#: Activations are 16-bit, and so is what tensor, context and pipeline parallelism send.
ACTIVATION_BYTES = 2.0
#: The GPU's own link when no intra-node preset is named: NVLink's ~80% of nominal and NCCL's
#: ~3.4 us NVLink hop latency (references page, Collectives).
OWN_LINK_ACHIEVABLE = 0.8
OWN_LINK_LATENCY_S = 3.4e-6

#: "selective" recomputes the attention core (Korthikanti et al. 2022); "op" is torchtitan's
#: op-level selective checkpointing, which keeps matmul and attention outputs but only every
#: other matmul's, so it recomputes half the forward matmuls and the elementwise work.
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "op", "full")
ZERO_STAGES: tuple[int, ...] = (0, 1, 2, 3)
GRAD_REDUCE_PRECISIONS: tuple[str, ...] = ("fp32", "bf16")
#: How ZeRO 3 gathers parameters: one flat buffer per layer, prefetched behind compute (PyTorch
#: FSDP, Megatron FSDP), or each parameter tensor on demand, in the critical path (DeepSpeed
#: ZeRO-3 as the Megatron-LM 2021 paper benchmarked it).
ZERO3_GATHERS: tuple[str, ...] = ("per_layer", "per_tensor")
#: The terms of a step, in the order the breakdown lists them.
TERMS: tuple[str, ...] = (
    "compute", "recompute", "tensor_parallel", "context_parallel", "pipeline_bubble",
    "pipeline_p2p", "data_parallel", "optimizer", "data_loading", "checkpoint", "measured_gap",
)
#: The term that is not the model's: how much longer a measured step is than the modelled one
#: (0 unless the plan has a measured throughput and the run is slower than the model).
MEASURED_TERM = "measured_gap"
TERM_LABELS: dict[str, str] = {
    "compute": "Compute",
    "recompute": "Recomputation",
    "tensor_parallel": "Tensor-parallel communication",
    "context_parallel": "Context-parallel K/V exchange",
    "pipeline_bubble": "Pipeline bubble",
    "pipeline_p2p": "Pipeline sends",
    "data_parallel": "Data-parallel synchronisation (exposed)",
    "optimizer": "Optimizer step",
    "data_loading": "Data loading (exposed)",
    "checkpoint": "Checkpoint stalls",
    "measured_gap": "Measured vs model (unexplained)",
}
#: What removing each drag means, for ``what_if``.
TERM_FIXES: dict[str, str] = {
    "recompute": "stop recomputing activations (needs the memory)",
    "tensor_parallel": "overlap the tensor-parallel communication",
    "context_parallel": "hide the context-parallel K/V exchange",
    "pipeline_bubble": "remove the pipeline bubble (more micro-batches or virtual stages)",
    "pipeline_p2p": "overlap the pipeline sends",
    "data_parallel": "overlap the data-parallel synchronisation",
    "optimizer": "fuse or overlap the optimizer step",
    "data_loading": "feed the GPUs faster (storage bandwidth, prefetch)",
    "checkpoint": "checkpoint asynchronously",
}


#: The optional RunPlan fields that are physical quantities: (lowest, highest, unit). Links,
#: storage and memory from 1 B/s (or byte) to an exabyte(/s); a checkpoint every second to every
#: 30 years; a cap up to a GPU's most power.
OPTIONAL_BOUNDS: dict[str, tuple[float, float, str]] = {
    "intra_node_bw": (1.0, v.MAX_BANDWIDTH, "B/s"),
    "inter_node_bw": (1.0, v.MAX_BANDWIDTH, "B/s"),
    "gpu_memory_bytes": (1.0, v.MAX_BYTES, "bytes"),
    "storage_read_bw": (1.0, v.MAX_BANDWIDTH, "B/s"),
    "checkpoint_write_bw": (1.0, v.MAX_BANDWIDTH, "B/s"),
    "checkpoint_interval_s": (1.0, v.MAX_SECONDS, "s"),
    "power_cap_w": (0.0, v.MAX_GPU_POWER_W, "W"),
    "measured_tokens_per_s": (v.MIN_TOKENS_PER_S, v.MAX_TOKENS_PER_S, "tokens/s"),
}
#: The longest ``measured_source`` (a log's name, not its text).
MAX_SOURCE_CHARS = 200


# -- the plan ------------------------------------------------------------------------------------
@register_scenario_type
@dataclass(frozen=True)
class RunPlan(Scenario):
    """A planned training run. Sizes in bytes, rates in bytes/s, power in W, times in s.

    Required: the model shape (``n_params``, ``n_layers``, ``d_model``, ``n_heads``,
    ``seq_len``), ``hardware`` (a preset key), ``n_gpus`` and ``global_batch`` (sequences).
    ``n_kv_heads`` defaults to ``n_heads``, ``d_ffn`` to 4 x ``d_model``; ``gated_mlp`` None
    takes whichever MLP (two matrices, or three as in SwiGLU) makes the shape's parameter
    count closer to ``n_params``. ``intra_node`` None is the GPU's own link (NVLink etc.);
    ``intra_node_bw`` / ``inter_node_bw`` override the presets' nominal per-direction bytes/s
    per GPU, and ``gpu_memory_bytes`` the preset's memory (a 96 GB H100). ``zero`` is the ZeRO stage (3 = FSDP full sharding, 2 = shard gradients and
    optimizer state). ``tp_comm_overlap`` is the share of tensor-parallel communication hidden
    behind compute (async TP), ``overlap_dp_comm`` whether gradient synchronisation overlaps
    the backward pass. ``flash_attention`` False runs the attention core unfused (scores
    stored, as in Megatron-LM before 2022); ``fused_kernels`` False is eager PyTorch (no
    torch.compile, Transformer Engine or fused norm and activation kernels).
    ``host_overhead_w_per_gpu`` None takes the hardware preset's system figure (the rest of a
    DGX node per GPU) where it has one, else 0. ``zero3_gather``
    is how ZeRO 3 fetches parameters (``ZERO3_GATHERS``).

    ``measured_tokens_per_s`` is a throughput measured on this run (the whole job's tokens/s,
    e.g. a training log's steady median): set, :func:`predict` takes the step from it instead
    of from the model, and ``measured_source`` says where it came from (a log's name). None
    predicts the step. Both were added to version 1 with defaults, so older plans open
    unchanged (a source without a rate is dropped).
    """

    kind: ClassVar[str] = "run_plan"
    schema_version: ClassVar[int] = 1

    n_params: float
    n_layers: int
    d_model: int
    n_heads: int
    seq_len: int
    hardware: str
    n_gpus: int
    global_batch: int
    n_kv_heads: int | None = None
    d_ffn: int | None = None
    vocab_size: int = 0
    gated_mlp: bool | None = None
    gpus_per_node: int = 8
    intra_node: str | None = None
    inter_node: str = "nic-400g"
    intra_node_bw: float | None = None
    inter_node_bw: float | None = None
    gpu_memory_bytes: float | None = None
    tp: int = 1
    pp: int = 1
    cp: int = 1
    vp: int = 1
    zero: int = 0
    sequence_parallel: bool = False
    tp_comm_overlap: float = 0.0
    overlap_dp_comm: bool = True
    grad_reduce_precision: str = "fp32"
    zero3_gather: str = "per_layer"
    flash_attention: bool = True
    fused_kernels: bool = True
    micro_batch: int = 1
    recompute: str = "none"
    precision: str = "bf16"
    train_tokens: float = 1e12
    bytes_per_token: float = 4.0
    storage_read_bw: float | None = None
    checkpoint_interval_s: float | None = None
    checkpoint_write_bw: float | None = None
    power_cap_w: float | None = None
    static_fraction: float = pw.DEFAULT_STATIC_FRACTION
    min_voltage_fraction: float = pw.DEFAULT_MIN_VOLTAGE_FRACTION
    host_overhead_w_per_gpu: float | None = None
    pue: float = 1.2
    grid_g_per_kwh: float = 475.0
    energy_price_per_kwh: float = 0.10
    gpu_hour_price: float = 0.0
    currency: str = "USD"
    measured_tokens_per_s: float | None = None
    measured_source: str = ""

    MAX_GPUS: ClassVar[int] = 10_000_000

    def _check(self) -> None:  # noqa: C901 - one check per field, in field order
        s = self._set
        s("n_params", _float("n_params", self.n_params, low=0, low_open=True, high=v.MAX_PARAMS, unit="parameters"))
        s("n_layers", _int("n_layers", self.n_layers, 1, 10_000))
        s("d_model", _int("d_model", self.d_model, 1, 1_000_000))
        s("n_heads", _int("n_heads", self.n_heads, 1, 100_000))
        s("seq_len", _int("seq_len", self.seq_len, 1, 1 << 24))
        s("hardware", _key("hardware", self.hardware))
        s("n_gpus", _int("n_gpus", self.n_gpus, 1, self.MAX_GPUS))
        s("global_batch", _int("global_batch", self.global_batch, 1, 1 << 30))
        if self.n_kv_heads is None:
            s("n_kv_heads", self.n_heads)
        s("n_kv_heads", _int("n_kv_heads", self.n_kv_heads, 1, self.n_heads))
        if self.n_heads % self.n_kv_heads:
            raise v.InputError("n_kv_heads", f"must divide the {self.n_heads} heads (n_heads), got {self.n_kv_heads}")
        if self.d_model % self.n_heads:
            raise v.InputError("n_heads", f"must divide the model width d_model = {self.d_model}, got {self.n_heads}")
        if self.d_ffn is None:
            s("d_ffn", 4 * self.d_model)
        s("d_ffn", _int("d_ffn", self.d_ffn, 1, 10_000_000))
        s("vocab_size", _int("vocab_size", self.vocab_size, 0, 100_000_000))
        if self.gated_mlp is not None:
            s("gated_mlp", _bool("gated_mlp", self.gated_mlp))
        s("gpus_per_node", _int("gpus_per_node", self.gpus_per_node, 1, 100_000))
        if self.intra_node is not None:
            s("intra_node", _key("intra_node", self.intra_node))
        s("inter_node", _key("inter_node", self.inter_node))
        for name, (low, high, unit) in OPTIONAL_BOUNDS.items():
            if getattr(self, name) is not None:
                s(name, _float(name, getattr(self, name), low=low, high=high, unit=unit, low_open=low == 0))
        for name in ("tp", "pp", "cp", "vp"):
            s(name, _int(name, getattr(self, name), 1, self.MAX_GPUS))
        if isinstance(self.zero, bool) or not isinstance(self.zero, int) or self.zero not in ZERO_STAGES:
            raise v.InputError("zero", f"must be a ZeRO stage 0, 1, 2 or 3, got {v._describe(self.zero)}")
        s("sequence_parallel", _bool("sequence_parallel", self.sequence_parallel))
        s("tp_comm_overlap", _float("tp_comm_overlap", self.tp_comm_overlap, low=0, high=1))
        s("overlap_dp_comm", _bool("overlap_dp_comm", self.overlap_dp_comm))
        s("zero3_gather", v.choice("zero3_gather", self.zero3_gather, ZERO3_GATHERS))
        s("flash_attention", _bool("flash_attention", self.flash_attention))
        s("fused_kernels", _bool("fused_kernels", self.fused_kernels))
        s("grad_reduce_precision", v.choice("grad_reduce_precision", self.grad_reduce_precision,
                                            GRAD_REDUCE_PRECISIONS))
        s("micro_batch", _int("micro_batch", self.micro_batch, 1, 1 << 30))
        s("recompute", v.choice("recompute", self.recompute, RECOMPUTE_MODES))
        s("precision", v.choice("precision", self.precision, PRECISIONS))
        s("train_tokens", _float("train_tokens", self.train_tokens, low=0, low_open=True, high=v.MAX_TOKENS,
                                 unit="tokens"))
        s("bytes_per_token", _float("bytes_per_token", self.bytes_per_token, low=0, low_open=True,
                                    high=MAX_BYTES_PER_TOKEN, unit="bytes"))
        s("static_fraction", _float("static_fraction", self.static_fraction, low=0, high=1, high_open=True))
        s("min_voltage_fraction", _float("min_voltage_fraction", self.min_voltage_fraction,
                                         low=0, high=1, low_open=True))
        if self.host_overhead_w_per_gpu is not None:
            s("host_overhead_w_per_gpu", _float("host_overhead_w_per_gpu", self.host_overhead_w_per_gpu, low=0,
                                                high=v.MAX_GPU_POWER_W, unit="W"))
        s("pue", _float("pue", self.pue, low=1, high=5))
        s("grid_g_per_kwh", _float("grid_g_per_kwh", self.grid_g_per_kwh, low=0, high=v.MAX_GRID_G_PER_KWH,
                                   unit="gCO2e/kWh"))
        s("energy_price_per_kwh", _float("energy_price_per_kwh", self.energy_price_per_kwh, low=0,
                                         high=v.MAX_PRICE))
        s("gpu_hour_price", _float("gpu_hour_price", self.gpu_hour_price, low=0, high=v.MAX_PRICE))
        s("currency", v.text("currency", self.currency))
        source = v.text("measured_source", self.measured_source, allow_empty=True).strip()
        if len(source) > MAX_SOURCE_CHARS:
            raise v.InputError("measured_source", f"must be at most {MAX_SOURCE_CHARS} characters, got {len(source)}")
        s("measured_source", source if self.measured_tokens_per_s is not None else "")
        self._check_layout()

    def _check_layout(self) -> None:
        model_parallel = self.tp * self.pp * self.cp
        if self.n_gpus % model_parallel:
            raise v.InputError(
                "n_gpus", f"tp x pp x cp = {self.tp} x {self.pp} x {self.cp} = {model_parallel} must divide "
                f"the GPU count {self.n_gpus:,}; use a multiple of {model_parallel} GPUs or change the split")
        if self.tp > self.n_heads:
            raise v.InputError("tp", f"must be at most the {self.n_heads} attention heads (n_heads), got {self.tp}")
        if self.n_heads % self.tp:
            raise v.InputError("tp", f"must divide the {self.n_heads} attention heads (n_heads), got {self.tp}")
        if self.pp > self.n_layers:
            raise v.InputError("pp", f"must be at most the {self.n_layers} layers (n_layers), got {self.pp}")
        if self.vp > 1 and self.pp == 1:
            raise v.InputError("vp", "virtual pipeline stages need pp > 1; set vp = 1")
        if self.pp * self.vp > self.n_layers:
            raise v.InputError("vp", f"pp x vp = {self.pp * self.vp} chunks exceed the {self.n_layers} layers "
                                     "(n_layers)")
        if self.seq_len % self.cp:
            raise v.InputError("cp", f"must divide the sequence length seq_len = {self.seq_len}, got {self.cp}")
        if self.d_ffn % self.tp:
            raise v.InputError("tp", f"must divide the MLP width d_ffn = {self.d_ffn}, got {self.tp}")
        if (self.checkpoint_interval_s is None) != (self.checkpoint_write_bw is None):
            raise v.InputError("checkpoint_write_bw" if self.checkpoint_write_bw is None else "checkpoint_interval_s",
                               "give both checkpoint_interval_s and checkpoint_write_bw, or neither")
        if self.sequence_parallel and self.tp == 1:
            raise v.InputError("sequence_parallel", "needs tp > 1 (it splits the tensor-parallel group's work)")
        per_step = self.dp * self.micro_batch
        if self.global_batch % per_step:
            raise v.InputError(
                "global_batch", f"must be a multiple of dp x micro_batch = {self.dp} x {self.micro_batch} "
                f"= {per_step} (dp = n_gpus / (tp x pp x cp)), got {self.global_batch:,}")
        if self.vp > 1 and self.microbatches % self.pp:
            raise v.InputError("vp", f"interleaved stages need the {self.microbatches} micro-batches per step "
                               f"to be a multiple of pp = {self.pp}; raise the global_batch or set vp = 1")
        shape = min((shape_params(self, gated) for gated in (False, True)), key=lambda n: abs(n - self.n_params))
        if not 0.75 <= shape / self.n_params <= 4 / 3:
            raise v.InputError(
                "n_params", f"{self.n_params:.4g} parameters do not match the model shape, which holds "
                f"about {shape:.4g}: change the parameter count or the shape (n_layers, d_model, n_heads, "
                "n_kv_heads, d_ffn, vocab_size)")

    # -- derived counts ---------------------------------------------------------------------
    @property
    def dp(self) -> int:
        """Data-parallel replicas: n_gpus / (tp x pp x cp)."""
        return self.n_gpus // (self.tp * self.pp * self.cp)

    @property
    def replicas(self) -> int:
        """GPUs holding the same weight shard: dp x cp (they reduce gradients together)."""
        return self.dp * self.cp

    @property
    def layers_per_stage(self) -> int:
        """Layers of the busiest pipeline stage: ceil(n_layers / pp)."""
        return -(-self.n_layers // self.pp)

    @property
    def microbatches(self) -> int:
        """Micro-batches each pipeline runs per step: global_batch / (dp x micro_batch)."""
        return self.global_batch // (self.dp * self.micro_batch)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def d_kv(self) -> int:
        """Width of the keys (and of the values): kv heads x head size."""
        return self.n_kv_heads * self.head_dim

    @property
    def tokens_per_step(self) -> int:
        return self.global_batch * self.seq_len

    @property
    def is_gated(self) -> bool:
        if self.gated_mlp is not None:
            return self.gated_mlp
        plain = shape_params(self, gated=False)
        gated = shape_params(self, gated=True)
        return abs(gated - self.n_params) < abs(plain - self.n_params)


#: The RunPlan fields a model shape sets.
SHAPE_FIELDS: tuple[str, ...] = ("n_params", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn",
                                 "vocab_size", "seq_len", "gated_mlp")


@dataclass(frozen=True)
class ModelShape:
    """A named model shape (a preset): the plan's model fields, with where they were read."""

    key: str
    name: str
    n_params: float
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ffn: int
    vocab_size: int
    seq_len: int
    gated_mlp: bool
    source: str

    def __post_init__(self) -> None:
        v.text("key", self.key)
        v.text("name", self.name)
        v.text("source", self.source)
        # the plan's own checks, on a one-GPU plan of this shape
        RunPlan(hardware="shape-check", n_gpus=1, global_batch=1,
                **{name: getattr(self, name) for name in SHAPE_FIELDS})

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SHAPE_FIELDS}


def shape_of(plan: RunPlan) -> dict[str, Any]:
    """The plan's model fields, as :meth:`ModelShape.fields` gives them."""
    return {name: getattr(plan, name) for name in SHAPE_FIELDS}


@v.public
def scaled_shape(plan: RunPlan, n_params: float) -> dict[str, Any]:
    """A shape of ``n_params`` parameters in the proportions of ``plan``'s model.

    Width and depth grow together (by the same factor, the way model families scale), the
    width a multiple of the head size, the heads a multiple of the query/key-value grouping
    (and of 8 from 16 heads on), the MLP in the same ratio to the width, the vocabulary and
    the sequence kept. The factor is searched so that the shape holds about ``n_params`` (the
    embeddings do not grow with it); ``n_params`` is kept exactly as given (MFU counts it).
    """
    target = v.positive("n_params", n_params)
    group = max(1, plan.n_heads // plan.n_kv_heads)
    gated = plan.is_gated

    def shape(ratio: float) -> dict[str, Any]:
        step = group * 8 // math.gcd(group, 8) if plan.n_heads * ratio >= 16 else group
        heads = max(group, round(plan.n_heads * ratio / step) * step)
        d_model = heads * plan.head_dim
        return {
            "n_params": target,
            "n_layers": max(1, round(plan.n_layers * ratio)),
            "d_model": d_model,
            "n_heads": heads,
            "n_kv_heads": heads // group,
            "d_ffn": max(128, round(plan.d_ffn / plan.d_model * d_model / 128) * 128),
            "vocab_size": plan.vocab_size,
            "seq_len": plan.seq_len,
            "gated_mlp": plan.gated_mlp,
        }

    def held(fields: dict[str, Any]) -> float:
        d, kv = fields["d_model"], fields["n_kv_heads"] * plan.head_dim
        layer = d * (d + 2 * kv) + d * d + (3 if gated else 2) * d * fields["d_ffn"] + 2 * d
        return fields["n_layers"] * layer + 2 * plan.vocab_size * d

    # parameters grow monotonically with the factor: bisect on its logarithm, keep the best
    low, high = math.log(1e-3), math.log(1e3)
    best = shape(1.0)
    for _ in range(60):
        mid = (low + high) / 2
        candidate = shape(math.exp(mid))
        if abs(held(candidate) - target) < abs(held(best) - target):
            best = candidate
        if held(candidate) < target:
            low = mid
        else:
            high = mid
    return best


def shape_params(plan: RunPlan, gated: bool) -> float:
    """Parameters the shape implies: L x (attention + MLP + 2 norms) + embedding and head.

    Attention d x (d + 2 d_kv) + d x d; MLP 2 or 3 matrices of d x d_ffn; untied embedding and
    output head of V x d each.
    """
    d = plan.d_model
    attention = d * (d + 2 * plan.d_kv) + d * d
    mlp = (3 if gated else 2) * d * plan.d_ffn
    return plan.n_layers * (attention + mlp + 2 * d) + 2 * plan.vocab_size * d


# -- resolved inputs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Links:
    """The two links a plan uses, as achieved bytes/s per GPU in one direction and alpha."""

    intra_bw: float
    intra_latency_s: float
    inter_bw: float
    inter_latency_s: float
    intra_name: str
    inter_name: str


def _link(catalog: Catalog, key: str, field_name: str):
    try:
        return catalog.interconnect(key)
    except v.InputError as exc:
        raise v.InputError(field_name, str(exc).split(": ", 1)[-1]) from None


def resolve_links(plan: RunPlan, hw: Hardware, catalog: Catalog) -> Links:
    """Achievable link rates: nominal per-direction rate (preset or override) x achievable share."""
    if plan.intra_node is None:
        if hw.interconnect_bw is None and plan.intra_node_bw is None:
            if plan.gpus_per_node > 1 and plan.n_gpus > 1:
                raise v.InputError("intra_node", f"{hw.name} has no GPU-to-GPU link in its preset; "
                                   "name an intra-node interconnect (e.g. 'pcie-5-x16') or set intra_node_bw")
            nominal = 1.0  # never used: one GPU per node sends nothing inside it
        else:
            nominal = plan.intra_node_bw or hw.interconnect_bw / 2.0
        intra_bw = nominal * OWN_LINK_ACHIEVABLE
        intra_latency = OWN_LINK_LATENCY_S
        intra_name = hw.interconnect or "own link"
    else:
        link = _link(catalog, plan.intra_node, "intra_node")
        share = link.achievable_bw / link.bw_per_direction
        intra_bw = (plan.intra_node_bw or link.bw_per_direction) * share
        intra_latency = link.latency_s
        intra_name = link.name
    nic = _link(catalog, plan.inter_node, "inter_node")
    share = nic.achievable_bw / nic.bw_per_direction
    return Links(
        intra_bw=intra_bw, intra_latency_s=intra_latency,
        inter_bw=(plan.inter_node_bw or nic.bw_per_direction) * share, inter_latency_s=nic.latency_s,
        intra_name=intra_name, inter_name=nic.name,
    )


@dataclass(frozen=True)
class Device:
    """The rates of one GPU the step model uses."""

    peak_flops: float  # dense, at the plan's precision (MFU's denominator)
    matmul_flops: float  # the best measured matmul rate at the plan's precision
    attention_flops: float  # peak at 16-bit (attention runs in BF16 even in FP8 training)
    mem_bw: float
    mem_capacity: float | None
    tdp_w: float | None


def resolve_device(plan: RunPlan, hw: Hardware) -> Device:
    if plan.precision not in hw.precisions:
        raise v.InputError("precision", f"{hw.name} has no {plan.precision} rate; it has "
                           f"{', '.join(hw.precisions)}: pick one of those")
    rate = hw.rate(plan.precision)
    matmul = rate.achievable_flops or rate.dense_flops * DEFAULT_MATMUL_FRACTION
    half = next((p for p in ("bf16", "fp16") if p in hw.precisions), plan.precision)
    attention = hw.peak_flops(half) if PRECISIONS.index(plan.precision) > PRECISIONS.index(half) else rate.dense_flops
    return Device(peak_flops=rate.dense_flops, matmul_flops=matmul, attention_flops=attention,
                  mem_bw=hw.mem_bw, mem_capacity=plan.gpu_memory_bytes or hw.mem_capacity, tdp_w=hw.tdp_w)


# -- FLOPs -------------------------------------------------------------------------------------
def model_flops_per_token(plan: RunPlan) -> float:
    """MFU's numerator per token: 6N + 12 L d T (PaLM; as :func:`workbench.mfu.flops_per_token`)."""
    return 6.0 * plan.n_params + 12.0 * plan.n_layers * plan.d_model * plan.seq_len


def hardware_flops_per_token(plan: RunPlan) -> float:
    """HFU's numerator per token: the model FLOPs plus what recomputation runs again.

    Full recomputation repeats the forward pass, 2N + 4 L d T (so x 4/3 of the model FLOPs);
    selective recomputation (Korthikanti et al. 2022) repeats only the attention core's
    forward, 4 L d T; op-level recomputation half the forward matmuls, N.
    """
    base = model_flops_per_token(plan)
    attention_forward = 4.0 * plan.n_layers * plan.d_model * plan.seq_len
    if plan.recompute == "full":
        return base + 2.0 * plan.n_params + attention_forward
    if plan.recompute == "op":
        return base + plan.n_params
    if plan.recompute == "selective":
        return base + attention_forward
    return base


# -- the terms -------------------------------------------------------------------------------------
def gemm_time(m: float, n: float, k: float, matmul_flops: float, mem_bw: float,
              element_bytes: float) -> float:
    """Seconds for one (m x k) @ (k x n) matmul: its FLOPs over the roofline of its shape.

    FLOPs 2mnk; bytes element_bytes x (mk + kn + mn); time = FLOPs / min(matmul_flops,
    intensity x mem_bw) (Williams et al. 2009), the ceiling being the device's measured best
    matmul rate rather than the datasheet peak. Thin matmuls (small m after a small
    micro-batch, or n and k cut by tensor parallelism) fall under the bandwidth roof.
    """
    flops = 2.0 * m * n * k
    moved = element_bytes * (m * k + k * n + m * n)
    return max(flops / matmul_flops, moved / mem_bw)


def layer_gemm_shapes(plan: RunPlan) -> list[tuple[float, float, float]]:
    """(m, n, k) of one layer's forward matmuls on one GPU for one micro-batch.

    m = micro_batch x T / cp tokens; the QKV, attention-output, MLP-in and MLP-out weights are
    split tp ways (Megatron column- then row-parallel). The backward pass runs two matmuls of
    each with the same FLOPs and bytes (transposed operands), so it costs twice the forward.
    """
    m = plan.micro_batch * plan.seq_len / plan.cp
    d, t = plan.d_model, plan.tp
    mlp_in = plan.d_ffn * (2 if plan.is_gated else 1)
    return [
        (m, (d + 2 * plan.d_kv) / t, d),  # fused QKV projection
        (m, d, d / t),  # attention output projection
        (m, mlp_in / t, d),  # MLP up (and gate)
        (m, d, plan.d_ffn / t),  # MLP down
    ]


def layer_activation_bytes(plan: RunPlan, recompute: str = "none", flash: bool = False) -> float:
    """Activation bytes one layer keeps for the backward pass, one micro-batch, one GPU.

    Korthikanti et al. 2022 (16-bit activations, s = T / cp tokens, b micro-batch, h width,
    a heads, t = tp):
    - no recomputation: s b h (10 + 24 / t) + 5 a s^2 b / t, or s b h 34 / t with sequence
      parallelism (the 10 s b h of norms and dropouts is split too);
    - selective recomputation drops the 5 a s^2 b / t of the attention scores;
    - full recomputation keeps only the layer's input, 2 s b h (/ t with sequence parallelism).
    ``flash`` drops the score term as FlashAttention does (it never stores the scores).
    """
    s = plan.seq_len / plan.cp
    b, h, a, t = plan.micro_batch, plan.d_model, plan.n_heads, plan.tp
    split = t if plan.sequence_parallel else 1
    if recompute == "full":
        return 2.0 * s * b * h / split
    base = s * b * h * (34.0 / t if plan.sequence_parallel else 10.0 + 24.0 / t)
    if recompute in ("selective", "op") or flash:  # "op": counted as selective (an upper bound)
        return base
    return base + 5.0 * a * s * s * b / t


def layer_compute_times(plan: RunPlan, dev: Device) -> dict[str, float]:
    """Seconds of one layer, one micro-batch, one GPU: the forward pass of each kind of work.

    - ``gemm_forward``: :func:`gemm_time` of :func:`layer_gemm_shapes` at
      ``MATMUL_FRACTION_OF_MAMF`` of the measured matmul rate (backward = 2 x).
    - ``attention_forward``: the attention core, QK^T and AV over the keys of the whole
      sequence, 4 b s T d / tp FLOPs. FlashAttention skips the masked half and runs at
      ``ATTENTION_EFFICIENCY`` of the 16-bit peak (backward ``ATTENTION_BACKWARD_FACTOR`` x);
      unfused, it is two batched matmuls per head (backward 2 x) plus the softmax, mask and
      dropout over the stored scores, memory bound.
    - ``other``: norms, activations, residuals and casts, memory bound:
      ``NONMATMUL_TRAFFIC_FACTOR`` x the layer's activation bytes over the memory bandwidth,
      forward and backward together.
    """
    element = PRECISION_BYTES[plan.precision]
    matmul = dev.matmul_flops * MATMUL_FRACTION_OF_MAMF
    gemm = sum(gemm_time(m, n, k, matmul, dev.mem_bw, element) for m, n, k in layer_gemm_shapes(plan))
    s = plan.seq_len / plan.cp
    factor = NONMATMUL_TRAFFIC_FACTOR[plan.fused_kernels]
    heads = plan.micro_batch * plan.n_heads / plan.tp
    if plan.flash_attention:
        causal_flops = 0.5 * 4.0 * plan.micro_batch * s * plan.seq_len * plan.d_model / plan.tp
        attention = causal_flops / (dev.attention_flops * ATTENTION_EFFICIENCY)
        other = factor * layer_activation_bytes(plan, flash=True) / dev.mem_bw
    else:
        hd = plan.head_dim
        half_matmul = dev.attention_flops * (matmul / dev.peak_flops)
        attention = heads * (gemm_time(s, plan.seq_len, hd, half_matmul, dev.mem_bw, 2.0)
                             + gemm_time(s, hd, plan.seq_len, half_matmul, dev.mem_bw, 2.0))
        other = factor * layer_activation_bytes(plan) / dev.mem_bw
    return {"gemm_forward": gemm, "attention_forward": attention, "other": other}


def head_time(plan: RunPlan, dev: Device) -> float:
    """Seconds of the output head and loss for one micro-batch (forward + backward), last stage.

    A (b s) x d by d x V / tp matmul, three times (forward, two backward); embedding look-up
    is free. Zero when ``vocab_size`` is 0.
    """
    if plan.vocab_size == 0:
        return 0.0
    m = plan.micro_batch * plan.seq_len / plan.cp
    element = PRECISION_BYTES[plan.precision]
    matmul = dev.matmul_flops * MATMUL_FRACTION_OF_MAMF
    return 3.0 * gemm_time(m, plan.vocab_size / plan.tp, plan.d_model, matmul, dev.mem_bw, element)


def _group_link(ranks_inside: int, group: int, links: Links) -> tuple[float, float]:
    """(bytes/s, alpha) of a collective over ``group`` ranks of which ``ranks_inside`` share a
    node: :func:`workbench.comms.hierarchical_link` over the plan's two links."""
    return comms.hierarchical_link(ranks_inside, group, links.intra_bw, links.intra_latency_s,
                                   links.inter_bw, links.inter_latency_s)


def tensor_parallel_time(plan: RunPlan, links: Links) -> float:
    """Exposed seconds of tensor-parallel communication for one micro-batch on one pipeline stage.

    Megatron's layer does two all-reduces of the b x s x d activations forward and two backward
    (with sequence parallelism each becomes a reduce-scatter plus an all-gather, the same bytes
    on a ring); full recomputation repeats the forward two. Ring all-reduce over tp ranks, on
    the intra-node link unless the group spans nodes; ``tp_comm_overlap`` of it is hidden.
    """
    if plan.tp == 1:
        return 0.0
    size = plan.micro_batch * plan.seq_len / plan.cp * plan.d_model * ACTIVATION_BYTES
    inside = min(plan.tp, plan.gpus_per_node)
    bw, alpha = _group_link(inside, plan.tp, links)
    per_layer = (6 if plan.recompute == "full" else 4) * comms.ring_allreduce_time(size, plan.tp, bw, alpha)
    return per_layer * plan.layers_per_stage * (1.0 - plan.tp_comm_overlap)


def context_parallel_time(plan: RunPlan, links: Links, attention_s: float) -> float:
    """Exposed seconds of the context-parallel K/V exchange for one micro-batch, one stage.

    Ring attention: each of the cp - 1 steps passes the local K and V (b s 2 d_kv / tp
    elements) on, forward; backward passes K, V and their gradients (2 x). The exchange runs
    under the attention core, so only what exceeds ``attention_s`` (that micro-batch's
    attention time on the stage) counts.
    """
    if plan.cp == 1:
        return 0.0
    kv = plan.micro_batch * plan.seq_len / plan.cp * 2 * plan.d_kv / plan.tp * ACTIVATION_BYTES
    inside = max(1, min(plan.cp, plan.gpus_per_node // plan.tp))
    # Every ring step waits for the pair that crosses a node boundary: one NIC, not a node's.
    bw, alpha = (links.intra_bw, links.intra_latency_s) if inside >= plan.cp else (links.inter_bw, links.inter_latency_s)
    per_layer = 3.0 * (plan.cp - 1) * (kv / bw + alpha)
    return max(0.0, per_layer * plan.layers_per_stage - attention_s)


def pipeline_bubble_time(plan: RunPlan, slot_s: float) -> float:
    """Idle seconds of pipeline fill and drain per step: (pp - 1) / vp micro-batch slots.

    With m micro-batches the bubble is (pp - 1) / (m x vp) of the compute (Narayanan et al.
    2021, interleaved 1F1B); ``slot_s`` is one micro-batch's forward + backward on one stage.
    """
    return (plan.pp - 1) / plan.vp * slot_s


def pipeline_p2p_time(plan: RunPlan, links: Links) -> float:
    """Seconds per step of sending activations (forward) and their gradients (backward) between
    stages: 2 sends of b s d / tp elements (Megatron's scatter-gather split) per micro-batch and
    virtual stage; when the job spans nodes some stage boundary crosses one, and the slowest
    boundary sets the pace."""
    if plan.pp == 1:
        return 0.0
    size = plan.micro_batch * plan.seq_len / plan.cp * plan.d_model / plan.tp * ACTIVATION_BYTES
    across = plan.n_gpus > plan.gpus_per_node
    bw, alpha = (links.inter_bw, links.inter_latency_s) if across else (links.intra_bw, links.intra_latency_s)
    return 2.0 * plan.microbatches * plan.vp * (size / bw + alpha)


def sync_link_rate(plan: RunPlan, links: Links) -> tuple[float, float]:
    """(bytes/s, alpha) of the ring the gradient synchronisation runs on: its dp x cp ranks sit
    tp apart, so gpus_per_node / tp of them share a node (:func:`_group_link`)."""
    group = plan.replicas
    inside = max(1, min(group, plan.gpus_per_node // plan.tp))
    return _group_link(inside, group, links)


@dataclass(frozen=True)
class DataParallelTraffic:
    """Data-parallel collectives of one step on one GPU, seconds before any overlap."""

    per_step_s: float  # once per step (ZeRO 0/1)
    per_microbatch_s: float  # every micro-batch (ZeRO 2/3 gathers and reduce-scatters)
    window_s: float  # compute each can hide behind


def data_parallel_traffic(plan: RunPlan, links: Links, forward_s: float, backward_s: float) -> DataParallelTraffic:
    """Gradient and parameter collectives over the replicas of one GPU's shard.

    The shard is N / (tp x pp) parameters, held by dp x cp GPUs (context parallelism splits
    the sequence, not the weights, so its ranks reduce gradients too, as Megatron-Core and
    torchtitan do). They sit tp apart, so gpus_per_node / tp of them share a node
    (:func:`_group_link`: hierarchical rings when the group spans nodes).
    - ZeRO 0: one all-reduce of the gradients per step (FP32 or BF16, ``grad_reduce_precision``).
    - ZeRO 1 (distributed optimizer): reduce-scatter of the gradients, all-gather of the
      updated 16-bit parameters, once per step.
    - ZeRO 2: every micro-batch, a reduce-scatter of its gradients and an all-gather of the
      parameters for the forward pass.
    - ZeRO 3 (FSDP): every micro-batch, all-gathers of the parameters for the forward and again
      for the backward, and a reduce-scatter of the gradients.
    ZeRO 3 ``per_tensor`` adds, per micro-batch, the latency of one collective per parameter
    tensor for each gather and reduce (:func:`layer_param_tensors`), all exposed.
    Once-per-step traffic hides behind one micro-batch's backward (Megatron overlaps the
    gradient reduce with the last backward), per-micro-batch traffic behind that micro-batch's
    forward and backward (FSDP prefetches); with ``overlap_dp_comm`` False nothing is hidden.
    """
    group = plan.replicas
    if group == 1:
        return DataParallelTraffic(0.0, 0.0, 0.0)
    shard = plan.n_params / (plan.tp * plan.pp)
    grad_bytes = 4.0 if plan.grad_reduce_precision == "fp32" else 2.0
    bw, alpha = sync_link_rate(plan, links)

    def ring(op: str, size: float) -> float:
        return float(comms.ring_time(op, size, group, bw, alpha))

    if plan.zero == 0:
        return DataParallelTraffic(ring("all_reduce", shard * grad_bytes), 0.0, backward_s)
    if plan.zero == 1:
        once = ring("reduce_scatter", shard * grad_bytes) + ring("all_gather", shard * WEIGHT_BYTES)
        return DataParallelTraffic(once, 0.0, backward_s)
    gathers = 1 if plan.zero == 2 else 2
    each = ring("reduce_scatter", shard * grad_bytes) + gathers * ring("all_gather", shard * WEIGHT_BYTES)
    if plan.zero == 3 and plan.zero3_gather == "per_tensor":
        # One collective per parameter tensor, each paying its ring's dp - 1 latency steps;
        # fetched on demand, so nothing hides it.
        calls = 3 * layer_param_tensors(plan) * plan.layers_per_stage
        each += calls * (group - 1) * alpha
        return DataParallelTraffic(0.0, each, 0.0)
    return DataParallelTraffic(0.0, each, forward_s + backward_s)


def layer_param_tensors(plan: RunPlan) -> int:
    """Parameter tensors of one layer: fused QKV, output, 2 or 3 MLP matrices and 2 norms.

    A gated (Llama-style) layer has no biases and RMSNorm weights only: 2 + 3 + 2 = 7. A GPT
    layer adds a bias to each matrix and LayerNorm weight and bias: 2 x (2 + 2) + 2 x 2 = 12.
    """
    if plan.is_gated:
        return 2 + 3 + 2
    return 2 * (2 + 2) + 2 * 2


def exposed_data_parallel_time(plan: RunPlan, traffic: DataParallelTraffic) -> float:
    """Seconds per step the data-parallel collectives add: what exceeds their overlap window.

    The first gather and the last reduce of a pass cannot overlap (there is no compute beside
    them): 1 / (layers per stage) of the traffic is always exposed. A zero window (on-demand
    gathers) or ``overlap_dp_comm`` False exposes everything.
    """
    layers = plan.layers_per_stage
    if not plan.overlap_dp_comm or (traffic.window_s == 0.0 and traffic.per_microbatch_s > 0):
        return traffic.per_step_s + plan.microbatches * traffic.per_microbatch_s
    edge = 1.0 / max(1.0, layers)

    def exposed(comm: float) -> float:
        return comm * edge + max(0.0, comm * (1 - edge) - traffic.window_s)

    return exposed(traffic.per_step_s) + plan.microbatches * exposed(traffic.per_microbatch_s)


def optimizer_time(plan: RunPlan, dev: Device) -> float:
    """Seconds of the Adam update: ``OPTIMIZER_BYTES_PER_PARAM`` x the local optimizer shard
    (the busiest stage's parameters / tp, / (dp x cp) from ZeRO 1) over the memory bandwidth."""
    shard = stage_params(plan) / plan.tp / (plan.replicas if plan.zero >= 1 else 1)
    return OPTIMIZER_BYTES_PER_PARAM * shard / dev.mem_bw


def data_loading_time(plan: RunPlan, busy_s: float) -> float:
    """Exposed seconds per step of reading the step's tokens (global batch x T x bytes per token)
    from storage at ``storage_read_bw``; the loader prefetches during the step, so only what
    exceeds ``busy_s`` counts (the input-pipeline model of :mod:`workbench.pipeline`)."""
    if plan.storage_read_bw is None:
        return 0.0
    read = plan.tokens_per_step * plan.bytes_per_token / plan.storage_read_bw
    return max(0.0, read - busy_s)


def checkpoint_time(plan: RunPlan, step_s: float) -> float:
    """Seconds per step spent writing checkpoints: one blocking save of
    :func:`workbench.pipeline.checkpoint_bytes` at ``checkpoint_write_bw`` every
    ``checkpoint_interval_s``, amortised (save time x step / interval)."""
    if plan.checkpoint_interval_s is None or plan.checkpoint_write_bw is None:
        return 0.0
    save = _checkpoint_bytes(plan.n_params) / plan.checkpoint_write_bw
    return save * step_s / plan.checkpoint_interval_s


# -- memory ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU (the busiest pipeline stage)."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    capacity: float | None

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def fits(self) -> bool:
        return self.capacity is None or self.total <= self.capacity

    @property
    def shortfall(self) -> float:
        """Bytes over capacity (0 when it fits)."""
        return 0.0 if self.capacity is None else max(0.0, self.total - self.capacity)

    def as_dict(self) -> dict[str, float]:
        return {"weights": self.weights, "gradients": self.gradients, "optimizer": self.optimizer,
                "activations": self.activations, "total": self.total}


def stage_params(plan: RunPlan) -> float:
    """Parameters of the busiest pipeline stage: ceil(n_layers / pp) layers, plus the V x d
    embedding (first stage) or output head (last stage); all of N without pipelining."""
    if plan.pp == 1:
        return plan.n_params
    edge = plan.vocab_size * plan.d_model
    per_layer = max(0.0, plan.n_params - 2 * edge) / plan.n_layers
    return plan.layers_per_stage * per_layer + edge


@v.public
def memory_per_gpu(plan: RunPlan, capacity: float | None = None) -> MemoryEstimate:
    """Training state and activations on the GPU that holds the most.

    - weights 2 bytes, gradients 4 (FP32 main gradients, ``grad_reduce_precision`` "fp32",
      as Megatron keeps them) or 2, and optimizer state 12 per parameter of the shard
      :func:`stage_params` / tp (ZeRO paper); optimizer state / (dp x cp) from ZeRO 1,
      gradients from ZeRO 2, weights from ZeRO 3.
    - activations: :func:`layer_activation_bytes` (without the scores under FlashAttention)
      x the layers a stage holds in flight. Under 1F1B the first stage keeps min(m, pp)
      micro-batches of its ceil(n_layers / pp) layers, and interleaving adds (pp - 1) /
      (pp x vp) of that (Korthikanti et al. 2022); plus the last stage's FP32 logits,
      4 b s V / tp bytes.
    """
    v.instance("plan", plan, RunPlan)
    if capacity is not None:
        capacity = v.bounded("capacity", capacity, 1.0, v.MAX_BYTES, "bytes")
    shard = stage_params(plan) / plan.tp
    group = plan.replicas
    grad_bytes = 4.0 if plan.grad_reduce_precision == "fp32" else GRAD_BYTES
    weights = WEIGHT_BYTES * shard / (group if plan.zero >= 3 else 1)
    grads = grad_bytes * shard / (group if plan.zero >= 2 else 1)
    optimizer = OPTIMIZER_STATE_BYTES * shard / (group if plan.zero >= 1 else 1)
    in_flight = min(plan.microbatches, plan.pp)
    interleave = 1.0 + ((plan.pp - 1) / (plan.pp * plan.vp) if plan.vp > 1 else 0.0)
    per_layer = layer_activation_bytes(plan, plan.recompute, flash=plan.flash_attention)
    layers = plan.layers_per_stage
    first_stage = per_layer * layers * in_flight * interleave
    logits = 4.0 * plan.micro_batch * plan.seq_len / plan.cp * plan.vocab_size / plan.tp
    last_stage = per_layer * layers + logits
    activations = first_stage + logits if plan.pp == 1 else max(first_stage, last_stage)
    return MemoryEstimate(weights, grads, optimizer, activations, capacity)


def _memory_changes(plan: RunPlan) -> list[tuple[str, dict[str, Any]]]:
    """Single changes that lower memory per GPU, each still a valid plan."""
    tries: list[tuple[str, dict[str, Any]]] = []
    tries += [(f"ZeRO stage {z}", {"zero": z}) for z in range(plan.zero + 1, 4)]
    if plan.recompute == "none" and not plan.flash_attention:  # saves nothing under FlashAttention
        tries.append(("selective recomputation", {"recompute": "selective"}))
    if plan.recompute != "full":
        tries.append(("full recomputation", {"recompute": "full"}))
    if plan.micro_batch > 1:
        tries.append(("micro-batch 1", {"micro_batch": 1}))
    if plan.tp > 1 and not plan.sequence_parallel:
        tries.append(("sequence parallelism", {"sequence_parallel": True}))
    for name in ("tp", "pp"):
        tries.append((f"{name} {getattr(plan, name) * 2}", {name: getattr(plan, name) * 2}))
    out = []
    for label, change in tries:
        try:
            out.append((label, plan.with_changes(**change)))
        except v.InputError:
            continue
    return out


def memory_fixes(plan: RunPlan, capacity: float) -> list[str]:
    """What brings the plan within ``capacity`` bytes per GPU: every single change that does,
    or else the shortest chain of changes, each the one that saves the most, that does."""
    def label(text: str, other: RunPlan) -> str:
        return f"{text} ({memory_per_gpu(other).total / 2**30:.1f} GiB per GPU)"

    singles = [label(text, other) for text, other in _memory_changes(plan)
               if memory_per_gpu(other, capacity).fits]
    if singles:
        return singles
    current, steps = plan, []
    for _ in range(4):
        options = _memory_changes(current)
        if not options:
            break
        text, current = min(options, key=lambda option: memory_per_gpu(option[1]).total)
        steps.append(text)
        if memory_per_gpu(current, capacity).fits:
            return [label(" + ".join(steps), current)]
    return []


# -- the prediction ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Prediction:
    """What :func:`predict` answers. Seconds, tokens/s, fractions, bytes, joules, kg, money.

    With a measured throughput in the plan, ``step_time_s`` is the measured step and
    ``model_step_time_s`` the modelled one; the breakdown keeps the model's terms and its
    ``measured_gap`` term is the measured step's excess over them. A run faster than the model
    leaves that term 0 (a note says by how much), so the breakdown then sums to the modelled step.
    """

    plan: RunPlan
    step_time_s: float
    breakdown: dict[str, float]  # seconds per step of each term in TERMS; sums to step_time_s (see above)
    tokens_per_s: float  # the whole job
    tokens_per_s_per_gpu: float
    mfu: float
    hfu: float
    peak_flops: float  # dense, per GPU, at the plan's precision
    memory: MemoryEstimate
    memory_fixes: tuple[str, ...]
    uncapped_tokens_per_s: float  # the same plan without its power cap
    compute_bound_share: float  # share of the uncapped step a lower clock slows
    clock_fraction: float  # under the power cap (1 uncapped)
    gpu_power_w: float  # average draw of one GPU
    host_power_w_per_gpu: float  # the rest of the node, per GPU, counted in the IT energy
    energy_known: bool  # False: the hardware has no TDP, so energy, CO2e and energy cost are unknown
    train_time_s: float
    gpu_hours: float
    it_energy_j: float
    facility_energy_j: float
    co2e_kg: float
    energy_cost: float
    compute_cost: float
    total_cost: float
    links: Links
    notes: tuple[str, ...] = field(default=())
    model_step_time_s: float | None = None  # the modelled step, when a measured throughput set the step

    @property
    def uses_measured(self) -> bool:
        """Whether the step comes from the plan's measured throughput rather than the model."""
        return self.model_step_time_s is not None

    @property
    def largest_drag(self) -> str:
        """The model's term other than compute that costs the most time per step ("" if none
        does); the measured step's unexplained excess is not a drag with a fix."""
        drags = {k: t for k, t in self.breakdown.items() if k not in ("compute", MEASURED_TERM) and t > 0}
        return max(drags, key=drags.get) if drags else ""

    @property
    def memory_per_gpu_bytes(self) -> dict[str, float]:
        return self.memory.as_dict()

    @property
    def fits_memory(self) -> bool:
        return self.memory.fits

    @property
    def train_days(self) -> float:
        return self.train_time_s / 86400.0

    @property
    def facility_energy_kwh(self) -> float:
        return self.facility_energy_j / carbon.J_PER_KWH


def at_clock(dev: Device, clock: float) -> Device:
    """The device at ``clock`` (a fraction of its full clock, under a power cap): its FLOP
    rates scale, its memory bandwidth does not (only compute-bound work slows)."""
    if clock == 1.0:
        return dev
    return replace(dev, matmul_flops=dev.matmul_flops * clock, attention_flops=dev.attention_flops * clock)


def _step_terms(plan: RunPlan, dev: Device, links: Links) -> tuple[dict[str, float], float]:
    """Seconds per step of every term, and the compute that could hide input reads."""
    m = plan.microbatches
    layers = plan.layers_per_stage
    layer = layer_compute_times(plan, dev)
    fwd_layer = layer["gemm_forward"] + layer["attention_forward"] + layer["other"] / 3.0
    attention_backward = ATTENTION_BACKWARD_FACTOR if plan.flash_attention else 2.0
    bwd_layer = (2.0 * layer["gemm_forward"] + attention_backward * layer["attention_forward"]
                 + 2.0 * layer["other"] / 3.0)
    head = head_time(plan, dev)
    forward_mb = fwd_layer * layers + head / 3.0
    backward_mb = bwd_layer * layers + 2.0 * head / 3.0
    if plan.recompute == "full":
        recompute_mb = fwd_layer * layers
    elif plan.recompute == "selective":
        recompute_mb = layer["attention_forward"] * layers
    elif plan.recompute == "op":
        recompute_mb = (0.5 * layer["gemm_forward"] + layer["other"] / 3.0) * layers
    else:
        recompute_mb = 0.0
    tp_mb = tensor_parallel_time(plan, links)
    attention_mb = (1.0 + attention_backward) * layer["attention_forward"] * layers
    cp_mb = context_parallel_time(plan, links, attention_mb)
    slot = forward_mb + backward_mb + recompute_mb + tp_mb + cp_mb
    traffic = data_parallel_traffic(plan, links, forward_mb, backward_mb + recompute_mb)
    terms = {
        "compute": m * (forward_mb + backward_mb),
        "recompute": m * recompute_mb,
        "tensor_parallel": m * tp_mb,
        "context_parallel": m * cp_mb,
        "pipeline_bubble": pipeline_bubble_time(plan, slot),
        "pipeline_p2p": pipeline_p2p_time(plan, links),
        "data_parallel": exposed_data_parallel_time(plan, traffic),
        "optimizer": optimizer_time(plan, dev),
        "data_loading": 0.0,
        "checkpoint": 0.0,
        MEASURED_TERM: 0.0,
    }
    return terms, m * slot


@v.public
def predict(plan: RunPlan, catalog: Catalog | None = None) -> Prediction:
    """The step time and what drags it, throughput, MFU/HFU, memory, days, energy, CO2e, cost.

    ``catalog`` resolves the plan's preset keys (default: :func:`workbench.catalog.default_catalog`,
    the built-in presets).
    """
    if not isinstance(plan, RunPlan):
        raise v.InputError("plan", f"must be a RunPlan, got {type(plan).__name__}")
    # through a chain, so a catalog's KeyError for an unknown key becomes an InputError
    catalog = default_catalog() if catalog is None else chain(check_catalog(catalog))
    hw = catalog.hardware(plan.hardware)
    dev = resolve_device(plan, hw)
    links = resolve_links(plan, hw, catalog)
    uncapped, uncapped_busy = _step_terms(plan, dev, links)
    uncapped_step = sum(uncapped.values())
    notes: list[str] = []

    clock = 1.0
    tdp = dev.tdp_w
    if plan.power_cap_w is not None:
        if tdp is None:
            raise v.InputError("power_cap_w", f"{hw.name} has no TDP in its preset, so a cap cannot be modelled")
        try:
            clock = float(pw.clock_fraction_for_cap(plan.power_cap_w, tdp, plan.static_fraction,
                                                    plan.min_voltage_fraction))
        except v.InputError as exc:
            raise v.InputError("power_cap_w", str(exc).split(": ", 1)[-1]) from None
    # uncapped, the step is the one just computed; capped, the device runs at its clock
    terms, busy = (dict(uncapped), uncapped_busy) if clock == 1.0 else _step_terms(plan, at_clock(dev, clock), links)
    # The share a lower clock slows, as the power model of workbench.power counts it:
    # t(f) = t(1) x (share / f + 1 - share), measured at the cap (or at half clock uncapped).
    probe = clock if clock < 1.0 else 0.5
    probed = terms if clock < 1.0 else _step_terms(plan, at_clock(dev, probe), links)[0]
    compute_bound_share = min(1.0, max(0.0, (sum(probed.values()) - uncapped_step)
                                       / (uncapped_step * (1.0 / probe - 1.0))))
    if tdp is None:
        notes.append(f"{hw.name} has no TDP in its preset: energy, CO2e and energy cost are 0")
        power_w = 0.0
    else:
        power_w = float(pw.power_at_clock(clock, tdp, plan.static_fraction, plan.min_voltage_fraction))

    if plan.host_overhead_w_per_gpu is not None:
        host = plan.host_overhead_w_per_gpu
    else:
        host = hw.host_power_w or 0.0
        notes.append(f"host power {host:g} W per GPU, from the {hw.name} preset's system figure"
                     if hw.host_power_w is not None
                     else f"{hw.name} has no system power figure: host power not counted (set it to count it)")

    terms["data_loading"] = data_loading_time(plan, busy)
    step = sum(terms.values())
    terms["checkpoint"] = checkpoint_time(plan, step)
    step = sum(terms.values())
    uncapped_tokens_per_s = plan.tokens_per_step / uncapped_step
    model_step = None
    if plan.measured_tokens_per_s is not None:
        model_step, step = step, plan.tokens_per_step / plan.measured_tokens_per_s
        terms[MEASURED_TERM] = max(0.0, step - model_step)
        # the cap slows the measured run as it slows the modelled one
        uncapped_tokens_per_s *= model_step / step
        notes.insert(0, _measured_note(plan, step, model_step))

    tokens_per_s = plan.tokens_per_step / step
    flops_budget = plan.n_gpus * dev.peak_flops
    mfu_value = model_flops_per_token(plan) * tokens_per_s / flops_budget
    hfu_value = hardware_flops_per_token(plan) * tokens_per_s / flops_budget
    train_time = plan.train_tokens / tokens_per_s
    summary = carbon.run_summary(
        plan.n_gpus, train_time, power_w, plan.pue, plan.grid_g_per_kwh,
        plan.energy_price_per_kwh, plan.gpu_hour_price, host,
    )
    memory = memory_per_gpu(plan, dev.mem_capacity)
    fixes = tuple(memory_fixes(plan, dev.mem_capacity)) if not memory.fits else ()
    return Prediction(
        plan=plan, step_time_s=step, breakdown={k: terms[k] for k in TERMS},
        tokens_per_s=tokens_per_s, tokens_per_s_per_gpu=tokens_per_s / plan.n_gpus,
        mfu=mfu_value, hfu=hfu_value, peak_flops=dev.peak_flops, memory=memory, memory_fixes=fixes,
        uncapped_tokens_per_s=uncapped_tokens_per_s,
        compute_bound_share=compute_bound_share, clock_fraction=clock, gpu_power_w=power_w,
        host_power_w_per_gpu=host, energy_known=tdp is not None, train_time_s=train_time,
        gpu_hours=summary.gpu_hours, it_energy_j=summary.it_energy_j,
        facility_energy_j=summary.facility_energy_j, co2e_kg=summary.co2e_kg,
        energy_cost=summary.energy_cost, compute_cost=summary.compute_cost,
        total_cost=summary.total_cost, links=links, notes=tuple(notes), model_step_time_s=model_step,
    )


def _measured_note(plan: RunPlan, step: float, model_step: float) -> str:
    """What the prediction's note says of a measured throughput: its source, and how far the
    measured step is from the modelled one."""
    source = f" from {plan.measured_source}" if plan.measured_source else ""
    rate = plan.measured_tokens_per_s
    text = (f"uses a measured throughput{source}: {rate:,.4g} tokens/s, a {step:.4g} s step, against the "
            f"model's {plan.tokens_per_step / model_step:,.4g} tokens/s ({model_step:.4g} s)")
    if step >= model_step:
        return text + f"; the {step - model_step:.3g} s the model does not explain is the measured-vs-model term"
    return text + (f"; the run is {1.0 - step / model_step:.1%} faster than the model, so the breakdown is the "
                   "model's step and sums to more than the measured one")


#: What an MFU says, by band: published large dense runs sit at 35-55% when well tuned.
MFU_RATINGS: dict[str, str] = {
    "impossible": "impossible: check the peak and the inputs",
    "excellent": "excellent",
    "very good": "very good: above the 35-55% of well-tuned large runs",
    "typical": "typical of well-tuned large runs",
    "low": "low",
}


@v.public
def mfu_rating(mfu: float) -> str:
    """How an MFU compares with published large runs: above 100% impossible (a sparse peak or a
    wrong input), above 60% excellent, 55-60% very good, 35-55% typical, below that low."""
    value = v.number("mfu", mfu)
    if value > 1.0:
        band = "impossible"
    elif value > 0.60:
        band = "excellent"
    elif value > 0.55:
        band = "very good"
    elif value >= 0.35:
        band = "typical"
    else:
        band = "low"
    return MFU_RATINGS[band]


@dataclass(frozen=True)
class WhatIf:
    """One drag removed: the MFU and step time without it."""

    term: str
    label: str
    fix: str
    saved_s: float  # seconds per step
    mfu: float
    step_time_s: float

    def describe(self, base_mfu: float) -> str:
        return f"{self.fix}: {base_mfu:.1%} -> {self.mfu:.1%}"


@v.public
def what_if(plan: RunPlan | Prediction, catalog: Catalog | None = None) -> list[WhatIf]:
    """Each drag removed in turn, largest MFU gain first: the order in which to fix things.

    The drags and what removing them saves are the model's; with a measured throughput they
    come off the measured step (the measured-vs-model excess has no fix, so it is no rung)."""
    v.instance("plan", plan, (RunPlan, Prediction), "a RunPlan or its Prediction")
    p = plan if isinstance(plan, Prediction) else predict(plan, catalog)
    out = []
    for term, seconds in p.breakdown.items():
        if term in ("compute", MEASURED_TERM) or seconds <= 0:
            continue
        step = p.step_time_s - seconds
        if step <= 0:  # a measured step shorter than the model's drag: no rung to stand on
            continue
        out.append(WhatIf(term=term, label=TERM_LABELS[term], fix=TERM_FIXES[term], saved_s=seconds,
                          mfu=p.mfu * p.step_time_s / step, step_time_s=step))
    out.sort(key=lambda w: -w.mfu)
    return out


__all__ = [
    "RunPlan",
    "ModelShape",
    "SHAPE_FIELDS",
    "Prediction",
    "MemoryEstimate",
    "WhatIf",
    "predict",
    "what_if",
    "mfu_rating",
    "memory_per_gpu",
    "TERMS",
    "TERM_LABELS",
    "MEASURED_TERM",
]
