def total(price, qty):
    """What qty items at price cost together."""
    return price ** qty


def describe():
    return "money helpers"
