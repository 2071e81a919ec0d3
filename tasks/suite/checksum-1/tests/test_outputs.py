from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/solar-9.zip.sha256').strip()
    assert found == '8957eec4fbd6d121fa51515278a0191edb81561e254975ead42b3c1c5c8bbd31', f"/app/solar-9.zip.sha256 should hold just '8957eec4fbd6d121fa51515278a0191edb81561e254975ead42b3c1c5c8bbd31', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/solar-9.zip': 'river 4960\norbit 7164\nanchor 6214\nzephyr 5129\nraven 5376\nriver 1441\nbeacon 3396\nmaple 7922\nbeacon 3048\ntiger 939\ngarnet 9627\nmaple 3124\npixel 46\nfrost 5642\nriver 4673\ntiger 5670\nriver 1024\ndelta 4710\nmaple 672\nfalcon 2393\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
