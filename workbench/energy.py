"""Reader for measured energy: CodeCarbon's emissions.csv, nvidia-smi power queries, and plain
timestamped power samples.

:func:`parse_energy_log` recognises the format from the first line that is not blank or a
``#`` comment (the header, or the first sample of a header-less file) and returns an
:class:`EnergyLog` in SI units: joules, seconds, watts, kilograms of CO2eq.

- CodeCarbon: every row is kept as a :class:`CodeCarbonRun` (the old 11-column schema up to the
  current one with run_id, experiment_id, per-component powers and energies, pue, ...);
  ``energy_consumed`` and the component energies are kWh in the file and joules here. Empty
  fields are None. Rows that share a ``run_id`` are checkpoints of one run, which CodeCarbon
  writes as running totals: the totals count each run once, by its longest row.
- nvidia-smi ``--query-gpu=timestamp,index,...,power.draw --format=csv`` with or without units,
  GPUs interleaved by index, repeated headers, ``[N/A]`` / ``[Not Supported]`` values; with
  ``--format=csv,noheader`` the draw is the first value in W (so query power.draw before
  other power fields), after an optional timestamp and GPU index.
- Plain samples: ``timestamp,power_w`` (ISO 8601 or seconds), comma, semicolon, tab or
  whitespace separated, with an optional header and an optional GPU column.

Energy per GPU is the trapezoid rule over the timestamps; without timestamps only the
average and peak power are known and ``energy_j`` is None (the notes say so). Lines that
cannot be used are listed in :attr:`EnergyLog.skipped` with their line number and why. Text
in none of these formats raises :class:`EnergyLogError` with a line number; no other
exception escapes and no value is ever NaN or infinite.
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime

from workbench._validate import InputError

J_PER_KWH = 3.6e6

FORMATS = ("codecarbon", "nvidia-smi", "power-samples")

# Magnitudes past these are refused (no real file has them); keeping every value this far from
# the float limit means sums and integrals cannot overflow.
_MAX_POWER_W = 1e9
_MAX_TIME_S = 1e15
_MAX_DURATION_S = 1e12
_MAX_KWH = 1e12
_MAX_KG = 1e12

_EXPECTED = (
    "expected a CodeCarbon emissions.csv (header with emissions and duration or energy_consumed), "
    "an nvidia-smi --query-gpu CSV with a power.draw column, or timestamped power samples "
    "(timestamp,power_w)"
)


class EnergyLogError(InputError):
    """A text that is not an energy log this module can read. ``line`` is the 1-based line
    number the message is about."""

    def __init__(self, line: int, message: str):
        super().__init__("text", f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class LineNote:
    """A line that was not used: its 1-based number, why, and (shortened) text."""

    line: int
    reason: str
    text: str = ""


@dataclass(frozen=True)
class CodeCarbonRun:
    """One row of a CodeCarbon emissions.csv, in SI units; None where the field is empty or
    the schema has no such column.

    ``duration_s`` seconds; ``emissions_kg`` kg CO2eq; ``emissions_rate_kg_per_s`` kg/s;
    ``energy_j`` (CodeCarbon's energy_consumed) and the ``cpu/gpu/ram_energy_j`` parts in
    joules; ``cpu/gpu/ram_power_w`` watts as CodeCarbon last measured them.
    """

    line: int
    timestamp: str | None = None
    project_name: str | None = None
    run_id: str | None = None
    experiment_id: str | None = None
    duration_s: float | None = None
    emissions_kg: float | None = None
    emissions_rate_kg_per_s: float | None = None
    energy_j: float | None = None
    cpu_energy_j: float | None = None
    gpu_energy_j: float | None = None
    ram_energy_j: float | None = None
    cpu_power_w: float | None = None
    gpu_power_w: float | None = None
    ram_power_w: float | None = None
    country_name: str | None = None
    country_iso_code: str | None = None
    region: str | None = None
    on_cloud: bool | None = None
    cloud_provider: str | None = None
    cloud_region: str | None = None
    os: str | None = None
    python_version: str | None = None
    codecarbon_version: str | None = None
    cpu_count: int | None = None
    cpu_model: str | None = None
    gpu_count: int | None = None
    gpu_model: str | None = None
    longitude: float | None = None
    latitude: float | None = None
    tracking_mode: str | None = None
    pue: float | None = None

    @property
    def avg_power_w(self) -> float | None:
        """energy_j / duration_s, None when either is missing or the duration is 0."""
        return _ratio(self.energy_j, self.duration_s)


@dataclass(frozen=True)
class PowerSample:
    """One power reading. ``time_s``: for calendar timestamps, seconds since the file's first
    one (:attr:`EnergyLog.start_time`; exact to the microsecond), for numeric timestamps the
    number as written (in seconds); None when the file has no timestamps. ``gpu``: the GPU's index (or bus id / uuid) as
    written, None for a file without a GPU column."""

    line: int
    time_s: float | None
    gpu: str | None
    power_w: float


@dataclass(frozen=True)
class GpuEnergy:
    """What the samples of one GPU add up to. ``energy_j`` by the trapezoid rule (None without
    timestamps or with a single sample), ``duration_s`` first to last sample (None without
    timestamps), ``avg_power_w`` time-weighted (energy / duration) when it can be, else the
    mean of the samples, ``peak_power_w`` the largest sample."""

    gpu: str | None
    name: str | None
    samples: int
    duration_s: float | None
    energy_j: float | None
    avg_power_w: float
    peak_power_w: float


@dataclass(frozen=True)
class EnergyLog:
    """A parsed energy log.

    ``format``: one of :data:`FORMATS`. Totals over the whole file: ``energy_j``,
    ``duration_s`` (CodeCarbon: the runs' durations added; samples: first to last timestamp),
    ``avg_power_w`` (energy / duration, or the GPUs' mean powers added when there are no
    timestamps), ``peak_power_w`` (the largest total draw of one sampling round: a round is
    one reading of each GPU, as nvidia-smi prints them; None for CodeCarbon, which does not
    record it), ``emissions_kg`` and ``country_name`` / ``country_iso_code`` / ``region``
    (CodeCarbon only; a region field is None when the runs disagree). ``start_time``: the
    first calendar timestamp as written, which sample times count from. ``runs``: CodeCarbon
    rows; ``samples`` and ``gpus``: power readings and their per-GPU sums. ``skipped``: lines
    not used, with why. ``notes``: what the totals could not include, and why.
    """

    format: str
    energy_j: float | None
    duration_s: float | None
    avg_power_w: float | None
    peak_power_w: float | None
    emissions_kg: float | None = None
    country_name: str | None = None
    country_iso_code: str | None = None
    region: str | None = None
    start_time: str | None = None
    runs: tuple[CodeCarbonRun, ...] = ()
    samples: tuple[PowerSample, ...] = ()
    gpus: tuple[GpuEnergy, ...] = ()
    skipped: tuple[LineNote, ...] = ()
    notes: tuple[str, ...] = ()

    def skipped_reasons(self) -> dict[str, int]:
        """How many lines were skipped for each kind of reason (quoted values shown as '...'
        and numbers as N, so that rows failing the same way count together)."""
        counts: dict[str, int] = {}
        for note in self.skipped:
            key = re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'...'", note.reason))
            counts[key] = counts.get(key, 0) + 1
        return counts


# -- small readers -----------------------------------------------------------------------
def _ratio(energy: float | None, duration: float | None) -> float | None:
    """energy / duration, None when either is missing, the duration is 0 or the quotient
    would not be a finite number (a duration of 1e-300 s)."""
    if energy is None or not duration:
        return None
    value = energy / duration
    return value if math.isfinite(value) else None


class _Bad(Exception):
    """A field or row that cannot be used; the message says why."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_UNAVAILABLE = re.compile(r"^\[?(?:N/A|Not Supported|Unknown Error|Insufficient Permissions|GPU requires reset|GPU is lost)\]?$",
                          re.IGNORECASE)


def _short(raw: str) -> str:
    text = raw.strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _number(text: str, what: str, limit: float) -> float:
    s = text.strip()
    if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise _Bad(f"{what} is {s}, not a finite number")
    if not _NUMBER.fullmatch(s) or len(s) > 60:
        raise _Bad(f"{what} {_clip(s)!r} is not a number")
    value = float(s)
    if not math.isfinite(value) or abs(value) > limit:
        raise _Bad(f"{what} {_clip(s)!r} is out of range")
    return value


def _clip(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?")
_WATTS = re.compile(r"(.*?)\s*(kW|mW|W)")
_HEADER_UNIT = re.compile(r"(.*?)\s*[\[(]([^\])]*)[\])]\s*")


def _time_value(text: str) -> tuple[float | datetime, str]:
    """(seconds or an aware datetime, kind): kind 'calendar' for dates, 'number' for numbers."""
    s = text.strip()
    if _NUMBER.fullmatch(s):
        return _number(s, "timestamp", _MAX_TIME_S), "number"
    stamp = s.replace("/", "-")
    if _STAMP.fullmatch(stamp):
        stamp = stamp.replace(",", ".")
        # fromisoformat takes at most 6 fraction digits
        stamp = re.sub(r"(\.\d{6})\d+", r"\1", stamp)
        try:
            dt = datetime.fromisoformat(stamp)
        except ValueError:
            raise _Bad(f"timestamp {_clip(s)!r} is not a valid date and time") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)  # a zone-less stamp: only differences matter
        return dt, "calendar"
    raise _Bad(f"timestamp {_clip(s)!r} is not understood (ISO 8601, YYYY/MM/DD HH:MM:SS or seconds)")


_POWER_SCALE = {"w": 1.0, "watt": 1.0, "watts": 1.0, "kw": 1e3, "mw": 1e-3}
_TIME_SCALE = {"s": 1.0, "sec": 1.0, "seconds": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


def _power_value(text: str, scale: float, what: str) -> float:
    s = text.strip()
    m = _WATTS.fullmatch(s)
    if m:
        s, scale = m.group(1), {"kW": 1e3, "mW": 1e-3, "W": 1.0}[m.group(2)]
    value = _number(s, what, _MAX_POWER_W) * scale
    if value < 0:
        raise _Bad(f"{what} is negative ({value:g} W)")
    if value > _MAX_POWER_W:
        raise _Bad(f"{what} {_clip(text.strip())!r} is out of range")
    return value


def _split_header_name(cell: str) -> tuple[str, str]:
    """'power.draw [W]' -> ('power.draw', 'w'); 'Power (kW)' -> ('power', 'kw')."""
    text = cell.strip().strip('"').lower()
    m = _HEADER_UNIT.fullmatch(text)
    if m:
        return m.group(1).strip(), m.group(2).strip()
    return text, ""


def _csv_row(line: str, delimiter: str = ",") -> list[str]:
    if '"' not in line:  # the common case, without the csv module's per-call cost
        return [cell.lstrip(" ") for cell in line.split(delimiter)]
    try:
        return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
    except (csv.Error, StopIteration) as exc:
        raise _Bad(f"not a CSV row ({exc})") from None


# -- CodeCarbon --------------------------------------------------------------------------
_CC_TEXT = ("timestamp", "project_name", "run_id", "experiment_id", "country_name", "country_iso_code",
            "region", "cloud_provider", "cloud_region", "os", "python_version", "codecarbon_version",
            "cpu_model", "gpu_model", "tracking_mode")
# column -> (field, scale to SI, upper limit in the file's unit, may be negative)
_CC_NUMBERS = {
    "duration": ("duration_s", 1.0, _MAX_DURATION_S, False),
    "emissions": ("emissions_kg", 1.0, _MAX_KG, False),
    "emissions_rate": ("emissions_rate_kg_per_s", 1.0, _MAX_KG, False),
    "energy_consumed": ("energy_j", J_PER_KWH, _MAX_KWH, False),
    "cpu_energy": ("cpu_energy_j", J_PER_KWH, _MAX_KWH, False),
    "gpu_energy": ("gpu_energy_j", J_PER_KWH, _MAX_KWH, False),
    "ram_energy": ("ram_energy_j", J_PER_KWH, _MAX_KWH, False),
    "cpu_power": ("cpu_power_w", 1.0, _MAX_POWER_W, False),
    "gpu_power": ("gpu_power_w", 1.0, _MAX_POWER_W, False),
    "ram_power": ("ram_power_w", 1.0, _MAX_POWER_W, False),
    "longitude": ("longitude", 1.0, 180.0, True),
    "latitude": ("latitude", 1.0, 90.0, True),
    "pue": ("pue", 1.0, 100.0, False),
}
_CC_COUNTS = {"cpu_count": "cpu_count", "gpu_count": "gpu_count"}


def _is_codecarbon_header(names: list[str]) -> bool:
    return "emissions" in names and ("duration" in names or "energy_consumed" in names)


def _codecarbon_row(number: int, header: list[str], cells: list[str]) -> CodeCarbonRun:
    if len(cells) != len(header):
        raise _Bad(f"has {len(cells)} fields, the header has {len(header)}")
    values: dict = {}
    for name, cell in zip(header, cells, strict=True):
        raw = cell.strip()
        if not raw or raw.lower() in ("nan", "none", "null"):
            continue  # an empty field is absent
        if name in _CC_TEXT:
            values[name] = raw
        elif name in _CC_NUMBERS:
            field, scale, limit, signed = _CC_NUMBERS[name]
            value = _number(raw, name, limit)
            if value < 0 and not signed:
                raise _Bad(f"{name} is negative ({raw})")
            values[field] = value * scale
        elif name in _CC_COUNTS:
            value = _number(raw, name, 1e9)
            if value < 0 or not value.is_integer():
                raise _Bad(f"{name} {raw!r} is not a whole number >= 0")
            values[_CC_COUNTS[name]] = int(value)
        elif name == "on_cloud":
            flag = raw.upper()
            if flag not in ("Y", "N", "TRUE", "FALSE", "YES", "NO"):
                raise _Bad(f"on_cloud {_clip(raw)!r} is not Y or N")
            values["on_cloud"] = flag in ("Y", "TRUE", "YES")
    return CodeCarbonRun(line=number, **values)


def _parse_codecarbon(lines: list[tuple[int, str]], header: list[str], header_line: int) -> EnergyLog:
    runs: list[CodeCarbonRun] = []
    skipped: list[LineNote] = []
    for number, raw in lines:
        try:
            cells = _csv_row(raw)
        except _Bad as exc:
            skipped.append(LineNote(number, str(exc), _short(raw)))
            continue
        names = [c.strip().lower() for c in cells]
        if _is_codecarbon_header(names):
            same = names == header
            header = names  # a file appended by another CodeCarbon version: its own columns
            skipped.append(LineNote(number, "repeated header" if same else "header (new columns)", _short(raw)))
            continue
        try:
            runs.append(_codecarbon_row(number, header, cells))
        except _Bad as exc:
            skipped.append(LineNote(number, str(exc), _short(raw)))
    if not runs:
        if skipped:
            raise EnergyLogError(skipped[0].line, f"a CodeCarbon file without a readable row: {skipped[0].reason}")
        raise EnergyLogError(header_line, "a CodeCarbon header but no rows")

    notes: list[str] = []
    kept: dict[object, CodeCarbonRun] = {}
    for i, run in enumerate(runs):
        key = run.run_id if run.run_id is not None else ("row", i)
        best = kept.get(key)
        if best is None or (run.duration_s or 0.0) >= (best.duration_s or 0.0):
            kept[key] = run
    repeated = len(runs) - len(kept)
    if repeated:
        notes.append(f"{repeated} row(s) repeat a run_id: CodeCarbon writes running totals, so each run "
                     "counts once, by its longest row")
    chosen = list(kept.values())

    def total(field: str) -> float | None:
        present = [getattr(r, field) for r in chosen if getattr(r, field) is not None]
        return math.fsum(present) if present else None

    energy = total("energy_j")
    missing = sum(1 for r in chosen if r.energy_j is None)
    if energy is not None and missing:
        notes.append(f"{missing} run(s) have no energy_consumed: the total leaves them out")
    duration = total("duration_s")
    avg = _ratio(energy, duration)

    def common(field: str) -> str | None:
        seen = {getattr(r, field) for r in chosen if getattr(r, field) is not None}
        if len(seen) > 1:
            notes.append(f"the runs have different {field} values: {', '.join(sorted(seen))}")
        return seen.pop() if len(seen) == 1 else None

    return EnergyLog(
        format="codecarbon",
        energy_j=energy,
        duration_s=duration,
        avg_power_w=avg,
        peak_power_w=None,
        emissions_kg=total("emissions_kg"),
        country_name=common("country_name"),
        country_iso_code=common("country_iso_code"),
        region=common("region"),
        runs=tuple(runs),
        skipped=tuple(skipped),
        notes=tuple(notes),
    )


# -- power samples (nvidia-smi and plain) ------------------------------------------------
@dataclass
class _Layout:
    time: int | None
    power: int
    gpu: int | None
    name: int | None
    power_scale: float
    time_scale: float  # divisor: time column unit per second
    width: int
    header: tuple[str, ...]
    delimiter: str | None  # None: whitespace


_SMI_POWER = ("power.draw", "power.draw.instant", "power.draw.average")
_SMI_GPU = ("index", "pci.bus_id", "uuid", "serial")


def _smi_layout(cells: list[str]) -> _Layout | None:
    parts = [_split_header_name(c) for c in cells]
    names = [p[0] for p in parts]
    power = next((names.index(n) for n in _SMI_POWER if n in names), None)
    if power is None:
        return None
    gpu = next((names.index(n) for n in _SMI_GPU if n in names), None)
    unit = parts[power][1]
    return _Layout(
        time=names.index("timestamp") if "timestamp" in names else None,
        power=power,
        gpu=gpu,
        name=names.index("name") if "name" in names else None,
        power_scale=_POWER_SCALE.get(unit, 1.0),
        time_scale=1.0,
        width=len(cells),
        header=tuple(names),
        delimiter=",",
    )


def _plain_header(cells: list[str], delimiter: str | None) -> _Layout | None:
    parts = [_split_header_name(c) for c in cells]
    time = power = gpu = None
    power_scale, time_scale = 1.0, 1.0
    for i, (name, unit) in enumerate(parts):
        base = re.sub(r"[\s\-]+", "_", name)
        m = re.fullmatch(r"(.*?)_(w|kw|mw|watts?|s|sec|seconds|ms|us|ns)", base)
        if m and not unit:
            base, unit = m.group(1), m.group(2)
        if power is None and (re.search(r"power|watt", base) or base in ("w", "p")):
            power, power_scale = i, _POWER_SCALE.get(unit, 1.0)
        elif time is None and (re.search(r"time|date|epoch|elapsed", base) or base in ("t", "ts")):
            time, time_scale = i, _TIME_SCALE.get(unit, 1.0)
        elif gpu is None and (re.search(r"gpu|device|index", base) or base in ("id", "idx", "rank")):
            gpu = i
    if power is None:
        return None
    return _Layout(time, power, gpu, None, power_scale, time_scale, len(cells),
                   tuple(p[0] for p in parts), delimiter)


def _split_plain(line: str, delimiter: str | None) -> list[str]:
    if delimiter is not None:
        return [c.strip() for c in _csv_row(line, delimiter)]
    tokens = line.split()
    # "2024-05-01 10:00:00" split by whitespace: join the date and the time again
    if len(tokens) >= 2 and re.fullmatch(r"\d{4}[-/]\d{2}[-/]\d{2}", tokens[0]) and re.match(r"\d{2}:\d{2}", tokens[1]):
        tokens = [tokens[0] + " " + tokens[1], *tokens[2:]]
    if len(tokens) >= 2 and tokens[-1] in ("W", "kW", "mW"):  # "250 W": the value and its unit
        tokens = [*tokens[:-2], tokens[-2] + " " + tokens[-1]]
    return tokens


def _delimiter_of(line: str) -> str | None:
    for d in (",", ";", "\t"):
        if d in line:
            return d
    return None


def _header_like(cells: list[str]) -> bool:
    """True when no cell reads as a number, a timestamp or a power with a unit."""
    for c in cells:
        try:
            _time_value(c)
            return False
        except _Bad:
            pass
        if _WATT_CELL.fullmatch(c):
            return False
    return True


_WATT_CELL = re.compile(r"\s*[+-]?(?:\d|\.\d)[\d.eE+-]*\s*(?:k|m)?W\s*")
_INDEX_CELL = re.compile(r"\s*\d{1,4}\s*")


def _is_time(cell: str) -> bool:
    try:
        _time_value(cell)
    except _Bad:
        return False
    return True


def _plain_layout_without_header(cells: list[str], delimiter: str | None) -> _Layout:
    watts = [i for i, c in enumerate(cells) if _WATT_CELL.fullmatch(c)]
    if len(cells) > 3 and watts:
        # nvidia-smi --format=csv,noheader: the draw is the first value in watts, after an
        # optional timestamp and GPU index
        time = 0 if _is_time(cells[0]) and not _INDEX_CELL.fullmatch(cells[0]) else None
        at = 0 if time is None else 1
        gpu = at if at < watts[0] and _INDEX_CELL.fullmatch(cells[at]) else None
        return _Layout(time, watts[0], gpu, None, 1.0, 1.0, len(cells), (), delimiter)
    if len(cells) == 2:
        return _Layout(0, 1, None, None, 1.0, 1.0, 2, (), delimiter)
    if len(cells) == 3:
        return _Layout(0, 2, 1, None, 1.0, 1.0, 3, (), delimiter)
    raise _Bad(f"has {len(cells)} fields; a header-less sample line is 'timestamp power' or 'timestamp gpu power'")


class _Clock:
    """Turns a file's timestamps into seconds: calendar ones relative to the first (exact
    differences, where epoch floats would lose the milliseconds), numeric ones as written."""

    def __init__(self):
        self.kind: str | None = None
        self.origin: datetime | None = None
        self.origin_text: str | None = None

    def seconds(self, raw: str, scale: float) -> float:
        value, kind = _time_value(raw)
        if self.kind is not None and kind != self.kind:
            raise _Bad("timestamp mixes dates and plain numbers; the first sample set the kind")
        if kind == "number":
            self.kind = kind
            return value / scale
        if self.origin is None:
            self.origin, self.origin_text = value, raw
        self.kind = kind
        return (value - self.origin).total_seconds()


def _read_sample(number: int, cells: list[str], layout: _Layout, clock: _Clock) -> tuple[PowerSample, str | None]:
    if len(cells) != layout.width:
        expected = "the header has" if layout.header else "the first sample has"
        raise _Bad(f"has {len(cells)} fields, {expected} {layout.width}")
    raw_power = cells[layout.power].strip()
    column = layout.header[layout.power] if layout.header else "power"
    if _UNAVAILABLE.match(raw_power) or not raw_power:
        raise _Bad(f"{column} is {raw_power or 'empty'}")
    power = _power_value(raw_power, layout.power_scale, column)
    gpu = None
    if layout.gpu is not None:
        gpu = cells[layout.gpu].strip() or None
        if gpu is None or _UNAVAILABLE.match(gpu):
            raise _Bad("the GPU column is empty")
    time = None
    if layout.time is not None:
        raw_time = cells[layout.time].strip()
        if _UNAVAILABLE.match(raw_time) or not raw_time:
            raise _Bad(f"timestamp is {raw_time or 'empty'}")
        time = clock.seconds(raw_time, layout.time_scale)
    name = cells[layout.name].strip() if layout.name is not None else None
    return PowerSample(number, time, gpu, power), name


def _parse_samples(fmt: str, lines: list[tuple[int, str]], layout: _Layout, header_line: int) -> EnergyLog:
    samples: list[PowerSample] = []
    names: dict[str | None, str] = {}
    skipped: list[LineNote] = []
    clock = _Clock()
    delimiter = layout.delimiter
    for number, raw in lines:
        try:
            cells = _split_plain(raw, delimiter) if fmt == "power-samples" else _csv_row(raw)
            if fmt == "nvidia-smi" and "power.draw" in raw:
                new = _smi_layout(cells)
                if new is not None:
                    same = new.header == layout.header
                    layout = new
                    skipped.append(LineNote(number, "repeated header" if same else "header (new columns)", _short(raw)))
                    continue
            elif layout.header and _header_like(cells) and len(cells) == layout.width:
                skipped.append(LineNote(number, "repeated header", _short(raw)))
                continue
            sample, name = _read_sample(number, cells, layout, clock)
        except _Bad as exc:
            skipped.append(LineNote(number, str(exc), _short(raw)))
            continue
        samples.append(sample)
        if name and sample.gpu not in names:
            names[sample.gpu] = name
    if not samples:
        if skipped:
            first = skipped[0]
            raise EnergyLogError(first.line, f"no readable power sample ({fmt}): {first.reason}")
        raise EnergyLogError(header_line, f"a {fmt} header but no samples")
    return _summarise(fmt, samples, names, skipped, clock.origin_text)


def _summarise(fmt: str, samples: list[PowerSample], names: dict, skipped: list[LineNote],
               start_time: str | None) -> EnergyLog:
    notes: list[str] = []
    groups: dict[str | None, list[PowerSample]] = {}
    for s in samples:
        groups.setdefault(s.gpu, []).append(s)
    timed = all(s.time_s is not None for s in samples)
    if not timed:
        notes.append("no timestamps: energy cannot be computed; average and peak power only")
    gpus = []
    for gpu, group in groups.items():
        powers = [s.power_w for s in group]
        peak = max(powers)
        mean = math.fsum(powers) / len(powers)
        energy = duration = None
        avg = mean
        if timed:
            ordered = sorted(group, key=lambda s: s.time_s)
            times = [s.time_s for s in ordered]
            duration = times[-1] - times[0]
            if len(ordered) >= 2:
                energy = math.fsum(
                    (a.power_w + b.power_w) / 2.0 * (b.time_s - a.time_s) for a, b in zip(ordered, ordered[1:], strict=False)
                )
                if duration > 0:
                    avg = energy / duration
                _note_gaps(gpu, ordered, notes)
            else:
                notes.append(f"{_gpu_label(gpu)} has a single sample: its energy needs two")
        gpus.append(GpuEnergy(gpu, names.get(gpu), len(group), duration, energy, avg, peak))

    energies = [g.energy_j for g in gpus if g.energy_j is not None]
    energy_total = math.fsum(energies) if energies else None
    duration_total = None
    if timed:
        times = [s.time_s for s in samples]
        duration_total = max(times) - min(times)
    if energy_total is not None and duration_total:
        avg_total = energy_total / duration_total
    else:
        avg_total = math.fsum(g.avg_power_w for g in gpus)
    return EnergyLog(
        format=fmt,
        energy_j=energy_total,
        duration_s=duration_total,
        avg_power_w=avg_total,
        peak_power_w=_peak_round(samples),
        start_time=start_time,
        samples=tuple(samples),
        gpus=tuple(gpus),
        skipped=tuple(skipped),
        notes=tuple(notes),
    )


def _gpu_label(gpu: str | None) -> str:
    return "the GPU" if gpu is None else f"GPU {gpu}"


def _note_gaps(gpu: str | None, ordered: list[PowerSample], notes: list[str]) -> None:
    steps = [b.time_s - a.time_s for a, b in zip(ordered, ordered[1:], strict=False)]
    positive = [s for s in steps if s > 0]
    if len(positive) < 3:
        return
    typical = statistics.median(positive)
    for (a, b), step in zip(zip(ordered, ordered[1:], strict=False), steps, strict=False):
        if step > 10 * typical:
            notes.append(f"{_gpu_label(gpu)}: {step:g} s between lines {a.line} and {b.line} "
                         f"(typical {typical:g} s); the trapezoid draws a straight line across the gap")


def _peak_round(samples: list[PowerSample]) -> float:
    """The largest sum over one reading of each GPU, rounds taken in file order."""
    peak = 0.0
    current = 0.0
    seen: set = set()
    for s in samples:
        if s.gpu in seen or s.gpu is None:
            peak = max(peak, current)
            current, seen = 0.0, set()
        current += s.power_w
        if s.gpu is not None:
            seen.add(s.gpu)
        else:
            peak = max(peak, current)
            current = 0.0
    return max(peak, current)


# -- entry point -------------------------------------------------------------------------
def parse_energy_log(text: str) -> EnergyLog:
    """Read a CodeCarbon emissions.csv, an nvidia-smi power query or plain power samples; see
    the module docstring. Raises :class:`EnergyLogError` (with a line number) for anything
    else."""
    if isinstance(text, bytes):
        raise EnergyLogError(1, "must be text (decode the file first), got bytes")
    if not isinstance(text, str):
        raise EnergyLogError(1, f"must be the text of an energy log, got {type(text).__name__}")
    body: list[tuple[int, str]] = []
    for number, raw in enumerate(text.lstrip("\ufeff").split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.strip() and not line.lstrip().startswith("#"):
            body.append((number, line))
    if not body:
        raise EnergyLogError(1, f"is empty; {_EXPECTED}")
    first_number, first = body[0]
    try:
        cells = _csv_row(first)
    except _Bad:
        cells = []
    names = [c.strip().lower() for c in cells]
    if _is_codecarbon_header(names):
        return _parse_codecarbon(body[1:], names, first_number)
    layout = _smi_layout(cells) if cells else None
    if layout is not None:
        return _parse_samples("nvidia-smi", body[1:], layout, first_number)
    delimiter = _delimiter_of(first)
    try:
        plain_cells = _split_plain(first, delimiter)
    except _Bad as exc:
        raise EnergyLogError(first_number, f"{exc}; {_EXPECTED}") from None
    if _header_like(plain_cells):
        layout = _plain_header(plain_cells, delimiter)
        if layout is None:
            raise EnergyLogError(first_number, f"not an energy log header; {_EXPECTED}")
        return _parse_samples("power-samples", body[1:], layout, first_number)
    try:
        layout = _plain_layout_without_header(plain_cells, delimiter)
        _read_sample(first_number, plain_cells, layout, _Clock())
    except _Bad as exc:
        raise EnergyLogError(first_number, f"not an energy log ({exc}); {_EXPECTED}") from None
    fmt = "nvidia-smi" if len(plain_cells) > 3 else "power-samples"
    return _parse_samples(fmt, body, layout, first_number)


__all__ = [
    "FORMATS",
    "J_PER_KWH",
    "CodeCarbonRun",
    "EnergyLog",
    "EnergyLogError",
    "GpuEnergy",
    "LineNote",
    "PowerSample",
    "parse_energy_log",
]
