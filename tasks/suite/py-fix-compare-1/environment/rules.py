def is_adult(age):
    """True from the age of 18 on."""
    return age > 18
