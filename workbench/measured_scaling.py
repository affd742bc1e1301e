"""A measured scaling table read the way it was measured, and the traps of an MFU figure.

The table is rows of (GPUs, throughput of the whole job, tokens/s). Every row is read against
the first one, the base, with n_0 GPUs and throughput X_0; for a row with n GPUs and X:

- GPU ratio p = n / n_0, speedup S = X / X_0;
- scaling efficiency E = S / p = (X / X_0) / (n / n_0) (1 = perfectly linear);
- strong scaling (a fixed problem): the Karp-Flatt serial fraction against the base,
  e = (1/S - 1/p) / (1 - 1/p), the fixed share of the base run that Amdahl's law would need
  to explain S on p times the GPUs; e growing with n points to overhead (communication);
- weak scaling (fixed work per GPU): S is the scaled speedup, and the serial fraction
  Gustafson's law implies is s = (p - S) / (p - 1).

Rows with no more GPUs than the base (p <= 1) have no serial fraction. The fitted law over all
rows is Amdahl (least squares in throughput, :func:`workbench.scaling.fit_serial_fraction`) in
strong mode and Gustafson (linear least squares) in weak mode; each fit has its own implied
single-GPU throughput, so its serial fraction is not the per-row one.

Why not :attr:`workbench.scaling_analysis.ScalingAnalysis.karp_flatt`: that value divides the
largest row by the *fit's* single-GPU throughput, so it restates the fit's serial fraction
instead of measuring anything: for rows of 1, 8, 64 and 512 GPUs with per-row values 0.57%,
0.25% and 0.076% it gives 0.0464%, the fit's own s.

The module also reads and writes the table as text (a spreadsheet paste, a CSV file whose
header names its unit), formats numbers for labels without scientific notation, checks an
MFU figure for the usual mistakes, and plans a throughput for the scenario's hardware with
the run plan's model. Throughputs are tokens/s, peaks FLOP/s, fractions 0..1.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench import plan as pl
from workbench import scaling as sc
from workbench import workspace as ws
from workbench._arrays import distinct
from workbench.catalog import check_catalog
from workbench.hardware import PRECISION_LABELS, Hardware
from workbench.scenarios import ScalingScenario
from workbench.units import UnitError, parse_quantity

__all__ = [
    "MODES",
    "LAW_OF_MODE",
    "MeasuredRow",
    "LawFit",
    "MeasuredScaling",
    "analyse_measured",
    "karp_flatt_vs_base",
    "gustafson_fraction_vs_base",
    "one_gpu_serial_fraction",
    "fit_gustafson",
    "fit_law",
    "amdahl_ceiling",
    "plain_number",
    "plain_percent",
    "ceiling_label",
    "parse_gpus",
    "parse_throughput",
    "TableText",
    "RowProblem",
    "parse_table_text",
    "table_csv",
    "CSV_HEADER",
    "mfu_band",
    "impossible_mfu_message",
    "sparse_peak_match",
    "sparse_peak_message",
    "stale_throughput_message",
    "planned_tokens_per_s",
]

MODES: tuple[str, ...] = ("strong", "weak")
LAW_OF_MODE: dict[str, str] = {"strong": "Amdahl", "weak": "Gustafson"}
#: The most rows a measured table holds (a scan of every power of two to 10M GPUs is 24).
MAX_ROWS = 1000


# -- the table read against its base row ---------------------------------------------------------


@dataclass(frozen=True)
class MeasuredRow:
    """One row of the table and what it says against the base row."""

    gpus: int
    throughput: float  # tokens/s of the whole job
    ratio: float  # p = n / n_0
    speedup: float  # S = X / X_0 (weak mode: the scaled speedup)
    efficiency: float  # S / p
    serial_fraction: float | None  # Karp-Flatt (strong) or Gustafson's (weak) vs the base; None at p <= 1


@dataclass(frozen=True)
class LawFit:
    """Amdahl (strong) or Gustafson (weak) fitted to the rows: X(n) = X_1 x law(s, n)."""

    mode: str
    serial_fraction: float
    throughput_1: float  # the fit's implied single-GPU throughput, tokens/s
    rms_residual: float  # tokens/s

    @property
    def law(self) -> str:
        return LAW_OF_MODE[self.mode]

    @property
    def ceiling(self) -> float | None:
        """The most speedup the fitted law allows (1/s for Amdahl); None when unbounded."""
        return amdahl_ceiling(self.serial_fraction) if self.mode == "strong" else None

    def speedup(self, n):
        """The fitted law's speedup over one GPU at ``n`` GPUs (vectorised)."""
        law = sc.amdahl_speedup if self.mode == "strong" else sc.gustafson_speedup
        return law(self.serial_fraction, n)

    def predict(self, n):
        """Fitted throughput at ``n`` GPUs, tokens/s (vectorised)."""
        return self.throughput_1 * self.speedup(n)


@dataclass(frozen=True)
class MeasuredScaling:
    """The measured table, row by row against the first row, and the law fitted to it."""

    mode: str
    rows: tuple[MeasuredRow, ...]
    fit: LawFit | None  # None with fewer than two different GPU counts

    @property
    def base(self) -> MeasuredRow | None:
        return self.rows[0] if self.rows else None

    @property
    def largest(self) -> MeasuredRow | None:
        """The row with the most GPUs (the last of them when several have as many)."""
        if not self.rows:
            return None
        top = max(r.gpus for r in self.rows)
        return [r for r in self.rows if r.gpus == top][-1]

    @property
    def serial_fraction_name(self) -> str:
        return "Karp-Flatt" if self.mode == "strong" else "Gustafson serial fraction"


def _pairs(name: str, value: object) -> list[tuple[int, float]]:
    out = []
    rows = v.items(name, value, "a list of (GPUs, tokens/s) rows")
    if len(rows) > MAX_ROWS:
        raise v.InputError(name, f"must have at most {MAX_ROWS:,} rows, got {len(rows):,}")
    for i, pair in enumerate(rows):
        where = f"{name}[{i}]"
        item = v.items(where, pair, "a (GPUs, tokens/s) row")
        if len(item) != 2:
            raise v.InputError(where, f"must be a (GPUs, tokens/s) row, got {v._describe(pair)}")
        out.append((v.gpu_count(f"{where}.gpus", item[0]),
                    v.bounded(f"{where}.throughput", item[1], v.MIN_TOKENS_PER_S, v.MAX_TOKENS_PER_S, "tokens/s")))
    return out


@v.public
def karp_flatt_vs_base(throughput: float, gpus: int, base_throughput: float, base_gpus: int) -> float:
    """Karp-Flatt serial fraction of a row against a measured base row: with p = n / n_0 and
    S = X / X_0, e = (1/S - 1/p) / (1 - 1/p). Needs more GPUs than the base (p > 1)."""
    x = v.positive("throughput", throughput)
    n = v.gpu_count("gpus", gpus)
    x0 = v.positive("base_throughput", base_throughput)
    n0 = v.gpu_count("base_gpus", base_gpus)
    if n <= n0:
        raise v.InputError("gpus", f"must be more than the base row's {n0:,} GPUs, got {n:,}")
    return float(sc.karp_flatt(x / x0, n / n0))


@v.public
def one_gpu_serial_fraction(serial_fraction: float, base_gpus: int) -> float:
    """Amdahl's serial fraction of one GPU from one measured against a base of n_0 GPUs: a
    Karp-Flatt e is a share of the base run's time, and s = e / (n_0 - (n_0 - 1) e) is the
    same serial part as a share of one GPU's time (comparable with a fit's s)."""
    e = v.fraction("serial_fraction", serial_fraction)
    n0 = v.gpu_count("base_gpus", base_gpus)
    return float(e / (n0 - (n0 - 1) * e))


@v.public
def gustafson_fraction_vs_base(throughput: float, gpus: int, base_throughput: float, base_gpus: int) -> float:
    """Weak scaling: the serial fraction Gustafson's law implies for a row against the base,
    s = (p - S) / (p - 1) with p = n / n_0 and the scaled speedup S = X / X_0 (p > 1)."""
    x = v.positive("throughput", throughput)
    n = v.gpu_count("gpus", gpus)
    x0 = v.positive("base_throughput", base_throughput)
    n0 = v.gpu_count("base_gpus", base_gpus)
    if n <= n0:
        raise v.InputError("gpus", f"must be more than the base row's {n0:,} GPUs, got {n:,}")
    p, s = n / n0, x / x0
    return float((p - s) / (p - 1.0))


@v.public
def fit_gustafson(gpus, throughputs) -> LawFit:
    """Least-squares Gustafson fit X(n) = X_1 (s + (1 - s) n) = a + b n of weak-scaling rows:
    X_1 = a + b and s = a / (a + b); an intercept below 0 (better than linear) is clamped at
    s = 0, the line through the origin."""
    n, _ = v.array("gpus", gpus, positive_only=True)
    x, _ = v.array("throughputs", throughputs, positive_only=True)
    if n.ndim != 1 or distinct(n).size < 2:
        raise v.InputError("gpus", "needs at least two different GPU counts to fit")
    if x.shape != n.shape:
        raise v.InputError("throughputs", f"must have one value per entry of gpus ({n.size}), got {x.size}")
    b, a = np.polyfit(n, x, 1)
    if a < 0 or a + b <= 0:
        a, b = 0.0, float(np.dot(n, x) / np.dot(n, n))
    x1 = float(a + b)
    s = float(min(1.0, max(0.0, a / x1)))
    residual = x - x1 * (s + (1.0 - s) * n)
    return LawFit(mode="weak", serial_fraction=s, throughput_1=x1,
                  rms_residual=float(np.sqrt(np.mean(residual**2))))


@v.public
def fit_law(gpus, throughputs, mode: str = "strong") -> LawFit:
    """The law of ``mode`` fitted to (GPUs, tokens/s) rows: Amdahl for strong scaling (via
    :func:`workbench.scaling.fit_serial_fraction`), Gustafson for weak."""
    kind = v.choice("mode", mode, MODES)
    if kind == "weak":
        return fit_gustafson(gpus, throughputs)
    fit = sc.fit_serial_fraction(gpus, throughputs)
    return LawFit(mode="strong", serial_fraction=fit.serial_fraction, throughput_1=fit.throughput_1,
                  rms_residual=fit.rms_residual)


@v.public
def analyse_measured(measured, mode: str = "strong") -> MeasuredScaling:
    """Each (GPUs, tokens/s) row against the first row, and the law of ``mode`` fitted to all
    rows (None with fewer than two different GPU counts). Rows keep their order."""
    pairs = _pairs("measured", measured)
    kind = v.choice("mode", mode, MODES)
    rows: list[MeasuredRow] = []
    if pairs:
        n0, x0 = pairs[0]
        for n, x in pairs:
            p, s = n / n0, x / x0
            serial = None
            if n > n0:
                serial = (karp_flatt_vs_base if kind == "strong" else gustafson_fraction_vs_base)(x, n, x0, n0)
            rows.append(MeasuredRow(gpus=n, throughput=x, ratio=p, speedup=s, efficiency=s / p,
                                    serial_fraction=serial))
    fit = None
    if len({n for n, _ in pairs}) >= 2:
        fit = fit_law([n for n, _ in pairs], [x for _, x in pairs], kind)
    return MeasuredScaling(mode=kind, rows=tuple(rows), fit=fit)


@v.public
def amdahl_ceiling(serial_fraction: float) -> float | None:
    """Amdahl's limit on speedup, 1/s: a 5% serial share caps any GPU count at 20x. None for
    s = 0 (no ceiling)."""
    s = v.fraction("serial_fraction", serial_fraction)
    return None if s == 0 else 1.0 / s


# -- numbers as labels show them ------------------------------------------------------------------


@v.public
def plain_number(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, digit groups and never an exponent:
    1929.6 -> "1,930", 45.63 -> "45.6", 0.000464 -> "0.000464". Whole digits are never
    dropped (33,333.3 -> "33,333")."""
    x = v.number("value", value)
    places = v.integer("digits", digits, 1, 15)
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, places - 1 - magnitude)
    if decimals > 300:
        return f"{x:.{places - 1}e}"  # below 1e-300: nothing else can show it
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@v.public
def plain_percent(fraction: float, digits: int = 3) -> str:
    """A fraction as a percentage for a label: 0.0057 -> "0.57%", 76.95 -> "7,695%"."""
    f = v.number("fraction", fraction)
    return plain_number(f * 100.0, digits) + "%"


@v.public
def ceiling_label(serial_fraction: float) -> str:
    """What Amdahl's ceiling means, in words: "5% serial caps you at 20×"; "" without one."""
    cap = amdahl_ceiling(serial_fraction)
    if cap is None:
        return ""
    return f"{plain_percent(serial_fraction)} serial caps you at {plain_number(cap)}×"


# -- the table as text ------------------------------------------------------------------------------

_UNIT_TAIL = re.compile(r"\s*(?:tokens?|tok)\s*(?:/|per\s*)\s*(?:s|sec|second)\b\.?\s*$", re.IGNORECASE)


@v.public
def parse_gpus(text: str) -> int:
    """A GPU count typed in a cell: "512", "1,024", "2k"."""
    if not isinstance(text, str):
        raise v.InputError("gpus", f"must be text, got {v._describe(text)}")
    t = text.strip()
    if not t:
        raise v.InputError("gpus", "is empty: type a GPU count, e.g. 64")
    try:
        value = parse_quantity(t, "", name="gpus")
    except (UnitError, ValueError):
        raise v.InputError("gpus", f"{t!r} is not a GPU count: type a whole number, e.g. 64") from None
    if not (1 <= value <= v.MAX_GPUS and float(value).is_integer()):
        raise v.InputError("gpus", f"must be a whole number of GPUs between 1 and {v.MAX_GPUS:,}, got {t!r}")
    return int(value)


@v.public
def parse_throughput(text: str) -> float:
    """A throughput typed in a cell, tokens/s of the whole job: "85,144", "610k", "1.6M",
    "85k tokens/s"."""
    if not isinstance(text, str):
        raise v.InputError("throughput", f"must be text, got {v._describe(text)}")
    t = _UNIT_TAIL.sub("", text.strip())
    if not t:
        raise v.InputError("throughput", "is empty: type the tokens/s of the whole job, e.g. 610k")
    try:
        value = parse_quantity(t, "", name="throughput")
    except (UnitError, ValueError):
        raise v.InputError("throughput", f"{text.strip()!r} is not a throughput: type tokens/s, "
                                         "e.g. 85,144 or 610k") from None
    if not v.MIN_TOKENS_PER_S <= value <= v.MAX_TOKENS_PER_S:
        raise v.InputError("throughput", f"must be between {v.MIN_TOKENS_PER_S:g} and {v.MAX_TOKENS_PER_S:g} "
                                         f"tokens/s, got {text.strip()!r}")
    return float(value)


@dataclass(frozen=True)
class RowProblem:
    line: int  # 1-based line of the text
    text: str
    reason: str


@dataclass(frozen=True)
class TableText:
    """Rows read from pasted text or a CSV file, and the lines that could not be read."""

    rows: tuple[tuple[int, float], ...]
    problems: tuple[RowProblem, ...]
    header: tuple[str, ...]  # the header cells, () without a header line
    per_gpu: bool  # the throughput column was per GPU (multiplied by the GPU count)
    columns: int  # cells in the widest line read (1: single values, not rows)


def _cells(line: str) -> list[str]:
    """A line split the way it was most likely written: tabs (a spreadsheet), then ';', then
    CSV commas (quotes honoured, so "85,144" stays one cell), then ':' or '=', then blanks."""
    if "\t" in line:
        return [c.strip() for c in line.split("\t")]
    if ";" in line:
        return [c.strip() for c in line.split(";")]
    if "," in line:
        return [c.strip() for c in next(csv.reader([line]))]
    if ":" in line or "=" in line:
        return [c.strip() for c in re.split(r"[:=]", line)]
    return line.split()


def _key(cell: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", cell.lower()).strip("_")


_GPU_NAMES = {"gpus", "gpu", "n_gpus", "num_gpus", "gpu_count", "gpus_count", "ngpus", "world_size", "devices",
              "n_devices", "ranks", "accelerators"}
_PER_GPU = re.compile(r"(?:per_gpu|_gpu$|per_device|per_rank|_gpu_)")


def _columns(header: list[str]) -> tuple[int, int, bool] | str:
    """(GPU column, throughput column, per GPU) from a header, or why it cannot be read."""
    keys = [_key(c) for c in header]
    gpu = next((i for i, k in enumerate(keys) if k in _GPU_NAMES), None)
    thr = None
    for i, k in enumerate(keys):
        if i == gpu:
            continue
        if "throughput" in k or "tokens" in k or k.startswith("tok_") or k in ("tps", "tok_s"):
            thr = i
            break
    if gpu is None:
        return "no column of GPU counts (a header such as 'gpus')"
    if thr is None:
        other = next((header[i] for i, k in enumerate(keys) if i != gpu and k), "")
        if other and re.search(r"sample|seq|image|step|time", _key(other)):
            return (f"the column {other!r} is not tokens/s: convert it to tokens/s of the whole job "
                    "(e.g. samples/s x sequence length)")
        return "no throughput column in tokens/s (a header such as 'throughput_tokens_per_s')"
    return gpu, thr, bool(_PER_GPU.search(keys[thr]))


def _is_number_line(cells: list[str]) -> bool:
    try:
        parse_gpus(cells[0])
        return True
    except ValueError:
        return False


@v.public
def parse_table_text(text: str) -> TableText:
    """Measured rows from a spreadsheet paste or a CSV file.

    Lines are split on tabs, ';', CSV commas, ':' or blanks (whichever the line has, in that
    order). A first line that does not start with a GPU count is a header: its columns are
    found by name (``gpus``; a throughput column in tokens/s such as
    ``throughput_tokens_per_s``; one ``per GPU``, e.g. ``tokens_per_s_per_gpu``, is multiplied
    by the GPU count), and any other column (speedup, efficiency ...) is ignored. Without a
    header the first cell is the GPU count and the second the throughput. Values may carry
    k/M suffixes and digit groups. Lines that cannot be read are returned as problems, the
    rest as rows, in order.
    """
    if not isinstance(text, str):
        raise v.InputError("text", f"must be text, got {v._describe(text)}")
    if len(text) > 10_000_000:
        raise v.InputError("text", f"is too long to be a scaling table ({len(text):,} characters)")
    lines = [(i + 1, line) for i, line in enumerate(text.lstrip("\ufeff").splitlines()) if line.strip()]
    gpu_col, thr_col, per_gpu = 0, 1, False
    header: tuple[str, ...] = ()
    problems: list[RowProblem] = []
    rows: list[tuple[int, float]] = []
    widest = 0
    if lines and not _is_number_line(_cells(lines[0][1])):
        number, line = lines.pop(0)
        header = tuple(_cells(line))
        found = _columns(list(header))
        if isinstance(found, str):
            return TableText(rows=(), problems=(RowProblem(number, line.strip(), f"the header has {found}"),),
                             header=header, per_gpu=False, columns=len(header))
        gpu_col, thr_col, per_gpu = found
    for number, line in lines:
        cells = _cells(line)
        widest = max(widest, len(cells))
        if line.lstrip().startswith("#"):
            continue
        if len(cells) <= max(gpu_col, thr_col):
            if len(cells) == 1 and not header:
                problems.append(RowProblem(number, line.strip(), "needs a GPU count and a throughput"))
            else:
                problems.append(RowProblem(number, line.strip(), f"has {len(cells)} cell(s); the throughput "
                                                                 f"is in column {thr_col + 1}"))
            continue
        try:
            gpus = parse_gpus(cells[gpu_col])
            rate = parse_throughput(cells[thr_col])
            if per_gpu:
                rate = v.bounded("throughput", rate * gpus, v.MIN_TOKENS_PER_S, v.MAX_TOKENS_PER_S, "tokens/s")
        except v.InputError as exc:
            message = str(exc)
            prefix = f"{exc.parameter}: "
            problems.append(RowProblem(number, line.strip(), message[len(prefix):] if message.startswith(prefix)
                                       else message))
            continue
        rows.append((gpus, rate))
        if len(rows) > MAX_ROWS:
            raise v.InputError("text", f"has more than {MAX_ROWS:,} rows")
    return TableText(rows=tuple(rows), problems=tuple(problems), header=header, per_gpu=per_gpu,
                     columns=max(widest, len(header)))


#: The header of an exported table: every column names its unit.
CSV_HEADER: dict[str, tuple[str, ...]] = {
    "strong": ("gpus", "throughput_tokens_per_s", "speedup_vs_base_x", "efficiency_fraction",
               "karp_flatt_serial_fraction"),
    "weak": ("gpus", "throughput_tokens_per_s", "scaled_speedup_vs_base_x", "efficiency_fraction",
             "gustafson_serial_fraction"),
}


def _cell(value: float | None) -> str:
    return "" if value is None else repr(float(value))


@v.public
def table_csv(measured, mode: str = "strong") -> str:
    """The table as CSV text :func:`parse_table_text` reads back: GPUs, tokens/s, and what each
    row says against the first (speedup, efficiency, serial fraction; empty for the base)."""
    table = analyse_measured(measured, mode)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER[table.mode])
    for r in table.rows:
        writer.writerow([r.gpus, _cell(r.throughput), _cell(r.speedup), _cell(r.efficiency),
                         _cell(r.serial_fraction)])
    return out.getvalue()


# -- what an MFU figure may be hiding ----------------------------------------------------------------


@v.public
def mfu_band(mfu: float) -> str:
    """The band :func:`workbench.plan.mfu_rating` puts an MFU in: "impossible", "excellent",
    "very good", "typical" or "low"."""
    text = pl.mfu_rating(mfu)
    return next(band for band, words in pl.MFU_RATINGS.items() if words == text)


@v.public
def impossible_mfu_message(mfu: float, flops_per_token: float, tokens_per_s: float, n_gpus: int,
                           peak_flops: float) -> str:
    """What to check when an MFU is above 100% ("" when it is not): the throughput asks more
    model arithmetic than the GPUs' dense peak can do."""
    value = v.number("mfu", mfu)
    per_token = v.positive("flops_per_token", flops_per_token)
    tps = v.positive("tokens_per_s", tokens_per_s)
    n = v.gpu_count("n_gpus", n_gpus)
    peak = v.positive("peak_flops", peak_flops)
    if value <= 1.0:
        return ""
    need = per_token * tps / peak
    fewest = math.ceil(need - 1e-9)
    return (f"MFU {plain_percent(value)} is impossible: no GPU runs above its peak. "
            f"{plain_number(tps)} tokens/s of this model need at least {fewest:,} GPUs at 100% of the dense peak, "
            f"and the scenario has {n:,}. Check that the throughput is the whole job's tokens/s on these "
            "GPUs (not a larger run's), the GPU count, the precision (its dense peak is the denominator) "
            "and the parameter count (a mixture of experts counts its active parameters).")


@v.public
def sparse_peak_match(peak_flops: float, precision: str, devices: Iterable[Hardware], own_key: str = "",
                      tolerance: float = 0.015) -> tuple[Hardware, float] | None:
    """The device whose 2:4 *sparse* peak at ``precision`` the given dense peak equals (within
    ``tolerance``), when no device has it as a dense peak: a preset typed from a datasheet's
    sparse column. Returns (that device, its sparse peak) or None. ``own_key`` (the device
    the peak is from) is left out of the comparison."""
    peak = v.positive("peak_flops", peak_flops)
    v.choice("precision", precision, PRECISION_LABELS)
    tol = v.in_range("tolerance", tolerance, 0.0, 0.5)
    key = v.text("own_key", own_key, allow_empty=True)
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Iterable):
        raise v.InputError("devices", f"must be a list of Hardware, got {v._describe(devices)}")
    others = [d for d in devices if isinstance(d, Hardware) and d.key != key]
    rates = [(d, d.rate(precision)) for d in others if precision in d.precisions]

    def near(a: float, b: float) -> bool:
        return abs(a - b) <= tol * b

    if any(near(peak, r.dense_flops) for _, r in rates):
        return None
    for d, r in sorted(rates, key=lambda item: not item[0].builtin):
        if r.sparsity_factor is not None and near(peak, r.dense_flops * r.sparsity_factor):
            return d, r.dense_flops * r.sparsity_factor
    return None


def _tflops(flops: float) -> str:
    return f"{plain_number(flops / 1e12)} TFLOP/s"


@v.public
def sparse_peak_message(device_name: str, precision: str, peak_flops: float, match_name: str,
                        match_dense_flops: float) -> str:
    """The warning for a dense peak that looks like a sparse figure (see :func:`sparse_peak_match`)."""
    name = v.text("device_name", device_name)
    label = PRECISION_LABELS[v.choice("precision", precision, PRECISION_LABELS)]
    peak = v.positive("peak_flops", peak_flops)
    other = v.text("match_name", match_name)
    dense = v.positive("match_dense_flops", match_dense_flops)
    return (f"The dense {label} peak of {name}, {_tflops(peak)}, is the 2:4 sparse peak of {other}: MFU divides "
            f"by the dense peak ({other}: {_tflops(dense)}), so this MFU may read {plain_number(peak / dense)}x "
            "too low. Check the hardware preset's dense figure.")


@v.public
def stale_throughput_message(tokens_per_s: float, measured_on: str, now_on: str, mfu: float | None = None) -> str:
    """The warning for a measured throughput kept after the hardware changed (the panel offers
    the ways out beside it: the planned throughput, or "it was measured on this one")."""
    tps = v.positive("tokens_per_s", tokens_per_s)
    old = v.text("measured_on", measured_on)
    new = v.text("now_on", now_on)
    mfu_text = f" (MFU {plain_percent(v.number('mfu', mfu))})" if mfu is not None else ""
    return (f"{plain_number(tps)} tokens/s was measured on {old}, not on {new}: every number here{mfu_text} "
            f"is {old}'s speed against {new}'s peak.")


@v.public
def planned_tokens_per_s(scenario, plan, catalog) -> float:
    """The throughput the run plan's model predicts for the scenario's run: ``plan`` (a
    :class:`workbench.plan.RunPlan`, e.g. the window's plan or the default) with the
    scenario's hardware, precision, GPU count, parameter count and sequence length, predicted
    with ``catalog`` (hardware and interconnect presets). Raises InputError (naming the field)
    when the plan cannot take them, e.g. a GPU count its parallel layout cannot split."""
    s = v.instance("scenario", scenario, ScalingScenario)
    base = v.instance("plan", plan, pl.RunPlan)
    catalog = check_catalog(catalog)

    def lookup(key: str) -> Hardware | None:
        try:
            return catalog.hardware(key)
        except (KeyError, ValueError):
            return None

    changes: dict[str, object] = {}
    for name in ("hardware", "precision", "n_gpus", "n_params"):
        if getattr(s, name) != getattr(base, name):
            changes[name] = getattr(s, name)
    if s.seq_len > 0 and s.seq_len != base.seq_len:
        changes["seq_len"] = s.seq_len
    if s.recompute != ("full" if base.recompute == "full" else "none"):
        changes["recompute"] = s.recompute
    run = ws.edit_plan(base, lookup, **changes) if changes else base
    return float(pl.predict(run, catalog).tokens_per_s)
