from cart import add_item, merge_carts


def test_add_to_given_cart():
    cart = ["apple"]
    assert add_item("pear", cart) == ["apple", "pear"]


def test_merge():
    assert merge_carts(["a"], ["b"]) == ["a", "b"]
