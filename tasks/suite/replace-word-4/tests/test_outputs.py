from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'raven harbor pixel orbit tiger v1s2\nsolar v2 meadow stone kernel umber\nmaple v2 delta quartz orbit kernel\nriver jasper cloud willow lumen\nwillow falcon harbor cobalt garnet\npixel harbor garnet meadow tiger\ncloud umber orbit v2 quartz delta\ndelta falcon orbit velvet beacon\n'
    found = read('/app/api.md')
    assert norm(found) == norm(expected), f"/app/api.md should hold {expected!r}, found {found!r}"
