"""Keep the CSV rows with one value in one column."""
from _common import CITIES, NAMES, Task, tests_text_equals

CATEGORY = "csv-json"
WHAT = "write the rows of a CSV file whose column has a given value, header kept"


def make(i, rng):
    src, col, pool = [("customers.csv", "city", CITIES), ("tickets.csv", "status",
                                                            ["open", "closed", "pending"]),
                      ("servers.csv", "region", ["eu", "us", "asia"]),
                      ("tasks.csv", "owner", NAMES[:6]),
                      ("orders.csv", "state", ["paid", "unpaid", "refunded"]),
                      ("books.csv", "genre", ["poetry", "crime", "history"])][i]
    want = rng.choice(pool[:3])
    header = ["id", col, "note"]
    rows = [[str(10 + n), rng.choice(pool[:3]), f"n{rng.randint(1, 99)}"] for n in range(12)]
    rows[rng.randrange(12)][1] = want
    if i % 2:  # the value inside another cell must not count
        rows[rng.randrange(12)][2] = f"was-{want}"
    text = ",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    keep = [header] + [r for r in rows if r[1] == want]
    out = f"/app/{want}.csv"
    instruction = f"""From `/app/{src}` (a CSV file with a header line), write the header line and
every row whose `{col}` column is exactly `{want}` to `{out}`, keeping the rows in their order."""
    return Task(instruction, {src: text},
                tests_text_equals(out, "".join(",".join(r) + "\n" for r in keep)),
                f"awk -F, 'NR == 1 || $2 == \"{want}\"' /app/{src} > {out}", tags=["csv", "filter"])
