def needs_reorder(units):
    """True when 5 units or fewer are left."""
    return units < 5
