"""Accessible names for controls that sit beside a label.

A screen reader announces a control by its accessible name. Qt does not take it from the
QFormLayout label next to the control, so a form full of combo boxes reads as "combo box,
combo box, ...". This names each unnamed control after its row's label."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from ui.plain import without_mnemonic


def label_text(label: QLabel) -> str:
    return without_mnemonic(label.text()).strip().rstrip(":").strip()


def name_form_fields(root: QWidget) -> int:
    """Give every unnamed field of every form layout under ``root`` its row label as accessible
    name; returns how many it named."""
    named = 0
    for form in root.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            label = label_item.widget() if label_item is not None else None
            field = field_item.widget() if field_item is not None else None
            if not isinstance(label, QLabel) or field is None or not label_text(label):
                continue
            # a composite field (a quantity edit with its unit) names its inner controls too
            targets = [field, *field.findChildren(QWidget)] if not field.accessibleName() else []
            for widget in targets:
                if not widget.accessibleName():
                    widget.setAccessibleName(label_text(label))
                    named += 1
    return named
