"""Reusable input widgets shared by every panel."""

from ui.widgets.cap_field import CapEdit, CapField
from ui.widgets.quantity_edit import IntField, QuantityEdit, QuantityField

__all__ = ["CapEdit", "CapField", "IntField", "QuantityEdit", "QuantityField"]
