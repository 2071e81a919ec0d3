"""Sum one column of a CSV file."""
from _common import FRUITS, NAMES, Task, tests_answer

CATEGORY = "csv-json"
WHAT = "add up one numeric column of a CSV file (whole numbers, or money with two decimals)"


def make(i, rng):
    src = ["sales.csv", "hours.csv", "expenses.csv", "downloads.csv", "donations.csv",
           "steps.csv"][i]
    col = ["amount", "hours", "cost", "count", "amount", "steps"][i]
    money = src in ("sales.csv", "expenses.csv", "donations.csv")
    rows = []
    for _ in range(rng.randint(6, 11)):
        v = f"{rng.randint(1, 300)}.{rng.randint(0, 99):02d}" if money else str(rng.randint(1, 900))
        rows.append((rng.choice(NAMES + FRUITS), v))
    first = ["who", col] if i % 2 == 0 else [col, "who"]
    lines = [",".join(first)] + [",".join(r if i % 2 == 0 else r[::-1]) for r in rows]
    k = first.index(col) + 1
    if money:
        total = f"{sum(int(v.replace('.', '')) for _, v in rows) / 100:.2f}"
        fmt, awk = "with exactly two decimals (like `12.50`)", 'printf "%.2f\\n", s'
    else:
        total = str(sum(int(v) for _, v in rows))
        fmt, awk = "as a whole number", "print s"
    instruction = f"""`/app/{src}` is a CSV file with a header line. Add up its `{col}` column and
write the total, {fmt}, to `/app/total.txt`. Write just the number."""
    return Task(instruction, {src: "\n".join(lines) + "\n"}, tests_answer("/app/total.txt", total),
                f"awk -F, 'NR > 1 {{ s += ${k} }} END {{ {awk} }}' /app/{src} > /app/total.txt",
                tags=["csv", "sum"])
