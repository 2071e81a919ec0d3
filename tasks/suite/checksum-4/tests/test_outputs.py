from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/frost-8.bin.sha256').strip()
    assert found == '86778233903bc151169e96de9af0cddb4d00ed16e6b03b79186267b8453d5160  frost-8.bin', f"/app/frost-8.bin.sha256 should hold just '86778233903bc151169e96de9af0cddb4d00ed16e6b03b79186267b8453d5160  frost-8.bin', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/frost-8.bin': 'cloud 6700\norbit 587\nwillow 3185\nvelvet 9850\nlumen 8168\njasper 7135\nbeacon 3918\nraven 5227\nwillow 8945\ndelta 4632\nzephyr 7046\nsolar 2888\ndelta 7437\ngarnet 9993\norbit 85\norbit 5049\nriver 1988\nmeadow 9497\nlumen 598\nquartz 5301\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
