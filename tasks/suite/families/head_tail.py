"""Write the first or last lines of a file."""
from _common import NAMES, WORDS, Task, tests_text_equals

CATEGORY = "text-processing"
WHAT = "write the first or the last N lines of a file, or the lines after its header"


def make(i, rng):
    src = ["journal.txt", "history.txt", "queue.txt", "events.csv", "ranking.txt",
           "readings.csv"][i]
    n = rng.randint(3, 7)
    kind = ["head", "tail", "head", "skip", "tail", "skip"][i]
    if src.endswith(".csv"):
        lines = ["name,value"] + [f"{rng.choice(NAMES)},{rng.randint(1, 500)}" for _ in range(15)]
    else:
        lines = [f"{k + 1}. {' '.join(rng.sample(WORDS, 3))}" for k in range(15)]
    out = f"/app/{kind}_{src.split('.')[0]}.txt"
    if kind == "head":
        keep, what, cmd = lines[:n], f"the first {n} lines", f"head -n {n}"
    elif kind == "tail":
        keep, what, cmd = lines[-n:], f"the last {n} lines", f"tail -n {n}"
    else:
        keep, what, cmd = lines[1:], "every line except the first (the header line)", "tail -n +2"
    instruction = f"""Write {what} of `/app/{src}` to `{out}`, in the same order."""
    return Task(instruction, {src: "\n".join(lines) + "\n"},
                tests_text_equals(out, "\n".join(keep) + "\n"), f"{cmd} /app/{src} > {out}",
                tags=["text", kind])
