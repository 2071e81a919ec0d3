"""Change one setting in a config file, in place."""
from _common import SERVICES, Task, solve_replace, tests_text_equals

CATEGORY = "config-build"
WHAT = "change one setting in an INI, env or conf file in place (another key or section looks alike)"


def make(i, rng):
    name = rng.choice(SERVICES)
    kind = ["ini", "env", "conf", "ini", "env", "conf"][i]
    src = {"ini": ["settings.ini", "app.ini"], "env": [".env", "prod.env"],
           "conf": ["server.conf", "service.conf"]}[kind][i // 3]
    port, workers = rng.randint(3000, 8999), rng.randint(2, 8)
    if kind == "ini":
        text = (f"[server]\nhost = 0.0.0.0\nport = {port}\nworkers = {workers}\n\n"
                f"[metrics]\nport = {port + 1}\n")
        key, section, old = ("port", "server", f"port = {port}") if i == 0 else \
            ("workers", "server", f"workers = {workers}")
        new_value = str(port + 10) if key == "port" else str(workers * 2)
        new = f"{key} = {new_value}"
        where = f"in the `[{section}]` section (the `[metrics]` section's `port` stays)" \
            if key == "port" else f"in the `[{section}]` section"
    elif kind == "env":
        text = (f"APP_NAME={name}\nDEBUG=true\nLOG_LEVEL=debug\nDB_PORT={port}\n"
                f"# DEBUG=false is the production value\n")
        key, old, new_value = ("DEBUG", "DEBUG=true", "false") if i == 1 else \
            ("LOG_LEVEL", "LOG_LEVEL=debug", "warn")
        new = f"{key}={new_value}"
        where = "(the comment line stays as it is)"
    else:
        text = (f"# {name} service\nlisten {port}\nmax_clients {workers * 50}\n"
                f"timeout 30\n#timeout 90\n")
        key, old, new_value = ("timeout", "timeout 30", "120") if i == 2 else \
            ("max_clients", f"max_clients {workers * 50}", str(workers * 100))
        new = f"{key} {new_value}"
        where = "(commented-out lines stay as they are)"
    expected = text.replace(old + "\n", new + "\n", 1)
    instruction = f"""In `/app/{src}`, set `{key}` to `{new_value}` {where}. Edit the file in
place; every other line stays exactly as it is."""
    return Task(instruction, {src: text}, tests_text_equals(f"/app/{src}", expected),
                solve_replace(f"/app/{src}", old + "\n", new + "\n"), tags=["config", "edit"])
