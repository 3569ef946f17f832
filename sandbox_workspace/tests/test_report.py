from inventory.pricing import Item
from inventory.report import StockLedger, format_report, low_stock

ITEMS = [Item("B-100", "bolt", 0.5, 400), Item("N-200", "nut", 0.2, 3), Item("W-300", "washer", 0.1, 1)]


def test_low_stock_sorted_by_stock():
    assert [item.sku for item in low_stock(ITEMS)] == ["W-300", "N-200"]


def test_report_flags_low_items():
    report = format_report(ITEMS).splitlines()
    assert report[0].startswith("SKU")
    assert report[2].endswith("LOW") and not report[1].endswith("LOW")


def test_ledger_balance():
    ledger = StockLedger()
    ledger.receive("B-100", 10)
    ledger.ship("B-100", 4)
    assert ledger.balance("B-100") == 6
