"""The benchmark's one definition of its figures (median, 95th percentile), free of Qt so that
the driver, which must not import Qt, reads its machine probe the way the children read edits."""

from __future__ import annotations

import statistics
import time

#: the probe's fixed work: about 9 ms of plain Python in this machine's fast spells (an edit's
#: length); the same work takes up to twice as long in its slow spells
PROBE_ADDITIONS = 300_000


def stats_ms(values_s) -> dict[str, float]:
    """Median, p95 (of n values: the one at rank round(0.95 (n - 1)), the second slowest of
    30), minimum and maximum, in ms, of durations in seconds."""
    ms = sorted(v * 1e3 for v in values_s)
    if not ms:
        return {"median": float("nan"), "p95": float("nan"), "n": 0}
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"median": statistics.median(ms), "p95": p95, "min": ms[0], "max": ms[-1], "n": len(ms)}


def machine_probe(runs: int, pause_s: float = 0.03) -> dict[str, float]:
    """A fixed piece of plain Python (``PROBE_ADDITIONS`` additions) timed ``runs`` times with a
    pause between, as the edits are: its median says how fast the machine is, its 95th
    percentile how much slower its slow moments are. An edit's p95 cannot be steadier than
    this."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        total = 0
        for i in range(PROBE_ADDITIONS):
            total += i
        times.append(time.perf_counter() - start)
        time.sleep(pause_s)
    figures = stats_ms(times)
    return {"median_ms": round(figures["median"], 1), "p95_ms": round(figures["p95"], 1)}
