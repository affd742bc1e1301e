"""Link health from an nccl-tests log: is its large-message bus bandwidth what the links allow?

A healthy NVLink node shows hundreds of GB/s of bus bandwidth for large messages; a node
with a degraded link (NVLink down, traffic falling back to PCIe through the host) shows
PCIe-class numbers. This module reads the class of link a log should reach from the log
itself (its device names and, across nodes, the NICs between them), compares the measured
bus bandwidth with it, and says the result in one line::

    from workbench import comms_sweep, link_health
    log = comms_sweep.analyze_log(open("all_reduce.log").read())
    link_health.classify(log.result).summary
    # 'Healthy: 412 GB/s busbw at 256 MiB and above, 91% of the 450 GB/s per direction of NVLink 4'

How it decides (every threshold is a constant below):

- The measured figure is the highest out-of-place bus bandwidth among the sizes of at least
  :data:`LARGE_MESSAGE_BYTES` (smaller messages have not reached the link's rate: latency
  still counts); with fewer than :data:`MIN_LARGE_SIZES` such sizes the log is not comparable.
  nccl-tests' bus bandwidth is made to be compared with one link's per-direction rate
  whatever the collective and the rank count.
- The expected link comes from the device names (:data:`DEVICE_LINKS`: an H100 SXM has
  NVLink 4, an A100 PCIe a PCIe Gen4 x16 slot, ...) and its figures from the interconnect
  presets, each with its source. When the ranks sit on several hosts the ring crosses NICs
  (``inter_node``, a preset key: the log does not print the NIC's rate), and the bound is the
  hierarchical ring's, :func:`workbench.comms.hierarchical_link`: min(intra-node rate,
  ranks per node x NIC rate).
- Healthy means at least :data:`HEALTHY_RATIO` of the nominal per-direction rate of that
  bound. Published fractions are only in the presets (NVLink typically reaches ~80% of its
  nominal rate, 200 and 400 Gb/s NICs ~96%); the threshold sits well below them to leave
  room for a log's protocol and size choices. No published figure says where "degraded"
  starts, so the rule is stated as a ratio, not borrowed.
- Below it the log is degraded, and the verdict names the slowest link class whose nominal
  rate still covers the measurement (:data:`CLASS_LADDER`, plus one NIC across nodes):
  38 GB/s on H100s is "Degraded to PCIe Gen5 x16 class".

Everything is in SI units: bytes, bytes/s, seconds.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from workbench import _validate as v
from workbench import comms
from workbench.catalog import Catalog, check_catalog, default_catalog
from workbench.hardware import Interconnect
from workbench.nccl import NcclResult
from workbench.units import format_quantity

__all__ = [
    "CLASS_LADDER",
    "DEVICE_LINKS",
    "ExpectedLink",
    "HEALTHY_RATIO",
    "LARGE_MESSAGE_BYTES",
    "LinkHealth",
    "MIN_LARGE_SIZES",
    "NodeLayout",
    "classify",
    "device_link",
    "expected_link",
    "large_message_busbw",
    "node_layout",
]

#: Messages at least this large (bytes, whole buffer) count as large: nccl-tests' bus
#: bandwidth has levelled off there on NVLink and on NICs alike.
LARGE_MESSAGE_BYTES = 256 * 2**20
#: How many large sizes a log needs for a verdict.
MIN_LARGE_SIZES = 2
#: Healthy: the measured large-message bus bandwidth is at least this share of the nominal
#: per-direction rate of the expected link (three quarters of the ~80% NVLink typically
#: reaches, per the interconnect presets' achievable fraction and its source).
HEALTHY_RATIO = 0.6
#: Measured rates above this share of the nominal bound are said to exceed the model
#: (in-network reduction such as NVLink SHARP, or faster NICs than assumed).
ABOVE_MODEL_RATIO = 1.1

HEALTHY = "healthy"
DEGRADED = "degraded"
NOT_COMPARABLE = "not comparable"
VERDICTS = (HEALTHY, DEGRADED, NOT_COMPARABLE)

#: Device names as nccl-tests prints them (the CUDA device name) and the link class their
#: GPUs talk over inside a node, as interconnect preset keys; None: no preset describes it.
#: The first pattern that matches decides.
DEVICE_LINKS: tuple[tuple[str, str | None, str], ...] = (
    (r"\bH100\b.*\bNVL\b|\bH200\b.*\bNVL\b", None,
     "NVL cards: NVLink bridges between pairs, PCIe beyond; no single link class"),
    (r"\bH100\b.*\bPCIe\b", "pcie-5-x16", "H100 PCIe: a PCIe Gen5 x16 card"),
    (r"\bGH200\b", None, "Grace Hopper: one GPU per superchip, no NVLink preset for the node"),
    (r"\bG?B[23]00\b", "nvlink-5", "Blackwell (B200, GB200, B300, GB300): NVLink 5"),
    (r"\bH100\b|\bH200\b", "nvlink-4", "H100 and H200 SXM: NVLink 4"),
    (r"\bA100\b.*\bPCIE?\b", "pcie-4-x16", "A100 PCIe: a PCIe Gen4 x16 card"),
    (r"\bA100\b", "nvlink-3", "A100 SXM: NVLink 3"),
    (r"\bV100\b.*\bSXM", "nvlink-2", "V100 SXM2: NVLink 2"),
    (r"\bL40S?\b|\bL4\b|RTX 4090|RTX 6000 Ada", "pcie-4-x16", "PCIe Gen4 x16, no NVLink"),
)
#: Link classes a degraded log is placed in, as interconnect preset keys.
CLASS_LADDER = ("pcie-4-x16", "pcie-5-x16", "nvlink-2", "nvlink-3", "nvlink-4", "nvlink-5")

_PATTERNS = tuple((re.compile(p, re.IGNORECASE), key, note) for p, key, note in DEVICE_LINKS)


def _gbs(value: float) -> str:
    return format_quantity(value, "B/s")


def _short(ic: Interconnect) -> str:
    """'NVLink 4 (H100, H200)' -> 'NVLink 4'."""
    return ic.name.split(" (", 1)[0]


def _nic(ic: Interconnect) -> str:
    """'InfiniBand / Ethernet NIC, 400 Gb/s' -> '400 Gb/s NIC'."""
    rate = ic.name.rsplit(", ", 1)[-1]
    return f"{rate} NIC" if rate != ic.name else ic.name


def device_link(name: str) -> tuple[str | None, str]:
    """(interconnect preset key, why) for one device name; (None, why) when no preset
    describes its link (an AMD GPU, an NVL card, a name not in :data:`DEVICE_LINKS`)."""
    name = v.text("name", name)
    for pattern, key, note in _PATTERNS:
        if pattern.search(name):
            return key, note
    return None, f"no link preset for the device {name!r}"


@dataclass(frozen=True)
class NodeLayout:
    """How a log's ranks sit on hosts: ``nodes`` and ``ranks_per_node`` (the most ranks any
    host has; None when the log lists no devices), ``hosts`` in order, ``even`` whether every
    host has as many."""

    nodes: int | None
    ranks_per_node: int | None
    hosts: tuple[str, ...]
    even: bool


def node_layout(result: NcclResult) -> NodeLayout:
    """The hosts of a log's ``# Rank ... on HOST device`` lines. NCCL INFO prefixes and other
    host names are not counted: a log's banner may say "localhost" where NCCL says the
    machine's name."""
    v.instance("result", result, NcclResult, "an NcclResult (workbench.nccl.parse_nccl_tests)")
    if not result.devices:
        return NodeLayout(None, None, (), True)
    per_host = Counter(d.host for d in result.devices)
    hosts = tuple(per_host)
    counts = set(per_host.values())
    return NodeLayout(len(hosts), max(counts), hosts, len(counts) == 1)


@dataclass(frozen=True)
class ExpectedLink:
    """The link a log should reach.

    ``intra``: the link class inside a node (an interconnect preset); ``inter``: the NIC
    between nodes (None on one node); ``nodes``, ``ranks_per_node``, ``n_ranks``;
    ``nominal_bw``: the ring's bound at nominal per-direction rates (what the health ratio
    divides by) and ``achievable_bw`` at the presets' achievable fractions (what a model
    curve uses), bytes/s; ``alpha``: the latency per step (s); ``name`` says it in words,
    ``device`` the device name it was read from, ``sources`` where each figure comes from,
    ``rule`` how the bound follows from them.
    """

    intra: Interconnect
    inter: Interconnect | None
    nodes: int
    ranks_per_node: int
    n_ranks: int
    nominal_bw: float
    achievable_bw: float
    alpha: float
    name: str
    device: str
    sources: tuple[str, ...]
    rule: str = ""


def _lookup(catalog: Catalog, key: str, what: str) -> Interconnect:
    try:
        return catalog.interconnect(key)
    except v.InputError as exc:
        raise v.InputError(what, str(exc).split(": ", 1)[-1]) from None
    except KeyError as exc:  # a plain catalog's word for an unknown key
        raise v.InputError(what, str(exc.args[0]) if exc.args else f"no interconnect preset {key!r}") from None


def expected_link(result: NcclResult, catalog: Catalog | None = None,
                  inter_node: str = "nic-400g") -> tuple[ExpectedLink | None, str]:
    """(the link ``result`` should reach, "") or (None, why it cannot be said).

    ``catalog`` looks the presets up (default: :func:`workbench.catalog.default_catalog`);
    ``inter_node`` is the NIC preset key assumed between nodes when the log spans several
    hosts (a log does not print its NICs' rate).
    """
    v.instance("result", result, NcclResult, "an NcclResult (workbench.nccl.parse_nccl_tests)")
    catalog = default_catalog() if catalog is None else check_catalog(catalog)
    inter_key = v.text("inter_node", inter_node)
    names = result.device_names
    if not names:
        return None, "the log lists no devices ('# Rank ... device' lines), so its link class is unknown"
    if len(names) > 1:
        return None, f"the log mixes devices ({', '.join(names)}): no single link class"
    key, why = device_link(names[0])
    if key is None:
        return None, why
    layout = node_layout(result)
    n = result.n_ranks or len(result.devices)
    if n < 2:
        return None, "one rank: nothing crosses a link"
    intra = _lookup(catalog, key, "catalog")
    sources = [f"{intra.name}: {intra.source}"]
    if intra.achievable_fraction:
        sources.append(f"{intra.name} achievable: {intra.achievable_source}")
    nodes, per_node = layout.nodes or 1, layout.ranks_per_node or n
    if nodes <= 1:
        rule = f"{_short(intra)}: {_gbs(intra.bw_per_direction)} per direction per GPU (nominal)"
        return ExpectedLink(intra, None, 1, n, n, intra.bw_per_direction, intra.achievable_bw, intra.latency_s,
                            _short(intra), names[0], tuple(sources), rule), ""
    nic = _lookup(catalog, inter_key, "inter_node")
    sources.append(f"{nic.name}: {nic.source}")
    if nic.achievable_fraction:
        sources.append(f"{nic.name} achievable: {nic.achievable_source}")
    nominal, _alpha = comms.hierarchical_link(per_node, n, intra.bw_per_direction, intra.latency_s,
                                              nic.bw_per_direction, nic.latency_s)
    achievable, alpha = comms.hierarchical_link(per_node, n, intra.achievable_bw, intra.latency_s,
                                                nic.achievable_bw, nic.latency_s)
    uneven = "" if layout.even else " (uneven: the fullest host counts)"
    name = f"{nodes} nodes with {_short(intra)} inside and {per_node} × {_nic(nic)}s each{uneven}"
    rule = (f"hierarchical ring: min({_short(intra)} {_gbs(intra.bw_per_direction)}, {per_node} × "
            f"{_gbs(nic.bw_per_direction)}) = {_gbs(nominal)} per direction (nominal rates)")
    return ExpectedLink(intra, nic, nodes, per_node, n, nominal, achievable, alpha, name, names[0],
                        tuple(sources), rule), ""


def large_message_busbw(result: NcclResult) -> tuple[float | None, int]:
    """(the highest out-of-place bus bandwidth among sizes >= :data:`LARGE_MESSAGE_BYTES`,
    how many such sizes the log has); the bandwidth is None without any."""
    v.instance("result", result, NcclResult, "an NcclResult (workbench.nccl.parse_nccl_tests)")
    sizes = result.sizes
    large = [row.out_of_place.busbw for row, size in zip(result.rows, sizes, strict=True)
             if size >= LARGE_MESSAGE_BYTES]
    return (float(np.max(large)) if large else None), len(large)


@dataclass(frozen=True)
class LinkHealth:
    """The verdict on one log's links.

    ``verdict``: "healthy", "degraded" or "not comparable"; ``summary``: the verdict in one
    line; ``measured_busbw``: the large-message bus bandwidth (B/s, None when the log has no
    large size); ``large_sizes``: how many sizes count as large; ``expected``: the link it
    was compared with (None when not comparable); ``ratio``: measured / expected nominal;
    ``degraded_to``: the link class the measurement fits, for a degraded log.
    """

    verdict: str
    summary: str
    measured_busbw: float | None
    large_sizes: int
    expected: ExpectedLink | None
    ratio: float | None
    degraded_to: str | None = None

    @property
    def healthy(self) -> bool:
        return self.verdict == HEALTHY


def _fitting_class(measured: float, expected: ExpectedLink, catalog: Catalog) -> tuple[str, float] | None:
    """(name, nominal rate) of the slowest class below the expected one whose nominal rate
    still covers ``measured``; None when the measurement is above every lower class."""
    classes = [_lookup(catalog, key, "catalog") for key in CLASS_LADDER]
    ladder = [(_short(ic), ic.bw_per_direction) for ic in classes]
    if expected.inter is not None:
        ladder.append((f"one {_nic(expected.inter)}", expected.inter.bw_per_direction))
    ladder = sorted((c for c in ladder if c[1] < expected.nominal_bw), key=lambda c: c[1])
    for name, rate in ladder:
        if measured <= rate:
            return name, rate
    return None


def classify(result: NcclResult, catalog: Catalog | None = None, inter_node: str = "nic-400g") -> LinkHealth:
    """Healthy, degraded (and to what class) or not comparable: see the module's rules.
    ``catalog`` and ``inter_node`` as :func:`expected_link`."""
    measured, count = large_message_busbw(result)
    catalog = default_catalog() if catalog is None else check_catalog(catalog)
    expected, why = expected_link(result, catalog, inter_node)
    if count < MIN_LARGE_SIZES:
        largest = format_quantity(float(np.max(result.sizes)), "B", binary=True) if len(result.rows) else "none"
        reason = (f"{count} size{'s' if count != 1 else ''} of {format_quantity(LARGE_MESSAGE_BYTES, 'B', binary=True)}"
                  f" or more (largest {largest}; {MIN_LARGE_SIZES} needed): the bus bandwidth has not levelled off")
        return LinkHealth(NOT_COMPARABLE, f"Not comparable: {reason}", measured, count, expected, None)
    if expected is None:
        return LinkHealth(NOT_COMPARABLE, f"Not comparable: {why}", measured, count, None, None)
    ratio = measured / expected.nominal_bw
    at = f"{_gbs(measured)} busbw at {format_quantity(LARGE_MESSAGE_BYTES, 'B', binary=True)} and above"
    bound = f"the {_gbs(expected.nominal_bw)} per direction of {expected.name}"
    if ratio >= HEALTHY_RATIO:
        above = (" (above the nominal bound: in-network reduction such as NVLink SHARP, or faster links than "
                 "assumed)" if ratio > ABOVE_MODEL_RATIO else "")
        summary = f"Healthy: {at}, {ratio:.0%} of {bound}{above}"
        return LinkHealth(HEALTHY, summary, measured, count, expected, ratio)
    fits = _fitting_class(measured, expected, catalog)
    # the conclusion first: a table cell that cuts the line keeps it
    if fits is None:
        degraded_to = None
        head = "Degraded, between the slower link classes and the expected one"
    else:
        degraded_to = fits[0]
        head = f"Degraded to {fits[0]} class ({_gbs(fits[1])})"
    summary = f"{head}: {at}, {ratio:.0%} of {bound} (healthy from {HEALTHY_RATIO:.0%})"
    return LinkHealth(DEGRADED, summary, measured, count, expected, ratio, degraded_to)
