def is_even(n):
    """Return True when n is even, else False."""
    raise NotImplementedError
