"""Training-log parsing (workbench.trainlog) on the project's own fixture logs.

Each fixture in tests/fixtures/trainlogs is written in a real framework's format with made-up
numbers, and carries the noise real logs do (prefixes, colour codes, warnings, tracebacks,
evaluation lines, other ranks' copies) plus deliberately malformed step lines.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench._validate import InputError
from workbench.trainlog import (
    FRAMEWORKS,
    TrainLog,
    TrainLogError,
    TrainStep,
    parse_training_log,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trainlogs"
EXACT = 1e-12  # relative tolerance: the numbers are read, not estimated


def load(name: str, **kwargs) -> TrainLog:
    return parse_training_log((FIXTURES / name).read_text(encoding="utf-8"), **kwargs)


def by_step(log: TrainLog) -> dict[int, TrainStep]:
    return {s.step: s for s in log.steps}


def reasons_at(notes) -> dict[int, str]:
    return {n.line: n.reason for n in notes}


# -- Megatron-LM -------------------------------------------------------------------------
def test_megatron_reads_steps_and_converts_to_si():
    log = load("megatron_core.log")
    assert log.framework == "megatron"
    assert [s.step for s in log.steps] == [10, 20, 60]
    s10 = by_step(log)[10]
    assert s10.line == 11
    assert s10.step_time_s == pytest.approx(2.048, rel=EXACT)
    assert s10.flops_per_gpu == pytest.approx(385.5e12, rel=EXACT)
    assert s10.tflops_per_gpu == pytest.approx(385.5, rel=EXACT)
    assert s10.loss == pytest.approx(9.875, rel=EXACT)
    assert s10.global_batch == 256
    assert s10.mfu is None  # Megatron does not print it
    # batch-generator timer (max over ranks, 12.50 ms) is the step's wait for data
    assert s10.data_wait == pytest.approx(0.0125, rel=EXACT)
    assert by_step(log)[20].data_wait is None


def test_megatron_current_average_takes_current():
    s20 = by_step(load("megatron_core.log"))[20]
    assert s20.step_time_s == pytest.approx(2.0, rel=EXACT)  # "2000.0/2024.0"
    assert s20.flops_per_gpu == pytest.approx(394.8e12, rel=EXACT)  # "394.8/390.1"


def test_megatron_tokens_from_global_batch_and_seq_length_of_the_argument_dump():
    log = load("megatron_core.log")
    assert log.seq_len == 4096 and log.n_gpus == 16
    s10, s20, s60 = log.steps
    # 256 samples x 4096 tokens / 2.048 s, and per GPU over 16 GPUs
    assert s10.tokens_per_s == pytest.approx(512_000.0, rel=EXACT)
    assert s10.tokens_per_s_per_gpu == pytest.approx(32_000.0, rel=EXACT)
    assert s20.tokens_per_s == pytest.approx(524_288.0, rel=EXACT)
    assert s60.tokens_per_s_per_gpu == pytest.approx(64_000.0, rel=EXACT)
    assert s10.derived == ("tokens_per_s", "tokens_per_s_per_gpu")


def test_megatron_without_seq_length_leaves_tokens_absent():
    text = (FIXTURES / "megatron_core.log").read_text()
    text = "\n".join(ln for ln in text.splitlines() if "seq_length" not in ln)
    log = parse_training_log(text)
    assert log.seq_len is None
    assert all(s.tokens_per_s is None and s.tokens_per_s_per_gpu is None for s in log.steps)
    # the caller may say it instead
    given_len = parse_training_log(text, seq_len=2048)
    assert by_step(given_len)[10].tokens_per_s == pytest.approx(256 * 2048 / 2.048, rel=EXACT)


def test_megatron_unreadable_lines_have_line_numbers_and_reasons():
    log = load("megatron_core.log")
    bad = reasons_at(log.unreadable)
    assert set(bad) == {17, 22, 23}
    assert "elapsed time per iteration" in bad[17] and "'abc'" in bad[17]
    assert "nan" in bad[22]  # lm loss: nan is never stored
    assert "too large" in bad[23]  # 1.5e999 overflows


def test_megatron_noise_is_skipped_with_reasons():
    log = load("megatron_core.log")
    skipped = reasons_at(log.skipped)
    assert skipped[1] == "configuration line"
    assert skipped[4] == "configuration line"
    assert skipped[7] == skipped[8] == "warning"
    assert [skipped[n] for n in (18, 19, 20)] == ["traceback"] * 3
    assert skipped[21] == "error message"
    assert skipped[12] == skipped[13] == "timer breakdown line"
    assert skipped[25].startswith("evaluation")
    assert 14 not in skipped  # batch-generator: read into step 10
    summary = log.skipped_reasons()
    assert summary["traceback"] == 3
    assert sum(summary.values()) == len(log.skipped)


def test_megatron_deepspeed_merges_both_kinds_of_line():
    log = load("megatron_deepspeed.log")
    assert log.framework == "megatron-deepspeed"
    assert [s.step for s in log.steps] == [10, 20, 30]
    s10 = by_step(log)[10]
    assert s10.step_time_s == pytest.approx(1.28, rel=EXACT)
    assert s10.samples_per_s == pytest.approx(100.0, rel=EXACT)  # Megatron's, not DeepSpeed's 101
    assert s10.tokens_per_s_per_gpu == pytest.approx(25_600.0, rel=EXACT)  # tgs
    assert s10.flops_per_gpu == pytest.approx(180.25e12, rel=EXACT)  # TFLOPs
    # samples/s x "actual seqlen" 2048
    assert s10.tokens_per_s == pytest.approx(204_800.0, rel=EXACT)
    assert s10.derived == ("tokens_per_s",)
    s30 = by_step(log)[30]  # only DeepSpeed's throughput timer printed step 30
    assert s30.samples_per_s == pytest.approx(103.0, rel=EXACT)
    assert s30.tokens_per_s is None and s30.step_time_s is None
    assert log.duplicates_dropped == 0


def test_nemo_variant():
    log = load("nemo.log")
    assert log.framework == "nemo"
    s9, s10 = log.steps
    assert (s9.step, s10.step) == (9, 10)
    assert s9.step_time_s == pytest.approx(1.25, rel=EXACT)  # "train_step_timing in s"
    assert s9.loss == pytest.approx(10.63, rel=EXACT)
    assert s10.flops_per_gpu == pytest.approx(420e12, rel=EXACT)
    skipped = reasons_at(log.skipped)
    assert skipped[2] == "warning"  # [NeMo W ...]
    assert skipped[4] == "progress bar"


# -- DeepSpeed ---------------------------------------------------------------------------
def test_deepspeed_throughput_timer_step_lines_and_flops_profiler():
    log = load("deepspeed.log")
    assert log.framework == "deepspeed"
    assert [s.step for s in log.steps] == [5, 10, 12]
    s5, s10, s12 = log.steps
    assert s5.samples_per_s == pytest.approx(41.25, rel=EXACT)  # CurrSamplesPerSec
    assert s5.tokens_per_s is None  # no sequence length: tokens stay absent
    assert s5.rank == 0
    assert s10.samples_per_s is None  # its throughput line is unreadable
    assert reasons_at(log.unreadable) == {6: "CurrSamplesPerSec 'abc' is not a number"}
    # the profiler's whole-iteration numbers
    assert s12.step_time_s == pytest.approx(0.32, rel=EXACT)
    assert s12.flops_per_gpu == pytest.approx(195e12, rel=EXACT)
    assert s12.samples_per_s == pytest.approx(100.0, rel=EXACT)
    assert reasons_at(log.skipped)[4] == "warning"


def test_deepspeed_samples_become_tokens_with_a_sequence_length():
    log = load("deepspeed.log", seq_len=2048, n_gpus=8)
    s5 = by_step(log)[5]
    assert s5.tokens_per_s == pytest.approx(41.25 * 2048, rel=EXACT)
    assert s5.tokens_per_s_per_gpu == pytest.approx(41.25 * 2048 / 8, rel=EXACT)
    assert s5.derived == ("tokens_per_s", "tokens_per_s_per_gpu")


# -- torchtitan --------------------------------------------------------------------------
def test_torchtitan_with_ansi_codes_and_two_ranks():
    log = load("torchtitan.log")
    assert log.framework == "torchtitan"
    assert [s.step for s in log.steps] == [1, 10, 20]
    s10 = by_step(log)[10]
    assert s10.loss == pytest.approx(9.1234, rel=EXACT)
    assert s10.tokens_per_s_per_gpu == pytest.approx(6543.0, rel=EXACT)  # "6,543", per device
    assert s10.tokens_per_s is None  # the job total is not printed
    assert s10.flops_per_gpu == pytest.approx(301.2e12, rel=EXACT)
    assert s10.mfu == pytest.approx(0.3045, rel=EXACT)
    assert s10.step_time_s is None
    # rank 1 printed step 1 first: rank 0's copy is kept, the other dropped
    assert all(s.rank == 0 for s in log.steps)
    assert by_step(log)[1].line == 5
    assert log.duplicates_dropped == 2
    skipped = reasons_at(log.skipped)
    assert skipped[4].startswith("duplicate") and skipped[7].startswith("duplicate")
    assert skipped[3] == "warning"
    assert skipped[9].startswith("evaluation")
    assert reasons_at(log.unreadable)[10] == "tps '1e400' is too large to be a real value"


def test_torchtitan_per_gpu_tokens_scale_with_n_gpus():
    log = load("torchtitan.log", n_gpus=8)
    assert by_step(log)[20].tokens_per_s == pytest.approx(7000.0 * 8, rel=EXACT)


# -- nanoGPT, llm.c, modded-nanogpt ------------------------------------------------------
def test_nanogpt():
    log = load("nanogpt.log")
    assert log.framework == "nanogpt"
    assert [s.step for s in log.steps] == [0, 1, 10, 20, 40]
    steps = by_step(log)
    assert steps[0].mfu is None  # -100% is nanoGPT's "not measured yet"
    assert steps[10].mfu == pytest.approx(0.40, rel=EXACT)
    assert steps[20].step_time_s == pytest.approx(0.25025, rel=EXACT)
    assert steps[40].loss == pytest.approx(7.5, rel=EXACT)
    assert reasons_at(log.unreadable) == {14: "loss is inf, not a finite number"}
    skipped = reasons_at(log.skipped)
    assert skipped[8].startswith("evaluation")  # step 0: train loss ..., val loss ...
    assert skipped[6] == "warning"


def test_llmc_current_format_with_nan_zscores():
    log = load("llmc.log")
    assert log.framework == "llm.c"
    assert [s.step for s in log.steps] == [1, 2, 10]
    s1, s2, s10 = log.steps
    assert s1.loss == pytest.approx(11.010857, rel=EXACT)  # "(+nanz)" is a z-score, not the loss
    assert s1.step_time_s == pytest.approx(2.048, rel=EXACT)
    assert s1.mfu == pytest.approx(0.425, rel=EXACT)
    assert s1.tokens_per_s == pytest.approx(256_000.0, rel=EXACT)
    assert s10.step_time_s == pytest.approx(0.5, rel=EXACT)  # "(500.00 ms | 1048576 tok/s)"
    assert s10.tokens_per_s == pytest.approx(1_048_576.0, rel=EXACT)
    assert s10.mfu is None
    assert reasons_at(log.unreadable) == {11: "step time 'abc' is not a number"}
    skipped = reasons_at(log.skipped)
    assert skipped[7].startswith("evaluation")
    assert skipped[14] == "not a step line"  # generated text that mentions a step


def test_llmc_older_format():
    log = load("llmc_old.log")
    assert log.framework == "llm.c"
    assert [(s.step, s.loss) for s in log.steps] == [(0, 5.356172), (1, 4.301503), (2, 4.623835)]
    assert log.steps[1].step_time_s == pytest.approx(1.288673, rel=EXACT)


def test_modded_nanogpt_mpirun_tags():
    log = load("modded_nanogpt.log")
    assert log.framework == "modded-nanogpt"
    assert [s.step for s in log.steps] == [100, 200, 201]
    steps = by_step(log)
    assert steps[100].step_time_s == pytest.approx(0.125, rel=EXACT)
    assert steps[100].rank == 0 and steps[100].line == 6  # [1,0] kept over [1,1]
    assert steps[201].loss == pytest.approx(3.5625, rel=EXACT)
    assert steps[201].tokens_per_s == pytest.approx(4_194_304.0, rel=EXACT)
    assert steps[100].loss is None
    # step_avg:nanms is NaN: those lines are unreadable, never stored
    assert set(reasons_at(log.unreadable)) == {3, 4}
    skipped = reasons_at(log.skipped)
    assert skipped[1].startswith("evaluation") and skipped[2].startswith("evaluation")
    assert skipped[7] == "warning"
    assert log.duplicates_dropped == 1


# -- Composer ----------------------------------------------------------------------------
def test_composer_blocks():
    log = load("composer.log")
    assert log.framework == "composer"
    assert [s.step for s in log.steps] == [1, 10, 30]
    s1, s10, s30 = log.steps
    assert s1.loss == pytest.approx(12.0625, rel=EXACT)
    assert s1.tokens_per_s is None and s1.mfu is None
    assert s10.line == 9
    assert s10.tokens_per_s == pytest.approx(524_288.0, rel=EXACT)
    assert s10.tokens_per_s_per_gpu == pytest.approx(65_536.0, rel=EXACT)
    assert s10.flops_per_gpu == pytest.approx(4.0e14, rel=EXACT)
    assert s10.mfu == pytest.approx(0.4045, rel=EXACT)  # Composer prints a fraction
    assert s10.samples_per_s == pytest.approx(256.0, rel=EXACT)
    assert s10.step_time_s == pytest.approx(2.0, rel=EXACT)  # 1 / batches_per_sec
    assert s10.derived == ("step_time_s",)
    assert s30.step_time_s == pytest.approx(2.5, rel=EXACT)
    # the bad mfu line spoils batch 20 and is reported at its own line
    assert reasons_at(log.unreadable) == {28: "throughput/device/mfu 'not-a-number' is not a number"}
    skipped = reasons_at(log.skipped)
    assert skipped[22] == "progress bar"
    assert skipped[23].startswith("evaluation") and skipped[24].startswith("evaluation")


# -- the app's own line ------------------------------------------------------------------
def test_workbench_seed_lines():
    log = load("workbench.log")
    assert log.framework == "workbench"
    assert [s.step for s in log.steps] == [118, 119, 120, 122]
    steps = by_step(log)
    s120 = steps[120]
    assert s120.loss == pytest.approx(3.112, rel=EXACT)
    assert s120.step_time_s == pytest.approx(1.02, rel=EXACT)
    assert s120.tokens_per_s == pytest.approx(128_400.0, rel=EXACT)  # "128.4k"
    assert s120.mfu == pytest.approx(0.325, rel=EXACT)
    assert s120.data_wait is True
    assert steps[118].data_wait is False
    assert steps[118].tokens_per_s == pytest.approx(131_072.0, rel=EXACT)  # "131.072k"
    assert steps[119].tokens_per_s == pytest.approx(109.2e6, rel=EXACT)  # "109.2M"
    assert steps[122].data_wait == pytest.approx(0.25, rel=EXACT)
    assert log.duplicates_dropped == 2
    assert reasons_at(log.unreadable) == {7: "loss 'x.yz' is not a number"}


def test_seed_line_example_from_the_issue():
    log = parse_training_log("[rank0] step 120 | loss 3.112 | 1.02 s/step | 128.4k tok/s | MFU 32.5% | dataloader wait")
    (s,) = log.steps
    assert (s.step, s.rank, s.data_wait) == (120, 0, True)
    assert s.mfu == pytest.approx(0.325, rel=EXACT)


# -- prefixes, line endings, many ranks --------------------------------------------------
def test_srun_labels_and_default_prefix_and_crlf():
    text = (
        "0: iter 10: loss 3.5000, time 100.00ms, mfu 30.00%\r\n"
        "1: iter 10: loss 3.5000, time 100.00ms, mfu 30.00%\r\n"
        "[default1]:iter 20: loss 3.2500, time 100.00ms, mfu 30.00%\r\n"
        "[default0]:iter 20: loss 3.2500, time 110.00ms, mfu 30.00%\r\n"
    )
    log = parse_training_log(text)
    assert [(s.step, s.rank, s.line) for s in log.steps] == [(10, 0, 1), (20, 0, 4)]
    assert log.steps[1].step_time_s == pytest.approx(0.11, rel=EXACT)  # rank 0's copy
    assert log.duplicates_dropped == 2


def test_progress_bar_carriage_returns_keep_the_last_redraw():
    text = " 10%|#  | 1/10\r 20%|## | 2/10\riter 5: loss 2.0000, time 50.00ms, mfu 10.00%\n"
    (s,) = parse_training_log(text).steps
    assert (s.step, s.loss) == (5, 2.0)


def test_repeated_step_without_ranks_keeps_the_first():
    text = "iter 1: loss 3.0000, time 10.00ms, mfu 1.00%\niter 1: loss 2.0000, time 10.00ms, mfu 1.00%\n"
    log = parse_training_log(text)
    assert [s.loss for s in log.steps] == [3.0]
    assert log.duplicates_dropped == 1


def test_other_frameworks_step_lines_are_skipped_not_mixed():
    text = "iter 1: loss 3.0, time 10.00ms, mfu 1.00%\niter 2: loss 2.9, time 10.00ms, mfu 1.00%\nstep:  7  loss:  9.0  tps: 10\n"
    log = parse_training_log(text)
    assert log.framework == "nanogpt"
    assert [s.step for s in log.steps] == [1, 2]
    assert "another format" in reasons_at(log.skipped)[3]


def test_absent_fields_are_none_not_zero():
    (s,) = parse_training_log("step:  3  loss:  4.5\n").steps
    assert s.loss == 4.5
    for name in ("step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "flops_per_gpu", "mfu", "data_wait"):
        assert getattr(s, name) is None
    assert s.tflops_per_gpu is None


def test_series():
    log = load("workbench.log")
    assert log.series("step_time_s") == ((118, 1.25), (119, 1.5), (120, 1.02), (122, 1.0))
    assert log.series("data_wait") == ((118, 0.0), (119, 1.0), (120, 1.0), (122, 0.25))
    with pytest.raises(InputError, match="field"):
        log.series("speed")


# -- errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, line",
    [
        ("", 1),
        ("\n\n   \n", 1),
        ("hello world\nthis is not a log\n", 1),
        ("\n\nWARNING: only noise here\nTraceback (most recent call last):\n", 3),
        ("step: many\n", 1),
    ],
)
def test_text_without_steps_raises_with_line_and_formats(text, line):
    with pytest.raises(TrainLogError) as info:
        parse_training_log(text)
    assert info.value.line == line
    assert "Megatron" in str(info.value) and "torchtitan" in str(info.value)
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)


def test_only_unreadable_steps_raises_at_the_first():
    text = "banner\niteration 12/100 | elapsed time per iteration (ms): abc |\n"
    with pytest.raises(TrainLogError) as info:
        parse_training_log(text)
    assert info.value.line == 2
    assert "'abc'" in str(info.value)


@pytest.mark.parametrize("bad", [b"iter 1: loss 1.0", None, 42])
def test_non_text_raises_the_module_error(bad):
    with pytest.raises(TrainLogError) as info:
        parse_training_log(bad)
    assert info.value.line == 1


@pytest.mark.parametrize("kwargs", [{"seq_len": 0}, {"n_gpus": -8}, {"seq_len": 2.5}, {"n_gpus": True}])
def test_bad_facts_raise_input_error(kwargs):
    with pytest.raises(InputError):
        parse_training_log("iter 1: loss 1.0, time 1.00ms, mfu 1.00%", **kwargs)


def test_huge_step_numbers_are_unreadable_not_a_crash():
    text = "iter 1: loss 1.0, time 1.00ms, mfu 1.00%\niter " + "9" * 5000 + ": loss 1.0, time 1.00ms\n"
    log = parse_training_log(text)
    assert [s.step for s in log.steps] == [1]
    assert reasons_at(log.unreadable)[2].startswith("iter")


def test_every_framework_name_is_listed():
    names = {load(p.name).framework for p in FIXTURES.glob("*.log")}
    assert names <= set(FRAMEWORKS)
    assert names >= {"megatron", "megatron-deepspeed", "nemo", "deepspeed", "torchtitan", "nanogpt",
                     "llm.c", "modded-nanogpt", "composer", "workbench"}


# -- properties --------------------------------------------------------------------------
def _check_numbers(log: TrainLog) -> None:
    assert log.steps, "a parsed log has at least one step"
    for s in log.steps:
        assert isinstance(s.step, int) and s.step >= 0
        for name in ("step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "flops_per_gpu", "mfu",
                     "loss", "samples_per_s"):
            value = getattr(s, name)
            assert value is None or (isinstance(value, float) and math.isfinite(value)), (name, value)
        assert s.data_wait is None or isinstance(s.data_wait, bool) or math.isfinite(s.data_wait)
        assert s.step_time_s is None or s.step_time_s > 0
    for note in (*log.skipped, *log.unreadable):
        assert note.line >= 1


def _parses_or_raises(text: str) -> None:
    try:
        log = parse_training_log(text)
    except TrainLogError as exc:
        assert exc.line >= 1
        assert str(exc)
        return
    _check_numbers(log)


_FRAGMENTS = [
    "iteration", " 12/100 |", " elapsed time per iteration (ms): ", " lm loss: ", " | ", "nan", "inf",
    "1e999", "-0", "1,234", "3.5", "abc", "step", ":", "  ", "loss:", " tps: ", "mfu: ", "%", "iter ",
    ": loss ", ", time ", "ms", " s/step", "k tok/s", "[batch=3/9]:", "\n\t Train throughput/device/mfu: ",
    "[rank0]:", "0: ", "\x1b[31m", "\x1b[0m", "\r", "\n", "step:5/9 ", "step_avg:", "train_loss:",
    "epoch=0/micro_step=1/global_step=", ", CurrSamplesPerSec=", "Profile Summary at step 3:",
    "\niter latency: ", "\nFLOPS per GPU = x: ", " TFLOPS", "seq_length ........ ", "batch-generator: (",
    "dataloader wait", "Traceback (most recent call last):", "  File \"x.py\", line 1", "9" * 30,
    "global_step: ", "actual seqlen: ", "samples per second: ", "(+nanz)", "-100.00%",
]


_TEMPLATES = [
    "iteration {a}/100 | elapsed time per iteration (ms): {b} | throughput per GPU (TFLOP/s/GPU): {c} | "
    "lm loss: {d} | global batch size: {a} | samples per second: {e} |",
    "  seq_length ....... {a}\n  world_size ....... {e}",
    "batch-generator ....: ({b}, {c})",
    "Training epoch 0, iteration {a}/9 | global_step: {b} | reduced_train_loss: {c} | train_step_timing in s: {d}",
    "iter {a}: loss {b}, time {c}ms, mfu {d}%",
    "[rank{e}]:[titan] 2024-05-01 10:00:00,000 - root - INFO - step: {a}  loss: {b}  tps: {c}  tflops: {d}  mfu: {e}%",
    "step {a}/10 | loss {b} (+nanz)| norm 1 | lr 1e-4 | {c} ms | {d}% bf16 MFU | {e} tok/s",
    "step {a}: train loss {b} (took {c} ms)",
    "step:{a}/9 train_loss:{b} train_time:{c}ms step_avg:{d}ms tok_s:{e}",
    "[rank{a}] step {b} | loss {c} | {d} s/step | {e}k tok/s | MFU {e}% | dataloader wait {d} ms",
    "[batch={a}/9]:\n\t Train throughput/tokens_per_sec: {b}\n\t Train throughput/batches_per_sec: {c}\n"
    "\t Train throughput/device/mfu: {e}",
    "[Rank {e}] epoch=0/micro_step={a}/global_step={a}, RunningAvgSamplesPerSec={b}, CurrSamplesPerSec={c}",
    "[Rank 0] step={a}, skipped=0, lr=[{b}]",
    "Profile Summary at step {a}:\niter latency: {b} ms\nFLOPS per GPU = 3 * x / y: {c} TFLOPS\n"
    "samples/second: {d}\n----------------",
]
_VALUES = st.one_of(
    st.integers(0, 10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e999", "1e-320", "abc", "", "-1", "0", "1,234", "12,34", "2.5E+00"]),
    st.text(max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_TEMPLATES), st.fixed_dictionaries({k: _VALUES for k in "abcde"})),
                min_size=1, max_size=8))
def test_step_lines_with_any_values_parse_or_raise(lines):
    _parses_or_raises("\n".join(template.format(**values) for template, values in lines))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=6), max_size=40).map("".join))
def test_any_log_like_text_parses_or_raises_the_module_error(text):
    _parses_or_raises(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_or_raises_the_module_error(text):
    _parses_or_raises(text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(p.name for p in FIXTURES.glob("*.log"))), st.data())
def test_mangled_fixtures_parse_or_raise(name, data):
    lines = (FIXTURES / name).read_text().splitlines()
    picked = data.draw(st.lists(st.sampled_from(lines), min_size=1, max_size=12))
    noise = data.draw(st.lists(st.sampled_from(_FRAGMENTS), max_size=6))
    _parses_or_raises("\n".join(picked + noise))


def test_deepspeed_lines_with_samples_per_sec_and_tflops():
    text = (
        "[2024-05-01 10:00:00,000] [INFO] [engine.py:100:train] [Rank 0] step 100: loss=2.5000, samples/sec=64.0, TFLOPs=95.5\n"
        "[2024-05-01 10:00:10,000] [INFO] [engine.py:100:train] [Rank 0] step 200: loss=2.2500, samples/sec=66.0, TFLOPs=98.5\n"
    )
    log = parse_training_log(text)
    assert log.framework == "deepspeed"
    s100, s200 = log.steps
    assert (s100.step, s100.loss, s100.samples_per_s) == (100, 2.5, 64.0)
    assert s200.flops_per_gpu == pytest.approx(98.5e12, rel=EXACT)
    assert s100.tokens_per_s is None


def test_a_rate_too_small_to_invert_is_unreadable():
    text = "[batch=1/9]:\n\t Train loss/train/total: 2.0\n[batch=2/9]:\n\t Train throughput/batches_per_sec: 2.2e-311\n"
    log = parse_training_log(text)
    assert [s.step for s in log.steps] == [1]
    assert reasons_at(log.unreadable) == {4: "throughput/batches_per_sec '2.2e-311' is too small to be a real rate"}
