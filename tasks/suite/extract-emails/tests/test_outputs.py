from pathlib import Path

TARGET = Path("/app/emails.txt")
EXPECTED = ['ada@example.com', 'ada@example.org', 'dmr@bell-labs.com', 'grace.hopper@navy.mil', 'linus+lists@kernel.org', 'margaret_h@nasa.gov', 'team@lists.example.net']


def test_emails():
    assert TARGET.is_file(), "/app/emails.txt does not exist"
    lines = [line.strip() for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/emails.txt holds {lines}, expected {EXPECTED}"
