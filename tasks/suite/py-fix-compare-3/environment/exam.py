def passed(score):
    """True for a score of 60 or more."""
    return score > 60
