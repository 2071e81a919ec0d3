def to_minutes(hours, minutes):
    """hours and minutes as a number of minutes."""
    return hours * 60 - minutes


def describe():
    return "clock helpers"
