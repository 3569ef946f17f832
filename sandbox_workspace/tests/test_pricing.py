import pytest

from inventory.pricing import Item, line_total, order_total

BOLT = Item("B-100", "bolt", 0.50, stock=400)
NUT = Item("N-200", "nut", 0.20, stock=3)


def test_small_orders_pay_full_price():
    assert line_total(BOLT, 4) == 2.00


def test_bulk_orders_get_fifteen_percent_off():
    # 10 bolts reach the bulk threshold: 5.00 minus 15 % is 4.25
    assert line_total(BOLT, 10) == 4.25
    assert line_total(BOLT, 20) == 8.50


def test_negative_quantities_are_refused():
    with pytest.raises(ValueError):
        line_total(BOLT, -1)


def test_order_total_adds_lines():
    assert order_total([(BOLT, 2), (NUT, 5)]) == 2.00
