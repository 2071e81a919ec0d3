from pathlib import Path

TARGET = Path("/app/commit.txt")


def test_commit():
    assert TARGET.is_file(), "/app/commit.txt does not exist"
    got = TARGET.read_text().strip()
    assert len(got) == 40, f"/app/commit.txt must hold a full 40-character hash, found {got!r}"
    assert got == "25dd18240e034325c9d84141f883b6be4f95d68f", f"{got} is not the commit that fixed the memory leak"
