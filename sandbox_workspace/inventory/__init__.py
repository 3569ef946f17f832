"""A tiny stock-keeping library."""

from inventory.pricing import Item, line_total, order_total
from inventory.report import format_report, low_stock

__all__ = ["Item", "line_total", "order_total", "format_report", "low_stock"]
