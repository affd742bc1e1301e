"""Storage traffic of a training run: reading the data and writing checkpoints.

Bandwidths are bytes/s (decimal prefixes at the UI edge), sizes bytes, times seconds.

Checkpoint size convention (mixed-precision training with Adam, as Megatron-LM and DeepSpeed
save it): per parameter, BF16/FP16 weights 2 bytes + FP32 master weights 4 + Adam first
moment 4 + second moment 4 = 14 bytes. Gradients are not saved. The 16 bytes/param often
quoted (ZeRO paper) is the *in-memory* training state, which also holds 2-byte gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench import _validate as v

# Bytes per parameter of a mixed-precision Adam checkpoint: 2 (weights) + 4 (FP32 master)
# + 4 (Adam m) + 4 (Adam v).
CHECKPOINT_BYTES_PER_PARAM_MIXED_ADAM = 14.0
# Bytes per parameter of the training state in GPU memory (the above plus 2-byte gradients).
TRAINING_STATE_BYTES_PER_PARAM_MIXED_ADAM = 16.0
# Weights alone in BF16, e.g. an inference export.
WEIGHTS_ONLY_BYTES_PER_PARAM_BF16 = 2.0


@v.public
def required_read_bandwidth(n_gpus, tokens_per_s_per_gpu, bytes_per_token: float):
    """Sustained read rate from storage in bytes/s that keeps the job fed.

    = n_gpus x tokens/s per GPU x bytes per token. ``bytes_per_token`` is what is read per
    trained token: 2 for pre-tokenised uint16 ids (vocabulary < 65,536), 4 for int32 ids,
    roughly 4 for raw English text tokenised on the fly. GPUs of one tensor- or
    pipeline-parallel group share a sample, so ``tokens_per_s_per_gpu`` is the job's throughput
    divided by all GPUs, and the product is the job's read rate. Vectorised over the first two.
    """
    gpus, s1 = v.whole_numbers("n_gpus", n_gpus)
    rate, s2 = v.array("tokens_per_s_per_gpu", tokens_per_s_per_gpu, non_negative_only=True)
    size = v.positive("bytes_per_token", bytes_per_token)
    gpus, rate = v.broadcast(n_gpus=gpus, tokens_per_s_per_gpu=rate)
    return v.scalar_or_array(gpus * rate * size, s1 and s2)


@v.public
def checkpoint_bytes(n_params: float, bytes_per_param: float = CHECKPOINT_BYTES_PER_PARAM_MIXED_ADAM) -> float:
    """Size of one full checkpoint in bytes: n_params x bytes_per_param (default 14, see module)."""
    n = v.positive("n_params", n_params)
    per = v.positive("bytes_per_param", bytes_per_param)
    return n * per


@v.public
def checkpoint_write_bandwidth(checkpoint_bytes: float, interval_s):
    """Average write rate in bytes/s of one checkpoint every ``interval_s`` seconds (vectorised).

    A synchronous checkpoint needs far more while it is being written: see
    :func:`storage_traffic` ``write_window_s``.
    """
    size = v.non_negative("checkpoint_bytes", checkpoint_bytes)
    interval, scalar = v.array("interval_s", interval_s, positive_only=True)
    return v.scalar_or_array(size / interval, scalar)


@dataclass(frozen=True)
class StorageTraffic:
    """Storage load of a run, bytes/s unless named otherwise."""

    read_bytes_per_s: float  # training data
    checkpoint_bytes: float  # one checkpoint, bytes
    checkpoint_write_bytes_per_s: float  # averaged over the checkpoint interval
    total_bytes_per_s: float  # read + averaged checkpoint write
    checkpoint_burst_bytes_per_s: float | None  # to write one checkpoint within write_window_s


@v.public
def storage_traffic(
    n_gpus: int,
    tokens_per_s_per_gpu: float,
    bytes_per_token: float,
    n_params: float,
    checkpoint_interval_s: float,
    bytes_per_param: float = CHECKPOINT_BYTES_PER_PARAM_MIXED_ADAM,
    write_window_s: float | None = None,
) -> StorageTraffic:
    """Summary of what storage must sustain: data reads plus periodic checkpoint writes.

    ``write_window_s``, if given, is how long a checkpoint may take to write (e.g. the stall
    you accept for a blocking save); the burst rate is then checkpoint bytes / window.
    """
    read = required_read_bandwidth(v.gpu_count("n_gpus", n_gpus),
                                   v.non_negative("tokens_per_s_per_gpu", tokens_per_s_per_gpu),
                                   bytes_per_token)
    size = checkpoint_bytes(n_params, bytes_per_param)
    write = checkpoint_write_bandwidth(size, v.positive("checkpoint_interval_s", checkpoint_interval_s))
    burst = None
    if write_window_s is not None:
        window = v.positive("write_window_s", write_window_s)
        burst = size / window
    return StorageTraffic(
        read_bytes_per_s=read,
        checkpoint_bytes=size,
        checkpoint_write_bytes_per_s=write,
        total_bytes_per_s=read + write,
        checkpoint_burst_bytes_per_s=burst,
    )
