"""Read one value out of a JSON file."""
import json

from _common import NAMES, SERVICES, Task, redirect_hint, tests_answer

CATEGORY = "csv-json"
WHAT = "write one (nested) value of a JSON file"


def make(i, rng):
    src = ["package.json", "config.json", "user.json", "release.json", "service.json",
           "deploy.json"][i]
    data = {"name": rng.choice(SERVICES), "version": f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "owner": {"name": rng.choice(NAMES), "team": rng.choice(["core", "web", "data"])},
            "database": {"host": f"db{rng.randint(1, 9)}.internal", "port": rng.randint(3000, 9000)},
            "tags": [rng.choice(SERVICES) for _ in range(3)]}
    path = [["version"], ["database", "port"], ["owner", "name"], ["database", "host"],
            ["owner", "team"], ["name"]][i]
    if i % 2:  # a decoy with the same key name elsewhere
        data["cache"] = {path[-1]: "not this one"}
    value = data
    for key in path:
        value = value[key]
    dotted = ".".join(path)
    out = "/app/value.txt"
    py = "import json; d = json.load(open('/app/%s')); print(d%s)" % (
        src, "".join(f"[{k!r}]" for k in path))
    instruction = f"""In `/app/{src}`, what is the value of `{dotted}` (the key `{path[-1]}`
{"inside `" + path[0] + "`" if len(path) > 1 else "at the top level"})? Write just that value,
without quotes, to `{out}`.{redirect_hint(out, i)}"""
    return Task(instruction, {src: json.dumps(data, indent=2) + "\n"}, tests_answer(out, str(value)),
                f'python3 -c "{py}" > {out}', tags=["json"])
