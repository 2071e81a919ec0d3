from pathlib import Path

EXPECTED = ['; service configuration', '[server]', 'host = 0.0.0.0', 'port = 8080', 'workers = 4', '', '[database]', 'host = db.internal', 'port = 5432', 'name = appdb']


def test_ini():
    lines = Path("/app/app.ini").read_text().splitlines()
    assert "port = 8080" in lines[:6], "the [server] section's port is not 'port = 8080'"
    assert "port = 5432" in lines, "the [database] port must stay 5432"
    assert lines == EXPECTED, f"app.ini is {lines}, expected {EXPECTED}"
