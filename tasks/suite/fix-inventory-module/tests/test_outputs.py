from judge import agent_calls

MODULE = "/app/inventory.py"  # run only in a child process (judge.agent_calls), never imported here


def inventory(*calls):
    """The outcome of each (method, args) call on one fresh Inventory()."""
    return agent_calls(MODULE, list(calls), construct="Inventory")


def test_add_accumulates_and_updates_price():
    *_, quantity, value = inventory(("add", ("apple", 5, 0.5)), ("add", ("apple", 3, 0.75)),
                                    ("quantity", ("apple",)), ("total_value", ()))
    assert quantity.get("value") == 8, f"adding 5 then 3 apples gives quantity {quantity}, expected 8"
    assert value.get("value") == 6.0, f"8 apples at 0.75 should be worth 6.0, total_value() says {value}"


def test_quantity_unknown_is_zero():
    [got] = inventory(("quantity", ("pear",)))
    assert got.get("value") == 0, f"quantity('pear') of an empty inventory is {got}, expected 0"


def test_remove_reduces():
    *_, got = inventory(("add", ("apple", 5, 0.5)), ("remove", ("apple", 2)), ("quantity", ("apple",)))
    assert got.get("value") == 3, f"5 apples less 2 leaves {got}, expected 3"


def test_remove_too_many_raises_and_changes_nothing():
    _, removed, left = inventory(("add", ("apple", 2, 0.5)), ("remove", ("apple", 3)),
                                 ("quantity", ("apple",)))
    assert removed.get("raised") == "ValueError", f"removing 3 of 2 apples must raise ValueError, got {removed}"
    assert left.get("value") == 2, f"a refused remove changed the stock to {left}"


def test_remove_exact_stock_allowed():
    _, removed, left = inventory(("add", ("apple", 2, 0.5)), ("remove", ("apple", 2)),
                                 ("quantity", ("apple",)))
    assert "raised" not in removed, f"removing all 2 apples must be allowed, got {removed}"
    assert left.get("value") == 0


def test_remove_unknown_raises_key_error():
    [got] = inventory(("remove", ("pear", 1)))
    assert got.get("raised") == "KeyError", f"removing an unknown sku must raise KeyError, got {got}"


def test_total_value_uses_fractional_prices():
    *_, got = inventory(("add", ("apple", 3, 0.4)), ("add", ("melon", 2, 2.55)), ("total_value", ()))
    assert got.get("value") == 6.3, f"3 x 0.4 + 2 x 2.55 = 6.3, total_value() says {got}"


def test_low_stock_inclusive_and_sorted():
    *_, got = inventory(*[("add", (sku, q, 1.0)) for sku, q in [("pear", 1), ("apple", 3), ("kiwi", 10), ("fig", 2)]],
                        ("low_stock", (3,)))
    assert got.get("value") == ["apple", "fig", "pear"], f"low_stock(3) returned {got}, expected ['apple', 'fig', 'pear']"
