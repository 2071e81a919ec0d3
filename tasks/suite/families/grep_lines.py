"""Keep the lines that hold a word."""
from _common import NAMES, SERVICES, WORDS, Task, tests_text_equals

CATEGORY = "text-processing"
WHAT = "write the lines of a file that contain a word (case-sensitive or not, or that do not)"


def make(i, rng):
    word = ["TODO", "urgent", "FIXME", "deprecated", "timeout", "refund"][i]
    src = ["notes.txt", "tickets.txt", "code_review.txt", "changelog.txt", "alerts.txt",
           "emails.txt"][i]
    out = f"/app/{word.lower()}_lines.txt"
    lines = []
    for _ in range(14):
        filler = " ".join(rng.sample(WORDS, 4))
        lines.append(f"{rng.choice(NAMES)}: {filler} {rng.choice(SERVICES)}")
    for n in rng.sample(range(14), 4):
        lines[n] = f"{lines[n]} {word}"
    mode = i % 3
    if mode == 0:  # the word in other case: does not match
        lines[rng.randrange(14)] += f" {word.swapcase()}"
        keep = [l for l in lines if word in l]
        how = f"that contains `{word}` exactly as written (the match is case-sensitive)"
        cmd = f"grep -F '{word}'"
    elif mode == 1:
        lines[rng.randrange(14)] += f" {word.upper() if word.islower() else word.lower()}"
        keep = [l for l in lines if word.lower() in l.lower()]
        how = f"that contains `{word}` in any letter case (`{word.upper()}` and `{word.lower()}` too)"
        cmd = f"grep -i -F '{word}'"
    else:
        keep = [l for l in lines if word not in l]
        how = f"that does NOT contain `{word}`"
        cmd = f"grep -v -F '{word}'"
    text = "\n".join(lines) + "\n"
    instruction = f"""Write every line of `/app/{src}` {how} to `{out}`, in their original order."""
    return Task(instruction, {src: text}, tests_text_equals(out, "\n".join(keep) + "\n"),
                f"{cmd} /app/{src} > {out}", tags=["text", "grep"])
