"""Count the lines that hold a word."""
from _common import NAMES, Task, WORDS, redirect_hint, tests_answer

CATEGORY = "text-processing"
WHAT = "count the lines of a file that contain a word, or its blank or non-blank lines"


def make(i, rng):
    src = ["poem.txt", "minutes.txt", "story.txt", "todo.txt", "lyrics.txt", "draft.txt"][i]
    lines = [" ".join(rng.sample(WORDS, rng.randint(3, 6))) for _ in range(rng.randint(12, 20))]
    mode = i % 3
    out = "/app/answer.txt"
    if mode == 0:
        word = rng.choice(NAMES)
        for n in rng.sample(range(len(lines)), 5):
            lines[n] += f" {word}"
        lines[0] += f" {word} {word}"  # twice on one line: still one line
        count = sum(word in l for l in lines)
        what = f"lines contain the word `{word}` (a line that holds it twice counts once)"
        cmd = f"grep -c '{word}' /app/{src}"
    elif mode == 1:
        for n in sorted(rng.sample(range(1, len(lines)), 4), reverse=True):
            lines.insert(n, "")
        count = sum(1 for l in lines if l.strip())
        what = "lines are not blank (blank lines do not count)"
        cmd = f"grep -c . /app/{src}"
    else:
        for n in sorted(rng.sample(range(1, len(lines)), 3), reverse=True):
            lines.insert(n, "")
        count = len(lines)
        what = "lines it has in all (blank lines count too)"
        cmd = f"wc -l < /app/{src}"
    instruction = f"""How many {what} in `/app/{src}`? Write just the number to `{out}`.{redirect_hint(out, i)}"""
    if i % 2 == 0:  # the file first: the model tends to answer a question and write nothing
        instruction = f"""Create the file `{out}` holding just the answer: how many {what} in
`/app/{src}`?{redirect_hint(out, i)}"""
    return Task(instruction, {src: "\n".join(lines) + "\n"}, tests_answer(out, str(count)),
                f"{cmd} > {out}", tags=["text", "count"])
