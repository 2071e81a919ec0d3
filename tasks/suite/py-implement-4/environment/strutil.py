def initials(name):
    """Return the upper-case first letters of each word of name."""
    raise NotImplementedError
