"""Reader for the console logs of training jobs: one entry per optimizer step.

:func:`parse_training_log` takes the text of a log and recognises the framework that wrote it
from its step lines: Megatron-LM (and NeMo, Megatron-DeepSpeed), DeepSpeed, torchtitan,
nanoGPT, llm.c, modded-nanogpt, MosaicML Composer / llm-foundry, and this app's own seed
line. Each step keeps what that log prints, converted to SI: seconds, tokens/s, FLOP/s, MFU as
a fraction. A field the log does not print is None, never 0.

Real logs are noisy: rank and host prefixes (``[rank0]:``, ``0:``, ``[1,0]<stdout>:``),
timestamps and logger prefixes, ANSI colour codes, warnings, tracebacks, progress bars and
evaluation lines. Those are skipped and listed (:attr:`TrainLog.skipped`, with a reason per
line). A line that clearly is a step of the recognised framework but cannot be read (a field
that is not a number, NaN, an overflow) is listed in :attr:`TrainLog.unreadable` and the
rest still loads. When several ranks print the same step, one entry is kept (rank 0's when
the prefix says, else the first) and the copies are counted in ``duplicates_dropped``.

Text without a single readable step raises :class:`TrainLogError` (an ``InputError``) with a
1-based line number and the list of understood formats.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from dataclasses import dataclass

from workbench._validate import InputError

TFLOP = 1e12  # logs print TFLOP/s; the model keeps FLOP/s
MS = 1000.0  # milliseconds per second: divide (exact rounding), never multiply by 1e-3

FRAMEWORKS = (
    "megatron",
    "nemo",
    "megatron-deepspeed",
    "deepspeed",
    "torchtitan",
    "nanogpt",
    "llm.c",
    "modded-nanogpt",
    "composer",
    "workbench",
)

UNDERSTOOD_FORMATS = (
    "Megatron-LM / NeMo / Megatron-DeepSpeed ('iteration 10/500 | elapsed time per iteration (ms): ...')",
    "DeepSpeed ('epoch=0/micro_step=10/global_step=10, CurrSamplesPerSec=...', 'step=10, skipped=0, ...', "
    "flops profiler 'Profile Summary at step 10:')",
    "torchtitan ('step: 10  loss: 9.12  tps: 6,543  tflops: 301.2  mfu: 30.45%')",
    "nanoGPT ('iter 100: loss 3.21, time 123.45ms, mfu 32.10%')",
    "llm.c ('step 10/1000 | train loss 4.12 | ... | (123.45 ms | 45678 tok/s)')",
    "modded-nanogpt ('step:100/1750 train_time:12345ms step_avg:123.45ms')",
    "Composer / llm-foundry ('[batch=10/1000]:' with indented 'Train ...: value' lines)",
    "Scaling Workbench ('step 120 | loss 3.11 | 1.02 s/step | 128.4k tok/s | MFU 32.5%')",
)

# Values beyond this are refused as unreadable: no real log prints them, and keeping every
# stored value far from the float limit means nothing derived from them can overflow.
_MAX_VALUE = 1e30
_MAX_STEP_DIGITS = 15


class TrainLogError(InputError):
    """A text that is not a training log this module can read. ``line`` is the 1-based line
    number the message is about (the first line when the whole text is at fault)."""

    def __init__(self, line: int, message: str):
        super().__init__("text", f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class LineNote:
    """A line that did not become a step: its 1-based number, why, and (shortened) text."""

    line: int
    reason: str
    text: str = ""


@dataclass(frozen=True)
class TrainStep:
    """One optimizer step as the log printed it, in SI units.

    ``step``: the step (iteration) number as printed. ``line``: where it was read.
    ``step_time_s``: seconds for this step (modded-nanogpt prints only its running average,
    ``step_avg``, which is what it holds there). ``tokens_per_s``: the whole job's tokens/s;
    ``tokens_per_s_per_gpu``: per device (torchtitan's ``tps``). ``flops_per_gpu``: achieved
    FLOP/s per GPU (see :attr:`tflops_per_gpu`). ``mfu``: a fraction (0.325 for 32.5 %).
    ``loss``: the training loss. ``data_wait``: True/False where the log flags a step as
    waiting on the data loader, seconds where it prints the wait (Megatron's
    ``batch-generator`` timer, max over ranks), None where it says nothing.
    ``samples_per_s``: the whole job's samples/s; ``global_batch``: samples per step.
    ``rank``: the rank prefix of the line, None without one. ``derived``: the names of fields
    computed from other printed values (e.g. tokens/s from global batch x sequence length /
    step time) rather than printed.
    """

    step: int
    line: int
    step_time_s: float | None = None
    tokens_per_s: float | None = None
    tokens_per_s_per_gpu: float | None = None
    flops_per_gpu: float | None = None
    mfu: float | None = None
    loss: float | None = None
    data_wait: bool | float | None = None
    samples_per_s: float | None = None
    global_batch: int | None = None
    rank: int | None = None
    derived: tuple[str, ...] = ()

    @property
    def tflops_per_gpu(self) -> float | None:
        """Achieved TFLOP/s per GPU (``flops_per_gpu`` / 1e12), as the logs print it."""
        return None if self.flops_per_gpu is None else self.flops_per_gpu / TFLOP


_VALUE_FIELDS = (
    "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "flops_per_gpu", "mfu", "loss",
    "data_wait", "samples_per_s", "global_batch",
)


@dataclass(frozen=True)
class TrainLog:
    """A parsed training log.

    ``framework``: one of :data:`FRAMEWORKS`. ``steps``: one :class:`TrainStep` per step
    number, in step order. ``skipped``: lines that are not steps (noise, configuration,
    evaluation, other ranks' copies), blank lines excepted. ``unreadable``: lines that look
    like a step of this framework but could not be read; their steps are missing.
    ``duplicates_dropped``: step lines dropped because that step was already read (another
    rank's copy, or a step printed again after a restart). ``seq_len`` and ``n_gpus``: as
    given to the parser or found in the log's argument dump, None when unknown.
    """

    framework: str
    steps: tuple[TrainStep, ...]
    skipped: tuple[LineNote, ...] = ()
    unreadable: tuple[LineNote, ...] = ()
    duplicates_dropped: int = 0
    seq_len: int | None = None
    n_gpus: int | None = None

    def skipped_reasons(self) -> dict[str, int]:
        """How many lines were skipped for each reason, most frequent first."""
        return dict(Counter(note.reason for note in self.skipped).most_common())

    def series(self, field: str) -> tuple[tuple[int, float], ...]:
        """(step, value) pairs of the steps that have ``field`` (a :class:`TrainStep` field
        name or ``tflops_per_gpu``); a bool data_wait counts as 1.0 / 0.0."""
        if field not in _VALUE_FIELDS and field != "tflops_per_gpu":
            allowed = ", ".join((*_VALUE_FIELDS, "tflops_per_gpu"))
            raise InputError("field", f"must be one of {allowed}; got {field!r}")
        pairs = []
        for s in self.steps:
            value = getattr(s, field)
            if value is not None:
                pairs.append((s.step, float(value)))
        return tuple(pairs)


# -- noise -------------------------------------------------------------------------------
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, links
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\[(?:\d{1,3};)*\d{1,3}m"  # colour codes whose ESC byte was lost in a copy
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TIMESTAMP = r"\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
_LEVEL = r"(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|FATAL)"
_LEVEL_LETTERS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL", "D": "DEBUG", "C": "CRITICAL"}
# One alternation, tried in this order at the start of the line, again and again while
# something matches: prefixes nest ("0: [rank0]:[titan] 2024-... - root - INFO - ").
_PREFIX = re.compile(
    r"(?i:\[(?:rank|default)\s*(?P<rank>\d+)\]):?\s*"
    r"|\[\d+,(?P<mpi>\d+)\]<std(?:out|err)>:\s*"  # mpirun --tag-output
    r"|(?P<srun>\d{1,5}):\s+"  # srun --label
    r"|[\w.-]+:\s+(?=(?i:\[Rank\s*\d+\])|\[\d{4}-)"  # pdsh host prefix
    r"|\[?" + _TIMESTAMP + r"\]?\s*(?:-\s*)?"
    r"|\[titan\]\s*"
    r"|\[NeMo\s+(?P<nemo>[IWEDC])\s[^\]]*\]\s*"
    r"|(?P<glog>[IWEF])\d{4}\s+\d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+\S+:\d+\]\s*"
    r"|\[(?P<level1>" + _LEVEL + r")\]\s*"
    r"|\[[\w.]+\.py:\d+:\w+\]\s*"  # DeepSpeed [logging.py:96:log_dist]
    r"|[\w.]+\s+-\s+(?P<level2>" + _LEVEL + r")\s+-\s+"  # "root - INFO - "
    r"|(?P<level3>" + _LEVEL + r"):[\w.]*:\s*"  # "INFO:root:"
)
_DS_RANK = re.compile(r"\[Rank\s*(\d+)\]\s*", re.IGNORECASE)  # DeepSpeed's own tag


def _clean(raw: str) -> tuple[str, int | None, str]:
    """(text without escapes and prefixes, rank or None, the level word seen or "")."""
    if "\r" in raw:  # progress bars redraw with carriage returns: the last redraw shows
        parts = [p for p in raw.split("\r") if p.strip()]
        raw = parts[-1] if parts else ""
    if "\x1b" in raw or "[" in raw:
        raw = _ANSI.sub("", raw)
    text = _CONTROL.sub("", raw).strip()
    rank = None
    level = ""
    for _ in range(12):
        m = _PREFIX.match(text)
        if m is None or m.end() == 0:
            break
        found = m.group("rank") or m.group("mpi") or m.group("srun")
        if found is not None and rank is None:
            rank = int(found)
        word = m.group("level1") or m.group("level2") or m.group("level3")
        letter = m.group("nemo") or m.group("glog")
        if word:
            level = word
        elif letter:
            level = _LEVEL_LETTERS.get(letter, "")
        text = text[m.end():].lstrip()
    m = _DS_RANK.match(text)
    if m:
        rank = int(m.group(1)) if rank is None else rank
        text = text[m.end():]
    return text, rank, level


_TRACEBACK_START = re.compile(r"^Traceback \(most recent call last\)")
_TRACEBACK_FRAME = re.compile(r'^File "[^"]*", line \d+')
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt|Exit)\b(?::|$)")
_WARNING = re.compile(r"\bwarn(?:ing|ings)?\b|\w+Warning\b", re.IGNORECASE)
_PROGRESS = re.compile(r"\d+%\|.*\||\|\s*\d+/\d+\s*\[\d|\bit/s\]|\bs/it\]")
_EVAL = re.compile(
    r"\b(?:val|valid|validation|eval|evaluation|test)[ _/-]?(?:loss|bpb|ppl|perplexity|metrics|step)\b"
    r"|^(?:validat|evaluat|eval\b|\[eval\b|context:\s*valid)",
    re.IGNORECASE,
)
_ARGS_DUMP = re.compile(r"^([A-Za-z_][\w-]*)\s+\.{3,}\s+(\S+)$")  # Megatron's argument listing
_USING_WORLD = re.compile(r"\busing world size:\s*(\d+)", re.IGNORECASE)
_TIMER = re.compile(r"^\(min, max\) time across ranks|^time \(ms\)\s*\||^[\w-]+(?:\s*\.+)?\s*:\s*\(\s*[\d.]+\s*,")
_BATCH_GENERATOR = re.compile(r"\bbatch-generator\b[ .]*:\s*\(?\s*([^\s,()|]+)\s*(?:,\s*([^\s,()|]+)\s*)?\)?")


# -- numbers -----------------------------------------------------------------------------
class _Unreadable(Exception):
    """A step line that cannot be read; the message says which field and why."""


_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def _num(text: str, what: str, *, suffixes: bool = False) -> float:
    """A finite number (thousands commas allowed; k/M/G suffixes when ``suffixes``)."""
    s = text.strip().rstrip(",;")
    scale = 1.0
    if suffixes and s and s[-1] in _SUFFIX and len(s) > 1:
        scale = _SUFFIX[s[-1]]
        s = s[:-1]
    if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise _Unreadable(f"{what} is {s}, not a finite number")
    if not _NUMBER.fullmatch(s) or len(s) > 60:
        raise _Unreadable(f"{what} {text.strip()!r} is not a number")
    if "," in s and not _THOUSANDS.fullmatch(s):
        raise _Unreadable(f"{what} {text.strip()!r} is not a number (misplaced comma)")
    value = float(s.replace(",", "")) * scale
    if not math.isfinite(value) or abs(value) > _MAX_VALUE:
        raise _Unreadable(f"{what} {text.strip()!r} is too large to be a real value")
    return value


def _int(text: str, what: str) -> int:
    s = re.sub(r"\.0*$", "", text.strip().replace(",", ""))  # NeMo prints "global_step: 9.0"
    if not re.fullmatch(r"[0-9]+", s):
        raise _Unreadable(f"{what} {text.strip()!r} is not a whole number")
    if len(s) > _MAX_STEP_DIGITS:
        raise _Unreadable(f"{what} {text.strip()!r} is too large")
    return int(s)


def _positive(value: float, what: str) -> float:
    if value <= 0:
        raise _Unreadable(f"{what} must be > 0, got {value:g}")
    return value


def _non_negative(value: float, what: str) -> float:
    if value < 0:
        raise _Unreadable(f"{what} must be >= 0, got {value:g}")
    return value


def _percent(text: str, what: str) -> float:
    return _non_negative(_num(text.strip().rstrip("%"), what), what) / 100.0


# -- one parser per family ---------------------------------------------------------------
# Each returns (step number, {field: value}) or raises _Unreadable.


def _megatron_time_scale(key: str) -> float | None:
    if key.startswith("elapsed time per iteration"):
        return MS if "(s)" not in key else 1.0  # a divisor
    if "step_timing" in key or key in ("step time", "iteration time", "time per iteration"):
        if "(ms)" in key or key.endswith(" ms"):
            return MS
        return 1.0
    return None


_MEGATRON = re.compile(r"\biteration\s+([^\s/|]+)\s*/\s*([^\s|]+)\s*\|")


def _parse_megatron(text: str) -> tuple[int, dict]:
    m = _MEGATRON.search(text)
    if m is None:
        raise _Unreadable("no 'iteration N/M |' in the line")
    step = _int(m.group(1), "iteration")
    fields: dict = {}
    loss_rank = 99
    for segment in text[m.end():].split("|"):
        key, sep, value = segment.partition(":")
        if not sep:
            continue
        key = " ".join(key.lower().split())
        raw = value.strip()
        if not raw:
            continue
        current = raw.split("/")[0].strip()  # "1234.5/1240.1": current/average, take current
        if key == "global_step":
            step = _int(current, "global_step")
        elif "tflop" in key:
            fields["flops_per_gpu"] = _non_negative(_num(current, key), key) * TFLOP
        elif "token" in key and any(w in key for w in ("per sec", "/s", "per second", "tgs")):
            name = "tokens_per_s_per_gpu" if ("gpu" in key or "tgs" in key or "device" in key) else "tokens_per_s"
            fields[name] = _non_negative(_num(current, key), key)
        elif "sample" in key and any(w in key for w in ("per sec", "/s", "per second")):
            fields["samples_per_s"] = _non_negative(_num(current, key), key)
        elif (scale := _megatron_time_scale(key)) is not None:
            fields["step_time_s"] = _positive(_num(current, key), key) / scale
        elif key in ("global batch size", "global_batch_size"):
            fields["global_batch"] = _int(current, key)
        elif key in ("actual seqlen", "seqlen", "seq len", "seq_len", "seq length"):
            fields["_seq_len"] = _int(current, key)
        elif key == "mfu":
            if current.endswith("%"):
                fields["mfu"] = _percent(current, key)
            else:
                mfu = _non_negative(_num(current, key), key)
                fields["mfu"] = mfu if mfu <= 1.0 else mfu / 100.0
        elif key.endswith("loss") and "scale" not in key and "val" not in key:
            rank = 0 if key == "lm loss" else 1
            if rank < loss_rank:
                fields["loss"] = _num(current, key)
                loss_rank = rank
    return step, fields


_DS_THROUGHPUT = re.compile(r"\bepoch=([^/\s]+)/micro_step=([^/\s]+)/global_step=([^,\s]+),?")
_DS_STEP = re.compile(r"(?<![\w/])step=([^,\s]+),\s*skipped=([^,\s]+)")
_DS_PROFILE = re.compile(r"Profile Summary at step\s+(\S+?):?\s*$")
_DS_GENERIC = re.compile(
    r"(?<![\w/])(?:global[_ ])?step\s*[=:]?\s*(\d[\d,]*)\b.*(?:samples/sec|SamplesPerSec|TFLOPs)", re.IGNORECASE
)
_PAIR = re.compile(r"([A-Za-z][\w/]*)\s*[=:]\s*([^\s,;|]+)")


def _parse_deepspeed_throughput(text: str) -> tuple[int, dict]:
    m = _DS_THROUGHPUT.search(text)
    step = _int(m.group(3), "global_step")
    fields: dict = {}
    pairs = dict(_PAIR.findall(text[m.end():]))
    if "CurrSamplesPerSec" in pairs:
        fields["samples_per_s"] = _non_negative(_num(pairs["CurrSamplesPerSec"], "CurrSamplesPerSec"), "CurrSamplesPerSec")
    elif "RunningAvgSamplesPerSec" in pairs:
        value = _num(pairs["RunningAvgSamplesPerSec"], "RunningAvgSamplesPerSec")
        fields["samples_per_s"] = _non_negative(value, "RunningAvgSamplesPerSec")
    return step, fields


def _parse_deepspeed_step(text: str) -> tuple[int, dict]:
    m = _DS_STEP.search(text)
    return _int(m.group(1), "step"), {}


def _parse_deepspeed_generic(text: str) -> tuple[int, dict]:
    m = _DS_GENERIC.search(text)
    step = _int(m.group(1), "step")
    fields: dict = {}
    for key, value in re.findall(r"(samples/sec|SamplesPerSec|TFLOPs|loss)\s*[=:]?\s*([^\s,;|]+)", text, re.IGNORECASE):
        k = key.lower()
        if k in ("samples/sec", "samplespersec"):
            fields["samples_per_s"] = _non_negative(_num(value, key), key)
        elif k == "tflops":
            fields["flops_per_gpu"] = _non_negative(_num(value, key), key) * TFLOP
        elif k == "loss":
            fields["loss"] = _num(value, key)
    return step, fields


_TITAN_PAIRS = re.compile(r"\b(loss|tps|wps|tgs|tflops|mfu):\s*(\S+)")
_TITAN = re.compile(r"(?<![\w/])step:\s*(\S+)\s+.*?\b(?:loss|tps|wps|tgs|mfu|tflops):", re.IGNORECASE)


def _parse_torchtitan(text: str) -> tuple[int, dict]:
    m = _TITAN.search(text)
    step = _int(m.group(1), "step")
    fields: dict = {}
    for key, value in _TITAN_PAIRS.findall(text, m.start()):
        if key == "loss":
            fields["loss"] = _num(value, key)
        elif key in ("tps", "wps", "tgs"):  # torchtitan counts tokens per device
            fields["tokens_per_s_per_gpu"] = _non_negative(_num(value, key), key)
        elif key == "tflops":
            fields["flops_per_gpu"] = _non_negative(_num(value, key), key) * TFLOP
        elif key == "mfu":
            fields["mfu"] = _percent(value, key)
    return step, fields


_MODDED = re.compile(r"(?<![\w/])step:\s*([^\s/]+)/(\S+)\s+(?=\S*(?:train_loss|train_time|step_avg|tok_s):)")


def _duration(value: str, key: str) -> float:
    """'12345ms' or '12.3s' -> seconds."""
    v = value.strip()
    if v.endswith("ms"):
        return _num(v[:-2], key) / MS
    if v.endswith("s"):
        return _num(v[:-1], key)
    raise _Unreadable(f"{key} {value!r} has no unit (ms or s)")


def _parse_modded(text: str) -> tuple[int, dict]:
    m = _MODDED.search(text)
    step = _int(m.group(1), "step")
    fields: dict = {}
    for key, value in re.findall(r"\b(train_loss|step_avg|tok_s):(\S+)", text[m.end():]):
        if key == "train_loss":
            fields["loss"] = _num(value, key)
        elif key == "step_avg":
            fields["step_time_s"] = _positive(_duration(value, key), key)
        elif key == "tok_s":
            fields["tokens_per_s"] = _non_negative(_num(value, key), key)
    return step, fields


_NANOGPT = re.compile(r"^iter\s+([^\s:]+):\s*(?=loss\b)")
_PIPE_STEP = re.compile(r"^step\s+([^\s:|/]+)(?:\s*/\s*([^\s:|]+))?\s*(?:[:|]|(?=\s+(?:train\s+)?loss\b))")

# Segment patterns for the "key value | key value" families (nanoGPT, llm.c, workbench).
_SEG_LOSS = re.compile(r"^(?:train[ _])?loss\b\s*[:=]?\s*(\S+)", re.IGNORECASE)
_SEG_TIME = re.compile(r"^(?:time|dt|took|step[ _]time|iter[ _]time)\s*[:=]?\s*(\S+?)\s*(ms|s)$", re.IGNORECASE)
# "2048.53 ms", "1.02 s/step", "12ms"; a word before the unit needs a space ("abc ms" is a
# bad value, "tokens" is not a time)
_SEG_TIME_BARE = re.compile(
    r"^(\S+?\s+|[-+]?(?:\d|\.\d)\S*?)(ms|s)(?:\s*/\s*(?:step|it|iter))?$", re.IGNORECASE
)
_SEG_TOKENS = re.compile(r"^(\S+?)\s*tok(?:en)?s?\s*/\s*s(?:ec)?(\s*/\s*gpu)?$", re.IGNORECASE)
_SEG_TPS = re.compile(r"^tps\s*[:=]?\s*(\S+)$", re.IGNORECASE)
_SEG_MFU = re.compile(r"^mfu\s*[:=]?\s*(\S+)$", re.IGNORECASE)
_SEG_MFU_AFTER = re.compile(r"^(\S+?)\s*%\s*(?:[\w]+\s+)?mfu$", re.IGNORECASE)
_SEG_WAIT = re.compile(r"^(?:data(?:loader)?)[ _-]?wait(?:\s*[:=]?\s*(\S+?)\s*(ms|s))?$", re.IGNORECASE)


def _read_segments(rest: str, fields: dict, *, nanogpt: bool = False) -> None:
    for piece in re.split(r"[|,()]", rest):
        seg = piece.strip()
        if not seg:
            continue
        if (m := _SEG_LOSS.match(seg)) is not None:
            fields.setdefault("loss", _num(m.group(1), "loss"))
        elif (m := _SEG_WAIT.match(seg)) is not None:
            if m.group(1) is None:
                fields["data_wait"] = True
            else:
                scale = MS if m.group(2).lower() == "ms" else 1.0
                fields["data_wait"] = _non_negative(_num(m.group(1), "data wait"), "data wait") / scale
        elif (m := _SEG_TIME.match(seg) or _SEG_TIME_BARE.match(seg)) is not None:
            scale = MS if m.group(2).lower() == "ms" else 1.0
            fields["step_time_s"] = _positive(_num(m.group(1), "step time"), "step time") / scale
        elif (m := _SEG_TOKENS.match(seg)) is not None:
            name = "tokens_per_s_per_gpu" if m.group(2) else "tokens_per_s"
            fields[name] = _non_negative(_num(m.group(1), "tok/s", suffixes=True), "tok/s")
        elif (m := _SEG_TPS.match(seg)) is not None:
            fields["tokens_per_s"] = _non_negative(_num(m.group(1), "tps", suffixes=True), "tps")
        elif (m := _SEG_MFU.match(seg) or _SEG_MFU_AFTER.match(seg)) is not None:
            value = m.group(1).rstrip("%")
            number = _num(value, "MFU")
            if nanogpt and number == -100.0:
                continue  # nanoGPT prints -100% until it has timed enough iterations
            fields["mfu"] = _non_negative(number, "MFU") / 100.0


def _parse_nanogpt(text: str) -> tuple[int, dict]:
    m = _NANOGPT.search(text)
    step = _int(m.group(1), "iter")
    fields: dict = {}
    _read_segments(text[m.end():], fields, nanogpt=True)
    return step, fields


def _parse_pipe(text: str) -> tuple[int, dict]:
    m = _PIPE_STEP.search(text)
    step = _int(m.group(1), "step")
    if m.group(2) is not None:
        _int(m.group(2), "total steps")
    fields: dict = {}
    _read_segments(text[m.end():], fields)
    return step, fields


_PIPE_FIELDS = re.compile(r"\bloss\b|tok/s|\d\s*m?s\b|\bmfu\b|\btps\b", re.IGNORECASE)
_WORKBENCH_MARKS = re.compile(r"s/step\b|\bMFU\s+\S+%|\bdata(?:loader)?[ _-]?wait\b|\d[kMG]\s*tok/s", re.IGNORECASE)
_LLMC_MARKS = re.compile(r"^\S*step\s+\d+\s*/\s*\d+|\bnorm\b|\blr\b|\(took\b|\bbf16 MFU\b")

_COMPOSER_HEADER = re.compile(r"^(?:\[epoch=[^\]]*\])?\[batch=([^\]/]+)(?:/([^\]]+))?\]:\s*$")
_COMPOSER_LINE = re.compile(r"^Train\s+([\w/\-.]+):\s*(\S*)\s*$")


def _composer_field(key: str, value: str, fields: dict) -> None:
    k = key.lower()
    if k == "throughput/tokens_per_sec":
        fields["tokens_per_s"] = _non_negative(_num(value, key), key)
    elif k == "throughput/device/tokens_per_sec":
        fields["tokens_per_s_per_gpu"] = _non_negative(_num(value, key), key)
    elif k == "throughput/device/flops_per_sec":
        fields["flops_per_gpu"] = _non_negative(_num(value, key), key)
    elif k == "throughput/device/mfu":
        fields["mfu"] = _non_negative(_num(value, key), key)
    elif k == "throughput/samples_per_sec":
        fields["samples_per_s"] = _non_negative(_num(value, key), key)
    elif k == "throughput/batches_per_sec":
        step_time = 1.0 / _positive(_num(value, key), key)
        if not math.isfinite(step_time) or step_time > _MAX_VALUE:
            raise _Unreadable(f"{key} {value!r} is too small to be a real rate")
        fields["step_time_s"] = step_time
        fields["_derived"] = ("step_time_s",)
    elif k == "loss/train/total":
        fields["loss"] = _num(value, key)


# -- classification ----------------------------------------------------------------------
# The detectors say which format a line's step belongs to, in priority order. They are looser
# than the parsers: a line a detector claims but its parser refuses is "unreadable".
_DETECTORS: list[tuple[str, re.Pattern, object]] = [
    ("megatron", _MEGATRON, _parse_megatron),
    ("deepspeed", _DS_THROUGHPUT, _parse_deepspeed_throughput),
    ("deepspeed", _DS_STEP, _parse_deepspeed_step),
    ("modded-nanogpt", _MODDED, _parse_modded),
    ("torchtitan", _TITAN, _parse_torchtitan),
    ("nanogpt", _NANOGPT, _parse_nanogpt),
    ("deepspeed", _DS_GENERIC, _parse_deepspeed_generic),  # before "step N |": names samples/sec
    ("pipe", _PIPE_STEP, _parse_pipe),
]
_STEP_WORD = re.compile(r"step|iter", re.IGNORECASE)
_NEMO = re.compile(r"\bTraining epoch\s+\d+,\s*iteration\b")


@dataclass
class _Line:
    number: int
    text: str
    rank: int | None
    level: str
    raw: str
    kind: str = ""  # detector family or "" for noise
    candidates: tuple[str, ...] = ()
    source: str = ""
    parser: object = None


def _classify(line: _Line) -> None:
    text = line.text
    if _COMPOSER_HEADER.match(text):
        line.kind, line.candidates, line.source = "composer", ("composer",), "composer"
        return
    if _DS_PROFILE.search(text):
        line.kind, line.candidates, line.source = "deepspeed", ("deepspeed",), "deepspeed-profiler"
        return
    if _EVAL.search(text) or line.level in ("WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"):
        return
    if not _STEP_WORD.search(text):
        return  # every detector below needs one of these words
    for family, pattern, parser in _DETECTORS:
        if pattern.search(text):
            line.kind, line.parser = family, parser
            line.source = f"{family}:{parser.__name__}"
            if family == "pipe" and not _PIPE_FIELDS.search(text):
                line.kind, line.parser, line.source = "", None, ""
                continue
            if family == "megatron":
                line.candidates = ("nemo",) if _NEMO.search(text) else ("megatron",)
            elif family == "pipe":
                if _LLMC_MARKS.search(text[pattern.search(text).start():]):
                    line.candidates = ("llm.c",)
                elif _WORKBENCH_MARKS.search(text):
                    line.candidates = ("workbench",)
                else:
                    line.candidates = ("workbench", "llm.c")
            else:
                line.candidates = (family,)
            return


def _noise_reason(line: _Line, in_traceback: bool) -> str:
    text = line.text
    if _EXCEPTION.match(text):
        return "error message"
    if _TRACEBACK_START.search(text) or _TRACEBACK_FRAME.match(text) or in_traceback:
        return "traceback"
    if line.level in ("WARNING", "WARN") or _WARNING.search(text):
        return "warning"
    if line.level in ("ERROR", "CRITICAL", "FATAL"):
        return "error message"
    if _PROGRESS.search(text):
        return "progress bar"
    if _EVAL.search(text):
        return "evaluation or validation line (not a training step)"
    if _ARGS_DUMP.match(text) or _USING_WORLD.search(text):
        return "configuration line"
    if _TIMER.search(text):
        return "timer breakdown line"
    return "not a step line"


def _choose(lines: list[_Line]) -> str | None:
    counts: Counter = Counter()
    first: dict[str, int] = {}
    for i, line in enumerate(lines):
        for c in line.candidates:
            counts[c] += 1
            first.setdefault(c, i)
    if not counts:
        return None
    return max(counts, key=lambda c: (counts[c], -first[c]))


def _short(raw: str) -> str:
    text = _CONTROL.sub("", _ANSI.sub("", raw)).strip()
    return text if len(text) <= 200 else text[:197] + "..."


# -- the parser --------------------------------------------------------------------------
def parse_training_log(text: str, *, seq_len: int | None = None, n_gpus: int | None = None) -> TrainLog:
    """Read the steps of a training log; see the module docstring for the formats.

    ``seq_len`` (tokens per sample) and ``n_gpus`` are optional facts the log may not print:
    with ``seq_len``, samples/s (or global batch / step time) become tokens/s; with
    ``n_gpus``, whole-job and per-GPU tokens/s are computed from each other. Such values are
    named in each step's ``derived``. Megatron's argument dump (``seq_length ... 2048``,
    ``world_size ... 8``) provides them when they are not given. Raises
    :class:`TrainLogError` when the text holds no readable step.
    """
    if isinstance(text, bytes):
        raise TrainLogError(1, "must be text (decode the file first), got bytes")
    if not isinstance(text, str):
        raise TrainLogError(1, f"must be the text of a training log, got {type(text).__name__}")
    seq_len = _checked_count("seq_len", seq_len)
    n_gpus = _checked_count("n_gpus", n_gpus)

    lines: list[_Line] = []
    for number, raw in enumerate(text.lstrip("\ufeff").split("\n"), start=1):
        cleaned, rank, level = _clean(raw)
        line = _Line(number, cleaned, rank, level, raw)
        if cleaned:
            _classify(line)
        lines.append(line)

    framework = _choose(lines)
    if framework is None:
        first = next((ln.number for ln in lines if ln.text), 1)
        raise TrainLogError(
            first,
            "no training step line found; understood formats: " + "; ".join(UNDERSTOOD_FORMATS),
        )
    wanted = {framework}
    kinds = {ln.kind for ln in lines if ln.kind}
    if framework in ("megatron", "deepspeed") and {"megatron", "deepspeed"} <= kinds:
        framework = "megatron-deepspeed"  # Megatron's iteration lines plus DeepSpeed's own
        wanted = {"megatron", "deepspeed"}

    reader = _Reader(framework, wanted, seq_len, n_gpus)
    reader.run(lines)
    return reader.result()


def _checked_count(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(name, f"must be a whole number > 0 or None, got {value!r}")
    return value


class _Reader:
    """The second pass: turns the classified lines into steps."""

    def __init__(self, framework: str, wanted: set[str], seq_len: int | None, n_gpus: int | None):
        self.framework = framework
        self.wanted = wanted
        self.seq_len = seq_len
        self.n_gpus = n_gpus
        self.args_seq_len: int | None = None
        self.args_n_gpus: int | None = None
        self.steps: dict[int, dict] = {}  # step -> {"fields", "rank", "line", "sources"}
        self.order: list[int] = []
        self.skipped: list[LineNote] = []
        self.unreadable: list[LineNote] = []
        self.duplicates = 0
        self.last_step: int | None = None

    def skip(self, line: _Line, reason: str) -> None:
        self.skipped.append(LineNote(line.number, reason, _short(line.raw)))

    def bad(self, line: _Line, reason: str) -> None:
        self.unreadable.append(LineNote(line.number, reason, _short(line.raw)))

    def run(self, lines: list[_Line]) -> None:
        in_traceback = False
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.text:
                continue
            if line.kind == "composer" and "composer" in self.wanted:
                i = self.composer_block(lines, i - 1)
                in_traceback = False
                continue
            if line.source == "deepspeed-profiler" and "deepspeed" in self.wanted:
                i = self.profiler_block(lines, i - 1)
                in_traceback = False
                continue
            if line.kind and any(c in self.wanted for c in line.candidates):
                in_traceback = False
                try:
                    step, fields = line.parser(line.text)
                except _Unreadable as exc:
                    self.bad(line, str(exc))
                    continue
                self.add(line, step, fields, line.source)
                continue
            if line.kind:
                others = "/".join(line.candidates)
                self.skip(line, f"step line of another format ({others}); this log reads as {self.framework}")
                continue
            self.config(line)
            if self.timer(line):
                continue
            reason = _noise_reason(line, in_traceback)
            in_traceback = reason == "traceback"  # an exception line or a step ends it
            self.skip(line, reason)

    def config(self, line: _Line) -> None:
        m = _ARGS_DUMP.match(line.text)
        if m:
            key, value = m.group(1).lower(), m.group(2)
            if re.fullmatch(r"[0-9]{1,9}", value) and int(value) > 0:
                if key in ("seq_length", "seq_len", "max_seq_len", "encoder_seq_length"):
                    self.args_seq_len = self.args_seq_len or int(value)
                elif key == "world_size":
                    self.args_n_gpus = self.args_n_gpus or int(value)
        m = _USING_WORLD.search(line.text)
        if m and re.fullmatch(r"[0-9]{1,9}", m.group(1)) and int(m.group(1)) > 0:
            self.args_n_gpus = self.args_n_gpus or int(m.group(1))

    def timer(self, line: _Line) -> bool:
        """Megatron's timer lines: batch-generator time is the step's wait for data."""
        if "megatron" not in self.wanted:
            return False
        m = _BATCH_GENERATOR.search(line.text)
        if m is None or self.last_step is None:
            return False
        entry = self.steps.get(self.last_step)
        try:
            values = [_non_negative(_num(g, "batch-generator"), "batch-generator") for g in m.groups() if g]
        except _Unreadable:
            return False
        if entry is None or entry["fields"].get("data_wait") is not None:
            return False
        entry["fields"]["data_wait"] = max(values) / MS
        return True

    def add(self, line: _Line, step: int, fields: dict, source: str) -> None:
        entry = self.steps.get(step)
        if entry is None:
            self.steps[step] = {"fields": dict(fields), "rank": line.rank, "line": line.number,
                                "sources": {source}, "text": _short(line.raw)}
            self.order.append(step)
            self.last_step = step
            return
        if source not in entry["sources"] and (entry["rank"] is None or line.rank is None or entry["rank"] == line.rank):
            # Another kind of line about the same step (DeepSpeed's throughput line beside
            # Megatron's iteration line): fill in what the first did not print.
            # Megatron's own numbers win over DeepSpeed's where both print one.
            override = source.startswith("megatron")
            for key, value in fields.items():
                if override:
                    entry["fields"][key] = value
                else:
                    entry["fields"].setdefault(key, value)
            entry["sources"].add(source)
            self.last_step = step
            return
        self.duplicates += 1
        if line.rank == 0 and entry["rank"] != 0:
            self.skipped.append(LineNote(entry["line"], "duplicate step (kept rank 0's copy)", entry["text"]))
            self.steps[step] = {"fields": dict(fields), "rank": 0, "line": line.number,
                                "sources": {source}, "text": _short(line.raw)}
            self.last_step = step
            return
        self.skip(line, "duplicate step (another rank's copy or a repeat)")

    def composer_block(self, lines: list[_Line], start: int) -> int:
        header = lines[start]
        m = _COMPOSER_HEADER.match(header.text)
        fields: dict = {}
        problem: tuple[_Line, str] | None = None
        try:
            step = _int(m.group(1), "batch")
        except _Unreadable as exc:
            step, problem = None, (header, str(exc))
        i = start + 1
        while i < len(lines):
            line = lines[i]
            cm = _COMPOSER_LINE.match(line.text)
            if cm is None:
                break
            i += 1
            if problem is None:
                try:
                    _composer_field(cm.group(1), cm.group(2), fields)
                except _Unreadable as exc:
                    problem = (line, str(exc))
        if problem is not None:
            self.bad(problem[0], problem[1])
        else:
            self.add(header, step, fields, "composer")
        return i

    def profiler_block(self, lines: list[_Line], start: int) -> int:
        header = lines[start]
        m = _DS_PROFILE.search(header.text)
        fields: dict = {}
        problem: tuple[_Line, str] | None = None
        try:
            step = _int(m.group(1), "profile step")
        except _Unreadable as exc:
            step, problem = None, (header, str(exc))
        flops_rank = 9
        i = start + 1
        while i < len(lines):
            line = lines[i]
            text = line.text
            if re.fullmatch(r"-{10,}.*", text) and i > start + 1 or _DS_PROFILE.search(text):
                break
            i += 1
            if problem is not None or not text:
                continue
            try:
                if (lm := re.match(r"iter latency:\s*(\S+)\s*(s|ms|us)\b", text)) is not None:
                    scale = {"s": 1.0, "ms": MS, "us": 1e6}[lm.group(2)]
                    fields["step_time_s"] = _positive(_num(lm.group(1), "iter latency"), "iter latency") / scale
                elif (fm := re.match(r"(fwd\+bwd\+step |fwd\+bwd )?FLOPS per GPU\b.*:\s*(\S+)\s*([KMGTP]?)FLOPS\s*$", text)) is not None:
                    rank = {None: 0, "fwd+bwd+step ": 1, "fwd+bwd ": 2}[fm.group(1)]
                    if rank < flops_rank:
                        scale = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[fm.group(3)]
                        fields["flops_per_gpu"] = _non_negative(_num(fm.group(2), "FLOPS per GPU"), "FLOPS per GPU") * scale
                        flops_rank = rank
                elif (sm := re.match(r"samples/second:\s*(\S+)", text)) is not None:
                    fields["samples_per_s"] = _non_negative(_num(sm.group(1), "samples/second"), "samples/second")
            except _Unreadable as exc:
                problem = (line, str(exc))
        if problem is not None:
            self.bad(problem[0], problem[1])
        else:
            self.add(header, step, fields, "deepspeed-profiler")
        return i

    def result(self) -> TrainLog:
        seq_len = self.seq_len or self.args_seq_len
        n_gpus = self.n_gpus or self.args_n_gpus
        steps = []
        for number in sorted(self.order):
            entry = self.steps[number]
            if self.framework == "workbench":
                entry["fields"].setdefault("data_wait", False)  # the seed line flags waits
            steps.append(_finish(number, entry, seq_len, n_gpus))
        if not steps:
            if self.unreadable:
                first = self.unreadable[0]
                raise TrainLogError(first.line, f"no step could be read ({self.framework} log): {first.reason}")
            raise TrainLogError(1, "no training step line found; understood formats: " + "; ".join(UNDERSTOOD_FORMATS))
        skipped = tuple(sorted(self.skipped, key=lambda n: n.line))
        return TrainLog(
            framework=self.framework,
            steps=tuple(steps),
            skipped=skipped,
            unreadable=tuple(self.unreadable),
            duplicates_dropped=self.duplicates,
            seq_len=seq_len,
            n_gpus=n_gpus,
        )


def _finite(value: float | None) -> float | None:
    """A derived value, or None when it would not be a real number."""
    if value is None or not math.isfinite(value) or abs(value) > _MAX_VALUE:
        return None
    return value


def _finish(number: int, entry: dict, seq_len: int | None, n_gpus: int | None) -> TrainStep:
    fields = dict(entry["fields"])
    derived = list(fields.pop("_derived", ()))
    step_seq = fields.pop("_seq_len", None) or seq_len
    if fields.get("tokens_per_s") is None and step_seq:
        if fields.get("samples_per_s") is not None:
            fields["tokens_per_s"] = _finite(fields["samples_per_s"] * step_seq)
        elif fields.get("global_batch") is not None and fields.get("step_time_s"):
            fields["tokens_per_s"] = _finite(fields["global_batch"] * step_seq / fields["step_time_s"])
        if fields.get("tokens_per_s") is not None:
            derived.append("tokens_per_s")
    if n_gpus:
        if fields.get("tokens_per_s") is None and fields.get("tokens_per_s_per_gpu") is not None:
            fields["tokens_per_s"] = _finite(fields["tokens_per_s_per_gpu"] * n_gpus)
            derived.append("tokens_per_s")
        elif fields.get("tokens_per_s_per_gpu") is None and fields.get("tokens_per_s") is not None:
            fields["tokens_per_s_per_gpu"] = _finite(fields["tokens_per_s"] / n_gpus)
            derived.append("tokens_per_s_per_gpu")
    known = {f.name for f in dataclasses.fields(TrainStep)}
    values = {k: v for k, v in fields.items() if k in known}
    return TrainStep(step=number, line=entry["line"], rank=entry["rank"], derived=tuple(derived), **values)


__all__ = [
    "FRAMEWORKS",
    "UNDERSTOOD_FORMATS",
    "LineNote",
    "TrainLog",
    "TrainLogError",
    "TrainStep",
    "parse_training_log",
]
