"""What the roofline panel shows: each device's roofs, the kernels placed under the primary one,
their above-the-roof flags, the chart's extent and the roofs' end points within it.

``analyse(scenario, view, catalog)`` works it out from a :class:`RooflineScenario` alone: the
scenario already follows the plan (``workbench.workspace.follow_plan`` puts the plan's device,
precision and sparsity in it), so ``view`` adds nothing and may be None. A device the catalog
does not have, or that lacks the precision, is drawn without its roofs and named in
``problems``; nothing here raises for a valid scenario.

Placing 10,000 kernels is the one slow part (turning every Kernel into numbers). A small memo
at module level keeps the last placements by kernel list and roof, so an analysis again for
the same kernels (a display option, another compared device, a theme) reuses the same
``Placements`` object, and a new roof over the same kernels only works out what the roof
changes. Their above-the-roof flags are kept with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from workbench import roofline as rl
from workbench.hardware import PRECISION_LABELS, Hardware, MemoryLevel
from workbench.kernels import Kernel
from workbench.scenarios import RooflineScenario


# -- the result -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RoofLine:
    """One roof within the chart's extent."""

    roof: rl.Roof
    x: np.ndarray  # FLOP/B: the roof's end points within the extent (``Roof.segment``); empty outside it
    y: np.ndarray  # FLOP/s, at those intensities
    drawn_x: np.ndarray  # FLOP/B: as drawn; a cache roof goes on flat at its peak to the device-memory ridge
    drawn_y: np.ndarray  # FLOP/s


@dataclass(frozen=True, eq=False)
class DeviceRoofs:
    """One device of the chart: its preset and roofs, or why it has none."""

    key: str  # the preset key asked for
    hardware: Hardware | None  # None: the catalog has no such preset
    roofs: tuple[rl.Roof, ...] | None  # compute, device memory, then any others; None: no roofs
    problem: str = ""  # why there are no roofs ("" when there are)
    #: the cache levels drawn as roofs (the primary's, with the cache roofs on), with their roofs
    cache_roofs: tuple[tuple[MemoryLevel, rl.Roof], ...] = ()

    @property
    def compute(self) -> rl.Roof | None:
        """The compute roof at the scenario's precision (FLOP/s, its ``ridge`` in FLOP/B)."""
        return self.roofs[0] if self.roofs else None

    @property
    def memory(self) -> rl.Roof | None:
        """The device-memory roof (``mem_bw`` in B/s)."""
        return self.roofs[1] if self.roofs else None


@dataclass(frozen=True)
class Extent:
    """The chart's axes: they hold every roof corner (dense and 2:4 sparse) and every kernel."""

    xmin: float  # FLOP/B
    xmax: float  # FLOP/B
    ymin: float  # FLOP/s
    ymax: float  # FLOP/s


@dataclass(frozen=True)
class Readout:
    """What one device attains at an intensity (the chart's readout under the mouse)."""

    device: DeviceRoofs
    attainable: float  # FLOP/s under its compute and device-memory roofs
    compute_bound: bool  # at or right of its ridge
    cached: tuple[tuple[rl.Roof, float], ...]  # each cache roof drawn and what it allows (FLOP/s)


class RoofWarnings:
    """The above-the-roof texts of one placement (``Placements.roof_warnings``), made when read:
    a redraw needs only which kernels are flagged (``RooflineAnalysis.above_roof``); a hover tip,
    a selected kernel's results and the CSV read the texts. One kernel's text is workbench's for
    a placement of that kernel alone (each text depends on its own kernel only), all of them
    one call."""

    def __init__(self, placements: rl.Placements, peak_flops: float, caches: Sequence[tuple[str, float]]):
        self._p = placements
        self._peak = float(peak_flops)
        self._caches = tuple(caches)
        self._all: tuple[str, ...] | None = None
        self._one: dict[int, str] = {}

    def text(self, row: int) -> str:
        """Kernel ``row``'s text ("" when it is not above its roof)."""
        if self._all is not None:
            return self._all[row]
        if row not in self._one:
            p, cut = self._p, slice(row, row + 1)
            alone = rl.Placements(names=p.names[cut], intensity=p.intensity[cut], ceiling=p.ceiling[cut],
                                  achieved=p.achieved[cut], fraction_of_roof=p.fraction_of_roof[cut],
                                  compute_bound=p.compute_bound[cut], measured=p.measured[cut])
            (self._one[row],) = alone.roof_warnings(self._peak, self._caches)
        return self._one[row]

    def texts(self) -> tuple[str, ...]:
        """Every kernel's text, in one call."""
        if self._all is None:
            self._all = self._p.roof_warnings(self._peak, self._caches)
        return self._all


_NO_FLAGS = np.zeros(0, dtype=bool)


@dataclass(frozen=True, eq=False)
class RooflineAnalysis:
    """Every number the roofline panel draws or lists for one scenario."""

    scenario: RooflineScenario  # what was analysed (its precision, sparsity switch and kernels)
    devices: tuple[DeviceRoofs, ...]  # primary first, then the compared presets
    #: the kernels under the primary's compute and memory roofs (FLOP/B, FLOP/s, fractions);
    #: None without kernels or without primary roofs
    placements: rl.Placements | None
    #: per kernel, whether its measured rate is above its roof (an empty array: none is)
    above_roof: np.ndarray
    #: the texts of those flags, made when read (None without placements)
    warnings: RoofWarnings | None
    n_compute_bound: int  # kernels at or right of the primary ridge
    n_memory_bound: int  # kernels left of it
    extent: Extent  # the axes for this scenario alone
    #: per device, one line per roof within ``extent`` (empty for a device without roofs)
    lines: tuple[tuple[RoofLine, ...], ...]
    problems: tuple[str, ...] = field(default=())  # the devices' problems, in device order

    @property
    def primary(self) -> DeviceRoofs:
        return self.devices[0]

    def lines_within(self, extent: Extent) -> tuple[tuple[RoofLine, ...], ...]:
        """The roofs' lines within another extent (saved scenarios overlaid widen the axes)."""
        if extent == self.extent:
            return self.lines
        return _lines(self.devices, extent)

    def readout(self, ai: float) -> tuple[Readout, ...]:
        """What each device with roofs attains at intensity ``ai`` (FLOP/B, > 0)."""
        out = []
        for d in self.devices:
            if d.roofs is None:
                continue
            value = float(rl.attainable(ai, d.compute.peak_flops, d.compute.mem_bw))
            cached = tuple((roof, float(rl.attainable(ai, roof.peak_flops, roof.mem_bw)))
                           for roof in d.roofs if roof.kind == "l2")
            out.append(Readout(d, value, bool(ai >= d.compute.ridge), cached))
        return tuple(out)


# -- working it out -------------------------------------------------------------------------------
def analyse(scenario: RooflineScenario, view, catalog) -> RooflineAnalysis:
    """The roofline of ``scenario``: its devices' roofs from ``catalog``, its kernels placed
    under the primary's. ``view`` (the plan) is not read: the scenario follows it already."""
    s = scenario
    devices = tuple(_device(catalog, key, s, primary=i == 0) for i, key in enumerate(s.hardware))
    primary = devices[0]
    placements, above, warnings = None, _NO_FLAGS, None
    if primary.roofs is not None and s.kernels:
        caches = tuple((m.name, m.bandwidth) for m in primary.hardware.cache_levels)
        placements, above, warnings = _placed(s.kernels, primary.compute.peak_flops, primary.compute.mem_bw,
                                              caches)
    n_compute = int(np.count_nonzero(placements.compute_bound)) if placements is not None else 0
    n_all = len(placements) if placements is not None else 0
    extent = _extent([(d, d.roofs) for d in devices], [placements])
    return RooflineAnalysis(
        scenario=s, devices=devices, placements=placements, above_roof=above, warnings=warnings,
        n_compute_bound=n_compute, n_memory_bound=n_all - n_compute, extent=extent,
        lines=_lines(devices, extent), problems=tuple(d.problem for d in devices if d.problem))


def chart_extent(analysis: RooflineAnalysis, compared: Sequence[RooflineAnalysis] = ()) -> Extent:
    """The axes of ``analysis`` with saved scenarios overlaid: each ``compared`` one adds its
    primary device's compute and memory roofs (the ones drawn for it) and its kernels."""
    roofs = [(d, d.roofs) for d in analysis.devices]
    roofs += [(c.primary, c.primary.roofs[:2] if c.primary.roofs else None) for c in compared]
    return _extent(roofs, [analysis.placements, *(c.placements for c in compared)])


def _device(catalog, key: str, s: RooflineScenario, primary: bool) -> DeviceRoofs:
    try:
        hw = catalog.hardware(key)
    except (KeyError, ValueError):  # the built-in catalog says KeyError, a project's InputError
        return DeviceRoofs(key, None, None, f"no preset '{key}' in this project")
    if s.precision not in hw.precisions:
        return DeviceRoofs(key, hw, None, f"{hw.name} has no {PRECISION_LABELS[s.precision]} rate")
    roofs = rl.ceilings(hw, s.precision, s.sparse, extra_precisions=primary and s.show_precision_ceilings,
                        include_l2=primary and s.show_l2)
    levels = {m.name: m for m in hw.cache_levels}
    cache_roofs = tuple((levels[name], roof) for roof in roofs
                        if roof.kind == "l2" and (name := roof.label.removesuffix(" bandwidth")) in levels)
    return DeviceRoofs(key, hw, roofs, cache_roofs=cache_roofs)


def _extent(roofs, placements) -> Extent:
    """Axes that hold every roof corner and kernel with room to read them. Each compute roof
    counts both dense and 2:4 sparse, so the sparsity switch never moves the axes: the roof is
    seen to rise by the preset's factor against a fixed scale."""
    ridges, peaks, bws = [], [], []
    for d, drawn in roofs:
        for roof in drawn or ():
            for sparse in (False, True):
                # every roof rises to (or is) a compute peak: memory and cache roofs too
                peak = d.hardware.peak_flops(roof.precision, sparse)
                ridges.append(peak / roof.mem_bw)
                peaks.append(peak)
            bws.append(roof.mem_bw)
    if not ridges:
        ridges, peaks, bws = [100.0], [1e15], [1e13]
    lo_ai, hi_ai = min(ridges) / 100.0, max(ridges) * 30.0
    lo_y = None
    for p in placements:
        if p is None or not len(p):
            continue
        finite = p.intensity[np.isfinite(p.intensity) & (p.intensity > 0)]
        if finite.size:
            lo_ai = min(lo_ai, float(finite.min()) / 2)
            hi_ai = max(hi_ai, float(finite.max()) * 8)  # room for the point's label
        achieved = p.achieved[np.isfinite(p.achieved) & (p.achieved > 0)]
        if achieved.size:
            low = float(achieved.min()) / 2
            lo_y = low if lo_y is None else min(lo_y, low)
    xmin = 10.0 ** math.floor(math.log10(lo_ai))
    xmax = max(hi_ai, 10.0 * xmin)
    ymin = min(bws) * xmin
    if lo_y is not None:
        ymin = min(ymin, lo_y)
    ymin = 10.0 ** math.floor(math.log10(ymin))
    return Extent(xmin, xmax, ymin, max(peaks) * 3.0)


def _lines(devices: Sequence[DeviceRoofs], extent: Extent) -> tuple[tuple[RoofLine, ...], ...]:
    out = []
    for d in devices:
        lines = []
        for roof in d.roofs or ():
            x, y = roof.segment(extent.xmin, extent.xmax)
            drawn_x, drawn_y = x, y
            # a cache roof: its slope, then flat at the peak up to the device-memory ridge,
            # where the drawn compute roof takes over
            if roof.kind == "l2" and x.size and x[-1] >= roof.ridge and roof.ridge < d.compute.ridge:
                drawn_x = np.append(x, min(d.compute.ridge, extent.xmax))
                drawn_y = np.append(y, roof.peak_flops)
            lines.append(RoofLine(roof, x, y, drawn_x, drawn_y))
        out.append(tuple(lines))
    return tuple(out)


# -- placing the kernels, kept between analyses -----------------------------------------------------
#: The last few placements: [kernels, peak FLOP/s, bandwidth B/s, Placements, {caches: flags}],
#: most recent first. Keyed on the kernel tuple (the same object, or equal) and the roof: the
#: primary scenario and the saved ones overlaid each keep theirs.
_PLACED: list[list] = []
_PLACED_KEPT = 6


def _same_kernels(a: tuple[Kernel, ...], b: tuple[Kernel, ...]) -> bool:
    return a is b or (len(a) == len(b) and a == b)


def _placed(kernels: tuple[Kernel, ...], peak: float, bw: float, caches: tuple[tuple[str, float], ...]):
    """(placements, above-the-roof mask, their texts) of ``kernels`` under a roof of ``peak``
    FLOP/s and ``bw`` B/s, the same objects as last time for the same kernels and roof.

    ``place_many`` spends its time turning every Kernel into numbers (~2 ms for 10,000); what
    depends on the roof is cheap. For the same kernels under another roof (a precision,
    sparsity or device change) only that part is evaluated again, with the model's own
    functions: the attainable roof (``rl.attainable``), the side of the ridge
    (``rl.ridge_point``) and the achieved rate, which is the measured one where a time was
    measured and the roof elsewhere. The result equals ``place_many``'s value for value."""
    entry = next((e for e in _PLACED if _same_kernels(e[0], kernels) and (e[1], e[2]) == (peak, bw)), None)
    if entry is None:
        prev = next((e[3] for e in _PLACED if _same_kernels(e[0], kernels)), None)
        if prev is None:
            placed = rl.place_many(kernels, peak, bw)
        else:
            ceiling = rl.attainable(prev.intensity, peak, bw)
            achieved = np.where(prev.measured, prev.achieved, ceiling)
            placed = rl.Placements(names=prev.names, intensity=prev.intensity, ceiling=ceiling, achieved=achieved,
                                   fraction_of_roof=achieved / ceiling,
                                   compute_bound=prev.intensity >= rl.ridge_point(peak, bw), measured=prev.measured)
        entry = [kernels, peak, bw, placed, {}]
    else:
        _PLACED.remove(entry)
    _PLACED.insert(0, entry)
    del _PLACED[_PLACED_KEPT:]
    placed, flags = entry[3], entry[4]
    if caches not in flags:
        above = placed.above_roof()
        flags.clear()  # one device's caches at a time: another device with this roof is rare
        flags[caches] = (above if above.any() else _NO_FLAGS, RoofWarnings(placed, peak, caches))
    above, warnings = flags[caches]
    return placed, above, warnings


__all__ = ["DeviceRoofs", "Extent", "Readout", "RoofLine", "RoofWarnings", "RooflineAnalysis", "analyse",
           "chart_extent"]
