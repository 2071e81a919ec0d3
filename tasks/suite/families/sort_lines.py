"""Sort a file's lines into a new file."""
from _common import CITIES, FRUITS, NAMES, Task, tests_text_equals, tests_unchanged

CATEGORY = "text-processing"
WHAT = "sort a file's lines (alphabetically, numerically, reversed or without duplicates)"


def make(i, rng):
    kind = ["alpha", "unique", "numeric", "reverse", "unique", "numeric"][i]
    src = ["names.txt", "fruits.txt", "sizes.txt", "cities.txt", "guests.txt", "scores.txt"][i]
    out = src.replace(".txt", "_sorted.txt")
    if kind == "numeric":
        items = [str(rng.randint(1, 5000)) for _ in range(12)]
        items[0], items[1] = "9", "100"  # text order would put 100 before 9
        result = sorted(items, key=int)
        how = "in increasing numeric order (so 9 comes before 100)"
        cmd = "sort -n"
    else:
        pool = {"names.txt": NAMES, "fruits.txt": FRUITS, "cities.txt": CITIES,
                "guests.txt": NAMES}[src]
        items = rng.sample(pool, 10)
        if kind == "unique":
            items += rng.sample(items, 3)
            rng.shuffle(items)
            result = sorted(set(items))
            how = "alphabetically, with each line only once (drop the duplicates)"
            cmd = "sort -u"
        elif kind == "reverse":
            result = sorted(items, reverse=True)
            how = "in reverse alphabetical order (Z to A)"
            cmd = "sort -r"
        else:
            result = sorted(items)
            how = "alphabetically (A to Z)"
            cmd = "sort"
    text = "\n".join(items) + "\n"
    instruction = f"""Sort the lines of `/app/{src}` {how}, one per line, and write them to
`/app/{out}`. Leave `/app/{src}` unchanged."""
    return Task(instruction, {src: text},
                tests_text_equals(f"/app/{out}", "\n".join(result) + "\n")
                + tests_unchanged({f"/app/{src}": text}),
                f"LC_ALL=C {cmd} /app/{src} > /app/{out}", tags=["text", "sort"])
