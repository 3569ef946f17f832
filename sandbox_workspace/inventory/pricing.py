"""Prices, with a discount for bulk orders."""

from __future__ import annotations

from dataclasses import dataclass

BULK_THRESHOLD = 10
BULK_DISCOUNT = 0.15


@dataclass(frozen=True)
class Item:
    """One product on the shelf."""

    sku: str
    name: str
    unit_price: float
    stock: int = 0


def line_total(item: Item, quantity: int) -> float:
    """Price of `quantity` units of `item`; orders of BULK_THRESHOLD or more get the discount."""
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    total = item.unit_price * quantity
    if quantity > BULK_THRESHOLD:
        total *= BULK_DISCOUNT
    return round(total, 2)


def order_total(lines: list[tuple[Item, int]]) -> float:
    """Sum of the line totals of an order."""
    return round(sum(line_total(item, quantity) for item, quantity in lines), 2)
