"""Where to put the names of a few points on a chart so that they can be read.

Plain geometry in screen pixels (y grows downwards), no Qt: a chart hands over the points, the
sizes of their labels, the plot area and what is already drawn there (other labels, the legend,
lines), and gets back a box per label, or None for a label that fits nowhere (the chart hides
it; the name is still in the table and the hover tip).

Each label tries the places around its point in a fixed order of preference and takes the
first that stays inside the area and touches nothing drawn, no label placed before it and no
other labelled point. The order suits points on a roofline: a point on a roof has empty space
under the roof (below right) and above it (above left); a line rising to the right runs
through the right and left slots at mid-height.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: (left, top, width, height)
Box = tuple[float, float, float, float]
#: ((x1, y1), (x2, y2))
Segment = tuple[tuple[float, float], tuple[float, float]]

#: candidate offsets: (dx, dy) as multiples of the gap, and which corner of the label sits
#: there, as fractions of its width and height (0, 0: its top-left corner)
_PLACES = (
    ((1.0, 0.5), (0.0, 0.0)),     # below right
    ((-1.0, -0.5), (1.0, 1.0)),   # above left
    ((1.0, -0.5), (0.0, 1.0)),    # above right
    ((-1.0, 0.5), (1.0, 0.0)),    # below left
    ((0.0, 1.0), (0.5, 0.0)),     # below
    ((0.0, -1.0), (0.5, 1.0)),    # above
    ((1.2, 0.0), (0.0, 0.5)),     # right
    ((-1.2, 0.0), (1.0, 0.5)),    # left
)
#: the same places further out, tried when none of the near ones is free; a label that had to
#: go further than the first ring gets a leader line to its point
_RINGS = (1.0, 2.5, 4.5, 7.0)


def candidate_boxes(point: tuple[float, float], size: tuple[float, float], gap: float,
                    rings: Sequence[float] = _RINGS) -> list[Box]:
    """The boxes a label of ``size`` may take around ``point``, most preferred first."""
    x, y = point
    w, h = size
    out = []
    for ring in rings:
        for (dx, dy), (fx, fy) in _PLACES:
            out.append((x + dx * gap * ring - fx * w, y + dy * gap * ring - fy * h, w, h))
    return out


def shifted_inside(box: Box, area: Box) -> Box | None:
    """``box`` moved the least to lie inside ``area``; None when it is bigger than the area."""
    left, top, w, h = box
    if w > area[2] or h > area[3]:
        return None
    return (min(max(left, area[0]), area[0] + area[2] - w), min(max(top, area[1]), area[1] + area[3] - h), w, h)


def place_near(point: tuple[float, float], size: tuple[float, float], area: Box, obstacles: Sequence[Box] = (),
               gap: float = 6.0, marker: float = 5.0, rings: Sequence[float] = _RINGS) -> Box | None:
    """A place for one label when :func:`place_labels` finds none clear of everything: its
    places around the point, each moved inside the area if it sticks out, the first that
    covers neither another label (``obstacles``) nor the point's marker. Curves are not
    avoided: a label over a line stays readable, one over another label does not."""
    x, y = point
    spot = (x - marker, y - marker, 2 * marker, 2 * marker)
    for box in candidate_boxes(point, size, gap, rings):
        moved = shifted_inside(box, area)
        if (moved is not None and not boxes_overlap(moved, spot)
                and not any(boxes_overlap(moved, other) for other in obstacles)):
            return moved
    return None


def leader(point: tuple[float, float], box: Box, gap: float) -> Segment | None:
    """The line from ``point`` to the nearest point of ``box`` when the box is further than
    1.5 gaps from it (a label that far needs a line to say whose it is), else None."""
    x, y = point
    nx = min(max(x, box[0]), box[0] + box[2])
    ny = min(max(y, box[1]), box[1] + box[3])
    if max(abs(nx - x), abs(ny - y)) <= 1.5 * gap + 1e-9:
        return None
    return ((x, y), (nx, ny))


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def segment_hits_box(segment: Segment, box: Box) -> bool:
    """Whether the line segment crosses or lies in the box (Liang-Barsky clipping)."""
    (x1, y1), (x2, y2) = segment
    left, top, w, h = box
    dx, dy = x2 - x1, y2 - y1
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x1 - left), (dx, left + w - x1), (-dy, y1 - top), (dy, top + h - y1)):
        if p == 0:
            if q < 0:
                return False  # parallel to this edge and outside it
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def inside(box: Box, area: Box) -> bool:
    return (box[0] >= area[0] and box[1] >= area[1] and box[0] + box[2] <= area[0] + area[2]
            and box[1] + box[3] <= area[1] + area[3])


def segments_array(segments) -> np.ndarray:
    """Segments as an (n, 4) array of x1, y1, x2, y2 (a list of ``Segment`` or an array of
    shape (n, 4) or (n, 2, 2))."""
    array = np.asarray(segments, dtype=float)
    return array.reshape(-1, 4) if array.size else np.empty((0, 4))


def segments_hit_boxes(segments: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """``segment_hits_box`` for every (box, segment) pair at once: a (boxes, segments) array
    of bools. ``segments`` is (n, 4) as :func:`segments_array` gives, ``boxes`` (m, 4)."""
    hits = np.zeros((len(boxes), len(segments)), dtype=bool)
    if not len(boxes) or not len(segments):
        return hits
    # only segments whose own bounds meet the bounds of all the boxes can hit one (most of a
    # chart's curve is far from the label's places); column by column: numpy's reductions
    # along a row of two cost several times more
    x1, y1, x2, y2 = segments[:, 0], segments[:, 1], segments[:, 2], segments[:, 3]
    left, top = boxes[:, 0], boxes[:, 1]
    right, bottom = left + boxes[:, 2], top + boxes[:, 3]
    near = np.maximum(x1, x2) >= left.min()
    near &= np.minimum(x1, x2) <= right.max()
    near &= np.maximum(y1, y2) >= top.min()
    near &= np.minimum(y1, y2) <= bottom.max()
    index = np.flatnonzero(near)
    if not len(index):
        return hits
    x1, y1, x2, y2 = x1[index][None, :], y1[index][None, :], x2[index][None, :], y2[index][None, :]
    left, top, w, h = (boxes[:, i][:, None] for i in range(4))
    dx, dy = x2 - x1, y2 - y1
    # the four clipping edges of Liang-Barsky, as in segment_hits_box: (p, q) per edge
    t0 = np.zeros((len(boxes), len(index)))
    t1 = np.ones((len(boxes), len(index)))
    outside = np.zeros((len(boxes), len(index)), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x1 - left), (dx, left + w - x1), (-dy, y1 - top), (dy, top + h - y1)):
            t = q / p
            outside |= (p == 0) & (q < 0)  # parallel to this edge and outside it
            t0 = np.maximum(t0, np.where(p < 0, t, 0.0))
            t1 = np.minimum(t1, np.where(p > 0, t, 1.0))
    # t0 only grows and t1 only shrinks edge by edge: t0 > t1 at the end iff at some edge
    hits[:, index] = ~outside & (t0 <= t1)
    return hits


#: places tested against the drawn segments at once: the first few places are free for most
#: labels, so the rest are tested only when none of them is
_PLACES_AT_ONCE = 4


def _clear_of(drawn: np.ndarray, boxes: list[Box]):
    """The boxes that no drawn segment crosses, in their order, tested a few at a time."""
    if not len(drawn):
        yield from boxes
        return
    for start in range(0, len(boxes), _PLACES_AT_ONCE):
        chunk = boxes[start:start + _PLACES_AT_ONCE]
        crossed = segments_hit_boxes(drawn, np.asarray(chunk, dtype=float)).any(axis=1)
        yield from (box for box, hit in zip(chunk, crossed, strict=True) if not hit)


def place_labels(
    points: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    area: Box,
    obstacles: Sequence[Box] = (),
    segments: Sequence[Segment] | np.ndarray = (),
    gap: float = 6.0,
    marker: float = 5.0,
    rings: Sequence[float] = _RINGS,
) -> list[Box | None]:
    """A box per label (label ``i`` names ``points[i]`` and is ``sizes[i]`` wide and high), or
    None where none of its places is free. Labels are placed in the order given, so earlier
    ones win their preferred place. ``marker`` is the half-size of the box around each point
    that no label may cover. ``rings``: how far out (in gaps) to look, nearest first.
    ``segments`` may also be an (n, 4) or (n, 2, 2) array (a chart's curves: hundreds of
    segments, each tested against every place at once)."""
    if len(points) != len(sizes):
        raise ValueError(f"{len(points)} points but {len(sizes)} label sizes")
    markers = [(x - marker, y - marker, 2 * marker, 2 * marker) for x, y in points]
    placed: list[Box] = []
    drawn = segments_array(segments)
    lines: list[Segment] = []  # the leader lines drawn so far join them
    out: list[Box | None] = []
    for point, size in zip(points, sizes, strict=True):
        choice = None
        # the cheap tests first; the segments are tested for what is left, all at once
        free = [box for box in candidate_boxes(point, size, gap, rings)
                if inside(box, area)
                and not any(boxes_overlap(box, other) for other in placed)
                and not any(boxes_overlap(box, other) for other in obstacles)
                and not any(boxes_overlap(box, m) for m in markers)
                and not any(segment_hits_box(s, box) for s in lines)]
        for box in _clear_of(drawn, free):
            line = leader(point, box, gap)
            if line is not None and any(segment_hits_box(line, other) for other in (*placed, *obstacles)):
                continue  # its leader would cross a name already placed or another label
            choice = box
            if line is not None:
                lines.append(line)
            break
        out.append(choice)
        if choice is not None:
            placed.append(choice)
    return out
