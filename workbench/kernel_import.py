"""Importing measured kernels: a plain CSV of FLOPs and bytes, or an Nsight Compute export.

Both parsers return an :class:`ImportResult`: the kernels that could be read, and one
:class:`RowError` per row that could not, with its line number and what to fix. A file that
cannot be read at all (no header, a required column missing) raises ``InputError``.
Values are converted to SI base units (FLOPs, bytes, seconds) using the units in the header
(plain CSV) or in the units row / "Metric Unit" column (Nsight Compute).
"""

from __future__ import annotations

import csv
import io
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
    """Kernels read from a file, and the rows that were skipped."""

    kernels: tuple[Kernel, ...]
    errors: tuple[RowError, ...]

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
    """'FLOP', 'GFLOP', 'flops', 'inst' ... -> FLOPs per unit."""
    u = unit.strip().lower()
    if u in ("", "inst", "instructions", "count"):
        return 1.0
    m = re.fullmatch(r"([kmgtp])?flops?", u)
    return _DECIMAL[m.group(1) or ""] if m else None


def _time_scale(unit: str) -> float | None:
    return _TIME.get(unit.strip().lower())


# -- numbers -----------------------------------------------------------------------------
_NUMBER = re.compile(r"[+-]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _parse_number(text: str) -> float | None:
    """A decimal number, thousands separators (',' '_') allowed; None if it is not one."""
    s = text.strip().replace("\u00a0", "").replace(" ", "")
    if not _NUMBER.fullmatch(s):
        return None
    return float(s.replace(",", "").replace("_", ""))


def _read_value(column: str, raw: str, scale: float, *, required: bool, what: str):
    """Parse one cell; return (value in SI or None, error reason or None)."""
    text = raw.strip()
    if not text:
        if required:
            return None, f"{column} is empty; fill in the {what}"
        return None, None
    value = _parse_number(text)
    if value is None:
        return None, f"{column} {text!r} is not a number; write digits only (e.g. 1.5e12 or 1,500,000)"
    value *= scale
    if value <= 0:
        hint = " (leave it empty if not measured)" if not required else ""
        return None, f"{column} must be > 0, got {text}{hint}"
    return value, None


def _text_arg(text: object) -> str:
    if isinstance(text, bytes):
        raise v.InputError("text", "must be text (decode the file first), got bytes")
    if not isinstance(text, str):
        raise v.InputError("text", f"must be text, got {type(text).__name__}")
    return text.lstrip("\ufeff")


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
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)

    columns: dict[str, tuple[int, float]] = {}
    kernels: list[Kernel] = []
    errors: list[RowError] = []
    for row in reader:
        line = reader.line_num
        if line - 1 < header_index or not any(cell.strip() for cell in row):
            continue
        if row[0].lstrip().startswith("#"):
            continue
        if not columns:
            columns = _plain_header(row)
            continue
        kernel, reason = _plain_row(row, columns)
        if reason:
            errors.append(RowError(line, reason))
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
            f" in {', '.join(c.strip() for c in row)!s}",
        )
    return found


def _plain_row(row: list[str], columns: dict[str, tuple[int, float]]):
    def cell(field: str) -> str:
        index = columns[field][0]
        return row[index] if index < len(row) else ""

    name = cell("name").strip()
    if not name:
        return None, "name is empty; give the kernel a name"
    flops, reason = _read_value("flops", cell("flops"), columns["flops"][1], required=True, what="FLOP count")
    if reason:
        return None, f"{name}: {reason}"
    moved, reason = _read_value("bytes", cell("bytes"), columns["bytes"][1], required=True, what="bytes moved")
    if reason:
        return None, f"{name}: {reason}"
    time_s = None
    if "time" in columns:
        time_s, reason = _read_value("time", cell("time"), columns["time"][1], required=False, what="time")
        if reason:
            return None, f"{name}: {reason}"
    return Kernel(name=name, flops=flops, bytes=moved, time_s=time_s), None


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


def _counter_key(metric: str) -> str:
    # smsp__ is the same counter summed per sub-partition; the sum over the GPU is identical.
    m = metric.strip()
    return "sm__" + m[len("smsp__"):] if m.startswith("smsp__") else m


def parse_ncu_csv(text: str) -> ImportResult:
    """Read kernels from an Nsight Compute CSV export (``ncu --csv``).

    Both layouts are read:
      - ``--page raw``: a header of "ID", "Kernel Name", ... and one column per metric, an
        optional second row of units, then one row per kernel launch;
      - the default details layout: one row per metric with "Metric Name", "Metric Unit",
        "Metric Value", grouped by "ID".
    Lines ncu or the application print around the CSV ("==PROF== ...") are ignored.

    FLOPs = 2 x (FFMA + DFMA + HFMA) + FADD + FMUL + DADD + DMUL + HADD + HMUL from the
    ``sm__sass_thread_inst_executed_op_*_pred_on.sum`` counters (tensor-core work is not in
    them); bytes = ``dram__bytes.sum`` (or read + write); time = ``gpu__time_duration.sum``
    in its unit (optional). Values may carry thousands separators ("1,234,567").
    """
    body = _text_arg(text)
    rows = _ncu_rows(body)
    if not rows:
        raise v.InputError("text", 'no Nsight Compute header found (a row starting "ID", ..., "Kernel Name")')
    header_line, header = rows[0]
    lower = [h.strip().lower() for h in header]
    if "kernel name" not in lower:
        raise v.InputError("text", 'the Nsight Compute header has no "Kernel Name" column')
    if {"metric name", "metric value"} <= set(lower):
        launches = _ncu_long(rows, lower)
    else:
        launches = _ncu_wide(rows, lower)

    kernels: list[Kernel] = []
    errors: list[RowError] = []
    for line, name, metrics, problem in launches:
        kernel, reason = (None, problem) if problem else _ncu_kernel(name, metrics)
        if reason:
            errors.append(RowError(line, reason))
        else:
            kernels.append(kernel)
    return ImportResult(tuple(kernels), tuple(errors))


def _ncu_rows(body: str) -> list[tuple[int, list[str]]]:
    """The CSV rows from the ncu header on, with line numbers; other output dropped."""
    lines = body.splitlines()
    start = None
    for i, ln in enumerate(lines):
        s = ln.lstrip()
        if s.startswith('"ID"') or s.startswith("ID,"):
            start = i
            break
    if start is None:
        return []
    # ncu quotes every cell; when the header is quoted, unquoted lines are program output.
    quoted = lines[start].lstrip().startswith('"')
    out = []
    for offset, ln in enumerate(lines[start:]):
        s = ln.strip()
        if not s or s.startswith("==") or (quoted and not s.startswith('"')) or "," not in s:
            continue
        row = next(csv.reader([ln]))
        out.append((start + offset + 1, row))
    return out


def _is_units_row(row: list[str], lower: list[str]) -> bool:
    # The units row leaves the identification columns empty and names units under metrics.
    id_index = lower.index("id") if "id" in lower else 0
    name_index = lower.index("kernel name")
    cell = lambda i: row[i].strip() if i < len(row) else ""  # noqa: E731
    return not cell(id_index) and not cell(name_index)


def _ncu_wide(rows, lower):
    header_line, header = rows[0]
    units = [""] * len(header)
    launches = []
    name_index = lower.index("kernel name")
    for position, (line, row) in enumerate(rows[1:]):
        if position == 0 and _is_units_row(row, lower):
            units = [u.strip() for u in row] + [""] * (len(header) - len(row))
            continue
        if len(row) != len(header):
            reason = f"row has {len(row)} cells but the header has {len(header)}; re-export with ncu --csv --page raw"
            launches.append((line, "", {}, reason))
            continue
        metrics = {}
        for i, metric in enumerate(header):
            if i < len(row):
                metrics[_counter_key(metric)] = (row[i], units[i] if i < len(units) else "")
        name = row[name_index].strip() if name_index < len(row) else ""
        launches.append((line, name, metrics, None))
    return launches


def _ncu_long(rows, lower):
    name_i = lower.index("kernel name")
    metric_i = lower.index("metric name")
    value_i = lower.index("metric value")
    unit_i = lower.index("metric unit") if "metric unit" in lower else None
    id_i = lower.index("id") if "id" in lower else None
    launches: dict[str, tuple[int, str, dict]] = {}
    for line, row in rows[1:]:
        if len(row) <= max(name_i, metric_i, value_i):
            continue
        key = row[id_i].strip() if id_i is not None else row[name_i].strip()
        entry = launches.setdefault(key, (line, row[name_i].strip(), {}, None))
        unit = row[unit_i].strip() if unit_i is not None and unit_i < len(row) else ""
        entry[2][_counter_key(row[metric_i])] = (row[value_i], unit)
    return list(launches.values())


def _ncu_kernel(name: str, metrics: dict[str, tuple[str, str]]):
    """One launch's metrics -> (Kernel, None) or (None, reason)."""
    if not name:
        return None, "Kernel Name is empty; re-export with ncu --csv"

    flops = 0.0
    counted = False
    for metric, factor in FLOP_COUNTERS.items():
        if metric not in metrics:
            continue
        raw, unit = metrics[metric]
        scale = _flop_scale(unit)
        value = _parse_number(raw) if raw.strip() else None
        if value is None or scale is None or value < 0:
            return None, f"{name}: {metric} {raw.strip()!r} {unit} is not a count; re-export with ncu --csv"
        flops += factor * value * scale
        counted = True
    if not counted:
        return None, (
            f"{name}: no FLOP counters; profile with --section SpeedOfLight_RooflineChart or "
            f"--metrics sm__sass_thread_inst_executed_op_ffma_pred_on.sum,...fadd...,...fmul..."
        )
    if flops <= 0:
        return None, f"{name}: 0 FP32/FP64/FP16 FLOPs counted (tensor-core work is not in these counters)"

    if BYTES_METRIC in metrics:
        parts = [BYTES_METRIC]
    elif all(m in metrics for m in BYTES_SPLIT):
        parts = list(BYTES_SPLIT)
    else:
        return None, f"{name}: no {BYTES_METRIC} (or dram__bytes_read.sum + dram__bytes_write.sum) column"
    moved = 0.0
    for metric in parts:
        raw, unit = metrics[metric]
        scale = _byte_scale(unit) if unit else 1.0
        value = _parse_number(raw) if raw.strip() else None
        if value is None or scale is None or value < 0:
            return None, f"{name}: {metric} {raw.strip()!r} {unit} is not a byte count"
        moved += value * scale
    if moved <= 0:
        return None, f"{name}: {'+'.join(parts)} is 0 bytes; the kernel never touched device memory"

    time_s = None
    if TIME_METRIC in metrics and metrics[TIME_METRIC][0].strip():
        raw, unit = metrics[TIME_METRIC]
        scale = _time_scale(unit) if unit else 1e-9  # ncu's base unit for durations is ns
        value = _parse_number(raw)
        if value is None or scale is None:
            return None, f"{name}: {TIME_METRIC} {raw.strip()!r} {unit} is not a duration"
        if value > 0:
            time_s = value * scale
    return Kernel(name=name, flops=flops, bytes=moved, time_s=time_s), None


__all__ = ["FLOP_COUNTERS", "ImportResult", "RowError", "parse_kernel_csv", "parse_ncu_csv"]
