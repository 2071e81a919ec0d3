def shout(text):
    """Return text in upper case with '!' added."""
    raise NotImplementedError
