from pathlib import Path

TARGET = Path("/app/.env")
EXPECTED = ["APP_NAME=shop", "PORT=8000", "DEBUG=false", "SQL_DEBUG=true", "CACHE_ENABLED=true",
            "SECRET_KEY=change-me"]


def test_env_file():
    assert TARGET.is_file(), "/app/.env does not exist"
    lines = TARGET.read_text().splitlines()
    assert "DEBUG=false" in lines, f"/app/.env has no line 'DEBUG=false'; its lines are {lines}"
    assert "DEBUG=true" not in lines, "/app/.env still has the line 'DEBUG=true'"
    assert "SQL_DEBUG=true" in lines, f"SQL_DEBUG must stay 'SQL_DEBUG=true'; the lines are {lines}"
    assert lines == EXPECTED, f"/app/.env has lines {lines}, expected {EXPECTED}"
