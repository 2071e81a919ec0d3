import importlib.util

import pytest


def new():
    spec = importlib.util.spec_from_file_location("inventory", "/app/inventory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Inventory()


def test_add_accumulates_and_updates_price():
    inv = new()
    inv.add("apple", 5, 0.5)
    inv.add("apple", 3, 0.75)
    assert inv.quantity("apple") == 8, f"adding 5 then 3 apples gives quantity {inv.quantity('apple')}, expected 8"
    assert inv.total_value() == 6.0, f"8 apples at 0.75 should be worth 6.0, total_value() says {inv.total_value()}"


def test_quantity_unknown_is_zero():
    assert new().quantity("pear") == 0


def test_remove_reduces():
    inv = new()
    inv.add("apple", 5, 0.5)
    inv.remove("apple", 2)
    assert inv.quantity("apple") == 3


def test_remove_too_many_raises_and_changes_nothing():
    inv = new()
    inv.add("apple", 2, 0.5)
    with pytest.raises(ValueError):
        inv.remove("apple", 3)
    assert inv.quantity("apple") == 2, f"a refused remove changed the stock to {inv.quantity('apple')}"


def test_remove_exact_stock_allowed():
    inv = new()
    inv.add("apple", 2, 0.5)
    inv.remove("apple", 2)
    assert inv.quantity("apple") == 0


def test_remove_unknown_raises_key_error():
    with pytest.raises(KeyError):
        new().remove("pear", 1)


def test_total_value_uses_fractional_prices():
    inv = new()
    inv.add("apple", 3, 0.4)
    inv.add("melon", 2, 2.55)
    assert inv.total_value() == 6.3, f"3 x 0.4 + 2 x 2.55 = 6.3, total_value() says {inv.total_value()}"


def test_low_stock_inclusive_and_sorted():
    inv = new()
    for sku, q in [("pear", 1), ("apple", 3), ("kiwi", 10), ("fig", 2)]:
        inv.add(sku, q, 1.0)
    got = inv.low_stock(3)
    assert got == ["apple", "fig", "pear"], f"low_stock(3) returned {got}, expected ['apple', 'fig', 'pear']"
