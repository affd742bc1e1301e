"""Model FLOPs utilisation: how much of the GPUs' peak the training arithmetic uses.

Conventions (PaLM appendix B, nanoGPT, MosaicML llm-foundry, torchtitan):

- Model FLOPs per token of a dense decoder = 6N (forward 2N + backward 4N) plus the attention
  score and value products, 12 * L * d * T, when the shape is known (L layers, d = heads x
  head size, T sequence length). The attention term is the *un-halved* count: causal masking
  is not credited, as in PaLM and llm-foundry.
- MFU = model FLOPs per token x tokens/s / (GPUs x peak dense FLOP/s per GPU): a fraction.
- HFU also counts the work that is done twice: full activation recomputation adds one forward
  pass (2N of the 6N), so hardware FLOPs = model FLOPs x 4/3.

Every rate is FLOP/s, every time seconds, throughput tokens/s; fractions are 0..1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import _validate as v

RECOMPUTE_MODES: tuple[str, ...] = ("none", "full")
# Full recomputation re-runs the forward pass: (2 + 4 + 2) / (2 + 4) = 4/3 of the model FLOPs.
RECOMPUTE_FACTOR: dict[str, float] = {"none": 1.0, "full": 4.0 / 3.0}


# -- input helpers -----------------------------------------------------------------------------


def _fractions(name: str, value: object, *, allow_zero: bool) -> tuple[np.ndarray, bool]:
    arr, scalar = v.array(name, value)
    low_ok = arr >= 0 if allow_zero else arr > 0
    if arr.size and not (np.all(low_ok) and np.all(arr <= 1)):
        bracket = "[0, 1]" if allow_zero else "(0, 1]"
        raise v.InputError(name, f"must be in {bracket} everywhere")
    return arr, scalar


# -- FLOPs -------------------------------------------------------------------------------------


@v.public
def flops_per_token(n_params: float, n_layers: int = 0, d_model: int = 0, seq_len: int = 0) -> float:
    """Model FLOPs per trained token (forward + backward): 6N + 12 * L * d * T.

    ``n_params`` is N (count; include embeddings or not, as your MFU convention does).
    The attention term needs all of ``n_layers``, ``d_model`` (heads x head size) and
    ``seq_len``; leave all three at 0 for 6N alone. A partial shape is an error.
    """
    n = v.positive("n_params", n_params)
    shape = {
        "n_layers": v.integer("n_layers", n_layers, minimum=0),
        "d_model": v.integer("d_model", d_model, minimum=0),
        "seq_len": v.integer("seq_len", seq_len, minimum=0),
    }
    given = [k for k, x in shape.items() if x > 0]
    if given and len(given) < 3:
        missing = next(k for k, x in shape.items() if x == 0)
        raise v.InputError(
            missing, f"must be > 0 when {' and '.join(given)} given (the attention term needs all three)"
        )
    return v.scalar_or_array(6.0 * n + 12.0 * shape["n_layers"] * shape["d_model"] * shape["seq_len"], True)


@v.public
def mfu(
    n_params: float,
    tokens_per_s: float | np.ndarray,
    n_gpus: int | np.ndarray,
    peak_flops: float,
    n_layers: int = 0,
    d_model: int = 0,
    seq_len: int = 0,
):
    """Model FLOPs utilisation, a fraction (0.4, not 40).

    ``tokens_per_s`` is the whole job's throughput, ``peak_flops`` the dense peak of one GPU
    (FLOP/s) at the training precision. Vectorised over ``tokens_per_s`` and ``n_gpus``.
    A value above 1 means the inputs are inconsistent (e.g. a sparse peak was expected).
    """
    per_token = flops_per_token(n_params, n_layers, d_model, seq_len)
    tps, s1 = v.array("tokens_per_s", tokens_per_s, non_negative_only=True)
    gpus, s2 = v.whole_numbers("n_gpus", n_gpus)
    peak = v.positive("peak_flops", peak_flops)
    tps, gpus = v.broadcast(tokens_per_s=tps, n_gpus=gpus)
    return v.scalar_or_array(per_token * tps / (gpus * peak), s1 and s2)


@v.public
def tokens_per_s_at_mfu(
    mfu_fraction: float,
    peak_flops: float,
    n_params: float,
    n_layers: int = 0,
    d_model: int = 0,
    seq_len: int = 0,
) -> float:
    """Tokens per second of one GPU running at ``mfu_fraction`` (0.4, not 40) of its dense
    ``peak_flops``: the inverse of :func:`mfu` for one GPU, peak x MFU / FLOPs per token
    (6N, plus the attention term when the shape is given). How a plan turns an assumed MFU
    into a throughput."""
    fraction = v.in_range("mfu_fraction", mfu_fraction, 0.0, 1.0, low_inclusive=False)
    peak = v.positive("peak_flops", peak_flops)
    return float(fraction * peak / flops_per_token(n_params, n_layers, d_model, seq_len))


@v.public
def hfu(
    n_params: float,
    tokens_per_s: float | np.ndarray,
    n_gpus: int | np.ndarray,
    peak_flops: float,
    n_layers: int = 0,
    d_model: int = 0,
    seq_len: int = 0,
    recompute: str = "none",
):
    """Hardware FLOPs utilisation: MFU counting recomputed work too, a fraction.

    ``recompute="full"`` (activation checkpointing of every layer) adds one forward pass,
    so HFU = MFU x 4/3 as llm-foundry reports it; ``"none"`` gives HFU = MFU.
    """
    mode = v.choice("recompute", recompute, RECOMPUTE_MODES)
    base = mfu(n_params, tokens_per_s, n_gpus, peak_flops, n_layers, d_model, seq_len)
    return base * RECOMPUTE_FACTOR[mode]


@v.public
def transformer_params(
    n_layers: int,
    d_model: int,
    vocab_size: int = 0,
    ffn_mult: float = 4,
    gated: bool = False,
    d_ff: int | None = None,
    n_kv_heads: int | None = None,
    n_heads: int | None = None,
    tied_embeddings: bool = True,
) -> int:
    """Parameter count of a bias-free decoder-only transformer (Llama / MPT style).

    Per layer:
    - attention: Q and O projections d x d each; K and V d x (n_kv_heads x head size) each,
      head size d / n_heads. Multi-head attention (n_kv_heads omitted or = n_heads) gives 4d^2;
      grouped-query attention shrinks K and V.
    - MLP with hidden width d_ff (default ``ffn_mult`` x d): 2 * d * d_ff, or 3 * d * d_ff when
      ``gated`` (SwiGLU has gate, up and down projections).
    - two norms with one scale vector of d each (RMSNorm, or LayerNorm without bias).
    Plus a final norm (d), the token embedding (vocab x d) when ``vocab_size`` is given, and a
    separate output head of the same size unless ``tied_embeddings``. No biases, no learned
    position embeddings (rotary and ALiBi have none). Llama-2-7B comes out at 6,738,415,616.
    """
    layers = v.integer("n_layers", n_layers, minimum=1)
    d = v.integer("d_model", d_model, minimum=1)
    vocab = v.integer("vocab_size", vocab_size, minimum=0)
    v.flag("gated", gated)
    v.flag("tied_embeddings", tied_embeddings)
    if d_ff is None:
        hidden = v.positive("ffn_mult", ffn_mult) * d
    else:
        hidden = v.integer("d_ff", d_ff, minimum=1)

    heads = None
    if n_heads is not None:
        heads = v.integer("n_heads", n_heads, minimum=1)
        if d % heads:
            raise v.InputError("n_heads", f"must divide d_model={d}, got {heads}")
    if n_kv_heads is None:
        kv_width = d
    else:
        if heads is None:
            raise v.InputError("n_heads", "must be given with n_kv_heads (head size = d_model / n_heads)")
        kv = v.integer("n_kv_heads", n_kv_heads, minimum=1, maximum=heads)
        if heads % kv:
            raise v.InputError("n_kv_heads", f"must divide n_heads={heads}, got {kv}")
        kv_width = kv * (d // heads)

    attention = 2 * d * d + 2 * d * kv_width
    mlp = (3 if gated else 2) * d * hidden
    norms = 2 * d
    embeddings = vocab * d * (1 if tied_embeddings else 2)
    return int(round(layers * (attention + mlp + norms) + d + embeddings))


# -- time and throughput -----------------------------------------------------------------------


@v.public
def step_time(flops_per_step: float, n_gpus, peak_flops: float, mfu):
    """Seconds per optimiser step: FLOPs per step / (GPUs x peak FLOP/s x MFU).

    ``flops_per_step`` is model FLOPs (e.g. flops_per_token x tokens per step). Vectorised over
    ``n_gpus`` and ``mfu``.
    """
    work = v.positive("flops_per_step", flops_per_step)
    gpus, s1 = v.whole_numbers("n_gpus", n_gpus)
    peak = v.positive("peak_flops", peak_flops)
    util, s2 = _fractions("mfu", mfu, allow_zero=False)
    gpus, util = v.broadcast(n_gpus=gpus, mfu=util)
    return v.scalar_or_array(work / (gpus * peak * util), s1 and s2)


@v.public
def tokens_per_s_from_mfu(
    n_params: float,
    mfu,
    n_gpus,
    peak_flops: float,
    n_layers: int = 0,
    d_model: int = 0,
    seq_len: int = 0,
):
    """Job throughput in tokens/s that a given MFU implies (the inverse of :func:`mfu`).

    Vectorised over ``mfu`` and ``n_gpus``.
    """
    per_token = flops_per_token(n_params, n_layers, d_model, seq_len)
    util, s1 = _fractions("mfu", mfu, allow_zero=True)
    gpus, s2 = v.whole_numbers("n_gpus", n_gpus)
    peak = v.positive("peak_flops", peak_flops)
    util, gpus = v.broadcast(mfu=util, n_gpus=gpus)
    return v.scalar_or_array(util * gpus * peak / per_token, s1 and s2)


@v.public
def training_time(total_tokens: float, tokens_per_s):
    """Seconds to train on ``total_tokens`` at ``tokens_per_s`` (vectorised over the rate)."""
    tokens = v.non_negative("total_tokens", total_tokens)
    rate, scalar = v.array("tokens_per_s", tokens_per_s, positive_only=True)
    return v.scalar_or_array(tokens / rate, scalar)


# -- where a step's time goes --------------------------------------------------------------------


@dataclass(frozen=True)
class StepBreakdown:
    """One training step split into its parts, all in seconds.

    ``total_s = compute_s + bubble_s + exposed_comm_s + dataloader_wait_s``.
    ``bubble_fraction`` is the idle share of the pipelined compute span (compute + bubble),
    (p - 1) / (m + p - 1).
    """

    compute_s: float  # useful compute on one GPU, as if there were no pipeline
    comm_s: float  # all communication time, before overlap
    overlap: float  # share of comm_s hidden behind compute, 0..1
    exposed_comm_s: float  # comm_s * (1 - overlap)
    bubble_s: float  # pipeline fill and drain
    bubble_fraction: float
    dataloader_wait_s: float
    total_s: float

    @property
    def compute_fraction(self) -> float:
        """Share of the step spent on useful compute, compute_s / total_s."""
        return self.compute_s / self.total_s


@v.public
def step_decomposition(
    compute_s: float,
    comm_s: float,
    overlap: float = 0.0,
    pipeline_stages: int = 1,
    microbatches: int = 1,
    dataloader_wait_s: float = 0.0,
) -> StepBreakdown:
    """Split a step into compute, exposed communication, pipeline bubble and input stalls.

    Pipeline bubble (GPipe / 1F1B schedules): with p stages and m microbatches, each
    microbatch takes compute_s / m on a stage and the schedule spans m + p - 1 such slots,
    of which p - 1 are fill and drain. So the bubble is (p - 1) / (m + p - 1) of the pipelined
    span, and its time is compute_s * (p - 1) / m. Communication overlapped with compute costs
    nothing; the rest, comm_s * (1 - overlap), adds to the step, as does any data-loader wait.
    """
    compute = v.positive("compute_s", compute_s)
    comm = v.non_negative("comm_s", comm_s)
    hidden = v.fraction("overlap", overlap)
    p = v.integer("pipeline_stages", pipeline_stages, minimum=1)
    m = v.integer("microbatches", microbatches, minimum=1)
    wait = v.non_negative("dataloader_wait_s", dataloader_wait_s)

    exposed = comm * (1.0 - hidden)
    bubble = compute * (p - 1) / m
    return StepBreakdown(
        compute_s=compute,
        comm_s=comm,
        overlap=hidden,
        exposed_comm_s=exposed,
        bubble_s=bubble,
        bubble_fraction=(p - 1) / (m + p - 1),
        dataloader_wait_s=wait,
        total_s=compute + bubble + exposed + wait,
    )


@v.public
def predicted_mfu(ideal_mfu: float, breakdown: StepBreakdown) -> float:
    """MFU once the step's overheads are counted: ideal MFU x compute_s / total_s.

    ``ideal_mfu`` is the efficiency of the compute alone (kernel efficiency), a fraction.
    """
    ideal = v.fraction("ideal_mfu", ideal_mfu, allow_zero=False)
    if not isinstance(breakdown, StepBreakdown):
        raise v.InputError("breakdown", f"must be a StepBreakdown, got {type(breakdown).__name__}")
    return ideal * breakdown.compute_s / breakdown.total_s
