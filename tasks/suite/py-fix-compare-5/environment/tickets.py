def child_price(age):
    """True for children under 12 (12-year-olds pay full price)."""
    return age <= 12
