from pathlib import Path

TARGET = Path("/app/bad_commit.txt")


def test_bad_commit():
    assert TARGET.is_file(), "/app/bad_commit.txt does not exist"
    got = TARGET.read_text().strip()
    assert len(got) == 40, f"/app/bad_commit.txt must hold a full 40-character hash, found {got!r}"
    assert got == 'e41ebf4ee1f2cb5def2fb82b42f27b3569d851ee', f"{got} is not the first commit where check.py fails"
