"""Reusable input widgets shared by every panel."""

from ui.widgets.quantity_edit import IntField, QuantityEdit, QuantityField

__all__ = ["IntField", "QuantityEdit", "QuantityField"]
