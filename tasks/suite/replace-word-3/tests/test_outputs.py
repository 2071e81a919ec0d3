from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'orbit cobalt umber pixel garnet\nbeacon pixel raven willow production lumen\nanchor quartz delta cloud production meadow production production\nriver umber production tiger willow zephyr\nriver zephyr orbit solar cobalt\nlumen harbor raven garnet umber\nindigo kernel anchor cobalt jasper\nfalcon solar orbit lumen harbor\n'
    found = read('/app/deploy.cfg')
    assert norm(found) == norm(expected), f"/app/deploy.cfg should hold {expected!r}, found {found!r}"
