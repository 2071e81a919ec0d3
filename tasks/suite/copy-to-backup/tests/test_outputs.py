from pathlib import Path

ETC = Path("/app/etc")
BACKUP = Path("/app/backup")
ORIGINAL = {'README.txt': 'These files configure the shop service.\n', 'app.conf': 'name = shop\nport = 8080\ndebug = false\n', 'app.conf.bak': 'name = shop\nport = 80\ndebug = true\n', 'cache.conf': 'backend = memory\nttl = 300\n', 'database.conf': 'host = db.internal\nport = 5432\nuser = shop\n', 'logging.conf': 'level = info\nfile = /var/log/shop.log\n'}
CONF = {name: text for name, text in ORIGINAL.items() if name.endswith(".conf")}


def test_backup_holds_exactly_the_conf_files():
    assert BACKUP.is_dir(), "/app/backup does not exist (or is not a folder)"
    names = sorted(p.name for p in BACKUP.iterdir())
    assert names == sorted(CONF), f"/app/backup holds {names}, expected exactly {sorted(CONF)}"


def test_backup_contents():
    for name, text in CONF.items():
        path = BACKUP / name
        assert path.is_file(), f"{path} is missing"
        found = path.read_text()
        assert found == text, f"{path} should be a copy of /app/etc/{name} ({text!r}), found {found!r}"


def test_originals_unchanged():
    for name, text in ORIGINAL.items():
        path = ETC / name
        assert path.is_file(), f"{path} must stay in /app/etc but is missing"
        found = path.read_text()
        assert found == text, f"/app/etc/{name} changed: expected {text!r}, found {found!r}"
