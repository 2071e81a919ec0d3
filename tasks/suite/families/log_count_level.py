"""Count the log lines of one level."""
from _common import Task, log_lines, redirect_hint, tests_answer

CATEGORY = "log-analysis"
WHAT = "count the lines of a log with one level (the level field, not a word in the message)"


def make(i, rng):
    src = ["app.log", "server.log", "worker.log", "api.log", "cron.log", "gateway.log"][i]
    level = ["ERROR", "WARN", "ERROR", "WARN", "ERROR", "INFO"][i]
    entries = log_lines(rng, rng.randint(18, 30))
    lines = [f"{t} {lv} {m}" for t, lv, m in entries]
    # a line whose message mentions the level word but whose level is another
    other = "INFO" if level != "INFO" else "WARN"
    k = rng.randrange(len(lines))
    lines[k] = f"{entries[k][0]} {other} retried after an {level.lower() if i % 2 else level} earlier"
    count = sum(line.split()[2] == level for line in lines)
    out = f"/app/{level.lower()}_count.txt"
    instruction = f"""Each line of `/app/{src}` is `DATE TIME LEVEL MESSAGE`. How many lines have
the level `{level}`? Count by the level field (the third field), not by a word in the message.
Write just the number to `{out}`.{redirect_hint(out, i)}"""
    if i % 2 == 0:  # the file first: the model tends to answer a question and write nothing
        instruction = f"""Create the file `{out}` holding just the number of lines of `/app/{src}`
whose level is `{level}`. Each line is `DATE TIME LEVEL MESSAGE`: count by the level field (the
third field), not by a word in the message.{redirect_hint(out, i)}"""
    return Task(instruction, {src: "\n".join(lines) + "\n"}, tests_answer(out, str(count)),
                f"awk '$3 == \"{level}\"' /app/{src} | wc -l > {out}", tags=["logs", "count"])
