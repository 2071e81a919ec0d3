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
    path = '/app/backup.tar'
    assert Path(path).is_file(), f"{path} does not exist"
    mode = 'r:'
    try:
        archive = tarfile.open(path, mode)
    except (tarfile.TarError, OSError) as error:
        raise AssertionError(f"{path} is not a plain (uncompressed) tar archive: {error}")
    with archive:
        found = {m.name.removeprefix("./"): archive.extractfile(m).read().decode()
                 for m in archive.getmembers() if m.isfile()}
    expected = {'backup/zephyr.txt': 'zephyr 269\n', 'backup/cloud.txt': 'cloud 871\n', 'backup/tiger.txt': 'tiger 657\n', 'backup/orbit/inner.txt': 'inner\n'}
    assert sorted(found) == sorted(expected), f"the archive holds {sorted(found)}, expected {sorted(expected)}"
    assert found == expected, "a file in the archive has the wrong content"
