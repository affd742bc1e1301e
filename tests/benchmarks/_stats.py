"""The benchmark's one definition of its figures (median, 95th percentile), free of Qt so that
the driver, which must not import Qt, reads its machine probe the way the children read edits."""

from __future__ import annotations

import statistics


def stats_ms(values_s) -> dict[str, float]:
    """Median, p95 (of n values: the one at rank round(0.95 (n - 1)), the second slowest of
    30), minimum and maximum, in ms, of durations in seconds."""
    ms = sorted(v * 1e3 for v in values_s)
    if not ms:
        return {"median": float("nan"), "p95": float("nan"), "n": 0}
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"median": statistics.median(ms), "p95": p95, "min": ms[0], "max": ms[-1], "n": len(ms)}
