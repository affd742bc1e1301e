"""Placing point names on a chart: no overlaps, inside the plot, clear of lines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.label_placement import (
    boxes_overlap,
    candidate_boxes,
    inside,
    leader,
    place_labels,
    place_near,
    segment_hits_box,
    segments_array,
    segments_hit_boxes,
    shifted_inside,
)

AREA = (0.0, 0.0, 800.0, 500.0)


def test_a_lone_label_takes_its_first_choice_below_right():
    (box,) = place_labels([(100.0, 100.0)], [(60.0, 14.0)], AREA, gap=6.0)
    assert box == (106.0, 103.0, 60.0, 14.0)


def test_a_label_steps_aside_for_a_line_and_an_obstacle():
    point = (400.0, 250.0)
    blocked_below_right = ((380.0, 260.0), (520.0, 262.0))  # a roof under the point, to the right
    obstacle = (300.0, 190.0, 96.0, 58.0)  # something drawn above left
    (box,) = place_labels([point], [(80.0, 14.0)], AREA, obstacles=[obstacle], segments=[blocked_below_right])
    assert box is not None
    assert not segment_hits_box(blocked_below_right, box) and not boxes_overlap(box, obstacle)
    assert box == candidate_boxes(point, (80.0, 14.0), 6.0)[2]  # the first free one: above right


def test_two_points_side_by_side_do_not_share_a_place():
    boxes = place_labels([(200.0, 200.0), (215.0, 200.0)], [(120.0, 28.0)] * 2, AREA)
    assert None not in boxes and not boxes_overlap(boxes[0], boxes[1])


def test_a_label_with_nowhere_to_go_is_left_out():
    assert place_labels([(10.0, 10.0)], [(900.0, 20.0)], AREA) == [None]


def test_a_far_label_gets_a_leader_line_and_a_near_one_does_not():
    point = (100.0, 100.0)
    near = candidate_boxes(point, (50.0, 10.0), 6.0)[0]
    far = candidate_boxes(point, (50.0, 10.0), 6.0)[-1]
    assert leader(point, near, 6.0) is None
    line = leader(point, far, 6.0)
    assert line is not None and line[0] == point
    x, y = line[1]
    assert far[0] <= x <= far[0] + far[2] and far[1] <= y <= far[1] + far[3]  # it ends on the box


def test_segment_box_test_sees_crossings_and_misses():
    box = (10.0, 10.0, 20.0, 10.0)
    assert segment_hits_box(((0.0, 15.0), (40.0, 15.0)), box)  # through
    assert segment_hits_box(((12.0, 12.0), (14.0, 14.0)), box)  # inside
    assert not segment_hits_box(((0.0, 0.0), (40.0, 5.0)), box)  # above
    assert not segment_hits_box(((0.0, 30.0), (5.0, 0.0)), box)  # left of it
    assert segment_hits_box(((0.0, 0.0), (40.0, 40.0)), box)  # diagonal through a corner region


def test_points_and_sizes_must_pair():
    with pytest.raises(ValueError, match="2 points but 1 label sizes"):
        place_labels([(1.0, 1.0), (2.0, 2.0)], [(5.0, 5.0)], AREA)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 800), st.floats(0, 500), st.floats(10, 200), st.floats(8, 40)),
                min_size=1, max_size=12),
       st.lists(st.tuples(st.tuples(st.floats(0, 800), st.floats(0, 500)),
                          st.tuples(st.floats(0, 800), st.floats(0, 500))), max_size=4))
def test_placed_labels_never_overlap_each_other_points_or_lines(specs, segments):
    points = [(x, y) for x, y, _w, _h in specs]
    sizes = [(w, h) for _x, _y, w, h in specs]
    boxes = place_labels(points, sizes, AREA, segments=segments, marker=4.0)
    placed = [b for b in boxes if b is not None]
    for i, a in enumerate(placed):
        assert inside(a, AREA)
        assert not any(segment_hits_box(s, a) for s in segments)
        assert not any(boxes_overlap(a, (x - 4, y - 4, 8, 8)) for x, y in points)
        for b in placed[i + 1:]:
            assert not boxes_overlap(a, b)
    for box, size in zip(boxes, sizes, strict=True):
        assert box is None or (box[2], box[3]) == size


def test_a_leader_line_does_not_cross_other_labels():
    point, size = (400.0, 100.0), (10.0, 6.0)
    candidates = candidate_boxes(point, size, 6.0)
    # a short line through the middle of each near place: the name must go further out
    ticks = [((b[0] + b[2] / 2 - 1, b[1] + b[3] / 2), (b[0] + b[2] / 2 + 1, b[1] + b[3] / 2)) for b in candidates[:8]]
    in_the_way = (408.0, 103.5, 3.0, 3.0)  # a small label on the way to the first far place
    (box,) = place_labels([point], [size], AREA, obstacles=[in_the_way], segments=ticks, marker=1.0)
    assert segment_hits_box(leader(point, candidates[8], 6.0), in_the_way)
    assert box == candidates[9]  # the first far place's leader would cross the label: the next one
    line = leader(point, box, 6.0)
    assert line is not None and not segment_hits_box(line, in_the_way)


# coordinates on a coarse grid: segments along a box's edge, through its corner, parallel to
# an edge or of zero length come up often
_coord = st.integers(0, 40).map(float)
_segment = st.tuples(st.tuples(_coord, _coord), st.tuples(_coord, _coord))
_box = st.tuples(_coord, _coord, st.integers(0, 20).map(float), st.integers(0, 20).map(float))


@settings(max_examples=200, deadline=None)
@given(st.lists(_segment, max_size=8), st.lists(_box, min_size=1, max_size=6))
def test_the_segments_are_tested_against_all_places_at_once_as_one_by_one(segments, boxes):
    hits = segments_hit_boxes(segments_array(segments), np.asarray(boxes, dtype=float))
    assert hits.shape == (len(boxes), len(segments))
    assert hits.tolist() == [[segment_hits_box(s, b) for s in segments] for b in boxes]


def test_segments_given_as_an_array_place_the_labels_as_a_list_does():
    points = [(400.0, 250.0), (420.0, 240.0), (100.0, 400.0)]
    sizes = [(80.0, 14.0), (60.0, 14.0), (90.0, 20.0)]
    xs = np.linspace(0.0, 800.0, 200)
    ys = 258.0 + 0.0001 * (xs - 400.0) ** 2  # a curve just under the first points
    segments = [((float(a), float(b)), (float(c), float(d))) for a, b, c, d in zip(xs[:-1], ys[:-1], xs[1:], ys[1:], strict=True)]
    as_list = place_labels(points, sizes, AREA, segments=segments)
    as_array = place_labels(points, sizes, AREA, segments=np.column_stack([xs[:-1], ys[:-1], xs[1:], ys[1:]]))
    assert as_list == as_array
    assert as_list[0] != candidate_boxes(points[0], sizes[0], 6.0)[0]  # the curve moved it: a real test


def test_places_are_tested_against_the_curves_a_few_at_a_time(monkeypatch):
    # a label whose first place is free tests only the first few places against the curve;
    # one whose near places are all crossed goes on to the next ones and lands where the
    # test of every place at once would put it
    from ui import label_placement

    asked = []
    real = label_placement.segments_hit_boxes
    monkeypatch.setattr(label_placement, "segments_hit_boxes",
                        lambda segs, boxes: (asked.append(len(boxes)), real(segs, boxes))[1])
    area = (0.0, 0.0, 400.0, 400.0)
    far_line = np.array([[0.0, 390.0, 400.0, 390.0]])
    (box,) = place_labels([(200.0, 200.0)], [(40.0, 12.0)], area, segments=far_line)
    assert box == candidate_boxes((200.0, 200.0), (40.0, 12.0), 6.0)[0]
    assert asked == [label_placement._PLACES_AT_ONCE]
    asked.clear()
    # a line through the point and both sides of it: the near places right, left, above and
    # below it are crossed
    cross = np.array([[100.0, 200.0, 300.0, 200.0], [200.0, 100.0, 200.0, 300.0],
                      [150.0, 150.0, 250.0, 250.0], [150.0, 250.0, 250.0, 150.0]])
    (box,) = place_labels([(200.0, 200.0)], [(40.0, 12.0)], area, segments=cross)
    assert len(asked) > 1
    hits = real(label_placement.segments_array(cross),
                np.asarray(candidate_boxes((200.0, 200.0), (40.0, 12.0), 6.0), dtype=float)).any(axis=1)
    expected = [b for b, hit in zip(candidate_boxes((200.0, 200.0), (40.0, 12.0), 6.0), hits, strict=True)
                if not hit and label_placement.inside(b, area)
                and not label_placement.boxes_overlap(b, (195.0, 195.0, 10.0, 10.0))]
    assert box == expected[0]


def test_a_label_with_no_clear_place_goes_near_its_point_inside_the_area_and_off_other_labels():
    """A point in the top-right corner, its label wider than the room right of a vertical
    line's label: every place around it sticks out of the plot or covers that label. The
    fallback moves the places inside and takes the first that covers no label and not the
    point's marker (a curve under it is allowed)."""
    area = (120.0, 38.0, 760.0, 585.0)
    line_label = (545.0, 53.0, 31.0, 189.0)  # a vertical reference line's words
    point, size = (850.0, 72.0), (283.0, 33.0)
    assert place_labels([point], [size], area, [line_label], gap=14.4, marker=12.8, rings=(1.0, 2.0)) == [None]
    box = place_near(point, size, area, [line_label], gap=14.4, marker=12.8, rings=(1.0, 2.0))
    assert box is not None and box[2:] == size
    assert box[0] >= area[0] and box[1] >= area[1]
    assert box[0] + box[2] <= area[0] + area[2] and box[1] + box[3] <= area[1] + area[3]
    assert not boxes_overlap(box, line_label)
    assert not boxes_overlap(box, (point[0] - 12.8, point[1] - 12.8, 25.6, 25.6))
    assert abs(box[1] - point[1]) < 4 * 14.4  # still beside its point
    # a box bigger than the area fits nowhere; one inside stays where it is
    assert shifted_inside((0.0, 0.0, 800.0, 10.0), area) is None
    assert shifted_inside((200.0, 100.0, 50.0, 20.0), area) == (200.0, 100.0, 50.0, 20.0)
    assert place_near(point, size, area, [area]) is None  # everything is taken
