import re


def parse_duration(text):
    """Seconds in a duration such as "1h30m", "45s" or "2h5s": an integer followed by a unit, for
    one or more of the units h (hours), m (minutes) and s (seconds), each at most once and in
    that order, with nothing else (no spaces). Raises ValueError for anything else, e.g. "",
    "5", "5x", "1m1h", "1h1h" or "1h 30m"."""
    total = 0
    for number, unit in re.findall(r"(\d+)([hms])", text):
        total += int(number) * {"h": 60, "m": 60, "s": 1}[unit]
    return total
