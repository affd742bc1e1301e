"""Importing measured kernels: a plain CSV of FLOPs and bytes, or an Nsight Compute export.

Both parsers return an :class:`ImportResult`: the kernels that could be read, and one
:class:`RowError` per row that could not, with its line number and what to fix. One bad row
(a value that is not a number, or so large it overflows, or a kernel the model refuses)
never rejects the rest of the file. A file that cannot be read at all (no header, a required
column missing) raises ``InputError``.
Values are converted to SI base units (FLOPs, bytes, seconds) using the units in the header
(plain CSV) or in the units row / "Metric Unit" column (Nsight Compute, whose prefixes are
decimal: a Kbyte is 1000 bytes).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

from workbench import _validate as v
from workbench.kernels import Kernel


@dataclass(frozen=True)
class RowError:
    """A row that was not imported: its 1-based line number in the text, and why."""

    line: int
    reason: str


@dataclass(frozen=True)
class ImportResult:
    """Kernels read from a file, and the rows that were skipped.

    ``errors``: one per row not imported (or, when the whole export lacks a counter, one for
    the file at its header line instead of one per launch). ``missing_counters``: the
    Nsight Compute metrics the export would need and lacks; ``ncu_command``: an ``ncu``
    command line that collects them. ``notes``: what the numbers do and do not include.
    """

    kernels: tuple[Kernel, ...]
    errors: tuple[RowError, ...]
    notes: tuple[str, ...] = ()
    missing_counters: tuple[str, ...] = ()
    ncu_command: str | None = None

    @property
    def ok(self) -> bool:
        """True when every data row was imported."""
        return not self.errors


# -- units -------------------------------------------------------------------------------
_DECIMAL = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}
_BINARY = {"ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40}
_TIME = {
    "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msec": 1e-3, "msecond": 1e-3,
    "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "usec": 1e-6, "usecond": 1e-6,
    "ns": 1e-9, "nsec": 1e-9, "nsecond": 1e-9,
}


def _byte_scale(unit: str) -> float | None:
    """'byte', 'Kbyte', 'MB', 'GiB' ... -> bytes per unit (decimal prefixes unless 'i')."""
    u = unit.strip().lower()
    m = re.fullmatch(r"([kmgtp]i?)?(?:b|byte|bytes)", u)
    if not m:
        return None
    prefix = m.group(1) or ""
    return _BINARY[prefix] if prefix.endswith("i") else _DECIMAL[prefix]


def _flop_scale(unit: str) -> float | None:
    """'FLOP', 'GFLOP', 'flops', 'inst', 'Minst' ... -> FLOPs (or instructions) per unit."""
    u = unit.strip().lower()
    if u in ("", "inst", "instructions", "count"):
        return 1.0
    m = re.fullmatch(r"([kmgtp])?(?:flops?|inst)", u)
    return _DECIMAL[m.group(1) or ""] if m else None


def _time_scale(unit: str) -> float | None:
    return _TIME.get(unit.strip().lower())


# -- numbers -----------------------------------------------------------------------------
_NUMBER = re.compile(r"[+-]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _parse_number(text: str) -> float | None:
    """A decimal number, thousands separators (',' '_') allowed; None if it is not one.
    Infinite when the digits overflow a float: the callers say so."""
    s = text.strip().replace("\u00a0", "").replace(" ", "")
    if not _NUMBER.fullmatch(s):
        return None
    return float(s.replace(",", "").replace("_", ""))


def _show(text: str) -> str:
    text = text.strip()
    return repr(text) if len(text) <= 24 else repr(text[:12] + "..." + text[-6:]) + f" ({len(text)} characters)"


def _read_value(column: str, raw: str, scale: float, *, required: bool, what: str):
    """Parse one cell; return (value in SI or None, error reason or None)."""
    text = raw.strip()
    if not text:
        if required:
            return None, f"{column} is empty; fill in the {what}"
        return None, None
    value = _parse_number(text)
    if value is None:
        return None, f"{column} {_show(text)} is not a number; write digits only (e.g. 1.5e12 or 1,500,000)"
    value *= scale
    if not math.isfinite(value):
        return None, f"{column} {_show(text)} is too large (it overflows); check the value and its unit"
    if value <= 0:
        hint = " (leave it empty if not measured)" if not required else ""
        return None, f"{column} must be > 0, got {text if len(text) <= 24 else _show(text)}{hint}"
    return value, None


def _text_arg(text: object) -> str:
    if isinstance(text, bytes):
        raise v.InputError("text", "must be text (decode the file first), got bytes")
    if not isinstance(text, str):
        raise v.InputError("text", f"must be text, got {type(text).__name__}")
    return text.lstrip("\ufeff")


def _kernel(line: int, name: str, flops: float, moved: float, time_s: float | None):
    """(Kernel, None), or (None, RowError) when the model refuses the numbers."""
    try:
        return Kernel(name=name, flops=flops, bytes=moved, time_s=time_s), None
    except v.InputError as exc:
        return None, RowError(line, f"{name}: {exc}")


# -- plain CSV ---------------------------------------------------------------------------
_UNIT_IN_HEADER = re.compile(r"^(?P<base>[^(\[]*?)\s*[(\[](?P<unit>[^)\]]*)[)\]]\s*$")


def _header_field(cell: str) -> tuple[str, str]:
    """'time (ms)' -> ('time', 'ms'); 'time_s' -> ('time', 's'); 'flops' -> ('flops', '')."""
    text = cell.strip().lower()
    m = _UNIT_IN_HEADER.match(text)
    if m:
        base, unit = m.group("base").strip(), m.group("unit").strip()
    else:
        base, unit = text, ""
    base = re.sub(r"[\s\-]+", "_", base)
    if base.startswith("time_") and _time_scale(base[5:]) is not None and not unit:
        base, unit = "time", base[5:]
    return base, unit


_ALIASES = {
    "name": ("name", "kernel", "kernel_name"),
    "flops": ("flops", "flop", "work"),
    "bytes": ("bytes", "byte", "traffic"),
    "time": ("time", "duration", "seconds"),
}


def _sniff_delimiter(line: str) -> str:
    counts = {d: line.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def _csv_rows(text: str, delimiter: str = ","):
    """(line number, cells or None, csv error or None) for every row csv can read, going on
    after a row it cannot (a field over csv's size limit)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield reader.line_num, None, str(exc)
            continue
        yield reader.line_num, row, None


def parse_kernel_csv(text: str) -> ImportResult:
    """Read kernels from CSV text with columns name, flops, bytes and optionally time.

    A header row is required (case-insensitive; units may be named in it, e.g. "flops",
    "bytes (B)", "bytes (GB)", "time_s", "time (s)", "time (ms)"). Blank lines and lines
    starting with '#' are skipped. Rows that cannot be read are listed in ``errors``.
    """
    body = _text_arg(text)
    lines = body.splitlines()
    header_index = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if header_index is None:
        raise v.InputError("text", "is empty; expected a header row: name,flops,bytes[,time_s]")
    delimiter = _sniff_delimiter(lines[header_index])

    columns: dict[str, tuple[int, float]] = {}
    kernels: list[Kernel] = []
    errors: list[RowError] = []
    for line, row, problem in _csv_rows("\n".join(lines), delimiter):
        if line - 1 < header_index:
            continue
        if row is None:
            if not columns:
                raise v.InputError("text", f"line {line}: the header row cannot be read ({problem})")
            errors.append(RowError(line, f"cannot be read as CSV ({problem})"))
            continue
        if not any(cell.strip() for cell in row) or row[0].lstrip().startswith("#"):
            continue
        if not columns:
            columns = _plain_header(row)
            continue
        kernel, error = _plain_row(line, row, columns)
        if error is not None:
            errors.append(error)
        else:
            kernels.append(kernel)
    return ImportResult(tuple(kernels), tuple(errors))


def _plain_header(row: list[str]) -> dict[str, tuple[int, float]]:
    found: dict[str, tuple[int, float]] = {}
    for index, cell in enumerate(row):
        base, unit = _header_field(cell)
        for field, names in _ALIASES.items():
            if base not in names or field in found:
                continue
            if field == "name":
                scale = 1.0
            elif field == "flops":
                scale = _flop_scale(unit)
            elif field == "bytes":
                scale = _byte_scale(unit) if unit else 1.0
            else:
                scale = _time_scale(unit) if unit else 1.0
            if scale is None:
                raise v.InputError("text", f"column {cell.strip()!r}: unknown unit {unit!r}")
            found[field] = (index, scale)
    missing = [f for f in ("name", "flops", "bytes") if f not in found]
    if missing:
        raise v.InputError(
            "text",
            f"header row needs columns name, flops, bytes (time_s optional); missing {', '.join(missing)}"
            f" in {', '.join(c.strip() for c in row)[:200]!s}",
        )
    return found


def _plain_row(line: int, row: list[str], columns: dict[str, tuple[int, float]]):
    def cell(field: str) -> str:
        index = columns[field][0]
        return row[index] if index < len(row) else ""

    name = cell("name").strip()
    if not name:
        return None, RowError(line, "name is empty; give the kernel a name")
    flops, reason = _read_value("flops", cell("flops"), columns["flops"][1], required=True, what="FLOP count")
    if reason:
        return None, RowError(line, f"{name}: {reason}")
    moved, reason = _read_value("bytes", cell("bytes"), columns["bytes"][1], required=True, what="bytes moved")
    if reason:
        return None, RowError(line, f"{name}: {reason}")
    time_s = None
    if "time" in columns:
        time_s, reason = _read_value("time", cell("time"), columns["time"][1], required=False, what="time")
        if reason:
            return None, RowError(line, f"{name}: {reason}")
    return _kernel(line, name, flops, moved, time_s)


# -- Nsight Compute ----------------------------------------------------------------------
# FLOP counters of the roofline sections (SpeedOfLight_RooflineChart and the hierarchical
# ones): thread-level SASS instructions executed with the predicate on. An FMA is 2 FLOPs.
_OPS = {"add": 1.0, "mul": 1.0, "fma": 2.0}
FLOP_COUNTERS: dict[str, float] = {
    f"sm__sass_thread_inst_executed_op_{width}{op}_pred_on.sum": factor
    for width in ("d", "f", "h")
    for op, factor in _OPS.items()
}
TIME_METRIC = "gpu__time_duration.sum"
BYTES_METRIC = "dram__bytes.sum"
BYTES_SPLIT = ("dram__bytes_read.sum", "dram__bytes_write.sum")
BYTES_SPLIT_OP = ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum")
#: What to collect for the roofline: the time, DRAM traffic and the FP64/FP32/FP16 counters,
#: by the names ``ncu --metrics`` takes (the smsp__ sums equal the sm__ ones).
ROOFLINE_METRICS: tuple[str, ...] = (
    TIME_METRIC, *BYTES_SPLIT,
    *(f"smsp__sass_thread_inst_executed_op_{w}{op}_pred_on.sum" for w in ("f", "h", "d") for op in ("add", "mul", "fma")),
)
#: An ncu command line that writes an export this module reads completely.
NCU_COMMAND = (f"ncu --metrics {','.join(ROOFLINE_METRICS)} --csv --page raw --log-file kernels.csv "
               "<your program and its arguments>")
_TENSOR_PREFIXES = ("sm__inst_executed_pipe_tensor", "sm__ops_path_tensor", "sm__pipe_tensor",
                    "sm__sass_thread_inst_executed_op_hmma", "sm__sass_inst_executed_op_hmma")
_DURATION_NAMES = ("duration",)  # the details page's display name of gpu__time_duration.sum


def _counter_key(metric: str) -> str:
    # smsp__ is the same counter summed per sub-partition; the sum over the GPU is identical.
    m = metric.strip()
    return "sm__" + m[len("smsp__"):] if m.startswith("smsp__") else m


def parse_ncu_csv(text: str) -> ImportResult:
    """Read kernels from an Nsight Compute CSV export (``ncu --csv``).

    Both layouts are read:
      - ``--page raw``: a header of "ID", "Kernel Name", ... and one column per metric, an
        optional second row of units, then one row per kernel launch;
      - the default details layout: one row per metric with "Section Name", "Metric Name",
        "Metric Unit", "Metric Value", grouped by "ID" (and process).
    A UTF-8 byte order mark, lines ncu or the application print around the CSV
    ("==PROF== ...", the program's own output) and a repeated header are ignored.

    FLOPs = 2 x (FFMA + DFMA + HFMA) + FADD + FMUL + DADD + DMUL + HADD + HMUL from the
    ``sm__``/``smsp__sass_thread_inst_executed_op_*_pred_on.sum`` counters (tensor-core work
    is not in them, and tensor-pipe counters are not FLOPs: they are not counted); bytes =
    ``dram__bytes.sum``, or read + write (``dram__bytes_read.sum`` + ``dram__bytes_write.sum``
    or the ``dram__bytes_op_*`` pair); time = ``gpu__time_duration.sum`` (or the details
    page's "Duration") in its unit, optional. Values may carry thousands separators.

    An export without FLOP counters (or without DRAM bytes) at all gets one error, at its
    header line, naming the counters to collect, with :data:`NCU_COMMAND`; a launch that
    lacks them in an export that has them elsewhere gets its own.
    """
    body = _text_arg(text)
    header_line, header, rows = _ncu_table(body)
    if header is None:
        raise v.InputError("text", 'no Nsight Compute header found (a row starting "ID", ..., "Kernel Name")')
    lower = [h.strip().lower() for h in header]
    if {"metric name", "metric value"} <= set(lower):
        launches = _ncu_long(rows, lower)
    else:
        launches = _ncu_wide(rows, header, lower)

    available = set().union(*(launch.metrics for launch in launches)) if launches else set()
    notes: list[str] = []
    file_errors: list[RowError] = []
    missing: list[str] = []
    has_flops = any(m in available for m in FLOP_COUNTERS)
    has_bytes = BYTES_METRIC in available or any(all(m in available for m in pair) for pair in (BYTES_SPLIT, BYTES_SPLIT_OP))
    for metric in ROOFLINE_METRICS:  # in the order of the ncu command line
        if (_counter_key(metric) in FLOP_COUNTERS and not has_flops) or (metric in BYTES_SPLIT and not has_bytes):
            missing.append(metric)
    if TIME_METRIC not in available:
        notes.append(f"no {TIME_METRIC} (Duration): kernels are placed on their roof, without a measured time")
    if any(m.startswith(_TENSOR_PREFIXES) for m in available):
        notes.append("tensor-core counters are in the export but are not FLOPs: tensor-core work is not counted")
    if missing:
        what = ("neither FLOP counters nor DRAM byte counters" if not (has_flops or has_bytes)
                else "no FLOP counters" if not has_flops else "no DRAM byte counters")
        count = sum(1 for launch in launches if launch.problem is None)
        rates = not has_flops and any(m.startswith(tuple(FLOP_COUNTERS)) and m not in FLOP_COUNTERS for m in available)
        file_errors.append(RowError(header_line, (
            f"the export has {what}, so none of its {count} kernel launch(es) can be placed"
            + ("; it has the roofline chart's rates (..._pred_on.sum.per_cycle_elapsed), rounded rates, not counts"
               if rates else "")
            + f"; collect {', '.join(missing)} with: {NCU_COMMAND}")))

    kernels: list[Kernel] = []
    errors: list[RowError] = list(file_errors)
    for launch in launches:
        if launch.problem is not None:
            errors.append(RowError(launch.line, launch.problem))
            continue
        if missing:
            continue  # said once, above
        kernel, error = _ncu_kernel(launch)
        if error is not None:
            errors.append(error)
        else:
            kernels.append(kernel)
    errors.sort(key=lambda e: e.line)
    return ImportResult(tuple(kernels), tuple(errors), tuple(notes), tuple(missing), NCU_COMMAND if missing else None)


@dataclass
class _Launch:
    """One kernel launch of an export: its metrics as (value, unit, line)."""

    line: int
    name: str
    metrics: dict[str, tuple[str, str, int]]
    problem: str | None = None


def _is_header(cells: list[str]) -> bool:
    lower = {c.strip().lower() for c in cells}
    return "kernel name" in lower and ("id" in lower or "metric name" in lower or any("__" in c for c in cells))


def _ncu_table(body: str):
    """(header line, header cells, [(line, cells or None, problem)]) of the export's table,
    with ncu's and the program's other output dropped; header None when there is none."""
    lines = [ln.lstrip("\ufeff") for ln in body.splitlines()]
    header_line, header = 0, None
    for i, ln in enumerate(lines):
        if "kernel name" not in ln.lower() or "," not in ln:
            continue
        cells = next(csv.reader([ln]), [])
        if _is_header(cells):
            header_line, header = i + 1, cells
            break
    if header is None:
        return 0, None, []
    # ncu quotes every cell; when the header is quoted, unquoted lines are program output.
    quoted = lines[header_line - 1].lstrip().startswith('"')
    rows = []
    for number, ln in enumerate(lines[header_line:], start=header_line + 1):
        s = ln.strip()
        if not s or s.startswith("==") or (quoted and not s.startswith('"')) or "," not in s:
            continue
        try:
            cells = next(csv.reader([ln]))
        except csv.Error as exc:
            rows.append((number, None, f"cannot be read as CSV ({exc}); re-export with ncu --csv"))
            continue
        if cells == header:
            continue  # ncu repeats the header for every process or report it exports
        rows.append((number, cells, None))
    return header_line, header, rows


def _is_units_row(row: list[str], lower: list[str]) -> bool:
    # The units row leaves the identification columns empty and names units under metrics.
    id_index = lower.index("id") if "id" in lower else 0
    name_index = lower.index("kernel name")
    cell = lambda i: row[i].strip() if i < len(row) else ""  # noqa: E731
    return not cell(id_index) and not cell(name_index)


def _ncu_wide(rows, header, lower) -> list[_Launch]:
    units = [""] * len(header)
    launches = []
    name_index = lower.index("kernel name")
    for line, row, problem in rows:
        if problem is not None:
            launches.append(_Launch(line, "", {}, problem))
            continue
        if _is_units_row(row, lower):  # after the header (and after each repeat of it)
            units = [u.strip() for u in row] + [""] * (len(header) - len(row))
            continue
        if len(row) != len(header):
            reason = f"row has {len(row)} cells but the header has {len(header)}; re-export with ncu --csv --page raw"
            launches.append(_Launch(line, "", {}, reason))
            continue
        metrics = {_counter_key(metric): (row[i], units[i] if i < len(units) else "", line)
                   for i, metric in enumerate(header) if "__" in metric}
        launches.append(_Launch(line, row[name_index].strip(), metrics))
    return launches


def _ncu_long(rows, lower) -> list[_Launch]:
    name_i = lower.index("kernel name")
    metric_i = lower.index("metric name")
    value_i = lower.index("metric value")
    unit_i = lower.index("metric unit") if "metric unit" in lower else None
    id_i = lower.index("id") if "id" in lower else None
    process_i = lower.index("process id") if "process id" in lower else None
    launches: dict[object, _Launch] = {}
    problems: list[_Launch] = []
    current: _Launch | None = None
    for line, row, problem in rows:
        if problem is not None or len(row) <= max(name_i, metric_i, value_i):
            problems.append(_Launch(line, "", {}, problem or (
                f"row has {len(row)} cells, too few for the header's Metric Value column; re-export with ncu --csv")))
            continue
        name = row[name_i].strip()
        metric = row[metric_i].strip()
        unit = row[unit_i].strip() if unit_i is not None and unit_i < len(row) else ""
        if metric.lower() in _DURATION_NAMES and _time_scale(unit) is not None:
            metric = TIME_METRIC
        metric = _counter_key(metric)
        if id_i is not None:
            key = (row[process_i].strip() if process_i is not None else "", row[id_i].strip())
            launch = launches.setdefault(key, _Launch(line, name, {}))
        else:  # no ID column: a launch goes on while the kernel and its metrics do not repeat
            if current is None or current.name != name or metric in current.metrics:
                current = _Launch(line, name, {})
                launches[len(launches)] = current
            launch = current
        launch.metrics.setdefault(metric, (row[value_i], unit, line))
    return sorted([*launches.values(), *problems], key=lambda launch: launch.line)


def _ncu_kernel(launch: _Launch):
    """One launch's metrics -> (Kernel, None) or (None, RowError)."""
    name, metrics = launch.name, launch.metrics
    if not name:
        return None, RowError(launch.line, "Kernel Name is empty; re-export with ncu --csv")

    def value(metric: str, scale_of, what: str):
        raw, unit, line = metrics[metric]
        scale = scale_of(unit) if unit else 1.0
        number = _parse_number(raw) if raw.strip() else None
        if number is None or scale is None or number < 0:
            return None, RowError(line, f"{name}: {metric} {_show(raw)} {unit} is not {what}".rstrip())
        if not math.isfinite(number * scale):
            return None, RowError(line, f"{name}: {metric} {_show(raw)} {unit} is too large (it overflows)")
        return number * scale, None

    flops, counted = 0.0, False
    for metric, factor in FLOP_COUNTERS.items():
        if metric not in metrics:
            continue
        count, error = value(metric, _flop_scale, "a count")
        if error is not None:
            return None, error
        flops += factor * count
        counted = True
    if not counted:
        return None, RowError(launch.line, f"{name}: this launch has no FLOP counters (others in the file do); "
                                           f"profile it with: {NCU_COMMAND}")
    if not math.isfinite(flops):
        return None, RowError(launch.line, f"{name}: the FLOP counters add up past the largest number (they overflow)")
    if flops <= 0:
        tensor = any(m.startswith(_TENSOR_PREFIXES) and (_parse_number(metrics[m][0]) or 0) > 0 for m in metrics)
        why = "it ran on the tensor cores, whose work these counters do not hold" if tensor else \
            "tensor-core work is not in these counters"
        return None, RowError(launch.line, f"{name}: 0 FP32/FP64/FP16 FLOPs counted ({why})")

    if BYTES_METRIC in metrics:
        parts: tuple[str, ...] = (BYTES_METRIC,)
    else:
        parts = next((pair for pair in (BYTES_SPLIT, BYTES_SPLIT_OP) if all(m in metrics for m in pair)), ())
    if not parts:
        half = next(((have, lack) for pair in (BYTES_SPLIT, BYTES_SPLIT_OP) for have, lack in (pair, pair[::-1])
                     if have in metrics), None)
        what = f"{half[0]} but not {half[1]}" if half else f"no {BYTES_METRIC} (nor DRAM read and write bytes)"
        return None, RowError(launch.line, f"{name}: this launch has {what}; its DRAM traffic is not known")
    moved = 0.0
    for metric in parts:
        amount, error = value(metric, _byte_scale, "a byte count")
        if error is not None:
            return None, error
        moved += amount
    if not math.isfinite(moved):
        return None, RowError(launch.line, f"{name}: {'+'.join(parts)} is too large (it overflows)")
    if moved <= 0:
        return None, RowError(launch.line, f"{name}: {'+'.join(parts)} is 0 bytes; the kernel never touched device memory")

    time_s = None
    if TIME_METRIC in metrics and metrics[TIME_METRIC][0].strip():
        raw, unit, line = metrics[TIME_METRIC]
        scale = _time_scale(unit) if unit else 1e-9  # ncu's base unit for durations is ns
        number = _parse_number(raw)
        if number is None or scale is None or number < 0:
            return None, RowError(line, f"{name}: {TIME_METRIC} {_show(raw)} {unit} is not a duration".rstrip())
        if not math.isfinite(number * scale):
            return None, RowError(line, f"{name}: {TIME_METRIC} {_show(raw)} {unit} is too large (it overflows)")
        if number > 0:
            time_s = number * scale
    return _kernel(launch.line, name, flops, moved, time_s)


__all__ = ["FLOP_COUNTERS", "NCU_COMMAND", "ROOFLINE_METRICS", "ImportResult", "RowError", "parse_kernel_csv",
           "parse_ncu_csv"]
