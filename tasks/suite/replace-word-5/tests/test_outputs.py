from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'zephyr cloud umber anchor lumen Friday Friday\njasper beacon raven frost cobalt\npixel indigo zephyr lumen willow\nraven Friday cloud river orbit harbor\nwillow harbor Friday delta tiger velvet\nfalcon kernel garnet cobalt indigo\ndelta falcon cobalt willow umber\nharbor Friday raven zephyr river velvet\n'
    found = read('/app/schedule.txt')
    assert norm(found) == norm(expected), f"/app/schedule.txt should hold {expected!r}, found {found!r}"
