from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'harbor umber jasper velvet dog tiger\number cobalt cloud falcon willow\ndog pixel river indigo ember falcon\ndog pixel zephyr willow stone ember\nquartz falcon jasper frost velvet\nsolar anchor pixel quartz ember\nember zephyr orbit pixel delta\norbit velvet cloud raven zephyr catalog\n'
    found = read('/app/pets.md')
    assert norm(found) == norm(expected), f"/app/pets.md should hold {expected!r}, found {found!r}"
