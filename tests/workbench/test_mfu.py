"""MFU, HFU, FLOP counts, parameter counts and the step-time decomposition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bad_input import assert_rejected, bad_input_cases
from hypothesis import given
from hypothesis import strategies as st

from workbench import mfu as m
from workbench._validate import InputError

H100_BF16 = 989.5e12  # the peak llm-foundry uses for H100 BF16

MPT_7B = dict(n_params=6_658_859_008, n_layers=32, d_model=4096, seq_len=2048)
MPT_70B = dict(n_params=64_862_437_376, n_layers=80, d_model=8192, seq_len=2048)


# -- reference values ----------------------------------------------------------------------------


def test_mpt_7b_mfu_matches_llm_foundry_table():
    value = m.mfu(tokens_per_s=85_144, n_gpus=8, peak_flops=H100_BF16, **MPT_7B)
    assert abs(100 * value - 46.44) <= 0.01
    # No checkpointing: HFU equals MFU.
    assert m.hfu(tokens_per_s=85_144, n_gpus=8, peak_flops=H100_BF16, **MPT_7B) == value


def test_mpt_70b_mfu_and_hfu_match_llm_foundry_table():
    kwargs = dict(tokens_per_s=66_523, n_gpus=64, peak_flops=H100_BF16, **MPT_70B)
    assert abs(100 * m.mfu(**kwargs) - 42.57) <= 0.01
    assert abs(100 * m.hfu(**kwargs, recompute="full") - 56.76) <= 0.01
    assert m.hfu(**kwargs, recompute="full") == pytest.approx(m.mfu(**kwargs) * 4 / 3)


def test_flops_per_token_is_6n_without_shape():
    assert m.flops_per_token(1e9) == 6e9


def test_palm_540b_attention_term():
    # PaLM 540B: 118 layers, 48 heads x 256 = 12288, sequence 2048; appendix B counts
    # 6N + 12 L H Q T. At this size the attention term is about 1% of 6N.
    n = 540.35e9
    with_attention = m.flops_per_token(n, 118, 12288, 2048)
    term = with_attention - 6 * n
    assert term == 12 * 118 * 12288 * 2048
    assert 0.01 < term / (6 * n) < 0.02


def test_attention_term_grows_linearly_with_sequence():
    base = m.flops_per_token(1e9)
    a = m.flops_per_token(1e9, 24, 2048, 1024) - base
    b = m.flops_per_token(1e9, 24, 2048, 2048) - base
    assert b == pytest.approx(2 * a)


@pytest.mark.parametrize(
    "given_shape, missing",
    [
        (dict(n_layers=32), "d_model"),
        (dict(n_layers=32, d_model=4096), "seq_len"),
        (dict(d_model=4096, seq_len=2048), "n_layers"),
        (dict(seq_len=2048), "n_layers"),
    ],
)
def test_partial_shape_names_the_missing_dimension(given_shape, missing):
    with pytest.raises(InputError) as info:
        m.flops_per_token(1e9, **given_shape)
    assert info.value.parameter == missing


def test_llama2_7b_parameter_count():
    n = m.transformer_params(32, 4096, vocab_size=32_000, gated=True, d_ff=11_008, tied_embeddings=False)
    assert n == 6_738_415_616  # Hugging Face count of meta-llama/Llama-2-7b-hf


def test_llama3_8b_parameter_count_with_gqa():
    n = m.transformer_params(
        32, 4096, vocab_size=128_256, gated=True, d_ff=14_336,
        n_heads=32, n_kv_heads=8, tied_embeddings=False,
    )
    assert n == 8_030_261_248  # Hugging Face count of meta-llama/Meta-Llama-3-8B


def test_transformer_params_convention_parts():
    d, layers = 512, 4
    # MHA, non-gated 4d MLP, no vocabulary: 12 d^2 + 2 d per layer, plus the final norm.
    assert m.transformer_params(layers, d) == layers * (12 * d * d + 2 * d) + d
    # Tied embeddings count once, untied twice.
    tied = m.transformer_params(layers, d, vocab_size=1000)
    untied = m.transformer_params(layers, d, vocab_size=1000, tied_embeddings=False)
    assert untied - tied == 1000 * d
    # Gated MLP at the same d_ff has 3/2 the MLP weights.
    plain = m.transformer_params(layers, d, d_ff=1024)
    gated = m.transformer_params(layers, d, d_ff=1024, gated=True)
    assert gated - plain == layers * d * 1024
    # GQA shrinks K and V; n_kv_heads = n_heads is MHA.
    assert m.transformer_params(layers, d, n_heads=8, n_kv_heads=8) == m.transformer_params(layers, d)
    assert m.transformer_params(layers, d, n_heads=8, n_kv_heads=2) < m.transformer_params(layers, d)


def test_step_time_and_tokens_per_s_invert_mfu():
    per_token = m.flops_per_token(**MPT_7B)
    tps = m.tokens_per_s_from_mfu(mfu=0.4644, n_gpus=8, peak_flops=H100_BF16, **MPT_7B)
    assert m.mfu(tokens_per_s=tps, n_gpus=8, peak_flops=H100_BF16, **MPT_7B) == pytest.approx(0.4644)
    tokens_per_step = 4 * 2048 * 8
    t = m.step_time(per_token * tokens_per_step, 8, H100_BF16, 0.4644)
    assert t == pytest.approx(tokens_per_step / tps)


def test_training_time():
    assert m.training_time(1e12, 1e6) == pytest.approx(1e6)
    assert np.allclose(m.training_time(1e12, [1e6, 2e6]), [1e6, 5e5])


def test_mfu_vectorised_over_gpus_and_throughput():
    gpus = np.array([8, 16, 32])
    out = m.mfu(1e9, 1e5 * gpus, gpus, 1e15)
    assert isinstance(out, np.ndarray)
    assert np.allclose(out, 6e9 * 1e5 / 1e15)
    assert isinstance(m.mfu(1e9, 1e5, 8, 1e15), float)


# -- step decomposition --------------------------------------------------------------------------


def test_step_decomposition_pieces():
    b = m.step_decomposition(1.0, 0.4, overlap=0.75, pipeline_stages=4, microbatches=8, dataloader_wait_s=0.05)
    assert b.exposed_comm_s == pytest.approx(0.1)
    assert b.bubble_s == pytest.approx(3 / 8)
    assert b.bubble_fraction == pytest.approx(3 / 11)
    assert b.total_s == pytest.approx(1.0 + 3 / 8 + 0.1 + 0.05)
    assert m.predicted_mfu(0.6, b) == pytest.approx(0.6 / b.total_s)


def test_no_pipeline_no_comm_keeps_ideal_mfu():
    b = m.step_decomposition(2.0, 0.0)
    assert b.bubble_s == 0 and b.bubble_fraction == 0 and b.total_s == 2.0
    assert m.predicted_mfu(0.5, b) == 0.5


@given(
    compute=st.floats(1e-3, 1e3),
    p=st.integers(1, 64),
    mb=st.integers(1, 512),
)
def test_bubble_fraction_of_pipelined_span(compute, p, mb):
    # bubble / (compute + bubble) is the (p - 1) / (m + p - 1) of the schedule.
    b = m.step_decomposition(compute, 0.0, pipeline_stages=p, microbatches=mb)
    assert b.bubble_s / (b.compute_s + b.bubble_s) == pytest.approx(b.bubble_fraction, rel=1e-9, abs=1e-12)


@given(
    comm=st.floats(0, 10),
    overlap=st.floats(0, 1),
    wait=st.floats(0, 1),
    ideal=st.floats(0.01, 1),
)
def test_predicted_mfu_never_exceeds_ideal(comm, overlap, wait, ideal):
    b = m.step_decomposition(1.0, comm, overlap=overlap, dataloader_wait_s=wait)
    assert 0 < m.predicted_mfu(ideal, b) <= ideal


@given(
    n=st.floats(1e6, 1e12),
    tps=st.floats(1.0, 1e8),
    gpus=st.integers(1, 4096),
)
def test_hfu_full_is_four_thirds_mfu(n, tps, gpus):
    kwargs = dict(n_params=n, tokens_per_s=tps, n_gpus=gpus, peak_flops=1e15)
    assert m.hfu(**kwargs, recompute="full") == pytest.approx(m.mfu(**kwargs) * 4 / 3)
    assert m.hfu(**kwargs) == m.mfu(**kwargs)


# -- bad input -----------------------------------------------------------------------------------


CASES = [
    (m.flops_per_token, dict(n_params=1e9, n_layers=2, d_model=64, seq_len=128),
     {"n_params": [0, -1], "n_layers": [-1, 1.5], "d_model": [-1], "seq_len": [-1]}),
    (m.mfu, dict(n_params=1e9, tokens_per_s=1e4, n_gpus=8, peak_flops=1e15),
     {"n_params": [0, -1], "tokens_per_s": [-1], "n_gpus": [0, -8, 2.5], "peak_flops": [0, -1]}),
    (m.hfu, dict(n_params=1e9, tokens_per_s=1e4, n_gpus=8, peak_flops=1e15, recompute="full"),
     {"n_params": [0], "tokens_per_s": [-1], "n_gpus": [0], "peak_flops": [0]}),
    (m.transformer_params, dict(n_layers=2, d_model=64, vocab_size=100, d_ff=256,
                                n_heads=8, n_kv_heads=2),
     {"n_layers": [0, -1], "d_model": [0], "vocab_size": [-1], "d_ff": [0], "n_heads": [0, 7],
      "n_kv_heads": [0, 3, 16]}),
    (m.step_time, dict(flops_per_step=1e18, n_gpus=8, peak_flops=1e15, mfu=0.4),
     {"flops_per_step": [0, -1], "n_gpus": [0], "peak_flops": [0], "mfu": [0, -0.1, 1.5]}),
    (m.tokens_per_s_from_mfu, dict(n_params=1e9, mfu=0.4, n_gpus=8, peak_flops=1e15),
     {"n_params": [0], "mfu": [-0.1, 1.5], "n_gpus": [0], "peak_flops": [0]}),
    (m.training_time, dict(total_tokens=1e12, tokens_per_s=1e6),
     {"total_tokens": [-1], "tokens_per_s": [0, -1]}),
    (m.step_decomposition, dict(compute_s=1.0, comm_s=0.5, overlap=0.5, pipeline_stages=2,
                                microbatches=4, dataloader_wait_s=0.0),
     {"compute_s": [0, -1], "comm_s": [-1], "overlap": [-0.1, 1.1], "pipeline_stages": [0, 1.5],
      "microbatches": [0], "dataloader_wait_s": [-1]}),
]


NONE_ALLOWED = {"d_ff", "n_kv_heads"}  # None means "not given" for these


@pytest.mark.parametrize("func, good, param, bad", list(bad_input_cases(CASES, NONE_ALLOWED)))
def test_bad_input_names_the_parameter(func, good, param, bad):
    assert_rejected(func, good, param, bad)


@pytest.mark.parametrize("bad", ["partial", "FULL", 1, None, True])
def test_hfu_recompute_must_be_a_known_mode(bad):
    with pytest.raises(InputError) as info:
        m.hfu(1e9, 1e4, 8, 1e15, recompute=bad)
    assert info.value.parameter == "recompute"


@pytest.mark.parametrize("param", ["gated", "tied_embeddings"])
@pytest.mark.parametrize("bad", [1, "yes", None, float("nan")])
def test_transformer_params_flags_are_bools(param, bad):
    with pytest.raises(InputError) as info:
        m.transformer_params(2, 64, **{param: bad})
    assert info.value.parameter == param


def test_n_kv_heads_needs_n_heads():
    with pytest.raises(InputError) as info:
        m.transformer_params(2, 64, n_kv_heads=2)
    assert info.value.parameter == "n_heads"


def test_ffn_mult_checked_when_used():
    for bad in (0, -1, float("nan"), "4", True):
        with pytest.raises(InputError) as info:
            m.transformer_params(2, 64, ffn_mult=bad)
        assert info.value.parameter == "ffn_mult"


def test_predicted_mfu_bad_input():
    b = m.step_decomposition(1.0, 0.1)
    for bad in (0, -0.1, 1.5, float("nan"), "0.5", True):
        with pytest.raises(InputError) as info:
            m.predicted_mfu(bad, b)
        assert info.value.parameter == "ideal_mfu"
    with pytest.raises(InputError) as info:
        m.predicted_mfu(0.5, {"compute_s": 1.0})
    assert info.value.parameter == "breakdown"


def test_shapes_that_do_not_broadcast_name_a_parameter():
    with pytest.raises(InputError) as info:
        m.mfu(1e9, [1e4, 2e4], [8, 16, 32], 1e15)
    assert info.value.parameter == "tokens_per_s"


def test_nan_never_leaks():
    for args in [(1e9, [1e4, math.nan], 8, 1e15), (1e9, 1e4, [8, math.inf], 1e15)]:
        with pytest.raises(ValueError):
            m.mfu(*args)


@given(st.floats(0.01, 1.0), st.floats(1e12, 1e16), st.floats(1e8, 1e12), st.integers(1, 4096))
def test_tokens_per_s_at_mfu_inverts_mfu(fraction, peak, n_params, n_gpus):
    per_gpu = m.tokens_per_s_at_mfu(fraction, peak, n_params)
    assert m.mfu(n_params, per_gpu * n_gpus, n_gpus, peak) == pytest.approx(fraction, rel=1e-9)


def test_tokens_per_s_at_mfu_for_an_8b_model_on_h100():
    # 40% of 989.5 TFLOP/s over 6 x 8e9 FLOPs per token
    assert m.tokens_per_s_at_mfu(0.4, 989.5e12, 8e9) == pytest.approx(8245.83, rel=1e-5)
    # with the attention term (32 layers, width 4096, 8k context) a token costs more
    assert m.tokens_per_s_at_mfu(0.4, 989.5e12, 8e9, 32, 4096, 8192) < 8245.0


@pytest.mark.parametrize(("name", "kwargs"), [
    ("mfu_fraction", {"mfu_fraction": 0.0}), ("mfu_fraction", {"mfu_fraction": 1.5}),
    ("mfu_fraction", {"mfu_fraction": "40%"}), ("peak_flops", {"peak_flops": -1.0}),
    ("n_params", {"n_params": 0.0}),
])
def test_tokens_per_s_at_mfu_rejects_bad_input(name, kwargs):
    args = {"mfu_fraction": 0.4, "peak_flops": 989.5e12, "n_params": 8e9} | kwargs
    with pytest.raises(InputError) as info:
        m.tokens_per_s_at_mfu(**args)
    assert info.value.parameter == name
