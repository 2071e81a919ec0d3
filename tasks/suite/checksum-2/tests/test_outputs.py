from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/willow-5.iso.sha256').strip()
    assert found == '0c9d867a3ca1f1c6f2d7e25b36888cbdc876d1a66401d9f55d40ed00440455e2  willow-5.iso', f"/app/willow-5.iso.sha256 should hold just '0c9d867a3ca1f1c6f2d7e25b36888cbdc876d1a66401d9f55d40ed00440455e2  willow-5.iso', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/willow-5.iso': 'lumen 6261\nwillow 3154\nfrost 4411\nkernel 6549\norbit 2681\nlumen 6681\norbit 9959\nanchor 1246\nwillow 4525\ngarnet 7492\ncloud 5789\number 7175\npixel 9098\nfalcon 3146\ncobalt 370\nmaple 3318\nsolar 3284\nember 6031\npixel 2992\nmaple 7024\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
