"""Write the first or last log line that matches."""
from _common import Task, log_lines, tests_text_equals

CATEGORY = "log-analysis"
WHAT = "write the first or the last line of a log with a given level"


def make(i, rng):
    src = ["app.log", "deploy.log", "backup.log", "billing.log", "queue.log", "sync.log"][i]
    level = ["ERROR", "WARN", "ERROR", "ERROR", "WARN", "ERROR"][i]
    which = "last" if i % 2 == 0 else "first"
    entries = log_lines(rng, rng.randint(15, 25))
    lines = [f"{t} [{lv}] {m}" for t, lv, m in entries]
    lines.insert(rng.randrange(1, len(lines)), f"{entries[0][0]} [{level}] {level.lower()} one")
    lines.insert(rng.randrange(1, len(lines)), f"{entries[1][0]} [{level}] {level.lower()} two")
    found = [l for l in lines if f"[{level}]" in l]
    line = found[-1] if which == "last" else found[0]
    out = f"/app/{which}_{level.lower()}.txt"
    cmd = "tail -n 1" if which == "last" else "head -n 1"
    instruction = f"""Write the {which} line of `/app/{src}` whose level is `[{level}]` to `{out}`,
the whole line exactly as it appears in the log."""
    return Task(instruction, {src: "\n".join(lines) + "\n"}, tests_text_equals(out, line + "\n"),
                f"grep -F '[{level}]' /app/{src} | {cmd} > {out}", tags=["logs", "grep"])
