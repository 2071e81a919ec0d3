from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

import tarfile


def test_archive():
    path = '/app/photos.tar.gz'
    assert Path(path).is_file(), f"{path} does not exist"
    mode = 'r:gz'
    try:
        archive = tarfile.open(path, mode)
    except (tarfile.TarError, OSError) as error:
        raise AssertionError(f"{path} is not a gzip-compressed tar archive: {error}")
    with archive:
        found = {m.name.removeprefix("./"): archive.extractfile(m).read().decode()
                 for m in archive.getmembers() if m.isfile()}
    expected = {'photos/harbor.txt': 'harbor 275\n', 'photos/delta.txt': 'delta 359\n', 'photos/beacon.txt': 'beacon 202\n', 'photos/cloud/inner.txt': 'inner\n'}
    assert sorted(found) == sorted(expected), f"the archive holds {sorted(found)}, expected {sorted(expected)}"
    assert found == expected, "a file in the archive has the wrong content"
