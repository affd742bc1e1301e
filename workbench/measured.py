"""Plan against actual: training logs and measured energy compared with the run plan's prediction.

The "Plan vs actual" panel edits a :class:`MeasuredScenario`: the run plan it compares
against, the training logs read (:class:`RunLog`, the parsed per-step series of
:func:`workbench.trainlog.parse_training_log`, not the text) and one energy log
(:class:`EnergyRecord`, the totals of :func:`workbench.energy.parse_energy_log`). Everything
shown is a pure function of it and of the plan's :class:`~workbench.plan.Prediction`::

    from workbench import measured, plan
    run = measured.run_from_text("run.log", open("run.log").read())
    p = plan.predict(my_plan)
    a = measured.analyse_run(run, my_plan, p)
    a.step_time_s, a.tokens_per_s, a.mfu_recomputed, a.data_wait_s, a.gap, a.notes

How the numbers are made (SI units throughout):

- **Steady state.** Medians are taken over the steps after the warm-up: the first 10% of the
  steps read (:data:`WARMUP_FRACTION`, at least one step when there are three or more), or,
  when ``warmup_steps`` is set, every step numbered up to it. The analysis says which.
- **Throughput.** Tokens/s as the log prints it. A log that prints none has it derived, and
  says so: from samples/s or global batch / step time times the plan's sequence length, or
  from the plan's tokens per step / step time. Per GPU and whole job are converted with the
  log's GPU count (its argument dump) or else the plan's.
- **MFU recomputed** from the tokens/s with the plan's model (6N + 12 L d T FLOPs per token,
  :func:`workbench.mfu.mfu`) and the plan's peak (its GPU at its precision, dense), next to
  the MFU the log reports (or its TFLOP/s over that peak). When they differ by more than
  :data:`MFU_TOLERANCE` (relative) a note says why where the ratio gives it away (6N only,
  recomputed FLOPs counted: HFU, a fixed A100 peak, ...).
- **Data waits.** Seconds where the log prints them (Megatron's batch-generator timer, the seed
  line's ``dataloader wait 0.25 s``); where it only flags a step, the flagged step's time above
  the median unflagged steady step. A step is marked as waiting when it was flagged or waited
  more than :data:`WAIT_MARK_SHARE` of its step. The wait per step is the mean over the steady
  steps, against the plan's ``data_loading`` term.
- **The gap** between measured and predicted step time is split into what the log can
  attribute (data loading) and the rest, which it cannot (compute, communication, ...).
- **Energy.** The measured energy, average power per GPU, tokens per joule and CO2e (with the
  plan's grid intensity and PUE, :mod:`workbench.carbon`) against the plan's for the same
  duration and GPU count, on the same basis: CodeCarbon and a meter without a GPU column
  measure the node (GPU + host: the plan's IT power), nvidia-smi and per-GPU samples the
  GPU boards only. CodeCarbon's own CO2e (its grid and PUE) is kept beside.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np

from workbench import _validate as v
from workbench import carbon, trainlog
from workbench import energy as energy_log
from workbench import mfu as mfu_model
from workbench.plan import Prediction, RunPlan, hardware_flops_per_token, model_flops_per_token
from workbench.scenarios import FIELD_LABELS, MAX_JSON_CHARS, Scenario, register_scenario_type
from workbench.workspace import DEFAULT_PLAN, PlanView, register_follower

__all__ = [
    "MAX_LOG_BYTES", "MAX_RUNS", "MAX_STEPS", "MAX_NOTES", "MAX_SCENARIO_CHARS", "WARMUP_FRACTION",
    "MFU_TOLERANCE", "WAIT_MARK_SHARE", "MeasurementError", "RunLog", "EnergyRecord", "MeasuredScenario",
    "RunAnalysis", "GapAttribution", "EnergyAnalysis", "run_from_text", "run_from_log", "energy_from_text",
    "energy_from_log", "read_measurement", "analyse_run", "analyse_energy", "explain_mfu_difference",
    "steady_mask", "check_size", "unique_name", "series_rows",
]

#: Largest log file read (bytes): past it the panel refuses the file and says how to cut it.
MAX_LOG_BYTES = 20_000_000
#: Logs compared at once (each has its own colour on the charts).
MAX_RUNS = 6
#: Steps kept per log (a 20 MB log holds about 100,000 step lines).
MAX_STEPS = 200_000
#: Skipped and unreadable lines listed per log (the counts cover all of them).
MAX_NOTES = 500
#: Largest scenario JSON (the project refuses scenarios past MAX_JSON_CHARS: keep room).
MAX_SCENARIO_CHARS = MAX_JSON_CHARS // 2
#: Share of the steps read that counts as warm-up when no warm-up is set.
WARMUP_FRACTION = 0.10
#: Relative difference between the logged and the recomputed MFU that earns a note.
MFU_TOLERANCE = 0.05
#: A printed wait longer than this share of its step marks the step as waiting on data.
WAIT_MARK_SHARE = 0.05
#: How close (relative) the logged/recomputed MFU ratio must be to a known counting
#: convention for the note to name it.
_CONVENTION_MATCH = 0.03
#: nanoGPT's estimate_mfu divides by an A100's BF16 peak whatever the GPU (Karpathy's nanoGPT,
#: model.py: ``flops_promised = 312e12``).
A100_BF16_PEAK = 312e12
#: Stored values keep this many significant digits (logs print 3 to 6).
_DIGITS = 7
_MAX_VALUE = 1e30
_NAME_CHARS = 200

#: Per-step columns of a RunLog, in CSV order.
STEP_FIELDS: tuple[str, ...] = (
    "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "mfu", "flops_per_gpu", "loss", "data_wait",
    "samples_per_s", "global_batch",
)


class MeasurementError(v.InputError):
    """A file that is neither a training log nor an energy log, or one too large to keep."""


# -- small checks -------------------------------------------------------------------------------------
def _round(value: float | None) -> float | None:
    if value is None:
        return None
    return float(f"{float(value):.{_DIGITS}g}")


def _name(name: str, value: Any) -> str:
    text = v.text(name, value)
    if len(text) > _NAME_CHARS:
        raise v.InputError(name, f"must be at most {_NAME_CHARS} characters, got {len(text)}")
    return text


def _optional_number(name: str, value: Any, *, low: float = 0.0, low_open: bool = False) -> float | None:
    if value is None:
        return None
    result = v.number(name, value)
    if result < low or (low_open and result == low) or abs(result) > _MAX_VALUE:
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        raise v.InputError(name, f"must be {bound} and at most {_MAX_VALUE:g}, got {result:g}")
    return result


def _optional_count(name: str, value: Any, low: int = 1) -> int | None:
    return None if value is None else v.integer(name, value, low, v.MAX_WHOLE)


def _column(name: str, values: Any, n: int, check: Callable[[str, Any], Any]) -> tuple:
    items = v.items(name, values)
    if len(items) != n:
        raise v.InputError(name, f"must hold one value per step ({n}), got {len(items)}")
    return tuple(check(f"{name}[{i}]", item) for i, item in enumerate(items))


def _wait(name: str, value: Any) -> bool | float | None:
    if value is None or isinstance(value, bool):
        return value
    return _optional_number(name, value)


def _notes(name: str, value: Any) -> tuple[tuple[int, str, str], ...]:
    out = []
    items = v.items(name, value)
    if len(items) > MAX_NOTES:
        raise v.InputError(name, f"must list at most {MAX_NOTES} lines, got {len(items)}")
    for i, item in enumerate(items):
        entry = v.items(f"{name}[{i}]", item, "a (line, reason, text) triple")
        if len(entry) != 3:
            raise v.InputError(f"{name}[{i}]", f"must be a (line, reason, text) triple, got {len(entry)} values")
        line = v.integer(f"{name}[{i}].line", entry[0], 1, v.MAX_WHOLE)
        reason, text = entry[1], entry[2]
        for part, what in ((reason, "reason"), (text, "text")):
            if not isinstance(part, str) or len(part) > 400:
                raise v.InputError(f"{name}[{i}].{what}", "must be text of at most 400 characters")
        out.append((line, reason, text))
    return tuple(out)


# -- a training log, parsed ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RunLog:
    """The steps of one training log, as :func:`workbench.trainlog.parse_training_log` read
    them (SI units; None where the log does not print a value), and what was not read.

    ``name``: the file's name (the legend names it). ``steps``: step numbers, increasing; each
    other column holds one value per step. ``data_wait``: True/False where the log flags a
    step, seconds where it prints the wait. ``seq_len`` and ``n_gpus``: from the log's argument
    dump, None when it has none. ``derived``: fields the parser derived from other printed
    values. ``notes``: (line, reason, text) of lines not read, at most :data:`MAX_NOTES`;
    ``lines_skipped`` and ``lines_unreadable`` count all of them.
    """

    name: str
    framework: str
    steps: tuple[int, ...]
    step_time_s: tuple[float | None, ...] = ()
    tokens_per_s: tuple[float | None, ...] = ()
    tokens_per_s_per_gpu: tuple[float | None, ...] = ()
    mfu: tuple[float | None, ...] = ()
    flops_per_gpu: tuple[float | None, ...] = ()
    loss: tuple[float | None, ...] = ()
    data_wait: tuple[bool | float | None, ...] = ()
    samples_per_s: tuple[float | None, ...] = ()
    global_batch: tuple[int | None, ...] = ()
    seq_len: int | None = None
    n_gpus: int | None = None
    derived: tuple[str, ...] = ()
    notes: tuple[tuple[int, str, str], ...] = ()
    lines_skipped: int = 0
    lines_unreadable: int = 0
    duplicates_dropped: int = 0

    def __post_init__(self) -> None:
        s = _setter(self)
        s("name", _name("name", self.name))
        s("framework", v.choice("framework", self.framework, trainlog.FRAMEWORKS))
        steps = v.items("steps", self.steps)
        if not steps:
            raise v.InputError("steps", "must hold at least one step")
        if len(steps) > MAX_STEPS:
            raise v.InputError("steps", f"must hold at most {MAX_STEPS:,} steps, got {len(steps):,}")
        numbers = tuple(v.integer(f"steps[{i}]", x, 0, v.MAX_WHOLE) for i, x in enumerate(steps))
        if any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
            raise v.InputError("steps", "must be increasing step numbers, each once")
        s("steps", numbers)
        n = len(numbers)
        for name in STEP_FIELDS:
            value = getattr(self, name)
            if isinstance(value, (tuple, list)) and len(value) == 0:
                s(name, (None,) * n)  # a column the log does not have
                continue
            if name == "data_wait":
                s(name, _column(name, value, n, _wait))
            elif name == "global_batch":
                s(name, _column(name, value, n, lambda k, x: _optional_count(k, x)))
            elif name == "loss":
                s(name, _column(name, value, n, lambda k, x: None if x is None else _bounded_any(k, x)))
            elif name in ("step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "flops_per_gpu"):
                s(name, _column(name, value, n, lambda k, x: _optional_number(k, x, low_open=True)))
            else:
                s(name, _column(name, value, n, _optional_number))
        s("seq_len", _optional_count("seq_len", self.seq_len))
        s("n_gpus", _optional_count("n_gpus", self.n_gpus))
        derived = v.items("derived", self.derived)
        for i, item in enumerate(derived):
            v.choice(f"derived[{i}]", item, STEP_FIELDS)
        s("derived", tuple(derived))
        s("notes", _notes("notes", self.notes))
        for name in ("lines_skipped", "lines_unreadable", "duplicates_dropped"):
            s(name, v.integer(name, getattr(self, name), 0, v.MAX_WHOLE))

    def __len__(self) -> int:
        return len(self.steps)

    def has(self, field: str) -> bool:
        """Whether any step holds ``field``."""
        return any(x is not None for x in getattr(self, field))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the columns side by side under "columns" (compact for long logs)."""
        columns = {"step": list(self.steps)}
        for name in STEP_FIELDS:
            values = getattr(self, name)
            if any(x is not None for x in values):
                columns[name] = list(values)
        return {
            "name": self.name, "framework": self.framework, "columns": columns, "seq_len": self.seq_len,
            "n_gpus": self.n_gpus, "derived": list(self.derived), "notes": [list(n) for n in self.notes],
            "lines_skipped": self.lines_skipped, "lines_unreadable": self.lines_unreadable,
            "duplicates_dropped": self.duplicates_dropped,
        }

    @classmethod
    def from_dict(cls, data: Any, name: str = "run") -> RunLog:
        if not isinstance(data, Mapping):
            raise v.InputError(name, f"must be an object, got {v._describe(data)}")
        known = {"name", "framework", "columns", "seq_len", "n_gpus", "derived", "notes", "lines_skipped",
                 "lines_unreadable", "duplicates_dropped"}
        for key in data:
            if key not in known:
                raise v.InputError(f"{name}.{key}", "is not a field of a training log")
        for key in ("name", "framework", "columns"):
            if key not in data:
                raise v.InputError(f"{name}.{key}", "is required")
        columns = data["columns"]
        if not isinstance(columns, Mapping):
            raise v.InputError(f"{name}.columns", f"must be an object of columns, got {v._describe(columns)}")
        for key in columns:
            if key != "step" and key not in STEP_FIELDS:
                raise v.InputError(f"{name}.columns.{key}", "is not a step field")
        if "step" not in columns:
            raise v.InputError(f"{name}.columns.step", "is required")
        fields = {k: data[k] for k in data if k != "columns"}
        fields.update({k: columns[k] for k in columns if k != "step"})
        fields["steps"] = columns["step"]
        for key in ("derived", "notes"):
            if key in fields and fields[key] is None:
                fields[key] = ()
        try:
            return cls(**fields)
        except v.InputError as exc:
            raise v.InputError(f"{name}.{exc.parameter}", str(exc).split(": ", 1)[-1]) from None


def _setter(obj: Any) -> Callable[[str, Any], None]:
    """A setter for the fields of a frozen dataclass being checked in ``__post_init__``."""
    return lambda name, value: object.__setattr__(obj, name, value)


def _bounded_any(name: str, value: Any) -> float:
    result = v.number(name, value)
    if abs(result) > _MAX_VALUE:
        raise v.InputError(name, f"must be at most {_MAX_VALUE:g} in magnitude, got {result:g}")
    return result


def unique_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or "name (2)", "name (3)" ... when another log already has it (two clusters'
    ``train.log``): the legend must tell them apart."""
    base = (name.strip() or "log")[:_NAME_CHARS - 8]
    if base not in taken:
        return base
    k = 2
    while f"{base} ({k})" in taken:
        k += 1
    return f"{base} ({k})"


def _check_text(text: Any, what: str) -> str:
    if isinstance(text, bytes):
        raise MeasurementError("text", f"the {what} must be text (decode the file first), got bytes")
    if not isinstance(text, str):
        raise MeasurementError("text", f"the {what} must be text, got {v._describe(text)}")
    if len(text.encode("utf-8", errors="replace")) > MAX_LOG_BYTES:
        raise MeasurementError("text", too_large_message(len(text.encode("utf-8", errors="replace"))))
    return text


def too_large_message(size: int) -> str:
    """What to say about a file of ``size`` bytes, past :data:`MAX_LOG_BYTES`."""
    return (f"is {size / 1e6:.1f} MB; files above {MAX_LOG_BYTES / 1e6:.0f} MB are not read. Keep the step "
            "lines you want to compare (e.g. grep the lines with 'iteration' or 'step' into a new file)")


def _line_notes(log_notes: Sequence[Any], prefix: str = "") -> list[tuple[int, str, str]]:
    return [(n.line, (prefix + n.reason)[:400], (n.text or "")[:400]) for n in log_notes]


def run_from_log(name: str, log: trainlog.TrainLog) -> RunLog:
    """A :class:`RunLog` of a parsed log (values rounded to 7 significant digits, lines not
    read kept up to :data:`MAX_NOTES`)."""
    v.instance("log", log, trainlog.TrainLog)
    columns: dict[str, list] = {f: [] for f in STEP_FIELDS}
    derived: set[str] = set()
    for step in log.steps:
        for f in STEP_FIELDS:
            value = getattr(step, f)
            if f == "data_wait" and isinstance(value, bool):
                columns[f].append(value)
            elif f == "global_batch":
                columns[f].append(value)
            else:
                columns[f].append(_round(value))
        derived.update(d for d in step.derived if d in STEP_FIELDS)
    notes = sorted(_line_notes(log.skipped) + _line_notes(log.unreadable, "step not read: "))
    return RunLog(
        name=_name("name", name[:_NAME_CHARS]), framework=log.framework, steps=tuple(s.step for s in log.steps),
        **{f: tuple(columns[f]) for f in STEP_FIELDS},
        seq_len=log.seq_len, n_gpus=log.n_gpus, derived=tuple(sorted(derived)), notes=tuple(notes[:MAX_NOTES]),
        lines_skipped=len(log.skipped), lines_unreadable=len(log.unreadable),
        duplicates_dropped=log.duplicates_dropped,
    )


def run_from_text(name: str, text: str) -> RunLog:
    """Parse a training log's ``text`` (the file called ``name``). Only what the log says is
    kept; the plan's sequence length and GPU count come in when it is compared
    (:func:`analyse_run`), so a changed plan is compared anew. Raises
    :class:`workbench.trainlog.TrainLogError` (with a line number) or :class:`MeasurementError`."""
    text = _check_text(text, "training log")
    log = trainlog.parse_training_log(text)
    if len(log.steps) > MAX_STEPS:
        raise MeasurementError("text", f"holds {len(log.steps):,} steps; at most {MAX_STEPS:,} are kept: "
                                       "keep a part of the run")
    return run_from_log(name, log)


# -- an energy log, summed up -------------------------------------------------------------------------
@dataclass(frozen=True)
class EnergyRecord:
    """The totals of one energy log (:func:`workbench.energy.parse_energy_log`), SI units.

    ``format``: one of :data:`workbench.energy.FORMATS`. ``energy_j``, ``duration_s``,
    ``avg_power_w`` (the whole file: all GPUs, or CodeCarbon's whole machine), ``peak_power_w``;
    ``gpu_energy_j``: CodeCarbon's GPU part; ``n_gpus``: GPUs measured (CodeCarbon's gpu_count,
    the GPUs of a sample file), None when the file does not say; ``per_gpu``: True when the
    file measures GPU boards only (nvidia-smi, samples with a GPU column). CodeCarbon's own
    ``emissions_kg``, ``country_name``, ``region`` and ``reported_pue``. ``notes`` from the
    parser; ``skipped`` lines (line, reason, text) up to :data:`MAX_NOTES`, ``lines_skipped``
    all of them.
    """

    name: str
    format: str
    energy_j: float | None = None
    duration_s: float | None = None
    avg_power_w: float | None = None
    peak_power_w: float | None = None
    gpu_energy_j: float | None = None
    n_gpus: int | None = None
    per_gpu: bool = False
    emissions_kg: float | None = None
    country_name: str | None = None
    region: str | None = None
    reported_pue: float | None = None
    notes: tuple[str, ...] = ()
    skipped: tuple[tuple[int, str, str], ...] = ()
    lines_skipped: int = 0

    def __post_init__(self) -> None:
        s = _setter(self)
        s("name", _name("name", self.name))
        s("format", v.choice("format", self.format, energy_log.FORMATS))
        for name in ("energy_j", "duration_s", "avg_power_w", "peak_power_w", "gpu_energy_j", "emissions_kg"):
            s(name, _optional_number(name, getattr(self, name)))
        s("reported_pue", _optional_number("reported_pue", self.reported_pue))
        s("n_gpus", _optional_count("n_gpus", self.n_gpus))
        s("per_gpu", v.flag("per_gpu", self.per_gpu))
        for name in ("country_name", "region"):
            value = getattr(self, name)
            if value is not None:
                if not isinstance(value, str) or len(value) > _NAME_CHARS:
                    raise v.InputError(name, f"must be text of at most {_NAME_CHARS} characters or null")
        notes = v.items("notes", self.notes)
        for i, note in enumerate(notes):
            if not isinstance(note, str) or len(note) > 400:
                raise v.InputError(f"notes[{i}]", "must be text of at most 400 characters")
        if len(notes) > MAX_NOTES:
            raise v.InputError("notes", f"must hold at most {MAX_NOTES} notes")
        s("notes", tuple(notes))
        s("skipped", _notes("skipped", self.skipped))
        s("lines_skipped", v.integer("lines_skipped", self.lines_skipped, 0, v.MAX_WHOLE))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["notes"] = list(self.notes)
        out["skipped"] = [list(n) for n in self.skipped]
        return out

    @classmethod
    def from_dict(cls, data: Any, name: str = "energy") -> EnergyRecord:
        if not isinstance(data, Mapping):
            raise v.InputError(name, f"must be an object, got {v._describe(data)}")
        known = {f.name for f in dataclasses.fields(cls)}
        for key in data:
            if key not in known:
                raise v.InputError(f"{name}.{key}", "is not a field of an energy log")
        for key in ("name", "format"):
            if key not in data:
                raise v.InputError(f"{name}.{key}", "is required")
        try:
            return cls(**dict(data))
        except v.InputError as exc:
            raise v.InputError(f"{name}.{exc.parameter}", str(exc).split(": ", 1)[-1]) from None


def energy_from_log(name: str, log: energy_log.EnergyLog) -> EnergyRecord:
    """The :class:`EnergyRecord` of a parsed energy log."""
    v.instance("log", log, energy_log.EnergyLog)
    n_gpus: int | None = None
    gpu_energy: float | None = None
    reported_pue: float | None = None
    per_gpu = False
    if log.format == "codecarbon":
        counts = {r.gpu_count for r in log.runs if r.gpu_count}
        n_gpus = max(counts) if counts else None
        # the runs' GPU parts, counted like the totals: each run once, by its longest row
        longest: dict[Any, Any] = {}
        for i, r in enumerate(log.runs):
            key = r.run_id or f"row{i}"
            if key not in longest or (r.duration_s or 0) >= (longest[key].duration_s or 0):
                longest[key] = r
        parts = [r.gpu_energy_j for r in longest.values()]
        gpu_energy = sum(parts) if parts and all(p is not None for p in parts) else None
        pues = {r.pue for r in log.runs if r.pue is not None}
        reported_pue = pues.pop() if len(pues) == 1 else None
    elif log.gpus:
        named = [g for g in log.gpus if g.gpu is not None]
        n_gpus = len(named) or None
        per_gpu = bool(named) or log.format == "nvidia-smi"
        if log.format == "nvidia-smi" and n_gpus is None:
            n_gpus = len(log.gpus)
    skipped = [(n.line, n.reason[:400], (n.text or "")[:400]) for n in log.skipped]
    return EnergyRecord(
        name=_name("name", name[:_NAME_CHARS]), format=log.format, energy_j=log.energy_j,
        duration_s=log.duration_s, avg_power_w=log.avg_power_w, peak_power_w=log.peak_power_w,
        gpu_energy_j=gpu_energy, n_gpus=n_gpus, per_gpu=per_gpu, emissions_kg=log.emissions_kg,
        country_name=(log.country_name or None) and log.country_name[:_NAME_CHARS],
        region=(log.region or None) and log.region[:_NAME_CHARS], reported_pue=reported_pue,
        notes=tuple(n[:400] for n in log.notes[:MAX_NOTES]), skipped=tuple(skipped[:MAX_NOTES]),
        lines_skipped=len(log.skipped),
    )


def energy_from_text(name: str, text: str) -> EnergyRecord:
    """Parse an energy log's ``text`` (CodeCarbon, nvidia-smi, power samples). Raises
    :class:`workbench.energy.EnergyLogError` or :class:`MeasurementError`."""
    text = _check_text(text, "energy log")
    return energy_from_log(name, energy_log.parse_energy_log(text))


def read_measurement(name: str, text: str) -> RunLog | EnergyRecord:
    """Whichever the text is: a training log or an energy log. A ``.csv`` is tried as an energy
    log first, anything else as a training log first. Raises :class:`MeasurementError` naming
    both readers' reasons when it is neither."""
    text = _check_text(text, "file")
    readers: list[tuple[str, Callable[[str, str], Any]]] = [("a training log", run_from_text),
                                                             ("an energy log", energy_from_text)]
    if str(name).lower().endswith(".csv"):
        readers.reverse()
    reasons = []
    for what, reader in readers:
        try:
            return reader(name, text)
        except (trainlog.TrainLogError, energy_log.EnergyLogError) as exc:
            reasons.append(f"not {what}: {str(exc).removeprefix('text: ')}")
    raise MeasurementError("text", "; ".join(reasons))


# -- the scenario --------------------------------------------------------------------------------------
FIELD_LABELS.update({
    "plan": "Run plan compared against",
    "runs": "Training logs",
    "energy": "Energy log",
    "warmup_steps": "Warm-up (steps up to)",
})


@register_scenario_type
@dataclass(frozen=True)
class MeasuredScenario(Scenario):
    """Plan vs actual panel: the run plan compared against, the training logs and one energy
    log read, and the warm-up rule (``warmup_steps`` None: the first 10% of each log's steps;
    a number: every step numbered up to it)."""

    kind: ClassVar[str] = "measured"
    schema_version: ClassVar[int] = 1

    plan: RunPlan = DEFAULT_PLAN
    runs: tuple[RunLog, ...] = ()
    energy: EnergyRecord | None = None
    warmup_steps: int | None = None

    def _check(self) -> None:
        plan = self.plan
        if isinstance(plan, Mapping):
            try:
                plan = RunPlan.from_dict(plan)
            except v.InputError as exc:
                raise v.InputError(f"plan.{exc.parameter}", str(exc).split(": ", 1)[-1]) from None
        self._set("plan", v.instance("plan", plan, RunPlan, "a run plan"))
        runs = v.items("runs", self.runs)
        if len(runs) > MAX_RUNS:
            raise v.InputError("runs", f"must hold at most {MAX_RUNS} logs, got {len(runs)}")
        checked = []
        for i, run in enumerate(runs):
            if isinstance(run, RunLog):
                checked.append(run)
            else:
                checked.append(RunLog.from_dict(run, f"runs[{i}]"))
        names = [r.name for r in checked]
        if len(set(names)) != len(names):
            raise v.InputError("runs", "must name each log once (the legend tells them apart by name)")
        self._set("runs", tuple(checked))
        if self.energy is not None and not isinstance(self.energy, EnergyRecord):
            self._set("energy", EnergyRecord.from_dict(self.energy, "energy"))
        if self.warmup_steps is not None:
            self._set("warmup_steps", v.integer("warmup_steps", self.warmup_steps, 0, v.MAX_WHOLE))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "schema_version": self.schema_version, "plan": self.plan.to_dict(),
            "runs": [r.to_dict() for r in self.runs],
            "energy": self.energy.to_dict() if self.energy is not None else None,
            "warmup_steps": self.warmup_steps,
        }

    def run(self, name: str) -> RunLog:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def with_run(self, run: RunLog) -> Self:
        """This scenario with ``run`` added (renamed "name (2)" when its name is taken)."""
        v.instance("run", run, RunLog)
        if len(self.runs) >= MAX_RUNS:
            raise v.InputError("runs", f"holds {MAX_RUNS} logs already, the most compared at once: remove one first")
        name = unique_name(run.name, [r.name for r in self.runs])
        if name != run.name:
            run = dataclasses.replace(run, name=name)
        return self.with_changes(runs=(*self.runs, run))

    def without_run(self, name: str) -> Self:
        return self.with_changes(runs=tuple(r for r in self.runs if r.name != name))


def check_size(scenario: MeasuredScenario) -> int:
    """The length of ``scenario``'s JSON; raises :class:`MeasurementError` past
    :data:`MAX_SCENARIO_CHARS` (the project would refuse to read it back)."""
    v.instance("scenario", scenario, MeasuredScenario)
    size = len(scenario.to_json())
    if size > MAX_SCENARIO_CHARS:
        raise MeasurementError("runs", f"the logs' steps would take {size / 1e6:.1f} MB in the project, more than "
                                       f"the {MAX_SCENARIO_CHARS / 1e6:.1f} MB a scenario may hold: remove a log or "
                                       "keep a shorter part of the run")
    return size


def _follow(scenario: MeasuredScenario, view: PlanView) -> MeasuredScenario:
    """The logs are compared with the plan of the window (Local override keeps the one saved)."""
    return scenario if scenario.plan == view.plan else scenario.with_changes(plan=view.plan)


register_follower(MeasuredScenario.kind, _follow)


# -- analysis -----------------------------------------------------------------------------------------
def _median(values: Sequence[float | None]) -> float | None:
    known = [x for x in values if x is not None]
    return statistics.median(known) if known else None


def steady_mask(steps: Sequence[int], warmup_steps: int | None = None) -> tuple[tuple[bool, ...], str]:
    """Which steps are steady state, and the rule in words. ``warmup_steps`` None skips the first
    :data:`WARMUP_FRACTION` of the steps (at least one of three or more); a number skips every
    step numbered up to it."""
    n = len(steps)
    if warmup_steps is None:
        skip = math.ceil(WARMUP_FRACTION * n) if n >= 3 else 0
        mask = tuple(i >= skip for i in range(n))
        rule = (f"first {WARMUP_FRACTION:.0%} of the steps skipped as warm-up ({skip} of {n})" if skip
                else "no warm-up skipped (fewer than 3 steps)")
        return mask, rule
    mask = tuple(step > warmup_steps for step in steps)
    skip = n - sum(mask)
    return mask, f"steps up to {warmup_steps:,} skipped as warm-up ({skip} of {n})"


@dataclass(frozen=True)
class GapAttribution:
    """Measured minus predicted step time (s), and what the log lets us attribute of it."""

    total_s: float
    data_loading_s: float | None  # measured data wait per step - the plan's data_loading term
    rest_s: float | None  # the remainder: compute, communication ... (the log cannot split it)


@dataclass(frozen=True)
class RunAnalysis:
    """One log compared with the plan. Per-step tuples hold one entry per step (None where
    unknown); the medians are over the steady steps."""

    name: str
    framework: str
    steps: tuple[int, ...]
    step_time_s: tuple[float | None, ...]
    tokens_per_s: tuple[float | None, ...]  # whole job (derived where the log has none)
    tokens_per_s_per_gpu: tuple[float | None, ...]
    mfu_logged: tuple[float | None, ...]  # the log's MFU, or its TFLOP/s over the plan's peak
    mfu_recomputed: tuple[float | None, ...]  # from tokens/s with the plan's model and peak
    wait_s: tuple[float | None, ...]  # seconds spent waiting for data (estimated for flags)
    waited: tuple[bool, ...]  # marked as waiting on data
    steady: tuple[bool, ...]
    steady_rule: str
    n_gpus: int
    n_gpus_from_log: bool
    median_step_time_s: float | None
    median_tokens_per_s: float | None
    median_tokens_per_s_per_gpu: float | None
    median_mfu_logged: float | None
    median_mfu_recomputed: float | None
    mfu_logged_source: str  # "mfu" (printed), "flops" (TFLOP/s over the peak) or ""
    data_wait_s: float | None  # mean over the steady steps
    data_wait_basis: str
    gap: GapAttribution | None
    comparable_steps: bool  # the run's steps hold the plan's tokens (step times compare)
    train_time_s: float | None  # the plan's tokens at the measured rate per GPU on the plan's GPUs
    mfu_note: str
    notes: tuple[str, ...]

    @property
    def steady_count(self) -> int:
        return sum(self.steady)

    @property
    def waited_steps(self) -> tuple[int, ...]:
        return tuple(s for s, w in zip(self.steps, self.waited, strict=True) if w)

    @property
    def first_steady_step(self) -> int | None:
        return next((s for s, on in zip(self.steps, self.steady, strict=True) if on), None)


def _tokens(run: RunLog, plan: RunPlan, n_gpus: int) -> tuple[list[float | None], list[float | None], list[str]]:
    """Whole-job and per-GPU tokens/s per step, with how they were derived (notes)."""
    job: list[float | None] = []
    per_gpu: list[float | None] = []
    sources: set[str] = set()
    seq = run.seq_len or plan.seq_len
    seq_from = "the log's" if run.seq_len else "the plan's"
    for i in range(len(run)):
        t, g = run.tokens_per_s[i], run.tokens_per_s_per_gpu[i]
        if t is None and g is None:
            if run.samples_per_s[i] is not None:
                t = run.samples_per_s[i] * seq
                sources.add(f"samples/s x {seq_from} sequence length ({seq:,})")
            elif run.global_batch[i] is not None and run.step_time_s[i]:
                t = run.global_batch[i] * seq / run.step_time_s[i]
                sources.add(f"the log's global batch x {seq_from} sequence length ({seq:,}) / step time")
            elif run.step_time_s[i]:
                t = plan.tokens_per_step / run.step_time_s[i]
                sources.add(f"the plan's tokens per step ({plan.tokens_per_step:,}) / step time")
        if t is None and g is not None:
            t = g * n_gpus
        if g is None and t is not None:
            g = t / n_gpus
        job.append(t if t is None or math.isfinite(t) else None)
        per_gpu.append(g if g is None or math.isfinite(g) else None)
    notes = [f"Tokens/s derived from {s}: the log does not print it." for s in sorted(sources)]
    return job, per_gpu, notes


def explain_mfu_difference(logged: float, recomputed: float, plan: RunPlan, peak_flops: float) -> str:
    """A note when the logged MFU differs from the recomputed one by more than
    :data:`MFU_TOLERANCE` (relative): the ratio, and the counting convention it matches when
    one does ("" when they agree)."""
    logged = v.positive("logged", logged)
    recomputed = v.positive("recomputed", recomputed)
    v.instance("plan", plan, RunPlan)
    peak_flops = v.positive("peak_flops", peak_flops)
    ratio = logged / recomputed
    if abs(ratio - 1.0) <= MFU_TOLERANCE:
        return ""
    ours = model_flops_per_token(plan)
    six_n = 6.0 * plan.n_params
    attention = 12.0 * plan.n_layers * plan.d_model * plan.seq_len
    conventions = [
        (six_n / ours, "counts 6N FLOPs per token only, without the attention FLOPs (12·L·d·T)"),
        ((six_n + attention / 2) / ours, "counts the attention FLOPs at half (causal masking: 6·L·d·T)"),
        (4.0 / 3.0, "counts a full recomputation pass too: that is HFU (hardware FLOPs), 4/3 of MFU"),
        (peak_flops / A100_BF16_PEAK, "divides by an A100's 312 TFLOP/s BF16 peak whatever the GPU "
                                      "(nanoGPT's estimate_mfu does)"),
        (0.5, "divides by a 2:4 sparse peak (twice the dense one)"),
    ]
    if plan.recompute != "none":
        conventions.insert(0, (hardware_flops_per_token(plan) / ours,
                               f"counts the recomputed FLOPs ({plan.recompute} recomputation): that is HFU, not MFU"))
    reason, best = "", math.inf
    for expected, text in conventions:
        off = abs(ratio / expected - 1.0)
        if off < best:
            best, reason = off, text
    direction = "higher" if ratio > 1 else "lower"
    head = (f"The logged MFU is {abs(ratio - 1):.0%} {direction} than the MFU recomputed from tokens/s with the "
            "plan's model (6N + 12·L·d·T) and the plan's dense peak")
    if best <= _CONVENTION_MATCH:
        return f"{head}: the ratio ({ratio:.3g}) says the framework {reason}."
    return (f"{head} (ratio {ratio:.3g}): the framework counts FLOPs another way (attention FLOPs, or recomputed "
            "work: HFU rather than MFU), divides by another peak, or the run's model is not the plan's.")


def analyse_run(run: RunLog, plan: RunPlan, prediction: Prediction | None = None, *,
                peak_flops: float | None = None, warmup_steps: int | None = None) -> RunAnalysis:
    """Compare one log with the plan (and its prediction, when it has one): the per-step series
    for the charts and the steady-state medians, data waits and gap for the table.
    ``peak_flops`` (dense, one GPU, the plan's precision) defaults to the prediction's."""
    v.instance("run", run, RunLog)
    v.instance("plan", plan, RunPlan)
    if prediction is not None:
        v.instance("prediction", prediction, Prediction)
    if peak_flops is None and prediction is not None:
        peak_flops = prediction.peak_flops
    if peak_flops is not None:
        peak_flops = v.positive("peak_flops", peak_flops)
    if warmup_steps is not None:
        warmup_steps = v.integer("warmup_steps", warmup_steps, 0, v.MAX_WHOLE)
    notes: list[str] = []
    n_gpus = run.n_gpus or plan.n_gpus
    if run.n_gpus is None and (run.has("tokens_per_s") != run.has("tokens_per_s_per_gpu")):
        notes.append(f"The log does not say its GPU count: the plan's {plan.n_gpus:,} GPUs convert between "
                     "whole-job and per-GPU tokens/s.")
    elif run.n_gpus is not None and run.n_gpus != plan.n_gpus:
        notes.append(f"The run used {run.n_gpus:,} GPUs, the plan {plan.n_gpus:,}: compare per-GPU numbers and MFU.")
    job, per_gpu, token_notes = _tokens(run, plan, n_gpus)
    notes.extend(token_notes)
    steady, rule = steady_mask(run.steps, warmup_steps)

    recomputed: list[float | None] = []
    logged: list[float | None] = []
    source = ""
    if run.has("mfu"):
        source = "mfu"
    elif run.has("flops_per_gpu") and peak_flops is not None:
        source = "flops"
    known = [i for i, g in enumerate(per_gpu) if g is not None]
    values = [None] * len(run)
    if known and peak_flops is not None:  # one vectorised call: a redraw of 100,000 steps stays quick
        rates = np.array([per_gpu[i] for i in known], dtype=float)
        for i, m in zip(known, np.atleast_1d(mfu_model.mfu(plan.n_params, rates, 1, peak_flops, plan.n_layers,
                                                            plan.d_model, plan.seq_len)), strict=True):
            values[i] = float(m)
    for i in range(len(run)):
        recomputed.append(values[i])
        if source == "mfu":
            logged.append(run.mfu[i])
        elif source == "flops" and run.flops_per_gpu[i] is not None:
            logged.append(run.flops_per_gpu[i] / peak_flops)
        else:
            logged.append(None)

    # data waits: printed seconds, or a flagged step's time above the median unflagged steady step
    def unhurried(t: float | None, w: Any) -> bool:
        return w is not True and not (isinstance(w, float) and t and w > WAIT_MARK_SHARE * t)

    # the median step that did not wait: over the steady steps, or all steps when every steady one waited
    calm = (_median([t for t, w, on in zip(run.step_time_s, run.data_wait, steady, strict=True) if on and unhurried(t, w)])
            or _median([t for t, w in zip(run.step_time_s, run.data_wait, strict=True) if unhurried(t, w)]))
    overall = _median(run.step_time_s)
    wait_s: list[float | None] = []
    waited: list[bool] = []
    printed = flagged = False
    for t, w in zip(run.step_time_s, run.data_wait, strict=True):
        if w is None:
            wait_s.append(None)
            waited.append(False)
        elif isinstance(w, bool):
            flagged = True
            if not w:
                wait_s.append(0.0)
            elif t is not None and calm is not None:
                wait_s.append(max(0.0, t - calm))
            else:
                wait_s.append(None)
            waited.append(w)
        else:
            printed = True
            wait_s.append(w)
            reference = t if t else overall
            waited.append(w > WAIT_MARK_SHARE * reference if reference else w > 0)
    steady_waits = [w for w, on in zip(wait_s, steady, strict=True) if on]
    known = [w for w in steady_waits if w is not None]
    data_wait = sum(known) / len(known) if known and len(known) == len(steady_waits) else None
    if printed and flagged:
        basis = "seconds the log prints, and flagged steps' time above the median unflagged step"
    elif printed:
        basis = "seconds the log prints for each step (mean over the steady steps)"
    elif flagged:
        basis = "flagged steps' time above the median unflagged steady step (mean over the steady steps)"
    else:
        basis = "the log does not report data waits"
    if known and data_wait is None:
        basis += "; some steady steps flag a wait without a step time, so no mean is given"

    med_time = _median([t for t, on in zip(run.step_time_s, steady, strict=True) if on])
    med_job = _median([t for t, on in zip(job, steady, strict=True) if on])
    med_gpu = _median([t for t, on in zip(per_gpu, steady, strict=True) if on])
    med_logged = _median([m for m, on in zip(logged, steady, strict=True) if on])
    med_recomputed = _median([m for m, on in zip(recomputed, steady, strict=True) if on])
    if not any(steady):
        notes.append("No step is past the warm-up: lower the warm-up to compare.")

    # do the run's steps hold the plan's tokens? (otherwise step times compare different steps)
    per_step = _median([t * s for t, s, on in zip(job, run.step_time_s, steady, strict=True)
                        if on and t is not None and s is not None])
    batches = {b for b in run.global_batch if b is not None}
    comparable = True
    if batches and plan.global_batch not in batches:
        comparable = False
        notes.append(f"The run's global batch ({', '.join(f'{b:,}' for b in sorted(batches))}) is not the plan's "
                     f"({plan.global_batch:,}): its step times are of other steps; compare tokens/s.")
    elif per_step is not None and abs(per_step / plan.tokens_per_step - 1.0) > MFU_TOLERANCE:
        comparable = False
        notes.append(f"The run's steps hold about {per_step:,.0f} tokens, the plan's {plan.tokens_per_step:,}: step "
                     "times compare different steps; compare tokens/s.")

    gap = None
    if prediction is not None and med_time is not None and comparable:
        total = med_time - prediction.step_time_s
        data_part = data_wait - prediction.breakdown["data_loading"] if data_wait is not None else None
        gap = GapAttribution(total_s=total, data_loading_s=data_part,
                             rest_s=total - data_part if data_part is not None else None)

    mfu_note = ""
    if med_recomputed is not None and med_recomputed > 1.0:
        mfu_note = (f"The recomputed MFU is {med_recomputed:.0%}, above 100%: the run's model or GPU is not the "
                    "plan's (the plan's model and peak turn its tokens/s into more FLOP/s than the GPU has).")
    elif med_logged and med_recomputed and peak_flops is not None:
        mfu_note = explain_mfu_difference(med_logged, med_recomputed, plan, peak_flops)
    if source == "flops":
        notes.append("The log prints TFLOP/s per GPU, not MFU: the logged MFU is that over the plan's dense peak.")
    if "tokens_per_s" in run.derived:
        notes.append("Tokens/s derived from the log's own batch and sequence length (its argument dump).")
    train_time = plan.train_tokens / (med_gpu * plan.n_gpus) if med_gpu else None

    return RunAnalysis(
        name=run.name, framework=run.framework, steps=run.steps, step_time_s=run.step_time_s,
        tokens_per_s=tuple(job), tokens_per_s_per_gpu=tuple(per_gpu), mfu_logged=tuple(logged),
        mfu_recomputed=tuple(recomputed), wait_s=tuple(wait_s), waited=tuple(waited), steady=steady,
        steady_rule=rule, n_gpus=n_gpus, n_gpus_from_log=run.n_gpus is not None,
        median_step_time_s=med_time, median_tokens_per_s=med_job, median_tokens_per_s_per_gpu=med_gpu,
        median_mfu_logged=med_logged, median_mfu_recomputed=med_recomputed, mfu_logged_source=source,
        data_wait_s=data_wait, data_wait_basis=basis, gap=gap, comparable_steps=comparable,
        train_time_s=train_time if train_time is None or math.isfinite(train_time) else None,
        mfu_note=mfu_note, notes=tuple(notes),
    )


@dataclass(frozen=True)
class EnergyAnalysis:
    """Measured energy against the plan's for the same duration and GPU count. ``basis``:
    "node" (GPU + host: the plan's IT power) or "gpu" (GPU boards). Energies in J, powers in W
    per GPU, CO2e in kg; None where the file or the plan does not give it."""

    name: str
    format: str
    basis: str
    n_gpus: int
    n_gpus_from_file: bool
    duration_s: float | None
    measured_energy_j: float | None
    planned_energy_j: float | None
    measured_power_w: float | None  # per GPU, on the basis
    planned_power_w: float | None
    measured_gpu_power_w: float | None  # CodeCarbon's GPU part per GPU (node basis only)
    planned_gpu_power_w: float | None
    measured_tokens_per_j: float | None
    planned_tokens_per_j: float | None
    measured_co2e_kg: float | None  # with the plan's grid and PUE
    planned_co2e_kg: float | None
    reported_co2e_kg: float | None  # as CodeCarbon reported it (its grid, its PUE)
    reported_basis: str
    notes: tuple[str, ...]


def analyse_energy(record: EnergyRecord, plan: RunPlan, prediction: Prediction | None = None, *,
                   tokens_per_s_per_gpu: float | None = None) -> EnergyAnalysis:
    """Compare an energy log with the plan. ``tokens_per_s_per_gpu``: the measured throughput
    (a log's steady median) for the measured tokens per joule."""
    v.instance("record", record, EnergyRecord)
    v.instance("plan", plan, RunPlan)
    if prediction is not None:
        v.instance("prediction", prediction, Prediction)
    if tokens_per_s_per_gpu is not None:
        tokens_per_s_per_gpu = v.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
    notes: list[str] = []
    basis = "gpu" if record.per_gpu else "node"
    if record.format == "power-samples" and not record.per_gpu:
        notes.append("The samples have no GPU column: taken as the node's power (GPUs and host), against the "
                     "plan's IT power.")
    n_gpus = record.n_gpus
    if n_gpus is None:
        n_gpus = min(plan.gpus_per_node, plan.n_gpus)
        notes.append(f"The file does not say how many GPUs it measured: taken as one node of the plan "
                     f"({n_gpus} GPUs).")
    duration = record.duration_s
    measured_energy = record.energy_j
    measured_power = record.avg_power_w / n_gpus if record.avg_power_w is not None else None
    measured_gpu = None
    if basis == "node" and record.gpu_energy_j is not None and duration:
        measured_gpu = record.gpu_energy_j / duration / n_gpus
    planned_power = planned_gpu = planned_energy = None
    if prediction is not None and prediction.energy_known:
        planned_gpu = prediction.gpu_power_w
        planned_power = planned_gpu + (prediction.host_power_w_per_gpu if basis == "node" else 0.0)
        if duration:
            planned_energy = planned_power * n_gpus * duration
        if record.format == "codecarbon" and prediction.host_power_w_per_gpu > 0:
            notes.append(f"CodeCarbon measures the CPUs, GPUs and RAM; the plan's host power "
                         f"({prediction.host_power_w_per_gpu:g} W per GPU) counts the rest of the node too "
                         "(fans, NICs, storage): compare the GPU board power.")
    elif prediction is not None:
        notes.append("The plan's GPU has no TDP: its energy is not known.")

    def tokens_per_j(rate: float | None, power: float | None) -> float | None:
        return rate / power if rate and power else None

    measured_tpj = tokens_per_j(tokens_per_s_per_gpu, measured_power)
    planned_tpj = tokens_per_j(prediction.tokens_per_s_per_gpu if prediction is not None else None, planned_power)
    if tokens_per_s_per_gpu is None:
        notes.append("Tokens per joule needs a training log's throughput: open one beside the energy log.")

    def co2e(joules: float | None) -> float | None:
        if joules is None:
            return None
        facility = carbon.facility_energy_kwh(joules / carbon.J_PER_KWH, plan.pue)
        return float(carbon.emissions_kg(facility, plan.grid_g_per_kwh))

    reported_basis = ""
    if record.emissions_kg is not None:
        where = ", ".join(x for x in (record.region, record.country_name) if x) or "its grid"
        pue = f"PUE {record.reported_pue:g}" if record.reported_pue is not None else "its PUE"
        reported_basis = f"as CodeCarbon reported it ({where}, {pue})"
    if measured_energy is None:
        notes.append("The file has no timestamps (or one sample): its energy is not known, only its power.")
    return EnergyAnalysis(
        name=record.name, format=record.format, basis=basis, n_gpus=n_gpus, n_gpus_from_file=record.n_gpus is not None,
        duration_s=duration, measured_energy_j=measured_energy, planned_energy_j=planned_energy,
        measured_power_w=measured_power, planned_power_w=planned_power, measured_gpu_power_w=measured_gpu,
        planned_gpu_power_w=planned_gpu if basis == "node" and measured_gpu is not None else None,
        measured_tokens_per_j=measured_tpj, planned_tokens_per_j=planned_tpj,
        measured_co2e_kg=co2e(measured_energy), planned_co2e_kg=co2e(planned_energy),
        reported_co2e_kg=record.emissions_kg, reported_basis=reported_basis, notes=tuple(notes),
    )


#: Columns of the per-step CSV: (header, RunAnalysis field or callable).
SERIES_HEADERS: tuple[str, ...] = (
    "run", "step (count)", "step time (s)", "tokens per second, whole job (tokens/s)",
    "tokens per second per GPU (tokens/s)", "MFU as logged (fraction)", "MFU recomputed with the plan (fraction)",
    "data wait (s)", "waited on data (flag)", "steady state (flag)", "loss (1)",
)


def series_rows(run: RunLog, analysis: RunAnalysis) -> list[tuple]:
    """One row per step for the CSV export, in the order of :data:`SERIES_HEADERS`."""
    v.instance("run", run, RunLog)
    v.instance("analysis", analysis, RunAnalysis)
    rows = []
    for i, step in enumerate(analysis.steps):
        rows.append((analysis.name, step, analysis.step_time_s[i], analysis.tokens_per_s[i],
                     analysis.tokens_per_s_per_gpu[i], analysis.mfu_logged[i], analysis.mfu_recomputed[i],
                     analysis.wait_s[i], int(analysis.waited[i]), int(analysis.steady[i]), run.loss[i]))
    return rows
