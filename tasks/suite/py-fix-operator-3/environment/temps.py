def difference(high, low):
    """How much higher high is than low."""
    return low - high


def describe():
    return "temps helpers"
