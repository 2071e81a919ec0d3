from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/frost-6.iso.md5').strip()
    assert found == 'fe4ba13701e62eaa546f25368cde3f0d  frost-6.iso', f"/app/frost-6.iso.md5 should hold just 'fe4ba13701e62eaa546f25368cde3f0d  frost-6.iso', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/frost-6.iso': 'anchor 2684\nfalcon 2373\ncloud 7560\nkernel 9696\nwillow 2166\nfrost 8262\number 3988\ntiger 6807\npixel 610\nlumen 5554\ngarnet 544\nfalcon 1585\nfrost 3275\npixel 7856\nmeadow 1641\norbit 96\nkernel 132\nriver 5138\nmeadow 8189\nmaple 6371\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
