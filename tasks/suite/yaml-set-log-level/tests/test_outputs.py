from pathlib import Path

TARGET = Path("/app/config.yaml")
EXPECTED = ["server:", "  host: 0.0.0.0", "  port: 8080", "  workers: 4",
            "logging:", "  level: info", "  file: /var/log/app.log", "  format: json",
            "database:", "  host: db.internal", "  port: 5432", "  level: debug"]


def test_config_yaml():
    assert TARGET.is_file(), "/app/config.yaml does not exist"
    lines = TARGET.read_text().splitlines()
    assert lines[4:6] == ["logging:", "  level: info"], (
        f"the logging section must start with '  level: info', found {lines[4:6]}")
    assert lines[-1:] == ["  level: debug"], (
        f"the database section's last line must stay '  level: debug', found {lines[-1:]}")
    assert lines == EXPECTED, f"/app/config.yaml has lines {lines}, expected {EXPECTED}"
