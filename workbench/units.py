"""Human units at the edge: parse what a person types, format what a person reads.

Inside ``workbench`` every quantity is in SI base units. This module is the small, explicit
parser and formatter that the UI's number fields and the CSV export use (no pint: its default
registry reads "b" as barn and has no FLOP).

Field units (the ``unit`` argument) and what each field accepts:

========  ==========================  ==================================================
unit      kind                        accepted spellings (``k`` = any allowed prefix)
========  ==========================  ==================================================
FLOP/s    compute rate                kFLOP/s kFLOPS kFLOPs kflops kFLOP/sec kOP/s kOPS
FLOP      amount of compute           kFLOP kFLOPs kflop kflops
B/s       bandwidth                   kB/s kBps kbyte/s; bits: kb/s kbps kbit/s (/ 8)
B         size                        kB kbyte(s); bits: kb kbit(s) (/ 8)
W         power                       kW watt(s)
J         energy                      kJ joule(s); kWh (3.6 MJ per kWh)
s         time                        ms us µs ns s sec second(s) min h hr hour(s) d day(s)
                                      week(s)
g         mass (of CO2e)              g kg t (tonne, 1e6 g) kt Mt; a "CO2e"/"CO2" suffix
                                      is ignored ("12 tCO2e")
FLOP/B    arithmetic intensity        FLOP/B FLOPs/B FLOP/byte
Hz        frequency                   kHz MHz GHz
""        plain number                k/K (1e3), M (1e6), B or G (1e9), T (1e12),
                                      P (1e15) as count suffixes ("8B" params, "15T"
                                      tokens); "40%" -> 0.4; "2x" -> 2
%         fraction shown in percent   "40" or "40%" -> 0.4 (a bare number means percent)
========  ==========================  ==================================================

Rules:

* A bare number is in the field's base unit ("1.2e15" in a FLOP/s field is 1.2e15 FLOP/s),
  except in a "%" field where it is a percentage.
* Prefixes are case-sensitive so nothing is ambiguous: ``k M G T P E`` decimal (every unit
  but time, mass and intensity), ``m u µ n`` (milli, micro, nano) for s, W and J only, and
  ``Ki Mi Gi Ti Pi Ei`` binary for B and B/s only ("256 MiB" = 256 * 2**20 bytes).
  "m" is always milli and "M" mega ("mW" vs "MW"); "KB" is refused as ambiguous (write "kB"
  for 1000 bytes or "KiB" for 1024).
* ``B`` is a byte and ``b`` a bit ("100 Gb/s" = 12.5e9 B/s, "400 Gbit/s" = 50e9 B/s).
* In a FLOP/s field "TFLOPS" and "TFLOPs" are rates; in a FLOP field "TFLOPs" is a count and
  "TFLOPS" is refused as a rate.
* Numbers: an optional sign, digits with an optional decimal point and exponent ("1.2e15").
  Thousands may be grouped by commas, underscores or spaces, in groups of exactly three
  ("1,024", "1 048 576", "1_000"); a comma is never a decimal point ("1,5" is refused with a
  hint). A space between number and unit is optional ("256MiB").
* NaN, infinity and values that overflow are refused: the result is always finite.

Every failure raises :class:`UnitError` (an ``InputError``, so a ``ValueError``) whose
``hint`` says exactly what to fix, e.g. "expected a bandwidth such as '3.35 TB/s' or
'900 GB/s'; 'TFLOP/s' is a compute rate".
"""

from __future__ import annotations

import bisect
import functools
import math
import numbers
import re

from workbench import _validate as v
from workbench._validate import InputError

__all__ = [
    "UNITS",
    "UNIT_KINDS",
    "EXAMPLES",
    "PREFIXES",
    "UnitError",
    "parse_quantity",
    "format_quantity",
    "unit_label",
    "best_prefix",
]


class UnitError(InputError):
    """Text that cannot be read as a quantity of the expected unit.

    ``parameter`` names the field (``"value"`` unless the caller passes ``name=``) and
    ``hint`` is the message without that prefix, ready to show beside the field.
    """

    def __init__(self, parameter: str, hint: str):
        super().__init__(parameter, hint)
        self.hint = hint


# -- prefixes ------------------------------------------------------------------------------
_DEC: dict[str, float] = {
    "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}
_SMALL: dict[str, float] = {"m": 1e-3, "u": 1e-6, "n": 1e-9}
_IEC: dict[str, float] = {
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
#: Every prefix this module knows, with its multiplier ("µ" and "u" are both micro).
PREFIXES: dict[str, float] = {**_DEC, **_SMALL, "µ": 1e-6, **_IEC}

# Prefixes each field unit accepts on its own symbol (used by unit_label and best_prefix).
_UNIT_PREFIXES: dict[str, dict[str, float]] = {
    "FLOP/s": _DEC,
    "FLOP": _DEC,
    "B/s": {**_DEC, **_IEC},
    "B": {**_DEC, **_IEC},
    "W": {**_SMALL, **_DEC},
    "J": {**_SMALL, **_DEC},
    "s": {**_SMALL, "": 1.0},
    "g": {"": 1.0, "k": 1e3},
    "FLOP/B": {"": 1.0},
    "Hz": _DEC,
    "": {"": 1.0, "k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12},  # count suffixes
    "%": {"": 1.0},
}

#: The field units, in a stable order.
UNITS: tuple[str, ...] = tuple(_UNIT_PREFIXES)

#: What each unit measures, with its article, for messages ("a bandwidth").
UNIT_KINDS: dict[str, str] = {
    "FLOP/s": "a compute rate",
    "FLOP": "an amount of compute",
    "B/s": "a bandwidth",
    "B": "a size",
    "W": "a power",
    "J": "an amount of energy",
    "s": "a duration",
    "g": "a mass of CO2e",
    "FLOP/B": "an arithmetic intensity",
    "Hz": "a frequency",
    "": "a plain number",
    "%": "a percentage",
}

#: One example per unit, for placeholders and tooltips; each parses in its own field.
EXAMPLES: dict[str, str] = {
    "FLOP/s": "989 TFLOP/s",
    "FLOP": "68.7 GFLOP",
    "B/s": "3.35 TB/s",
    "B": "256 MiB",
    "W": "700 W",
    "J": "250 MWh",
    "s": "1.5 ms",
    "g": "12 t",
    "FLOP/B": "295 FLOP/B",
    "Hz": "1.98 GHz",
    "": "0.4",
    "%": "40%",
}
_SECOND_EXAMPLE: dict[str, str] = {
    "FLOP/s": "1.98 PFLOP/s",
    "FLOP": "5.8e23 FLOP",
    "B/s": "900 GB/s",
    "B": "80 GB",
    "W": "1.2 kW",
    "J": "3.6 MJ",
    "s": "2 h",
    "g": "475 kg",
    "FLOP/B": "2.5",
    "Hz": "1410 MHz",
    "": "8B",
    "%": "2.5",
}


# -- what each field accepts ---------------------------------------------------------------
def _table(words: tuple[str, ...], prefixes: dict[str, float], factor: float = 1.0) -> dict[str, float]:
    return {p + w: m * factor for p, m in prefixes.items() for w in words}


_HOUR = 3600.0
_ACCEPT: dict[str, dict[str, float]] = {
    "FLOP/s": _table(
        ("FLOP/s", "FLOPS", "FLOPs", "FLOP/sec", "flop/s", "flops", "OP/s", "OPS", "OPs"), _DEC
    ),
    "FLOP": _table(("FLOP", "FLOPs", "flop", "flops"), _DEC),
    "B/s": {
        **_table(("B/s", "Bps", "B/sec", "byte/s", "bytes/s"), {**_DEC, **_IEC}),
        **_table(("b/s", "bps", "bit/s", "bits/s", "bit/sec"), {**_DEC, **_IEC}, 1 / 8),
    },
    "B": {
        **_table(("B", "byte", "bytes"), {**_DEC, **_IEC}),
        **_table(("b", "bit", "bits"), {**_DEC, **_IEC}, 1 / 8),
    },
    "W": _table(("W", "watt", "watts"), {**_SMALL, **_DEC}),
    "J": {
        **_table(("J", "joule", "joules"), {**_SMALL, **_DEC}),
        **_table(("Wh",), _DEC, _HOUR),
    },
    "s": {
        **_table(("s", "sec", "secs", "second", "seconds"), {**_SMALL, "": 1.0}),
        **dict.fromkeys(("min", "mins", "minute", "minutes"), 60.0),
        **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), _HOUR),
        **dict.fromkeys(("d", "day", "days"), 24 * _HOUR),
        **dict.fromkeys(("week", "weeks"), 7 * 24 * _HOUR),
    },
    "g": {
        **_table(("g", "gram", "grams"), {"": 1.0, "k": 1e3}),
        **_table(("t", "tonne", "tonnes"), {"": 1.0, "k": 1e3, "M": 1e6}, 1e6),
    },
    "FLOP/B": dict.fromkeys(
        ("FLOP/B", "FLOPs/B", "FLOP/byte", "FLOPs/byte", "flop/B", "flop/byte", "flops/byte"), 1.0
    ),
    "Hz": _table(("Hz",), _DEC),
    "": {
        "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15,
        "%": 0.01, "x": 1.0, "×": 1.0,
    },
    "%": {"": 0.01, "%": 0.01},
}
# A bare number is in the field's base unit ("%" fields read it as a percentage).
for _unit, _spellings in _ACCEPT.items():
    _spellings.setdefault("", 1.0)
# Order in which a foreign unit is classified for the message: physical units first, so
# "5 B" in a FLOP/s field is "a size" rather than "a plain number" (billion).
_CLASSIFY_ORDER = ("FLOP/s", "FLOP", "B/s", "B", "W", "J", "s", "g", "FLOP/B", "Hz", "%", "")

# Specific advice for spellings that are refused on purpose.
_AMBIGUOUS: dict[str, str] = {
    "KB": "'KB' is ambiguous: write 'kB' for 1000 bytes or 'KiB' for 1024 bytes",
    "Kb": "'Kb' is ambiguous: write 'kb' for 1000 bits or 'Kib' for 1024 bits",
    "KB/s": "'KB/s' is ambiguous: write 'kB/s' for 1000 bytes/s or 'KiB/s' for 1024 bytes/s",
}
_FIELD_HINTS: dict[tuple[str, str], str] = {
    ("s", "m"): "'m' is not a time unit: write 'min' for minutes or 'ms' for milliseconds",
    ("", "m"): "'m' is ambiguous: write 'M' for million or '0.001' for a thousandth",
    ("", "b"): "'b' is ambiguous: write 'B' for billion (1e9)",
}

_SPACES = re.compile(r"[\s\u00a0\u2009\u202f]+")
_SLASH = re.compile(r"\s*/\s*")
_CO2 = re.compile(r"\s*[-_ ]?\s*(?:CO2e|CO2-eq|CO2eq|CO2|CO₂e|CO₂)$", re.IGNORECASE)
_LEADING_NUMBER = re.compile(
    r"^(?P<num>[+-]?(?:[0-9][0-9.,_ ]*|\.[0-9][0-9.,_ ]*))(?P<exp>[eE][+-]?[0-9]+)?"
)
_PLAIN = re.compile(r"^[0-9]+(?:\.[0-9]*)?$|^\.[0-9]+$")
_GROUPED = {
    ",": re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?$"),
    " ": re.compile(r"^[0-9]{1,3}(?: [0-9]{3})+(?:\.[0-9]*)?$"),
    "_": re.compile(r"^[0-9]{1,3}(?:_[0-9]{3})+(?:\.[0-9]*)?$"),
}
_NON_FINITE_WORDS = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "∞"}


def _check_unit(unit: object) -> str:
    if not isinstance(unit, str) or unit not in _ACCEPT:
        raise InputError("unit", f"must be one of {', '.join(repr(u) for u in UNITS)}; got {unit!r}")
    return unit


def _expected(unit: str) -> str:
    if unit == "":
        return "expected a plain number such as '0.4', '40%' or '8B'"
    if unit == "%":
        return "expected a percentage such as '40%' or '2.5'"
    return f"expected {UNIT_KINDS[unit]} such as '{EXAMPLES[unit]}' or '{_SECOND_EXAMPLE[unit]}'"


def _mantissa(num: str, shown: str, name: str) -> str:
    """The digits of ``num`` with thousands separators removed, or a UnitError."""
    num = num.rstrip(" ")
    sign = ""
    if num[:1] in "+-":
        sign, num = num[0], num[1:]
    if _PLAIN.match(num):
        return sign + num
    for sep, pattern in _GROUPED.items():
        if pattern.match(num):
            return sign + num.replace(sep, "")
    if num.count(".") > 1:
        raise UnitError(name, f"'{shown}' is not a number")
    if "," in num and re.fullmatch(r"[0-9]+,[0-9]+", num):
        raise UnitError(
            name,
            f"'{shown}' is not a number: use a point for decimals ('{num.replace(',', '.')}'); "
            "a comma only groups thousands ('1,024')",
        )
    raise UnitError(
        name,
        f"'{shown}' is not a number: group thousands in threes ('1,024', '1 048 576') or not at all",
    )


def _suggest(unit: str, word: str) -> str:
    """A close spelling the field accepts ("TFLOP" -> "TFLOP/s", "tflops" -> "TFLOPS"), or ''."""
    accepted = _ACCEPT[unit]
    if unit in ("FLOP/s", "B/s") and word and word + "/s" in accepted:
        return word + "/s"
    folded = [w for w in accepted if w.lower() == word.lower()]
    if folded and len({accepted[w] for w in folded}) == 1:
        return folded[0]
    return ""


def _unit_problem(unit: str, word: str, original: str) -> str:
    if (unit, word) in _FIELD_HINTS:
        return _FIELD_HINTS[(unit, word)]
    if word in _AMBIGUOUS:
        return _AMBIGUOUS[word]
    if unit not in ("", "%") and word and word in _UNIT_PREFIXES[unit]:
        return f"'{original}' is a prefix without a unit: write '{unit_label(unit, word)}'"
    message = _expected(unit)
    kind = next((k for k in _CLASSIFY_ORDER if k != unit and word in _ACCEPT[k]), None)
    if kind is not None:
        message += f"; '{original}' is {UNIT_KINDS[kind]}"
    suggestion = _suggest(unit, word)
    if suggestion:
        message += f"; did you mean '{suggestion}'?"
    elif kind is None:
        message += f"; '{original}' is not a unit this field understands"
    return message


@v.public
def parse_quantity(text: str, unit: str, *, name: str = "text") -> float:
    """The SI value of ``text`` read as a quantity of the field unit ``unit``.

    ``parse_quantity("3.35 TB/s", "B/s") == 3.35e12``; ``parse_quantity("256 MiB", "B")
    == 256 * 2**20``; a bare number is in the base unit. See the module docstring for every
    accepted spelling. A real number (not text) is taken as already in the base unit.
    Raises :class:`UnitError` naming ``name`` (the field's name; "text", the parameter, by
    default) with a message that says what to fix.
    """
    name = v.text("name", name)
    unit = _check_unit(unit)
    if isinstance(text, numbers.Real) and not isinstance(text, bool):
        try:
            value = float(text)
        except OverflowError:
            raise UnitError(name, f"'{text}' is too large") from None
        if not math.isfinite(value):
            raise UnitError(name, f"'{text}' is not a finite number; {_expected(unit)}")
        return value * _ACCEPT[unit][""] if unit == "%" else value
    if not isinstance(text, str):
        raise UnitError(name, f"must be text, got {type(text).__name__}; {_expected(unit)}")
    shown = _SPACES.sub(" ", text).strip()
    if not shown:
        raise UnitError(name, f"is empty; {_expected(unit)}")
    if len(shown) > 200:
        raise UnitError(name, f"is too long to be a quantity; {_expected(unit)}")
    cleaned = shown.replace("\u2212", "-").replace("μ", "µ")
    if cleaned.lower() in _NON_FINITE_WORDS:
        raise UnitError(name, f"'{shown}' is not a finite number; {_expected(unit)}")
    match = _LEADING_NUMBER.match(cleaned)
    if not match:
        if cleaned in _ACCEPT[unit] or cleaned.lstrip("+-") == "":
            problem = f"'{shown}' has no number" if cleaned.strip("+-") else f"'{shown}' is not a number"
            raise UnitError(name, f"{problem}; {_expected(unit)}")
        raise UnitError(name, f"'{shown}' does not start with a number; {_expected(unit)}")
    mantissa = _mantissa(match.group("num"), match.group("num").strip() + (match.group("exp") or ""), name)
    if mantissa.strip("+-.") == "":
        raise UnitError(name, f"'{shown}' is not a number; {_expected(unit)}")
    number_text = mantissa + (match.group("exp") or "")
    try:
        value = float(number_text)
    except ValueError:  # pragma: no cover - the regex admits only float syntax
        raise UnitError(name, f"'{number_text}' is not a number") from None
    if not math.isfinite(value):
        raise UnitError(name, f"'{shown}' is too large to be a finite number")

    rest = cleaned[match.end():].strip()
    word = _SLASH.sub("/", rest)
    if unit == "g" or _CO2.search(word):
        word = _CO2.sub("", word)
    word = word.replace("µ", "u")
    accepted = _ACCEPT[unit]
    if word not in accepted:
        raise UnitError(name, _unit_problem(unit, word, rest))
    result = value * accepted[word]
    if not math.isfinite(result):
        raise UnitError(name, f"'{shown}' is too large to be a finite number")
    return result + 0.0  # normalise -0.0


# -- formatting ----------------------------------------------------------------------------
#: The largest fraction a "%" field can show: 100 x it is the largest float.
_MAX_FRACTION = 1.7976931348623157e306

def _scientific(x: float, digits: int) -> str:
    """``x`` as "4.8e22" to ``digits`` significant digits; near the top of the float range, where
    rounding up would read back as infinity ("1.8e308"), the shortest exact form instead."""
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    text = f"{mant}e{int(exp)}"
    if not math.isfinite(float(text)):
        mant, exp = repr(float(x)).split("e")
        text = f"{mant}e{int(exp)}"
    return text


def _fmt(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, keeping every integer digit, no trailing zeros.

    Scientific notation ("4.8e22") outside [1e-3, 1e6).
    """
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 1e6 or ax < 1e-3:
        return _scientific(x, digits)
    exponent = math.floor(math.log10(ax))
    decimals = max(digits - 1 - exponent, 0)
    out = f"{x:.{decimals}f}"
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


# Ladders for formatting: (suffix, scale, smallest value shown with it), ascending.
def _prefix_ladder(unit: str, prefixes: dict[str, float]) -> list[tuple[str, float, float]]:
    return [(unit_label(unit, p), m, m) for p, m in sorted(prefixes.items(), key=lambda kv: kv[1])]


def _ladder(unit: str, binary: bool) -> list[tuple[str, float, float]]:
    """A unit's ladder (built once per unit: :func:`_rungs` keeps it)."""
    if binary:
        return _prefix_ladder(unit, {"": 1.0, **_IEC})
    if unit == "s":
        return _prefix_ladder("s", _UNIT_PREFIXES["s"]) + [
            ("min", 60.0, 120.0),
            ("h", _HOUR, 2 * _HOUR),
            ("days", 24 * _HOUR, 48 * _HOUR),
        ]
    if unit == "g":
        return [("g", 1.0, 1.0), ("kg", 1e3, 1e3), ("t", 1e6, 1e6), ("kt", 1e9, 1e9), ("Mt", 1e12, 1e12)]
    if unit == "":
        return [("", 1.0, 1.0), ("k", 1e3, 1e3), ("M", 1e6, 1e6), ("B", 1e9, 1e9), ("T", 1e12, 1e12)]
    if unit in ("B", "B/s"):
        return _prefix_ladder(unit, _DEC)
    return _prefix_ladder(unit, _UNIT_PREFIXES[unit])


def _join(number: str, suffix: str, unit: str) -> str:
    if unit in ("", "%"):
        return number + suffix
    if suffix == "days" and number == "1":
        suffix = "day"
    return f"{number} {suffix}"


@v.public
def format_quantity(value: float, unit: str, digits: int = 3, binary: bool = False) -> str:
    """``value`` (SI) as readable text with a prefix: "3.35 TB/s", "989 TFLOP/s", "1.5 ms".

    ``digits`` significant digits (integer digits are never dropped: "1024 W" stays
    "1.02 kW" only because a prefix is chosen). Rates, FLOPs, watts and joules use decimal
    prefixes; ``binary=True`` (bytes and bytes/s only) uses Ki, Mi, Gi ... ("256 MiB").
    Times use ns ... s, then min, h and days; masses g, kg, t; plain numbers k, M, B, T
    ("8B"); "%" shows a fraction as a percentage ("40%"). Values beyond the largest prefix
    fall back to scientific notation in the base unit ("5.8e23 FLOP"). The text parses back:
    ``parse_quantity(format_quantity(x, u), u)`` equals ``x`` to ``digits`` digits.
    """
    unit = _check_unit(unit)
    value = v.number("value", value)
    digits = v.integer("digits", digits, 1, 17)
    v.flag("binary", binary)
    if binary and unit not in ("B", "B/s"):
        raise InputError("binary", f"binary prefixes apply to bytes only ('B', 'B/s'), not {unit!r}")
    if unit == "%" and not math.isfinite(value * 100.0):
        raise InputError("value", f"{value:g} is too large to show as a percentage "
                                  f"(at most {_MAX_FRACTION:g}, {_MAX_FRACTION * 100:g}%)")
    return _formatted(value, unit, digits, binary)


@functools.lru_cache(maxsize=4096)
def _formatted(value: float, unit: str, digits: int, binary: bool) -> str:
    """format_quantity's text for valid arguments. Kept: a window shows the same values again
    after every edit (most of what an edit reformats did not change), and the text depends on
    nothing else."""
    if unit == "%":
        return _fmt(value * 100.0, digits) + "%"
    ladder, thresholds, base = _rungs(unit, binary)
    magnitude = abs(value)
    index = base if magnitude < thresholds[0] else bisect.bisect_right(thresholds, magnitude) - 1
    text = _fmt(value / ladder[index][1], digits)
    # Rounding may carry into the next rung ("999.96 W" -> "1000 W" -> "1 kW").
    while index + 1 < len(ladder) and abs(float(text)) * ladder[index][1] >= ladder[index + 1][2]:
        index += 1
        text = _fmt(value / ladder[index][1], digits)
    if index == len(ladder) - 1 and abs(float(text)) >= 1000 and ladder[index][1] != 1.0:
        # Beyond the largest prefix: scientific notation in the base unit reads better.
        index = base
        text = _scientific(value, digits)
    return _join(text, ladder[index][0], unit)


@functools.cache
def _rungs(unit: str, binary: bool) -> tuple[list[tuple[str, float, float]], list[float], int]:
    """A unit's ladder, its rungs' thresholds (ascending) and the index of the unprefixed rung."""
    ladder = _ladder(unit, binary)
    thresholds = [threshold for _suffix, _scale, threshold in ladder]  # ascending, as the ladders are
    return ladder, thresholds, next(i for i, (_, scale, _t) in enumerate(ladder) if scale == 1.0)


@v.public
def unit_label(unit: str, prefix: str = "") -> str:
    """The symbol of ``unit`` with ``prefix``: ("FLOP/s", "T") -> "TFLOP/s", ("B", "Mi") -> "MiB".

    Micro is written "µ" ("u" is accepted); the dimensionless unit "" gives the count suffix
    alone. A prefix the unit does not take (e.g. "Mi" for W) raises ``InputError``.
    """
    unit = _check_unit(unit)
    if prefix == "µ":
        prefix = "u"
    if not isinstance(prefix, str) or prefix not in _UNIT_PREFIXES[unit]:
        allowed = ", ".join(repr("µ" if p == "u" else p) for p in _UNIT_PREFIXES[unit])
        raise InputError("prefix", f"the unit {unit!r} ({UNIT_KINDS[unit].split(' ', 1)[1]}) takes {allowed}; "
                                   f"got {v._describe(prefix)}")
    if prefix == "u":
        prefix = "µ"
    if unit == "%":
        return "%"
    return prefix + unit


@v.public
def best_prefix(value: float, unit: str, binary: bool = False) -> tuple[str, float]:
    """The prefix (and its multiplier) that shows ``value`` with 1 to 3 integer digits.

    For a table column or an axis: ``best_prefix(3.35e12, "B/s") == ("T", 1e12)``, so the
    header reads ``unit_label("B/s", "T")`` = "TB/s" and the numbers are ``x / 1e12``. Times
    use SI prefixes only (ns ... s), masses g or kg, plain numbers k, M, B, T; "%" gives
    ("", 1.0).
    """
    unit = _check_unit(unit)
    value = abs(v.number("value", value))
    v.flag("binary", binary)
    if binary and unit not in ("B", "B/s"):
        raise InputError("binary", f"binary prefixes apply to bytes only ('B', 'B/s'), not {unit!r}")
    if binary:
        choices = {"": 1.0, **_IEC}
    elif unit in ("B", "B/s"):
        choices = _DEC
    else:
        choices = _UNIT_PREFIXES[unit]
    ordered = sorted(choices.items(), key=lambda kv: kv[1])
    best = ("", 1.0) if value < ordered[0][1] or value == 0 else ordered[0]
    for prefix, scale in ordered:
        if value >= scale:
            best = (prefix, scale)
    prefix, scale = best
    return ("µ" if prefix == "u" else prefix, scale)
