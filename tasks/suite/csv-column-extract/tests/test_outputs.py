from pathlib import Path

TARGET = Path("/app/emails.txt")
EXPECTED = ["ada@example.com", "grace@navy.example.mil", "linus@kernel.example.org",
            "margaret@nasa.example.gov", "ken@bell.example.com", "barbara@mit.example.edu",
            "dmr@bell.example.com", "fran@ibm.example.com"]


def test_file_exists():
    assert TARGET.is_file(), "/app/emails.txt does not exist"


def test_no_header():
    lines = TARGET.read_text().rstrip("\n").split("\n")
    assert "email" not in lines, f"/app/emails.txt must not contain the header 'email'; found lines {lines}"


def test_emails_in_order():
    lines = TARGET.read_text().rstrip("\n").split("\n")
    assert lines == EXPECTED, f"/app/emails.txt holds {lines}, expected exactly {EXPECTED}"
