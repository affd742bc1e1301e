"""Reader for nccl-tests and rccl-tests output (all_reduce_perf, all_gather_perf, ...).

nccl-tests prints one row per message size with an out-of-place and an in-place
measurement. Units in the log are microseconds and GB/s (1e9 bytes/s); here they become
seconds and bytes/s.

Logs come off clusters with more than the rows in them, and this reader takes them as they are:

- launcher prefixes: Slurm ``srun --label`` (``0: ``), Open MPI ``--tag-output``
  (``[1,0]<stdout>:``, also in the middle of a line where a rank's partial write was tagged
  again), ``kubectl logs --timestamps`` / ``--prefix`` and ``docker compose logs`` prefixes;
  output of several ranks interleaved by the launcher is put back together rank by rank;
- ``NCCL_DEBUG=INFO`` lines (``host:pid:tid [dev] NCCL INFO ...``) between the rows, and in
  the middle of a row, where NCCL wrote while nccl-tests had printed only part of it: the
  row is joined again;
- banners, wrappers' chatter (kubectl, ssh, shell prompts), rccl-tests banners, a log
  viewer that dropped every leading ``#``, a binary whose name is never printed;
- every layout nccl-tests has printed: an ``error`` (or older ``res``/``delta``) column
  instead of ``#wrong``, ``bytes``/``N``/``op`` instead of ``size``/``count``/``redop``, with or
  without ``redop`` and ``root`` columns, one or two placements.

Each row is checked against the relation nccl-tests prints it with, algbw = size / time,
within the rounding of the printed digits (a time printed "0.13" is anything in
[0.125, 0.135] us). Until mid-2020 all_gather and reduce_scatter printed algbw as
(n-1)/n x size / time, and the earliest versions per-rank sizes; the reader finds which
convention a log follows from its rows (:attr:`NcclResult.algbw_convention`) and keeps
every row that follows it. What does not fit, and values that are not finite numbers (a
400-digit size, a busbw of 1e300 GB/s that overflows, ``nan``), is reported with its line
number in :attr:`NcclResult.skipped_lines`, never read as a value.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

import numpy as np

from workbench import _validate as v
from workbench._validate import InputError
from workbench.collectives import parse_collective

US = 1e-6  # nccl-tests prints times in microseconds
MS = 1e-3  # ... the 2017 versions in milliseconds
GB = 1e9  # ... and bandwidths in GB/s with decimal gigabytes

PLACEMENTS = ("out", "in")

#: How a log's algbw relates to its size and time column (see NcclResult.algbw_convention).
SIZE_OVER_TIME = "size/time"
GATHER_2020 = "(n-1)/n*size/time"  # all_gather / reduce_scatter before nccl-tests 2.6 (mid-2020)
PER_RANK_SIZE = "(n-1)*size/time"  # the earliest versions: per-rank sizes
CONVENTIONS = (SIZE_OVER_TIME, GATHER_2020, PER_RANK_SIZE)

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

# Lines of the banner, matched after any leading '#' (some log viewers drop them).
_DEVICE = re.compile(
    r"^Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?(?:Pid\s+(\d+)\s+)?on\s+(\S+)\s+device\s+(\d+)\s+"
    r"\[([^\]]*)\]\s*(.*?)\s*$"
)
_RANK = re.compile(r"^Rank\s+(\d+)\s+(?:Group|Pid|on)\b")  # a device line cut short
_AVG = re.compile(r"^Avg bus bandwidth\s*:\s*(\S*)")
_OOB = re.compile(r"^Out of bounds values\s*:\s*(\d{1,18})\b")
_BANNER = re.compile(r"^nThreads?\s+\d")  # "# nThread 1 nGpus 8 minBytes ...": a run begins
_TESTS_VERSION = re.compile(r"\b(nccl-tests|rccl-tests):?\s+version\s*:?\s*(\S+)", re.IGNORECASE)
_LIBRARY_VERSION = re.compile(r"\b([NR]CCL) version\s*:?\s*(\S+)")
_HOSTNAME = re.compile(r"^Hostname\s*:\s*(\S+)")  # rccl-tests
_DATE_FIELD = re.compile(r"^(?:date|start(?:ed)?(?: at| time)?|submit time)\s*[:=]\s*(\S.*?)\s*$", re.IGNORECASE)
_DATES = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?(?:Z|UTC|[+-]\d{2}:?\d{2}))?"),
    # date(1): "Tue May 14 10:22:01 UTC 2024", "Tue 14 May 2024 10:22:01 AM UTC"
    re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,?\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*"
               r"\s+\d{1,2},?\s+\d{1,2}:\d{2}:\d{2}(?:\s+[AP]M)?(?:\s+[A-Z][A-Za-z]{1,4}(?:[+-]\d{1,2})?)?\s+\d{4}\b"),
    re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,?\s+\d{1,2}\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
               r"\w*\s+\d{4},?\s+\d{1,2}:\d{2}:\d{2}(?:\s+[AP]M)?(?:\s+[A-Z][A-Za-z]{1,4})?\b"),
)

# Launcher prefixes, stripped before anything else is read.
_KUBECTL_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))\s")
_POD_PREFIX = re.compile(r"^\[pod/([^\]\s]+)\]\s")  # kubectl logs --prefix
_COMPOSE_PREFIX = re.compile(r"^([A-Za-z0-9][\w.-]*)\s+\|\s")  # docker compose logs
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as an editor counts lines
_SRUN_LABEL = re.compile(r"^\s*(\d{1,7}): ")  # srun --label
_MPI_TAG = re.compile(r"\[(\d+),(\d+)\]<(stdout|stderr|stddiag)>:")  # mpirun --tag-output
# NCCL's debug prefix: "host:pid:tid [dev] NCCL INFO", "host:pid:tid [dev] file.cc:12 NCCL WARN"
_DEBUG = re.compile(r"(?<!\S)([^\s:]+):(\d+):(\d+) \[(-?\d+)\] (?:\S+ ){0,3}?NCCL (?:INFO|WARN|TRACE|ABORT)\b")
_NRANKS = re.compile(r"\bnranks\s*[ =:]\s*(\d{1,9})\b", re.IGNORECASE)

_INT = re.compile(r"^-?\d+\Z", re.ASCII)
_DECIMAL = re.compile(r"^[+-]?(?:\d+\.?(?P<frac>\d*)|\.(?P<frac2>\d+))(?:[eE](?P<exp>[+-]?\d+))?\Z", re.ASCII)
_TYPE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAX_SIZE = 2**64 - 1  # nccl-tests prints size_t
_REDUCING = frozenset({"sum", "prod", "max", "min", "avg", "premulsum", "mulsum"})
_NO_OP = frozenset({"", "none"})
# Words a row prefix can end with, to tell them from a host name glued to them.
_ROW_WORDS = tuple(sorted(
    _REDUCING | {"none", "float", "double", "half", "bfloat16", "int8", "uint8", "int32", "uint32",
                 "int64", "uint64", "int", "char", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2"},
    key=len, reverse=True))

_MEASURE_FIELDS = 4  # time, algbw, busbw, wrong-or-error
# Header names of older versions and what they mean now.
_COLUMN_ALIASES = {"bytes": "size", "n": "count", "op": "redop", "res": "error", "delta": "error"}


@dataclass(frozen=True)
class NcclMeasurement:
    """One placement (out-of-place or in-place) of one row.

    ``time`` seconds, ``algbw`` and ``busbw`` bytes/s, as printed (``algbw`` follows the log's
    :attr:`NcclResult.algbw_convention`). ``wrong`` is the ``#wrong`` count (None when printed
    N/A or absent); ``error`` is the older logs' ``error`` column (max relative error, None
    when N/A or absent).
    """

    time: float
    algbw: float
    busbw: float
    wrong: int | None = None
    error: float | None = None


@dataclass(frozen=True)
class NcclRow:
    """One message size: ``size`` bytes as nccl-tests prints it (the whole array, except in
    logs whose :attr:`NcclResult.algbw_convention` is per-rank), ``count`` elements of
    ``type``, ``redop`` ("" when not printed), ``root`` (None when not printed or -1), and
    the out-of-place and in-place measurements. ``line``: the 1-based line of the text it
    starts on (not part of equality: the same row read from another text is equal)."""

    size: int
    count: int
    type: str
    redop: str
    root: int | None
    out_of_place: NcclMeasurement
    in_place: NcclMeasurement | None
    line: int = field(default=0, compare=False)

    def placement(self, which: str = "out") -> NcclMeasurement | None:
        """The measurement for ``which`` = "out" or "in"."""
        which = v.choice("placement", which, PLACEMENTS)
        return self.out_of_place if which == "out" else self.in_place


@dataclass(frozen=True)
class NcclDevice:
    """One ``# Rank N ... on HOST device D [BUS] NAME`` line of the banner."""

    rank: int
    host: str
    device: int  # the local CUDA / HIP device index
    bus_id: str  # as printed: "0000:04:00", "0x1a"
    name: str  # "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X"
    pid: int | None = None
    group: int | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SkippedLine:
    """A line that was not read, with its 1-based line number and why."""

    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class NcclResult:
    """A parsed nccl-tests (or rccl-tests) log.

    ``collective``: "all_reduce", "all_to_all", "sendrecv", ... when the log names it (the
    binary name such as ``all_reduce_perf`` or a note in the banner) or, when it does not,
    when its numbers leave one possibility (``collective_source`` "named" or "inferred";
    None when neither).
    ``n_ranks``: the rank count, from (``n_ranks_source``) the ``# Rank`` device lines
    ("devices"), NCCL's own INFO lines ("nccl-info"), the command line ("command") or, for a
    2020-era all_gather log without any of those, its algbw ("algbw"); None when unknown.
    ``avg_busbw``: the printed "Avg bus bandwidth" in bytes/s, None when absent (truncated
    logs) or unreadable. ``columns``: the header's column names, empty without a header.
    ``skipped``: the text of every line in ``skipped_lines``, which says for each line that
    began like a row but could not be read (or an Avg line that is not a number) its line
    number and why.

    ``algbw_convention``: how the printed algbw relates to size and time: "size/time"
    (nccl-tests since mid-2020, and every collective but all_gather and reduce_scatter
    before), "(n-1)/n*size/time" (all_gather and reduce_scatter before mid-2020: busbw is
    still today's), or "(n-1)*size/time" (per-rank sizes; :attr:`sizes` and
    :func:`rows_to_points` give whole-buffer sizes). ``algbw_factor`` is that factor.
    ``time_unit``: "us", or "ms" for the 2017 versions.

    ``devices``: the device lines in rank order; ``hosts``: host names as printed (device
    lines, NCCL INFO prefixes, rccl-tests' Hostname line), in order of appearance;
    ``date``: a date and time printed around the run (kubectl time stamps, ``date``, ISO
    8601), as printed, None without one. ``tool``/``tool_version``: "nccl-tests" or
    "rccl-tests" and its version when printed; ``library_version``: NCCL's or RCCL's.
    ``out_of_bounds``: the "Out of bounds values" count when printed. ``first_line``,
    ``last_line``: where the run lies in the text. ``notes``: what a reader of the numbers
    should know (an older convention, an inferred collective or rank count).
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
    skipped_lines: tuple[SkippedLine, ...] = ()
    algbw_convention: str = SIZE_OVER_TIME
    algbw_factor: float = 1.0
    time_unit: str = "us"
    n_ranks_source: str | None = None
    collective_source: str | None = None
    devices: tuple[NcclDevice, ...] = ()
    hosts: tuple[str, ...] = ()
    date: str | None = None
    tool: str | None = None
    tool_version: str | None = None
    library_version: str | None = None
    out_of_bounds: int | None = None
    first_line: int = 0
    last_line: int = 0
    notes: tuple[str, ...] = ()

    def computed_avg_busbw(self) -> float:
        """Mean busbw in bytes/s over every row, out-of-place and in-place, zero sizes
        included: how nccl-tests computes its "Avg bus bandwidth" line."""
        values = [m.busbw for row in self.rows for m in (row.out_of_place, row.in_place) if m]
        if not values:
            raise InputError("result", "has no rows to average")
        return math.fsum(x / len(values) for x in values)  # never overflows to inf

    @property
    def sizes_per_rank(self) -> bool:
        """Whether the printed sizes are per rank (the "(n-1)*size/time" convention)."""
        return self.algbw_convention == PER_RANK_SIZE

    @property
    def sizes(self) -> np.ndarray:
        """Message sizes in bytes, one per row: the whole buffer, as the model of
        ``workbench.comms`` takes them (printed size x n_ranks for per-rank logs)."""
        scale = self.n_ranks if self.sizes_per_rank and self.n_ranks else 1
        return np.array([row.size * scale for row in self.rows], dtype=float)

    @property
    def device_names(self) -> tuple[str, ...]:
        """The distinct device names, in rank order ("NVIDIA H100 80GB HBM3", ...)."""
        return tuple(dict.fromkeys(d.name for d in self.devices if d.name))


# -- numbers --------------------------------------------------------------------------------
class _Bad(ValueError):
    """A row (or an Avg line) that cannot be read; the message says why."""


class _Short(_Bad):
    """A row with too few fields: its rest may follow on another line."""


@dataclass(frozen=True)
class _Number:
    value: float
    half_ulp: float  # half a unit in the last printed digit: the printing's rounding
    text: str


def _number(text: str, what: str) -> _Number:
    """A printed decimal number: finite, with the rounding its digits allow."""
    m = _DECIMAL.match(text)
    if m is None:
        finite = " finite" if text.lstrip("+-").lower() in ("inf", "infinity", "nan") else ""
        raise _Bad(f"{what} {_show(text)} is not a{finite} number")
    value = float(text)
    if not math.isfinite(value):
        raise _Bad(f"{what} {_show(text)} is out of range (it overflows)")
    # The last printed digit's place: 10^(exponent - decimals). Kept within 1e-300 .. 1e300,
    # so that a window (a product of two of them) is never 0 x inf.
    digits = m.group("exp") or "0"
    exponent = int(digits) if len(digits) <= 6 else (10**6 if not digits.startswith("-") else -(10**6))
    place = max(-300, min(300, exponent - len(m.group("frac") or m.group("frac2") or "")))
    return _Number(value, 0.5 * 10.0**place, text)


def _whole(text: str, what: str) -> int:
    """A printed non-negative whole number that fits a 64-bit size_t."""
    if not _INT.match(text):
        raise _Bad(f"{what} {_show(text)} is not a whole number")
    negative = text.startswith("-")
    digits = text.lstrip("-").lstrip("0") or "0"
    if len(digits) > 20 or int(digits) > _MAX_SIZE:
        raise _Bad(f"{what} {_show(text)} is out of range (larger than any buffer, 2^64 bytes)")
    if negative and digits != "0":
        raise _Bad(f"{what} {text} is negative")
    return int(digits)


def _show(text: str) -> str:
    return repr(text) if len(text) <= 24 else repr(text[:12] + "..." + text[-6:]) + f" ({len(text)} characters)"


# -- the header -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Layout:
    middle: tuple[str, ...]  # optional columns between type and the measurements
    last: tuple[str, ...]  # "wrong" or "error", per placement
    columns: tuple[str, ...]


def _parse_header(tokens: list[str]) -> _Layout | None:
    names = [_COLUMN_ALIASES.get(n, n) for n in (t.lstrip("#").lower() for t in tokens) if n]
    if not {"size", "count", "type", "time"} <= set(names) or names.index("type") > names.index("time"):
        return None
    first_time = names.index("time")
    middle = tuple(n for n in names[names.index("type") + 1 : first_time])
    last = []
    for i, name in enumerate(names):
        if name == "time" and i + 3 < len(names):
            last.append(names[i + 3])
    return _Layout(middle, tuple(last), tuple(names))


def _units_hint(tokens: list[str]) -> str | None:
    """"(ms)" or "(us)" in the units line under the header."""
    words = {t.lower() for t in tokens}
    if "(ms)" in words:
        return "ms"
    if "(us)" in words or "(usec)" in words:
        return "us"
    return None


# -- rows -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _RawMeasure:
    time: _Number
    algbw: _Number
    busbw: _Number
    wrong: int | None
    error: float | None


@dataclass(frozen=True)
class _RawRow:
    """A row read field by field, before its algbw is checked against the log's convention."""

    size: int
    count: int
    type: str
    redop: str
    root: int | None
    measures: tuple[_RawMeasure, ...]
    line: int
    text: str


def _measurement(fields: list[str], last_name: str | None) -> _RawMeasure:
    time = _number(fields[0], "time")
    alg = _number(fields[1], "algbw")
    bus = _number(fields[2], "busbw")
    for what, n in (("time", time), ("algbw", alg), ("busbw", bus)):
        if n.value < 0:
            raise _Bad(f"{what} {n.text} is negative")
        if what != "time" and not math.isfinite(n.value * GB):
            raise _Bad(f"{what} {_show(n.text)} GB/s is out of range (it overflows in bytes/s)")
    raw = fields[3]
    wrong = error = None
    if raw.upper() != "N/A":
        if last_name == "error" or (last_name is None and not _INT.match(raw)):
            error = _number(raw, "error").value
        elif _INT.match(raw):
            wrong = _whole(raw, "#wrong")
        else:
            raise _Bad(f"#wrong {_show(raw)} is not a count")
    return _RawMeasure(time, alg, bus, wrong, error)


def _parse_row(tokens: list[str], layout: _Layout | None, line: int, text: str) -> _RawRow:
    if layout is not None:
        placements = max(1, len(layout.last))
    else:  # without a header: 2 placements of 4 fields (11 to 13 fields) or 1 (7 to 9)
        placements = 2 if len(tokens) >= 3 + 2 * _MEASURE_FIELDS else 1
    right = _MEASURE_FIELDS * placements
    if len(tokens) < 3 + right:
        raise _Short(f"has {len(tokens)} fields, too few for a row of {3 + right} or more (cut short?)")
    size, count = _whole(tokens[0], "size"), _whole(tokens[1], "count")
    if not _TYPE.match(tokens[2]):
        raise _Bad(f"type {_show(tokens[2])} is not a type name")
    middle = tokens[3 : len(tokens) - right]
    expected = layout.middle if layout else ("redop", "root")
    if len(middle) > len(expected):
        raise _Bad(f"has {len(tokens) - 3 - right - len(expected)} field(s) more than the header (shifted?)")
    redop, root = "", None
    if len(middle) == len(expected):
        named = dict(zip(expected, middle, strict=True))
    else:
        # Some fields were left blank (alltoall prints no redop): tell them apart by form.
        named = {("root" if _INT.match(m) else "redop"): m for m in middle}
    if "redop" in named:
        redop = named["redop"]
        if _INT.match(redop) or not _TYPE.match(redop):
            raise _Bad(f"redop {_show(redop)} is not an operation name")
    if "root" in named:
        if not _INT.match(named["root"]) or len(named["root"]) > 10:
            raise _Bad(f"root {_show(named['root'])} is not a rank")
        root = int(named["root"])
        root = None if root < 0 else root  # -1: the collective has no root
    lasts = layout.last if layout and layout.last else (None,) * placements
    measures = []
    for k in range(placements):
        start = len(tokens) - right + _MEASURE_FIELDS * k
        fields = tokens[start : start + _MEASURE_FIELDS]
        measures.append(_measurement(fields, lasts[k] if k < len(lasts) else None))
    return _RawRow(size, count, tokens[2], redop, root, tuple(measures), line, text)


def _row_like(tokens: list[str]) -> bool:
    """Starts as a row does: size and count."""
    return len(tokens) >= 2 and bool(_INT.match(tokens[0])) and bool(_INT.match(tokens[1]))


def _operation_name(stem: str) -> str:
    name = _OPERATIONS[stem]
    try:
        return parse_collective(name).value
    except InputError:
        return name  # sendrecv, gather, hypercube: nccl-tests only


# -- the algbw convention -------------------------------------------------------------------
@dataclass(frozen=True)
class _Convention:
    name: str
    factor: float  # printed algbw = factor x size / time
    unit: str  # "us" or "ms"
    n_ranks: int | None = None  # the rank count it was inferred with, when none was given

    @property
    def k(self) -> float:
        """algbw x time x 1e3 / size, in the log's printed units, for a row that follows it."""
        return self.factor * (1.0 if self.unit == "us" else 1e-3)


def _row_window(row: _RawRow) -> tuple[float, float]:
    """The values of algbw x time x 1e3 / size this row's printed digits allow (every
    placement), or (0, inf) for a zero size."""
    lo, hi = 0.0, math.inf
    if row.size == 0:
        return lo, hi
    for m in row.measures:
        a, t = m.algbw, m.time
        m_lo = max(0.0, a.value - a.half_ulp) * max(0.0, t.value - t.half_ulp) * 1e3 / row.size
        m_hi = (a.value + a.half_ulp) * (t.value + t.half_ulp) * 1e3 / row.size
        lo, hi = max(lo, m_lo * (1 - 1e-9)), min(hi, m_hi * (1 + 1e-9))
    return lo, hi


def _choose_convention(rows: list[_RawRow], n: int | None, unit_hint: str | None) -> tuple[_Convention, np.ndarray]:
    """The convention most rows follow (ties go to the newer one) and which rows follow it."""
    windows = np.array([_row_window(r) for r in rows], dtype=float).reshape(-1, 2)
    units = (unit_hint,) if unit_hint else ("us", "ms")
    base = [_Convention(SIZE_OVER_TIME, 1.0, u) for u in units]
    candidates = list(base)
    if n is not None:
        for u in units:
            if n >= 2:
                candidates.append(_Convention(GATHER_2020, (n - 1) / n, u))
            if n >= 3:
                candidates.append(_Convention(PER_RANK_SIZE, float(n - 1), u))

    def fits(cands: list[_Convention]) -> np.ndarray:
        ks = np.array([c.k for c in cands], dtype=float)
        return (windows[:, :1] <= ks) & (ks <= windows[:, 1:])  # rows x candidates

    ok = fits(candidates)
    counts = ok.sum(axis=0)
    best = int(np.argmax(counts))  # the first of equals: the preferred one
    if n is None and counts[best] < len(rows):
        # No rank count given: an older all_gather log names it through its algbw.
        inferred = [_Convention(GATHER_2020, (m - 1) / m, "us", m) for m in range(2, 1025)]
        inferred += [_Convention(PER_RANK_SIZE, float(m - 1), "us", m) for m in range(3, 1025)]
        if unit_hint in (None, "us"):
            ok_inferred = fits(inferred)
            counts_inferred = ok_inferred.sum(axis=0)
            top = int(np.argmax(counts_inferred))
            if counts_inferred[top] > counts[best] and np.count_nonzero(counts_inferred == counts_inferred[top]) == 1:
                return inferred[top], ok_inferred[:, top]
    return candidates[best], ok[:, best]


def _mismatch(row: _RawRow, conv: _Convention) -> str:
    for m in row.measures:
        lo, hi = _row_window(dataclasses.replace(row, measures=(m,)))
        if not lo <= conv.k <= hi:
            t = m.time.value
            expected = f"{conv.k * row.size / (t * 1e3):.4g} GB/s" if t > 0 else "infinite"
            return (f"algbw {m.algbw.text} GB/s does not follow {conv.name} (size {row.size} B in "
                    f"{m.time.text} {conv.unit} gives {expected}): a shifted or damaged row")
    return "algbw does not follow the log's convention"


# -- the collective, when the log does not name it -------------------------------------------
_COLLECTIVE_SIGNATURES = {  # (reduces, has a root)
    "all_reduce": (True, False),
    "reduce_scatter": (True, False),
    "sendrecv": (True, False),  # nccl-tests prints "sum -1" for it
    "reduce": (True, True),
    "all_gather": (False, False),
    "all_to_all": (False, False),
    "broadcast": (False, True),
    "scatter": (False, True),
    "gather": (False, True),
}


def _infer_collective(rows: list[NcclRow], raw: list[_RawRow], n: int | None, conv: _Convention) -> str | None:
    """The one collective whose bus factor (busbw / algbw) and columns (a reduction, a root)
    the rows show, or None when that leaves more than one (or none)."""
    if n is None or n < 2 or conv.name == PER_RANK_SIZE or not rows:
        return None
    from workbench import comms  # comms imports this module

    lo, hi = 0.0, math.inf
    for r in raw:
        for m in r.measures:
            a, b = m.algbw, m.busbw
            if a.value <= 0:
                continue
            lo = max(lo, max(0.0, b.value - b.half_ulp) / (a.value + a.half_ulp))
            if a.value - a.half_ulp > 0:
                hi = min(hi, (b.value + b.half_ulp) / (a.value - a.half_ulp))
    if not (lo <= hi and math.isfinite(hi)):
        return None
    redops = {r.redop for r in rows}
    if redops <= _REDUCING:
        reduces = True
    elif redops <= _NO_OP:
        reduces = False
    else:
        return None
    rooted = {r.root is not None for r in rows}
    if len(rooted) != 1:
        return None
    signature = (reduces, rooted.pop())
    names = [
        name for name, sig in _COLLECTIVE_SIGNATURES.items()
        if sig == signature and lo <= float(comms.bus_factor(name, n)) / conv.factor * (1 + 1e-9)
        and float(comms.bus_factor(name, n)) / conv.factor <= hi * (1 + 1e-9)
    ]
    return names[0] if len(names) == 1 else None


# -- reading the text: launcher prefixes, interleaved ranks, NCCL output inside rows ----------
@dataclass
class _Line:
    number: int  # 1-based line of the text where it starts
    text: str
    source: str = ""
    debug: bool = False  # an NCCL debug line
    cut: bool = False  # the piece of a row before NCCL output that cut it
    stamp: str | None = None  # a kubectl time stamp in front of it
    joined: bool = False  # put together from more than one piece


def _launcher_lines(text: str) -> list[_Line]:
    """The text's lines with launcher prefixes removed, the pieces every rank (or task)
    wrote put back together in the order they were completed."""
    out: list[_Line] = []
    open_pieces: dict[str, _Line] = {}
    for number, raw in enumerate(_LINE_BREAK.split(text), start=1):
        line = raw.replace("\ufeff", "")
        stamp = None
        if (m := _KUBECTL_STAMP.match(line)) is not None:
            stamp, line = m.group(1), line[m.end():]
        source = ""
        for prefix in (_POD_PREFIX, _COMPOSE_PREFIX, _SRUN_LABEL):
            if (m := prefix.match(line)) is not None:
                source, line = f"{source}/{m.group(1)}", line[m.end():]
                break
        tags = list(_MPI_TAG.finditer(line))
        if not tags:
            pieces = [(source, line)]
        else:
            lead = line[: tags[0].start()]
            if lead.strip():  # untagged output (the launcher's own) before the first tag
                out.append(_Line(number, lead, source, stamp=stamp))
            pieces = [
                (f"{source}[{tag.group(1)},{tag.group(2)}]{tag.group(3)}",
                 line[tag.end(): tags[i + 1].start() if i + 1 < len(tags) else len(line)])
                for i, tag in enumerate(tags)
            ]
        for i, (src, piece) in enumerate(pieces):
            held = open_pieces.pop(src, None)
            if held is not None:
                held.text += piece
                held.joined = True
            else:
                held = _Line(number, piece, src, stamp=stamp)
            if i < len(pieces) - 1:  # the line goes on with another rank's output: not finished
                open_pieces[src] = held
            else:
                out.append(held)
    out.extend(open_pieces.values())
    return out


def _known_hosts(lines: list[_Line]) -> list[str]:
    hosts: dict[str, None] = {}
    for ln in lines:
        s = ln.text.strip()
        if (m := _DEBUG.match(s)) is not None:
            hosts[m.group(1)] = None
        body = s.lstrip("#").strip()
        if (m := _DEVICE.match(body)) is not None:
            hosts[m.group(4)] = None
        elif (m := _HOSTNAME.match(body)) is not None:
            hosts[m.group(1)] = None
    return sorted(hosts, key=len, reverse=True)


def _split_glued(token: str, hosts: list[str]) -> tuple[str, str]:
    """'-1node7' -> ('-1', 'node7'): the end of a row and the host name NCCL wrote after it."""
    for host in hosts:
        if len(token) > len(host) and token.endswith(host):
            return token[: -len(host)], host
    if (m := re.match(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|N/A", token)) is not None and m.end() < len(token):
        return token[: m.end()], token[m.end():]
    for word in _ROW_WORDS:
        if token.startswith(word) and len(token) > len(word):
            return word, token[len(word):]
    return "", token


def _split_debug(text: str, hosts: list[str]) -> tuple[str, str | None]:
    """(what precedes NCCL debug output on this line, the debug output or None)."""
    m = _DEBUG.search(text)
    if m is None:
        return text, None
    before = text[: m.start()]
    if not before.strip():
        return "", text[m.start():]
    tail, host = _split_glued(m.group(1), hosts)
    return before + tail, host + text[m.end(1):]


def _continues(text: str) -> bool:
    """The rest of a row: measurement fields only."""
    tokens = text.split()
    return bool(tokens) and not _row_like(tokens) and all(
        t.upper() == "N/A" or _DECIMAL.match(t) for t in tokens)


def _stitched_lines(text: str):
    """Logical lines: launcher prefixes gone, NCCL output that split a row taken out of it
    (the piece before it is marked ``cut``; the run joins it with the rest that follows)."""
    lines = _launcher_lines(text)
    hosts = _known_hosts(lines)
    for ln in lines:
        if "NCCL" not in ln.text:
            yield ln
            continue
        head, debug = _split_debug(ln.text, hosts)
        if debug is None:
            yield ln
            continue
        if head.strip():
            yield _Line(ln.number, head, ln.source, cut=True, stamp=ln.stamp, joined=True)
        yield _Line(ln.number, debug, ln.source, debug=True, stamp=ln.stamp)


# -- runs -----------------------------------------------------------------------------------
_COUNT = re.compile(r"^\d{1,9}\Z", re.ASCII)
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
            short = next((n for n in names if len(n) == 2 and token.startswith(n) and _COUNT.match(token[2:])), None)
            if short is None:
                continue
            value = token[2:]
        return int(value) if _COUNT.match(value) and int(value) > 0 else None
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


def _find_date(text: str) -> str | None:
    if (m := _DATE_FIELD.match(text)) is not None:
        return m.group(1)[:64]
    for pattern in _DATES:
        if (m := pattern.search(text)) is not None:
            return m.group(0)
    return None


class _Run:
    """What one run of a binary has printed so far."""

    def __init__(self, number: int, date: str | None):
        self.layout: _Layout | None = None
        self.unit_hint: str | None = None
        self.rows: list[_RawRow] = []
        self.skipped: list[SkippedLine] = []
        self.ranks: set[int] = set()
        self.devices: dict[int, NcclDevice] = {}
        self.info_nranks: set[int] = set()
        self.hosts: dict[str, None] = {}
        self.avg: float | None = None
        self.collective: str | None = None
        self.command_ranks: int | None = None  # from the command line, when it says
        self.date = date
        self.tool: str | None = None
        self.tool_version: str | None = None
        self.library_version: str | None = None
        self.out_of_bounds: int | None = None
        self.first_line = number
        self.last_line = number

    def result(self) -> NcclResult:
        notes: list[str] = []
        n, source = None, None
        if self.ranks:
            n, source = len(self.ranks), "devices"
        elif self.info_nranks:
            n, source = max(self.info_nranks), "nccl-info"
        elif self.command_ranks is not None:
            n, source = self.command_ranks, "command"
        if self.ranks and self.info_nranks and max(self.info_nranks) != len(self.ranks):
            notes.append(f"{len(self.ranks)} device lines, but NCCL reports nranks {max(self.info_nranks)}")
        conv, follows = _choose_convention(self.rows, n, self.unit_hint)
        if n is None and conv.n_ranks is not None:
            n, source = conv.n_ranks, "algbw"
            notes.append(f"rank count {n} read from the algbw, which follows {conv.name} with n = {n}")
        unit = US if conv.unit == "us" else MS
        rows, raw_kept, skipped = [], [], list(self.skipped)
        for raw, ok in zip(self.rows, follows, strict=True):
            if not ok:
                skipped.append(SkippedLine(raw.line, raw.text, _mismatch(raw, conv)))
                continue
            measures = [
                NcclMeasurement(m.time.value * unit, m.algbw.value * GB, m.busbw.value * GB, m.wrong, m.error)
                for m in raw.measures
            ]
            rows.append(NcclRow(raw.size, raw.count, raw.type, raw.redop, raw.root, measures[0],
                                measures[1] if len(measures) > 1 else None, raw.line))
            raw_kept.append(raw)
        if conv.name == GATHER_2020:
            notes.append("algbw follows the nccl-tests convention before mid-2020, (n-1)/n x size / time; "
                         "busbw is comparable with today's")
        elif conv.name == PER_RANK_SIZE:
            notes.append("sizes are per rank (algbw = (n-1) x size / time); whole-buffer sizes are size x n")
        if conv.unit == "ms":
            notes.append("times are printed in milliseconds")
        collective, collective_source = self.collective, ("named" if self.collective else None)
        if collective is None:
            collective = _infer_collective(rows, raw_kept, n, conv)
            if collective is not None:
                collective_source = "inferred"
                notes.append(f"the log does not name its collective; its bus factor and columns are {collective}'s")
        skipped.sort(key=lambda s: s.line)
        hosts = dict.fromkeys(d.host for d in sorted(self.devices.values(), key=lambda d: d.rank))
        hosts.update(self.hosts)
        return NcclResult(
            rows=tuple(rows),
            collective=collective,
            n_ranks=n,
            avg_busbw=self.avg,
            columns=self.layout.columns if self.layout else (),
            skipped=tuple(s.text for s in skipped),
            skipped_lines=tuple(skipped),
            algbw_convention=conv.name,
            algbw_factor=conv.factor,
            time_unit=conv.unit,
            n_ranks_source=source,
            collective_source=collective_source,
            devices=tuple(self.devices[r] for r in sorted(self.devices)),
            hosts=tuple(hosts),
            date=self.date,
            tool=self.tool,
            tool_version=self.tool_version,
            library_version=self.library_version,
            out_of_bounds=self.out_of_bounds,
            first_line=self.first_line,
            last_line=self.last_line,
            notes=tuple(notes),
        )


def parse_nccl_tests(text: str) -> NcclResult:
    """Parse the output of an nccl-tests (or rccl-tests) binary into an :class:`NcclResult`.

    Tolerates banners, ``NCCL INFO`` lines (also inside rows), blank lines, ``N/A`` fields,
    empty redop/root fields, the older column layouts and algbw conventions, launcher
    prefixes (mpirun ``--tag-output``, srun ``--label``, kubectl) and dropped ``#`` marks.
    A text holding several runs (one job's output of two binaries, or of one binary twice)
    gives the first run, with ``other_runs`` saying how many follow (:func:`parse_nccl_runs`
    reads them all): their rows are never mixed. Raises ``InputError`` (parameter "text")
    when no row of measurements is found, naming the lines that looked like rows and why
    they could not be read.
    """
    runs = parse_nccl_runs(text)
    return runs[0] if len(runs) == 1 else dataclasses.replace(runs[0], other_runs=len(runs) - 1)


def parse_nccl_runs(text: str) -> tuple[NcclResult, ...]:
    """Every run in an nccl-tests output, in order, as :func:`parse_nccl_tests` reads one.

    A run ends where, after its rows, a new one announces itself: a banner (``# nThread``),
    a column header, a command line naming a binary (``all_gather_perf``), a "Collective
    test starting" note or a version line. Raises ``InputError`` (parameter "text") when no
    run has a row.
    """
    if not isinstance(text, str):
        raise InputError("text", f"must be the text of an nccl-tests log, got {type(text).__name__}")
    latest_date: str | None = None
    runs: list[_Run] = [_Run(1, None)]
    waiting: dict[str, _Line] = {}  # per source, a row that may go on in a following line
    for ln in _stitched_lines(text):
        run = runs[-1]
        if ln.stamp:
            latest_date = ln.stamp
            run.date = run.date or ln.stamp
        line = ln.text.strip()
        if not line:
            continue
        if ln.debug:
            _read_debug(run, line)
            run.last_line = max(run.last_line, ln.number)
            continue
        tokens = line.split()
        held = waiting.pop(ln.source, None)
        if held is not None:
            if _continues(line):  # the rest of a row that other output (or a line break) cut
                held.text = f"{held.text.rstrip()} {line}"
                held.joined = True
                held.cut = ln.cut
                ln, line, tokens = held, held.text.strip(), held.text.split()
            else:  # a banner line or another row: this one does not go on
                _read_row(run, held, waiting, final=True)
        if _row_like(tokens):
            run.last_line = max(run.last_line, ln.number)
            _read_row(run, ln, waiting, final=False)
            continue
        body = line.lstrip("#").strip()
        found = None if _CONCLUDED.search(line) else (_BINARY.search(line) or _NOTE.search(line))
        header = _parse_header(tokens)
        version = _TESTS_VERSION.search(line)
        if (run.rows or waiting) and (found or header is not None or _BANNER.match(body) or version):
            for held in list(waiting.values()):  # rows still open belong to the run that ends
                _read_row(run, held, waiting, final=True)
            run = _Run(ln.number, latest_date)  # the previous run is complete: this line starts the next
            runs.append(run)
        run.last_line = max(run.last_line, ln.number)
        if found and run.collective is None:
            run.collective = _operation_name(found.group(1))
        if found and run.command_ranks is None:
            run.command_ranks = _ranks_from_command(line)
        if header is not None:
            run.layout = header
            continue
        if version is not None:
            run.tool, run.tool_version = version.group(1).lower(), version.group(2)
        if (m := _LIBRARY_VERSION.search(line)) is not None and run.library_version is None:
            run.library_version = m.group(2)
        if (m := _DEVICE.match(body)) is not None:
            rank = int(m.group(1)[:9])
            run.ranks.add(rank)
            run.devices[rank] = NcclDevice(
                rank=rank, host=m.group(4), device=int(m.group(5)[:9]), bus_id=m.group(6).strip(),
                name=m.group(7), pid=int(m.group(3)[:18]) if m.group(3) else None,
                group=int(m.group(2)[:9]) if m.group(2) else None, line=ln.number)
        elif (m := _RANK.match(body)) is not None:
            run.ranks.add(int(m.group(1)[:9]))
        elif (m := _AVG.match(body)) is not None:
            try:
                avg = _number(m.group(1), "Avg bus bandwidth")
                if not math.isfinite(avg.value * GB) or avg.value < 0:
                    raise _Bad(f"Avg bus bandwidth {avg.text} GB/s is out of range")
                run.avg = avg.value * GB
            except _Bad as exc:
                run.avg = None
                run.skipped.append(SkippedLine(ln.number, ln.text, str(exc)))
        elif (m := _OOB.match(body)) is not None:
            run.out_of_bounds = int(m.group(1))
        elif (m := _HOSTNAME.match(body)) is not None:
            run.hosts[m.group(1)] = None
        elif _units_hint(tokens) is not None and body.startswith("("):
            run.unit_hint = _units_hint(tokens)
        elif (date := _find_date(body)) is not None:
            latest_date = date
            run.date = run.date or date
    for held in list(waiting.values()):
        _read_row(runs[-1], held, waiting, final=True)
    return _results(runs)


def _read_row(run: _Run, ln: _Line, waiting: dict[str, _Line], final: bool) -> None:
    """Read a row into ``run``; one that is cut short is held in ``waiting`` (unless
    ``final``) for the rest of it, which may follow on another line."""
    waiting.pop(ln.source, None)
    line = ln.text.strip()
    try:
        row = _parse_row(line.split(), run.layout, ln.number, line)
    except _Bad as exc:
        if not final and isinstance(exc, _Short):
            waiting[ln.source] = ln
            return
        reason = str(exc) + ("; other output cut the row and its rest never came" if ln.cut else "")
        run.skipped.append(SkippedLine(ln.number, line if ln.joined else ln.text, reason))
        return
    if ln.cut and not final:
        waiting[ln.source] = ln  # complete in form, but its end was cut: wait for the rest
        return
    run.rows.append(row)


def _read_debug(run: _Run, line: str) -> None:
    """What an NCCL debug line tells: its host, the communicator's size, NCCL's version."""
    if (m := _DEBUG.match(line)) is not None:
        run.hosts[m.group(1)] = None
    if (m := _NRANKS.search(line)) is not None and int(m.group(1)) > 0:
        run.info_nranks.add(int(m.group(1)))
    if (m := _LIBRARY_VERSION.search(line)) is not None and run.library_version is None:
        run.library_version = m.group(2)


def _results(runs: list[_Run]) -> tuple[NcclResult, ...]:
    # A stretch without a readable row is no run of its own: its skipped lines go with the
    # run before it (or the first run after it, at the start of the text).
    results: list[NcclResult] = []
    orphans: list[SkippedLine] = []
    for run in runs:
        result = run.result() if run.rows else None
        if result is not None and result.rows:
            if orphans:
                result = _with_skipped(result, orphans)
                orphans = []
            results.append(result)
            continue
        lost = list(result.skipped_lines) if result is not None else list(run.skipped)
        if results:
            results[-1] = _with_skipped(results[-1], lost)
        else:
            orphans.extend(lost)
    if not results:
        orphans.sort(key=lambda s: s.line)
        detail = "".join(f"; {p}" for p in orphans[:3]) + ("; ..." if len(orphans) > 3 else "")
        raise InputError("text", "contains no nccl-tests result rows (size, count, type, time, ...)" + detail)
    return tuple(results)


def _with_skipped(result: NcclResult, more: list[SkippedLine]) -> NcclResult:
    skipped = tuple(sorted(result.skipped_lines + tuple(more), key=lambda s: s.line))
    return dataclasses.replace(result, skipped_lines=skipped, skipped=tuple(s.text for s in skipped))


def rows_to_points(result: NcclResult, placement: str = "out", include_empty: bool = False):
    """(sizes in bytes, times in seconds) arrays of ``result`` for ``comms.fit_alpha_beta``.

    ``placement`` "out" or "in". Sizes are whole buffers, as the model takes them (printed
    size x n_ranks for a log with per-rank sizes). Zero-byte rows are left out unless
    ``include_empty``: NCCL returns early for them, so their time is launch overhead, not the
    message latency (alltoall's zero-byte rows take ~1 us against ~87 us for 32 bytes).
    """
    if not isinstance(result, NcclResult):
        raise InputError("result", f"must be an NcclResult, got {type(result).__name__}")
    placement = v.choice("placement", placement, PLACEMENTS)
    scale = result.n_ranks if result.sizes_per_rank and result.n_ranks else 1
    points = [
        (row.size * scale, m.time)
        for row in result.rows
        if (m := row.placement(placement)) is not None and (include_empty or row.size > 0)
    ]
    sizes = np.array([p[0] for p in points], dtype=float)
    times = np.array([p[1] for p in points], dtype=float)
    return sizes, times
