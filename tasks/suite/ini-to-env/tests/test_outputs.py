from pathlib import Path

TARGET = Path("/app/app.env")
EXPECTED = ['SERVER_HOST=0.0.0.0', 'SERVER_PORT=8080', 'DATABASE_URL=postgres://db.internal/app', 'DATABASE_POOL_SIZE=5', 'LOG_LEVEL=info', 'LOG_FILE=/var/log/app.log']


def test_env():
    assert TARGET.is_file(), "/app/app.env does not exist"
    lines = [line.strip() for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/app.env holds {lines}, expected {EXPECTED}"
