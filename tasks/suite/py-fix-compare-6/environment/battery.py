def is_low(percent):
    """True at 20 percent or less."""
    return percent < 20
