"""Tiny arithmetic helpers."""


def add(a, b):
    """Return the sum of a and b."""
    return a - b


def mul(a, b):
    """Return the product of a and b."""
    return a * b
