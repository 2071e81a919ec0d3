"""Small descriptive statistics."""


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    return sum(values) / len(values)


def median(values):
    """Median of a sequence of numbers, in any order; for an even count, the mean of the two
    middle values. Raises ValueError for an empty sequence. Does not modify `values`."""
    n = len(values)
    mid = n // 2
    if n % 2:
        return values[mid]
    return (values[mid] + values[mid + 1]) / 2
