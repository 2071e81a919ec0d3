"""Extract one column of a CSV file."""
from _common import CITIES, FRUITS, NAMES, Task, tests_text_equals

CATEGORY = "csv-json"
WHAT = "write one named column of a CSV file, one value per line, without the header"


def make(i, rng):
    src = ["people.csv", "orders.csv", "staff.csv", "stock.csv", "trips.csv", "members.csv"][i]
    cols = [["name", "age", "city"], ["id", "item", "qty"], ["email", "name", "team"],
            ["sku", "fruit", "price"], ["from", "to", "km"], ["id", "name", "joined"]][i]
    want = rng.choice(cols[1:]) if i % 2 else cols[0]

    def value(col, n):
        return {"name": rng.choice(NAMES), "age": str(rng.randint(18, 80)),
                "city": rng.choice(CITIES), "id": str(100 + n), "item": rng.choice(FRUITS),
                "qty": str(rng.randint(1, 9)), "email": f"{rng.choice(NAMES)}{n}@example.com",
                "team": rng.choice(["red", "blue", "green"]), "sku": f"S{rng.randint(1000, 9999)}",
                "fruit": rng.choice(FRUITS), "price": f"{rng.randint(1, 30)}.{rng.randint(0, 99):02d}",
                "from": rng.choice(CITIES), "to": rng.choice(CITIES), "km": str(rng.randint(5, 900)),
                "joined": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"}[col]
    rows = [[value(c, n) for c in cols] for n in range(rng.randint(6, 10))]
    text = ",".join(cols) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    k = cols.index(want)
    out = f"/app/{want}s.txt"
    instruction = f"""`/app/{src}` is a CSV file with a header line. Write the values of its `{want}`
column to `{out}`, one per line, in the file's order. Do not include the header."""
    return Task(instruction, {src: text}, tests_text_equals(out, "".join(r[k] + "\n" for r in rows)),
                f"tail -n +2 /app/{src} | cut -d, -f{k + 1} > {out}", tags=["csv", "cut"])
