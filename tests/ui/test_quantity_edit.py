"""Quantity fields driven the way a person uses them: type, press Enter, press Escape."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from ui.widgets import IntField, QuantityEdit, QuantityField
from workbench import units


@pytest.fixture
def bandwidth(qtbot):
    field = QuantityField("B/s", label="Memory bandwidth", description="Peak HBM bandwidth", value=2.0e12)
    qtbot.addWidget(field)
    field.show()
    return field


def _type(qtbot, edit, text):
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_typed_value_with_prefix_is_parsed_and_signalled(qtbot, bandwidth):
    edit = bandwidth.edit
    with qtbot.waitSignal(bandwidth.valueEdited, timeout=1000) as blocker:
        _type(qtbot, edit, "3.35 TB/s")
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert blocker.args == [pytest.approx(3.35e12)]
    assert bandwidth.value() == pytest.approx(3.35e12)
    assert edit.text() == units.format_quantity(3.35e12, "B/s", digits=4)
    assert bandwidth.message_text() == ""


def test_enter_emits_once_and_only_on_change(qtbot, bandwidth):
    received = []
    bandwidth.valueEdited.connect(received.append)
    _type(qtbot, bandwidth.edit, "3.35 TB/s")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    bandwidth.edit.editingFinished.emit()  # focus leaving after Enter: no second signal
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)  # same text again: no signal
    _type(qtbot, bandwidth.edit, "3350 GB/s")  # the same value typed differently
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert received == [pytest.approx(3.35e12)]


def test_invalid_text_shows_message_keeps_value_and_emits_nothing(qtbot, bandwidth):
    with qtbot.assertNotEmitted(bandwidth.valueEdited):
        _type(qtbot, bandwidth.edit, "abc")
        qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert bandwidth.value() == pytest.approx(2.0e12)  # nothing lost
    message = bandwidth.message_text()
    assert message and "abc" in message  # says what is wrong ...
    assert "TB/s" in message  # ... and what to type instead
    assert bandwidth.edit.property("invalid") is True
    assert "border" in bandwidth.edit.styleSheet()
    assert bandwidth.edit.text() == "abc"  # the typed text stays for fixing


def test_wrong_unit_message_suggests_the_fix(qtbot, bandwidth):
    _type(qtbot, bandwidth.edit, "3.35 TB")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert "TB/s" in bandwidth.message_text()
    assert bandwidth.value() == pytest.approx(2.0e12)


def test_escape_reverts_to_last_good_value(qtbot, bandwidth):
    shown = bandwidth.edit.text()
    _type(qtbot, bandwidth.edit, "oops")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert bandwidth.message_text()
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Escape)
    assert bandwidth.edit.text() == shown
    assert bandwidth.message_text() == ""
    assert bandwidth.edit.property("invalid") is False


def test_fixing_the_text_clears_the_error(qtbot, bandwidth):
    _type(qtbot, bandwidth.edit, "3.35 TB")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert bandwidth.message_text()
    with qtbot.waitSignal(bandwidth.valueEdited, timeout=1000):
        qtbot.keyClicks(bandwidth.edit, "/s")
        qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert bandwidth.message_text() == ""


def test_placeholder_and_tooltip_teach_the_format(qtbot):
    edit = QuantityEdit("FLOP/s", label="Peak compute", description="Dense tensor-core peak")
    qtbot.addWidget(edit)
    assert units.EXAMPLES["FLOP/s"] in edit.placeholderText()
    assert "Dense tensor-core peak" in edit.toolTip()
    assert "FLOP/s" in edit.toolTip()
    assert edit.value() is None


def test_empty_text_is_rejected_with_a_message(qtbot, bandwidth):
    _type(qtbot, bandwidth.edit, " ")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    assert "empty" in bandwidth.message_text()
    assert bandwidth.value() == pytest.approx(2.0e12)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1024", 1024), ("1,024", 1024), ("1k", 1000), ("2 048", 2048), ("16384", 16384)],
)
def test_int_field_accepts_the_ways_people_write_counts(qtbot, text, expected):
    field = IntField(label="GPU count", value=8)
    qtbot.addWidget(field)
    with qtbot.waitSignal(field.valueEdited, timeout=1000) as blocker:
        _type(qtbot, field.edit, text)
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert blocker.args == [expected]
    assert field.value() == expected
    assert isinstance(field.value(), int)


@pytest.mark.parametrize("text", ["0", "-4", "2.5", "1e400"])
def test_int_field_bounds_say_what_is_allowed(qtbot, text):
    field = IntField(label="GPU count", value=8)
    qtbot.addWidget(field)
    with qtbot.assertNotEmitted(field.valueEdited):
        _type(qtbot, field.edit, text)
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert field.value() == 8
    if text != "1e400":
        assert field.message_text() == "GPU count must be a whole number >= 1"
    else:
        assert field.message_text()


def test_exclusive_and_upper_bounds(qtbot):
    field = QuantityField("", label="Serial fraction", minimum=0.0, maximum=1.0, min_inclusive=False, value=0.05)
    qtbot.addWidget(field)
    for bad in ("0", "1.5"):
        _type(qtbot, field.edit, bad)
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)
        assert field.message_text() == "Serial fraction must be > 0 and <= 1"
        assert field.value() == pytest.approx(0.05)
    with qtbot.waitSignal(field.valueEdited, timeout=1000):
        _type(qtbot, field.edit, "1")
        qtbot.keyClick(field.edit, Qt.Key.Key_Return)


def test_set_value_does_not_emit_and_clears_errors(qtbot, bandwidth):
    _type(qtbot, bandwidth.edit, "nope")
    qtbot.keyClick(bandwidth.edit, Qt.Key.Key_Return)
    with qtbot.assertNotEmitted(bandwidth.valueEdited):
        bandwidth.setValue(900e9)
    assert bandwidth.value() == pytest.approx(900e9)
    assert bandwidth.message_text() == ""
    bandwidth.setValue(None)
    assert bandwidth.value() is None and bandwidth.edit.text() == ""


def test_leaving_the_field_commits(qtbot, bandwidth):
    with qtbot.waitSignal(bandwidth.valueEdited, timeout=1000):
        _type(qtbot, bandwidth.edit, "900 GB/s")
        bandwidth.edit.editingFinished.emit()  # what Qt emits when focus moves away
    assert bandwidth.value() == pytest.approx(900e9)


def test_binary_sizes_display_with_binary_prefixes(qtbot):
    field = QuantityField("B", label="Message size", binary=True, value=256 * 2**20)
    qtbot.addWidget(field)
    assert field.edit.text() == "256 MiB"


@pytest.mark.parametrize("typed", ["12x", "12 X", "12×", "1,024x"])
def test_count_field_refuses_a_stray_times_sign(qtbot, typed):
    """"12x" in a rank count was read as 12 (workbench takes "x" as a speedup factor): a
    letter in a number must be refused, saying what to type, and the last value kept."""
    field = IntField(label="Ranks", minimum=2, value=8)
    qtbot.addWidget(field)
    field.show()
    received = []
    field.valueEdited.connect(received.append)
    _type(qtbot, field.edit, typed)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert received == []
    assert field.value() == 8
    assert field.edit.text() == typed  # nothing the user typed is lost
    assert "without 'x'" in field.message_text()
    assert "enter 12" in field.message_text() or "enter 1,024" in field.message_text()


def test_plain_number_field_refuses_a_times_sign_with_a_clear_message(qtbot):
    pue = QuantityField("", label="PUE", minimum=1, maximum=5, value=1.2)
    qtbot.addWidget(pue)
    pue.show()
    _type(qtbot, pue.edit, "1.5x")
    qtbot.keyClick(pue.edit, Qt.Key.Key_Return)
    assert pue.value() == pytest.approx(1.2)
    # not "PUE must be >= 1 and <= 5", which 1.5 is
    assert pue.message_text() == "PUE takes a plain number, without 'x': enter 1.5"


def test_count_field_message_for_letters_suggests_counts_not_percentages(qtbot):
    field = IntField(label="GPU count", minimum=1, value=8)
    qtbot.addWidget(field)
    field.show()
    _type(qtbot, field.edit, "abc")
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    message = field.message_text()
    assert "whole number" in message and "16k" in message
    assert "%" not in message and "0.4" not in message
    assert field.value() == 8
    _type(qtbot, field.edit, "8a")  # the message names the bad part
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert field.message_text().startswith("'a' is not")
    assert field.value() == 8 and field.edit.text() == "8a"


def test_tooltips_name_the_prefixes_each_unit_really_takes(qtbot):
    percent = QuantityField("%", label="Serial fraction")
    duration = QuantityField("s", label="Comm time")
    size = QuantityField("B", label="Checkpoint size")
    for field in (percent, duration, size):
        qtbot.addWidget(field)
    assert "SI prefixes" not in percent.edit.toolTip()  # "5k%" means nothing
    assert "ms" in duration.edit.toolTip() and "min" in duration.edit.toolTip()
    assert "MiB" in size.edit.toolTip()


def test_showing_the_value_it_already_shows_sets_no_text(qtbot, bandwidth, monkeypatch):
    # a panel shows its scenario again after every change: the same text set again repainted
    # every field of the form
    edit = bandwidth.edit
    edit.setValue(100e9)
    sets = []
    real = QuantityEdit.setText
    monkeypatch.setattr(QuantityEdit, "setText", lambda e, text: (sets.append(text), real(e, text))[1])
    edit.setValue(100e9)
    assert sets == []
    edit.setValue(200e9)
    assert sets == [edit.text()] and edit.value() == 200e9
    qtbot.keyClicks(edit, "x")  # typed but not committed: showing the value puts it back
    edit.setValue(200e9)
    assert edit.text() == sets[0] and len(sets) == 2
