"""Change one value in a JSON config file."""
import json

from _common import SERVICES, Task, tests_json_equals

CATEGORY = "csv-json"
WHAT = "change one value in a JSON settings file, which must stay valid JSON"


def make(i, rng):
    src = ["settings.json", "app.json", "server.json", "feature_flags.json", "limits.json",
           "client.json"][i]
    data = {"name": rng.choice(SERVICES), "port": rng.randint(3000, 9000), "debug": True,
            "retries": rng.randint(1, 5), "log_level": "info",
            "cache": {"enabled": False, "ttl": rng.randint(30, 600)}}
    path, new = [(["port"], rng.randint(9001, 9999)), (["debug"], False), (["log_level"], "warning"),
                 (["cache", "enabled"], True), (["retries"], 0), (["cache", "ttl"], 3600)][i]
    after = json.loads(json.dumps(data))
    target = after
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    what = f"`{path[-1]}` inside `{path[0]}`" if len(path) > 1 else f"`{path[0]}`"
    kind = "boolean" if isinstance(new, bool) else "number" if isinstance(new, int) else "string"
    instruction = f"""In `/app/{src}`, set {what} to `{json.dumps(new)}` (a JSON {kind}). Every other
setting stays as it is, and the file must still be valid JSON."""
    index = "".join(f"[{k!r}]" for k in path)
    py = (f"import json; p = '/app/{src}'; d = json.load(open(p)); d{index} = {new!r}; "
          f"json.dump(d, open(p, 'w'), indent=2)")
    return Task(instruction, {src: json.dumps(data, indent=2) + "\n"},
                tests_json_equals(f"/app/{src}", after), f'python3 -c "{py}"', tags=["json", "edit"])
