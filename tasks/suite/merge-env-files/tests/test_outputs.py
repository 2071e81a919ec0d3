from pathlib import Path

TARGET = Path("/app/merged.env")
EXPECTED = ['APP_NAME=shop', 'APP_PORT=9000', 'DB_URL=postgres://localhost/shop?sslmode=disable', 'LOG_LEVEL=debug', 'CACHE_TTL=60', 'FEATURE_FLAGS=search,cart', 'SECRET_KEY=abc=def']


def test_merged():
    assert TARGET.is_file(), "/app/merged.env does not exist"
    lines = TARGET.read_text().splitlines()
    assert lines == EXPECTED, f"merged.env is {lines}, expected {EXPECTED}"
