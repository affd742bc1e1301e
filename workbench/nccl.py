"""Reader for nccl-tests output (all_reduce_perf, all_gather_perf, ...).

nccl-tests prints one row per message size with an out-of-place and an in-place
measurement. Units in the log are microseconds and GB/s (1e9 bytes/s); here they become
seconds and bytes/s. The layout changed between versions (an ``error`` column before
``#wrong``, a ``root`` column, empty ``redop`` fields for collectives that do not reduce),
so rows are read from the right (the measurement columns) and the left (size, count, type),
and the optional columns in between are matched against the header line when there is one.
Anything that is not a row (banner, ``NCCL INFO`` lines, blank lines, mpirun tags) is skipped.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench._validate import InputError
from workbench.collectives import parse_collective

US = 1e-6  # nccl-tests prints times in microseconds
GB = 1e9  # ... and bandwidths in GB/s with decimal gigabytes

PLACEMENTS = ("out", "in")

# Binary stems of nccl-tests and what this package calls them.
_OPERATIONS = {
    "all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "scatter": "scatter",
    "gather": "gather",
    "sendrecv": "sendrecv",
    "hypercube": "hypercube",
}
_OP_WORDS = "|".join(sorted(_OPERATIONS, key=len, reverse=True))
_BINARY = re.compile(rf"\b({_OP_WORDS})_perf(?:_mpi)?\b")
# Current nccl-tests end each run with "# Collective test concluded: all_reduce_perf": the end
# of a run, not the start of the next
_CONCLUDED = re.compile(r"Collective test concluded", re.IGNORECASE)
# A note naming the test, e.g. "nccl-tests all_gather output" or "Collective test starting".
_NOTE = re.compile(rf"(?:nccl-tests|Collective test starting:)\s+({_OP_WORDS})\b")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group|Pid)\b")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_BANNER = re.compile(r"^#\s*nThreads?\s+\d")  # "# nThread 1 nGpus 8 minBytes ...": a run begins
_MPI_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")  # mpirun --tag-output
_INT = re.compile(r"^-?\d+$")
_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

_MEASURE_FIELDS = 4  # time, algbw, busbw, wrong-or-error


@dataclass(frozen=True)
class NcclMeasurement:
    """One placement (out-of-place or in-place) of one row.

    ``time`` seconds, ``algbw`` and ``busbw`` bytes/s. ``wrong`` is the ``#wrong`` count
    (None when printed N/A or absent); ``error`` is the older logs' ``error`` column (max
    relative error, None when N/A or absent).
    """

    time: float
    algbw: float
    busbw: float
    wrong: int | None = None
    error: float | None = None


@dataclass(frozen=True)
class NcclRow:
    """One message size: ``size`` bytes (the whole array, as nccl-tests prints it), ``count``
    elements of ``type``, ``redop`` ("" when not printed), ``root`` (None when not printed
    or -1), and the out-of-place and in-place measurements."""

    size: int
    count: int
    type: str
    redop: str
    root: int | None
    out_of_place: NcclMeasurement
    in_place: NcclMeasurement | None

    def placement(self, which: str = "out") -> NcclMeasurement | None:
        """The measurement for ``which`` = "out" or "in"."""
        which = v.choice("placement", which, PLACEMENTS)
        return self.out_of_place if which == "out" else self.in_place


@dataclass(frozen=True)
class NcclResult:
    """A parsed nccl-tests log.

    ``collective``: "all_reduce", "all_to_all", "sendrecv", ... when the log names it (the
    binary name such as ``all_reduce_perf`` or a note in the banner), else None.
    ``n_ranks``: the number of ``# Rank N ...`` device lines, None without them.
    ``avg_busbw``: the printed "Avg bus bandwidth" in bytes/s, None when absent (truncated
    logs). ``columns``: the header's column names, empty without a header. ``skipped``:
    lines that began like a row but could not be read as one.
    """


    rows: tuple[NcclRow, ...]
    collective: str | None = None
    n_ranks: int | None = None
    avg_busbw: float | None = None
    columns: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    #: further runs in the same text (another binary, or the same one again), not included
    #: here: :func:`parse_nccl_runs` gives them all
    other_runs: int = 0

    def computed_avg_busbw(self) -> float:
        """Mean busbw in bytes/s over every row, out-of-place and in-place, zero sizes
        included: how nccl-tests computes its "Avg bus bandwidth" line."""
        values = [m.busbw for row in self.rows for m in (row.out_of_place, row.in_place) if m]
        return float(np.mean(values))

    @property
    def sizes(self) -> np.ndarray:
        """Message sizes in bytes, one per row."""
        return np.array([row.size for row in self.rows], dtype=float)


@dataclass(frozen=True)
class _Layout:
    middle: tuple[str, ...]  # optional columns between type and the measurements
    last: tuple[str, ...]  # "wrong" or "error", per placement
    columns: tuple[str, ...]


def _parse_header(tokens: list[str]) -> _Layout | None:
    names = [t.lstrip("#").lower() for t in tokens if t.lstrip("#")]
    if not {"size", "count", "type", "time"} <= set(names):
        return None
    first_time = names.index("time")
    middle = tuple(n for n in names[names.index("type") + 1 : first_time])
    last = []
    for i, name in enumerate(names):
        if name == "time" and i + 3 < len(names):
            last.append(names[i + 3])
    return _Layout(middle, tuple(last), tuple(names))


def _float(text: str) -> float | None:
    if text.upper() == "N/A":
        return None
    value = float(text)  # ValueError for junk: the caller skips the line
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _measurement(fields: list[str], last_name: str | None, size: int) -> NcclMeasurement:
    time_us, alg, bus = (_float(f) for f in fields[:3])
    if time_us is None or alg is None or bus is None or min(time_us, alg, bus) < 0:
        raise ValueError("missing or negative measurement")
    # A misaligned or cut line shows up here: nccl-tests prints algbw = size / time.
    if time_us > 0 and abs(alg - size / (time_us * 1e3)) > 0.01 + 0.02 * alg:
        raise ValueError("algbw does not match size / time")
    raw = fields[3]
    wrong = error = None
    if raw.upper() != "N/A":
        if last_name == "error" or (last_name is None and not _INT.match(raw)):
            error = _float(raw)
        elif _INT.match(raw):
            wrong = int(raw)
        else:
            raise ValueError(f"bad #wrong field {raw!r}")
    return NcclMeasurement(time_us * US, alg * GB, bus * GB, wrong, error)


def _parse_row(tokens: list[str], layout: _Layout | None) -> NcclRow:
    placements = max(1, len(layout.last)) if layout else 2
    right = _MEASURE_FIELDS * placements
    if len(tokens) < 3 + right:
        raise ValueError("too few fields")
    if not (_INT.match(tokens[0]) and _INT.match(tokens[1]) and _TYPE.match(tokens[2])):
        raise ValueError("not a row")
    size, count = int(tokens[0]), int(tokens[1])
    if size < 0 or count < 0:
        raise ValueError("negative size")
    middle = tokens[3 : len(tokens) - right]
    expected = layout.middle if layout else ("redop", "root")
    if len(middle) > len(expected):
        raise ValueError("too many fields")
    redop, root = "", None
    if len(middle) == len(expected):
        named = dict(zip(expected, middle, strict=True))
    else:
        # Some fields were left blank (alltoall prints no redop): tell them apart by form.
        named = {("root" if _INT.match(m) else "redop"): m for m in middle}
    if "redop" in named:
        redop = named["redop"]
    if "root" in named:
        if not _INT.match(named["root"]):
            raise ValueError("bad root")
        root = int(named["root"])
        root = None if root < 0 else root  # -1: the collective has no root
    lasts = layout.last if layout and layout.last else (None,) * placements
    measures = []
    for k in range(placements):
        start = len(tokens) - right + _MEASURE_FIELDS * k
        fields = tokens[start : start + _MEASURE_FIELDS]
        measures.append(_measurement(fields, lasts[k] if k < len(lasts) else None, size))
    in_place = measures[1] if placements > 1 else None
    return NcclRow(size, count, tokens[2], redop, root, measures[0], in_place)


def _operation_name(stem: str) -> str:
    name = _OPERATIONS[stem]
    try:
        return parse_collective(name).value
    except InputError:
        return name  # sendrecv, gather, hypercube: nccl-tests only


def parse_nccl_tests(text: str) -> NcclResult:
    """Parse the output of an nccl-tests binary into an :class:`NcclResult`.

    Tolerates banners, ``NCCL INFO`` lines, blank lines, ``N/A`` fields, empty redop/root
    fields, the older ``error`` column and mpirun ``--tag-output`` prefixes. A text holding
    several runs (one job's output of two binaries, or of one binary twice) gives the first
    run, with ``other_runs`` saying how many follow (:func:`parse_nccl_runs` reads them all):
    their rows are never mixed. Raises ``InputError`` (parameter "text") when no row of
    measurements is found.
    """
    runs = parse_nccl_runs(text)
    return runs[0] if len(runs) == 1 else dataclasses.replace(runs[0], other_runs=len(runs) - 1)


_LAUNCHER_PROCS = ("-np", "-n", "--np", "--ntasks")  # mpirun / srun process counts
_TEST_THREADS = ("-t", "--nthreads")
_TEST_GPUS = ("-g", "--ngpus")


_LAUNCHERS = ("mpirun", "mpiexec", "srun", "orterun", "aprun", "jsrun", "torchrun")


def _flag(tokens: list[str], names: tuple[str, ...]) -> int | None:
    """The positive whole number given to one of ``names`` ("-g 8", "-g=8", "--ngpus=8",
    "-n16"); None when none is given (or it is not a plain number)."""
    for i, token in enumerate(tokens):
        name, sep, inline = token.partition("=")
        if name in names:
            value = inline if sep else (tokens[i + 1] if i + 1 < len(tokens) else "")
        else:
            short = next((n for n in names if len(n) == 2 and token.startswith(n) and token[2:].isdigit()), None)
            if short is None:
                continue
            value = token[2:]
        return int(value) if value.isdigit() and int(value) > 0 else None
    return None


def _ranks_from_command(line: str) -> int | None:
    """Ranks a command line starts: processes x threads x GPUs per thread (``mpirun -np 2
    all_reduce_perf -g 8`` is 16, ``./all_reduce_perf -g 8`` is 8), or None when it does not
    say (no rank flags at all, or a launcher whose process count is not given as one number).
    For logs that list no ``# Rank`` lines, such as a snippet pasted with its command."""
    tokens = line.split()
    at = next((i for i, t in enumerate(tokens) if _BINARY.search(t)), None)
    if at is None:
        return None
    launched = any(t.rsplit("/", 1)[-1] in _LAUNCHERS for t in tokens[:at])
    procs = _flag(tokens[:at], _LAUNCHER_PROCS)
    if launched and procs is None:
        return None  # e.g. srun -N 2 --ntasks-per-node=8: the total is not written down
    threads = _flag(tokens[at + 1:], _TEST_THREADS)
    gpus = _flag(tokens[at + 1:], _TEST_GPUS)
    if procs is None and threads is None and gpus is None:
        return None
    return (procs or 1) * (threads or 1) * (gpus or 1)


class _Run:
    """What one run of a binary has printed so far."""

    def __init__(self):
        self.layout: _Layout | None = None
        self.rows: list[NcclRow] = []
        self.skipped: list[str] = []
        self.ranks: set[int] = set()
        self.avg: float | None = None
        self.collective: str | None = None
        self.command_ranks: int | None = None  # from the command line, when it says

    def result(self) -> NcclResult:
        return NcclResult(
            rows=tuple(self.rows),
            collective=self.collective,
            n_ranks=len(self.ranks) or self.command_ranks,
            avg_busbw=self.avg,
            columns=self.layout.columns if self.layout else (),
            skipped=tuple(self.skipped),
        )


def parse_nccl_runs(text: str) -> tuple[NcclResult, ...]:
    """Every run in an nccl-tests output, in order, as :func:`parse_nccl_tests` reads one.

    A run ends where, after its rows, a new one announces itself: a banner (``# nThread``),
    a column header, a command line naming a binary (``all_gather_perf``) or a "Collective
    test starting" note. Raises ``InputError`` (parameter "text") when no run has a row.
    """
    if not isinstance(text, str):
        raise InputError("text", f"must be the text of an nccl-tests log, got {type(text).__name__}")
    runs: list[_Run] = [_Run()]
    for raw_line in text.splitlines():
        line = _MPI_TAG.sub("", raw_line).strip()
        if not line:
            continue
        run = runs[-1]
        found = None if _CONCLUDED.search(line) else (_BINARY.search(line) or _NOTE.search(line))
        header = _parse_header(line.split()) if line.startswith("#") else None
        if run.rows and (found or header is not None or _BANNER.match(line)):
            run = _Run()  # the previous run is complete: this line starts the next
            runs.append(run)
        if found and run.collective is None:
            run.collective = _operation_name(found.group(1))
        if found and run.command_ranks is None:
            run.command_ranks = _ranks_from_command(line)
        if line.startswith("#"):
            if (m := _RANK.match(line)) is not None:
                run.ranks.add(int(m.group(1)))
            elif (m := _AVG.match(line)) is not None:
                try:
                    run.avg = float(m.group(1)) * GB
                except ValueError:
                    run.avg = None
            elif header is not None:
                run.layout = header
            continue
        tokens = line.split()
        if not _INT.match(tokens[0]):
            continue  # NCCL INFO lines, command lines, warnings
        try:
            run.rows.append(_parse_row(tokens, run.layout))
        except ValueError:
            run.skipped.append(raw_line)
    results = tuple(run.result() for run in runs if run.rows)
    if not results:
        raise InputError("text", "contains no nccl-tests result rows (size, count, type, time, ...)")
    return results


def rows_to_points(result: NcclResult, placement: str = "out", include_empty: bool = False):
    """(sizes in bytes, times in seconds) arrays of ``result`` for ``comms.fit_alpha_beta``.

    ``placement`` "out" or "in". Zero-byte rows are left out unless ``include_empty``:
    NCCL returns early for them, so their time is launch overhead, not the message latency
    (alltoall's zero-byte rows take ~1 us against ~87 us for 32 bytes).
    """
    if not isinstance(result, NcclResult):
        raise InputError("result", f"must be an NcclResult, got {type(result).__name__}")
    placement = v.choice("placement", placement, PLACEMENTS)
    points = [
        (row.size, m.time)
        for row in result.rows
        if (m := row.placement(placement)) is not None and (include_empty or row.size > 0)
    ]
    sizes = np.array([p[0] for p in points], dtype=float)
    times = np.array([p[1] for p in points], dtype=float)
    return sizes, times
