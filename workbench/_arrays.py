"""Small array helpers shared by the model.

``distinct`` gives what ``np.unique`` gives for one array of real or integer numbers (its
values sorted, each once, NaNs as one at the end; of complex numbers numpy may keep another of
two equal zeros or NaNs). numpy's own asks ``np.ma.is_masked`` on every call, and the first
call imports ``numpy.ma`` (7-18 ms): the first All-reduce or Scaling drawing of a session paid
for it. A sort and a comparison need nothing more.
"""

from __future__ import annotations

import numpy as np


def distinct(values) -> np.ndarray:
    """The values of ``values`` (flattened) sorted, each once: ``np.unique(values)`` for real
    and integer arrays."""
    a = np.sort(np.asarray(values).ravel())
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    if a.dtype.kind in "fc" and np.isnan(a[-1]):
        # NaNs sort last and never equal each other: keep the first of them only
        keep[1:] &= ~(np.isnan(a[1:]) & np.isnan(a[:-1]))
    return a[keep]
