from judge import agent_calls

MODULE = "/app/cart.py"


def test_separate_calls_do_not_share_a_cart():
    first, second = agent_calls(MODULE, [("add_item", ("apple",)), ("add_item", ("pear",))])
    assert first.get("value") == ["apple"], f"add_item('apple') returned {first}"
    assert second.get("value") == ["pear"], f"a second add_item('pear') returned {second}: it shares the first call's cart"


def test_given_cart_is_extended_in_place():
    [got] = agent_calls(MODULE, [("add_item", ("pear", ["apple"]))])
    assert got.get("value") == ["apple", "pear"], f"add_item('pear', ['apple']) returned {got}"
    assert got["args"][1] == ["apple", "pear"], "add_item must append to the cart it is given"


def test_merge_is_new_and_leaves_inputs_alone():
    [got] = agent_calls(MODULE, [("merge_carts", (["a", "b"], ["c"]))])
    assert got.get("value") == ["a", "b", "c"], f"merge_carts(['a', 'b'], ['c']) returned {got}"
    assert got["args"] == (["a", "b"], ["c"]), f"merge_carts modified its arguments: {got['args']}"
