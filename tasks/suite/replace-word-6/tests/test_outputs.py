from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'meadow orbit delta ember anchor\nlumen river delta orbit maple\nlumen willow bar raven cloud cobalt foos2\nsolar meadow ember pixel bar jasper\norbit stone ember frost bar beacon\nriver meadow anchor maple willow\nanchor ember willow cloud maple\nkernel cloud pixel delta cobalt\n'
    found = read('/app/example.txt')
    assert norm(found) == norm(expected), f"/app/example.txt should hold {expected!r}, found {found!r}"
