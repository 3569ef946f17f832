from __future__ import annotations

from inventory.pricing import Item


def low_stock(items: list[Item], minimum: int = 5) -> list[Item]:
    return sorted((item for item in items if item.stock < minimum), key=lambda item: item.stock)


def format_report(items: list[Item], minimum: int = 5) -> str:
    lines = [f"{'SKU':<8} {'NAME':<20} {'STOCK':>5}"]
    for item in items:
        flag = "  LOW" if item.stock < minimum else ""
        lines.append(f"{item.sku:<8} {item.name:<20} {item.stock:>5}{flag}")
    return "\n".join(lines)


class StockLedger:
    def __init__(self) -> None:
        self.moves: list[tuple[str, int]] = []

    def receive(self, sku: str, quantity: int) -> None:
        self.moves.append((sku, quantity))

    def ship(self, sku: str, quantity: int) -> None:
        self.moves.append((sku, -quantity))

    def balance(self, sku: str) -> int:
        return sum(quantity for moved, quantity in self.moves if moved == sku)
