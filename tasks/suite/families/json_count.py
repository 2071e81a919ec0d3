"""Count the items of a JSON list that match."""
import json

from _common import NAMES, Task, redirect_hint, tests_answer

CATEGORY = "csv-json"
WHAT = "count the items of a JSON list whose field has a given value"


def make(i, rng):
    src, key, values = [("users.json", "active", [True, False]), ("orders.json", "status",
                                                                    ["shipped", "pending"]),
                        ("jobs.json", "state", ["failed", "ok"]), ("pets.json", "kind", ["cat", "dog"]),
                        ("books.json", "read", [True, False]), ("hosts.json", "env", ["prod", "dev"])][i]
    items = [{"id": n + 1, "name": rng.choice(NAMES), key: rng.choice(values)}
             for n in range(rng.randint(8, 14))]
    want = values[0]
    count = sum(item[key] == want for item in items)
    shown = json.dumps(want)
    top = i % 2 == 0
    data = items if top else {"count_hint": "ignore me", "items": items}
    where = "the JSON list in" if top else "the list under the key `items` in"
    instruction = f"""How many objects in {where} `/app/{src}` have `"{key}": {shown}`? Write just
the number to `/app/count.txt`.{redirect_hint("/app/count.txt", i)}"""
    if i % 2 == 0:  # the file first: the model tends to answer a question and write nothing
        instruction = f"""Create the file `/app/count.txt` holding just the number of objects in
{where} `/app/{src}` that have `"{key}": {shown}`.{redirect_hint("/app/count.txt", i)}"""
    access = "d" if top else "d['items']"
    py = (f"import json; d = json.load(open('/app/{src}')); "
          f"print(sum(1 for x in {access} if x['{key}'] == {want!r}))")
    return Task(instruction, {src: json.dumps(data, indent=2) + "\n"},
                tests_answer("/app/count.txt", str(count)), f'python3 -c "{py}" > /app/count.txt',
                tags=["json", "count"])
