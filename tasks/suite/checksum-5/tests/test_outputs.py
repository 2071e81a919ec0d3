from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/meadow-1.bin.sha256').strip()
    assert found == '203129e26573942b4672feec78dcc54ecd1432f57c5ce1612bebff07e6c253ee', f"/app/meadow-1.bin.sha256 should hold just '203129e26573942b4672feec78dcc54ecd1432f57c5ce1612bebff07e6c253ee', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/meadow-1.bin': 'garnet 7688\nmeadow 3675\nquartz 3499\nzephyr 4565\nharbor 5535\nstone 6302\nmeadow 5184\nzephyr 835\norbit 3301\ngarnet 2878\nwillow 6198\nquartz 1642\nbeacon 7772\ndelta 7065\nsolar 2625\nquartz 253\number 3392\number 8029\nsolar 256\nbeacon 3088\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
