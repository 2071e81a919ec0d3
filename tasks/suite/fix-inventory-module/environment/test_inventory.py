import pytest

from inventory import Inventory


def test_add_and_quantity():
    inv = Inventory()
    inv.add("apple", 5, 0.5)
    assert inv.quantity("apple") == 5


def test_remove_too_many():
    inv = Inventory()
    inv.add("apple", 2, 0.5)
    with pytest.raises(ValueError):
        inv.remove("apple", 3)
