def free_shipping(total):
    """True when the order total is 50 or more."""
    return total > 50
