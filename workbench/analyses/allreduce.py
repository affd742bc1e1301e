"""What the All-reduce calculator shows: ring against tree over the size sweep, at the chosen
size, against rank count and link bandwidth, and each measured nccl-tests log beside its model.

Every number comes from :mod:`workbench.comms_sweep` and :mod:`workbench.link_health`; this
module only says which of their answers the panel draws. The scenario already holds what it
takes from the run plan (``workbench.workspace`` makes it follow), so the plan view adds
nothing here. A log that cannot be read is not a failure: its reason is kept in its
:class:`LogAnalysis` and the rest is shown.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from workbench import comms_sweep, link_health
from workbench._validate import InputError
from workbench.catalog import Catalog
from workbench.comms_sweep import BandwidthSweep, CommsSweep, MeasuredLog, OperatingPoint, RankSweep
from workbench.hardware import Interconnect
from workbench.link_health import LinkHealth, NodeLayout
from workbench.scenarios import AllReduceScenario
from workbench.workspace import PlanView

#: Link classes marked on the chart against link bandwidth (interconnect preset keys); the
#: NIC assumed between nodes (the scenario's ``inter_node``) is marked beside them.
LINK_CLASS_MARKS = ("pcie-4-x16", "pcie-5-x16", "nvlink-3", "nvlink-4", "nvlink-5")
#: Points per decade of the fitted line drawn over a log's sizes.
FIT_POINTS_PER_DECADE = 8


@dataclass(frozen=True)
class LogAnalysis:
    """One measured log of the scenario, in the scenario's order."""

    name: str  # its stored name (the file it was read from; "" for a log saved unnamed)
    log: MeasuredLog | None  # parsed and fitted (sizes B, times s, busbw B/s); None: unreadable
    error: str  # why the stored text cannot be read ("" when it can)
    health: LinkHealth | None  # link health against the link its devices should reach (None: unreadable)
    layout: NodeLayout | None  # how its ranks sit on hosts (None: unreadable)
    model: CommsSweep | None  # its own collective and ranks on its expected link, over its sizes
    # (None when it has no collective, one rank or one size, or when that is the form's model)
    model_link: str  # the link ``model`` runs on, in words ("" without a model)
    fit_sizes: np.ndarray  # bytes: where the fitted line t = alpha + S/B is drawn (empty: no fit)
    fit_times: np.ndarray  # seconds: the fitted line at ``fit_sizes``
    ring_parameters: tuple[float, float] | None  # (link B/s, alpha s per step) of the ring that
    # reproduces the fit, with the log's collective and ranks (the form's where it names none)
    time_at_size: float | None  # seconds: its measured time at the scenario's size, interpolated, for
    # the rank chart (None: outside its sizes, or not the form's collective, or no rank count)


@dataclass(frozen=True)
class AllReduceAnalysis:
    """Every number the All-reduce calculator draws or lists for one scenario."""

    sweep: CommsSweep  # ring, tree (s) and busbw (B/s) over size_min..size_max
    point: OperatingPoint  # the model at size_bytes: times (s), crossover (B), algbw and busbw (B/s)
    ranks: RankSweep  # one message of size_bytes against rank count (2 .. max(100,000, n_ranks))
    latency_from: int | None  # ranks from which the ring's latency term is at least its transfer term
    rank_point_time: float  # seconds: the rank sweep's best time at n_ranks (the operating point there)
    bandwidths: BandwidthSweep  # one message of size_bytes on n_ranks against link bandwidth (B/s)
    link_classes: tuple[Interconnect, ...]  # the link presets marked on that chart, slowest first
    logs: tuple[LogAnalysis, ...]  # each measured log, in the scenario's order

    @property
    def readable_logs(self) -> tuple[LogAnalysis, ...]:
        """The logs that could be read."""
        return tuple(entry for entry in self.logs if entry.log is not None)


# A log's parse and fit takes milliseconds and depends on its text (and the form's collective,
# for a log that names none) alone: kept here by those two, for the few logs a session shows.
_READ: OrderedDict[tuple[str, str | None], tuple[MeasuredLog | None, str]] = OrderedDict()
_READ_KEPT = 2 * AllReduceScenario.MAX_LOGS + 4


def read_log(text: str, collective: str | None = None) -> tuple[MeasuredLog | None, str]:
    """(the log parsed and fitted, "") or (None, why it is not an nccl-tests log), kept for the
    next call with the same text and collective (loading a file, then drawing it, parse once)."""
    key = (text, collective)
    found = _READ.get(key)
    if found is None:
        try:
            found = (comms_sweep.analyze_log(text, collective), "")
        except (InputError, ValueError) as exc:
            found = (None, str(exc).removeprefix("text: "))
        _READ[key] = found
        while len(_READ) > _READ_KEPT:
            _READ.popitem(last=False)
    else:
        _READ.move_to_end(key)
    return found


# The curves over the size sweep do not change with the message size: a size being typed or
# dragged finds them here (their arrays are read, never written).
@functools.lru_cache(maxsize=16)
def _sweep(collective: str, n_ranks: int, link_bw: float, alpha: float, lo: float, hi: float) -> CommsSweep:
    return comms_sweep.sweep(collective, n_ranks, link_bw, alpha, lo, hi)


def _log_model(s: AllReduceScenario, sw: CommsSweep, log: MeasuredLog,
               health: LinkHealth) -> tuple[CommsSweep | None, str]:
    """The model a log is drawn against: its own collective and rank count on the link its
    devices should reach (across nodes the hierarchical ring), else on the form's link."""
    n = log.n_ranks
    if log.collective is None or n is None or n < 2 or not len(log.sizes):
        return None, ""
    expected = health.expected
    if expected is not None:
        bw, alpha, where = expected.achievable_bw, expected.alpha, expected.name
    else:
        bw, alpha, where = s.link_bw, s.alpha, "the form's link"
    if (log.collective, n) == (sw.collective, sw.n_ranks) and math.isclose(bw, sw.link_bw, rel_tol=1e-9) \
            and math.isclose(alpha, sw.alpha, rel_tol=1e-9, abs_tol=1e-15):
        return None, ""  # the form's curves are this log's model
    lo, hi = float(log.sizes.min()), float(log.sizes.max())
    if not lo < hi:
        return None, ""
    return _sweep(log.collective, n, float(bw), float(alpha), lo, hi), where


def _fit_line(log: MeasuredLog) -> tuple[np.ndarray, np.ndarray]:
    if log.fit is None:
        return np.array([]), np.array([])
    lo, hi = float(log.sizes.min()), float(log.sizes.max())
    sizes = comms_sweep.size_grid(lo, hi, FIT_POINTS_PER_DECADE) if lo < hi else log.sizes
    return log.fit_curve(sizes)


def _log(s: AllReduceScenario, sw: CommsSweep, name: str, text: str, catalog: Catalog) -> LogAnalysis:
    log, error = read_log(text, s.collective)
    if log is None:
        return LogAnalysis(name, None, error, None, None, None, "", np.array([]), np.array([]), None, None)
    health = link_health.classify(log.result, catalog, s.inter_node)
    model, where = _log_model(s, sw, log, health)
    fit_sizes, fit_times = _fit_line(log)
    ring = log.fitted_ring_parameters(log.collective or s.collective, log.n_ranks or s.n_ranks)
    on_rank_chart = log.collective == s.collective and bool(log.n_ranks) and log.n_ranks >= 2
    return LogAnalysis(
        name=name, log=log, error="", health=health, layout=link_health.node_layout(log.result),
        model=model, model_link=where, fit_sizes=fit_sizes, fit_times=fit_times, ring_parameters=ring,
        time_at_size=log.time_at(s.size_bytes) if on_rank_chart else None,
    )


def _link_classes(s: AllReduceScenario, catalog: Catalog) -> tuple[Interconnect, ...]:
    found = []
    for key in (*LINK_CLASS_MARKS, s.inter_node):
        try:
            found.append(catalog.interconnect(key))
        except (KeyError, ValueError):
            continue  # a preset this catalog does not have is not marked
    return tuple(sorted(found, key=lambda ic: ic.bw_per_direction))


def analyse(scenario: AllReduceScenario, view: PlanView | None, catalog: Catalog) -> AllReduceAnalysis:
    """The calculator's numbers for ``scenario`` (``view`` is not read: the scenario already
    holds what it takes from the plan); ``catalog`` gives the link presets a log's devices
    should reach and the link classes marked. Raises ValueError when the model cannot be
    computed, or InputError naming ``inter_node`` when a log spans nodes and the catalog has
    no such NIC (a log that cannot be read is kept with its reason instead)."""
    s = scenario
    op = s.collective
    sw = _sweep(op, s.n_ranks, s.link_bw, s.alpha, s.size_min, s.size_max)
    point = comms_sweep.operating_point(op, s.size_bytes, s.n_ranks, s.link_bw, s.alpha)
    top = max(comms_sweep.RANKS_MAX, s.n_ranks)
    rs = comms_sweep.rank_sweep(op, s.size_bytes, s.link_bw, s.alpha, comms_sweep.RANKS_MIN, top)
    at_n = rs.ranks == s.n_ranks
    rank_time = float(rs.best[at_n][0]) if at_n.any() else point.best_time
    bs = comms_sweep.bandwidth_sweep(op, s.size_bytes, s.n_ranks, s.alpha, min(1e9, s.link_bw / 2.0),
                                     max(2e12, s.link_bw * 2.0))
    return AllReduceAnalysis(
        sweep=sw, point=point, ranks=rs, latency_from=rs.latency_from, rank_point_time=rank_time,
        bandwidths=bs, link_classes=_link_classes(s, catalog),
        logs=tuple(_log(s, sw, name, text, catalog) for name, text in s.logs),
    )


__all__ = ["AllReduceAnalysis", "LogAnalysis", "LINK_CLASS_MARKS", "analyse", "read_log"]
