"""The projector: every roof, series, label and control readable in both themes, and a
presentation mode that enlarges the inputs and the toolbar with the chart."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from ui import theme as th
from ui.catalog import HardwareCatalog
from ui.panels.roofline import RooflinePanel
from workbench.kernels import seed_examples
from workbench.scenarios import RooflineScenario


def _luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.fixture
def themed(qapp):
    yield lambda mode: th.apply_theme(qapp, mode)
    th.apply_theme(qapp, "light")
    th.set_presentation(False)


@pytest.fixture
def roofline(qtbot):
    panel = RooflinePanel(HardwareCatalog(), RooflineScenario(hardware=("h100-sxm", "b200"),
                                                              kernels=tuple(seed_examples())))
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_every_roof_and_its_legend_swatch_stand_out_from_the_background(roofline, themed, mode):
    theme = themed(mode)
    background = QColor(theme.background)
    drawn = [s for s in roofline.chart.series() if s.item.isVisible()]
    assert drawn
    for series in drawn:
        pen = series.item.opts["pen"]
        color = pen.color() if hasattr(pen, "color") else QColor(pen)
        assert contrast(color, background) >= 3.0, (mode, series.name, color.name())
    legend = roofline.chart.getPlotItem().legend
    for sample, _label in legend.items:  # the swatch is drawn with its series' pen
        assert contrast(sample.item.opts["pen"].color(), background) >= 3.0


def test_switching_to_dark_redraws_the_primary_roof_in_the_dark_ink(roofline, themed):
    themed("dark")
    primary = next(s for s in roofline.chart.series() if s.name.startswith("H100 SXM: ridge"))
    assert primary.item.opts["pen"].color().name() == QColor(th.DARK.ink).name()
    themed("light")
    primary = next(s for s in roofline.chart.series() if s.name.startswith("H100 SXM: ridge"))
    assert primary.item.opts["pen"].color().name() == QColor(th.LIGHT.ink).name()


def test_fields_and_check_boxes_have_a_visible_frame_in_the_dark_palette(themed):
    themed("dark")
    palette = QApplication.instance().palette()
    window = palette.color(QPalette.ColorRole.Window)
    base = palette.color(QPalette.ColorRole.Base)
    # Fusion outlines a field in the window colour darkened by 40%: the field must differ
    # from that outline, and from the window around it
    outline = window.darker(140)
    assert contrast(base, outline) >= 1.4
    assert contrast(base, window) >= 1.2


def test_a_compared_device_gets_its_own_peak_and_bandwidth_labels(roofline):
    texts = roofline.roof_label_texts()
    assert any(t.startswith("B200") and "PFLOP/s" in t for t in texts), texts
    assert any(t.startswith("B200") and "TB/s" in t for t in texts), texts
    # H200 shares H100's peak: its peak is not labelled twice on top of the same line
    assert roofline.edit(hardware=("h100-sxm", "h200-sxm"))
    texts = roofline.roof_label_texts()
    assert not any(t.startswith("H200") and "FLOP/s" in t for t in texts), texts
    assert any(t.startswith("H200") and "TB/s" in t for t in texts), texts


def test_presentation_enlarges_the_inputs_and_toolbar_too(roofline, themed):
    before_form = roofline.form_widget.font().pointSizeF()
    before_bar = roofline.toolbar.font().pointSizeF()
    before_table = roofline.kernel_table.font().pointSizeF()
    th.set_presentation(True)
    assert roofline.form_widget.font().pointSizeF() == pytest.approx(before_form * th.PRESENTATION_SCALE)
    assert roofline.toolbar.font().pointSizeF() == pytest.approx(before_bar * th.PRESENTATION_SCALE)
    assert roofline.kernel_table.font().pointSizeF() > before_table
    th.set_presentation(False)
    assert roofline.form_widget.font().pointSizeF() == pytest.approx(before_form)


def test_presenting_gives_the_chart_the_height_and_keeps_the_run_plan_inputs_whole(qtbot, new_window, themed):
    from presets import sample_scenarios

    window = new_window()
    example = next(s for _n, s in sample_scenarios() if s.kind == "run_plan" and s.n_gpus == 1024)
    window.document.replace_plan(example, "70B")
    presenting = window.enter_presentation("run_plan")
    presenting.showNormal()
    presenting.resize(1920, 1080)
    panel = window.panel("run_plan")
    qtbot.waitUntil(lambda: panel.width() > 1800)
    centre = panel.center
    assert centre.sizes()[1] <= 0.3 * sum(centre.sizes())  # the table scrolls; the chart is read
    # the inputs column widened with its fonts: a field shows its whole value
    field = panel.field("n_gpus").edit
    assert field.fontMetrics().horizontalAdvance(field.text()) < field.width()
    window.exit_presentation()


def test_the_differs_from_the_plan_line_takes_the_dark_notice_colour(qtbot, new_window, themed):
    window = new_window()
    power = window.panel("power")
    power.action_override.setChecked(True)
    assert th.LIGHT.notice_bg in power.plan_banner.styleSheet()
    themed("dark")
    assert th.DARK.notice_bg in power.plan_banner.styleSheet()


def test_the_hover_readout_leaves_with_the_mouse_and_follows_a_precision_change(qtbot, roofline):
    from PySide6.QtCore import QEvent, QPointF

    chart = roofline.chart
    view = chart.getPlotItem().getViewBox()
    box = view.sceneBoundingRect()
    chart.hover_at_scene(QPointF(box.right() - 20, box.center().y()))  # far right: compute-bound
    assert chart.hover_shown()
    before = chart.hover_readout_text()
    assert "989 TFLOP/s" in before  # H100 SXM's dense BF16 peak under the cursor
    roofline.edit(sparse=True)  # 2:4 sparsity doubles the compute roof
    after = chart.hover_readout_text()
    assert after != before and "1.98 PFLOP/s" in after
    QApplication.sendEvent(chart, QEvent(QEvent.Type.Leave))
    assert not chart.hover_shown()


def test_the_preset_padlocks_follow_a_theme_change(qtbot, new_window, themed):
    window = new_window()
    dialog = window.show_preset_manager()
    qtbot.waitExposed(dialog)

    def lock_colour():
        item = next(dialog.preset_list.item(i) for i in range(dialog.preset_list.count()))
        image = item.icon().pixmap(16, 16).toImage()
        inked = [image.pixelColor(x, y) for x in range(16) for y in range(16) if image.pixelColor(x, y).alpha() > 200]
        return inked[len(inked) // 2]

    themed("dark")
    qtbot.waitUntil(lambda: lock_colour().lightnessF() > 0.5)
    themed("light")
    qtbot.waitUntil(lambda: lock_colour().lightnessF() < 0.5)
    dialog.close()
