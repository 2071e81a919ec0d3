"""Replace a word in a file, in place."""
import re

from _common import WORDS, Task, tests_text_equals

CATEGORY = "text-processing"
WHAT = "replace one word with another everywhere in a file, in place"
SWAPS = [("colour", "color"), ("cat", "dog"), ("staging", "production"), ("v1", "v2"),
         ("Monday", "Friday"), ("foo", "bar")]
FILES = ["style.txt", "pets.md", "deploy.cfg", "api.md", "schedule.txt", "example.txt"]


def make(i, rng):
    old, new = SWAPS[i]
    src = FILES[i]
    lines = [" ".join(rng.sample(WORDS, 5)) for _ in range(8)]
    for n in rng.sample(range(8), 3):
        words = lines[n].split()
        words.insert(rng.randrange(len(words)), old)
        lines[n] = " ".join(words)
    whole = i % 2 == 1
    if whole:  # the word also inside a longer word, which must stay
        lines[rng.randrange(8)] += f" {old}alog" if old == "cat" else f" {old}s2"
        expected = [re.sub(rf"\b{re.escape(old)}\b", new, l) for l in lines]
        hint = (f"Replace `{old}` only where it is a whole word: inside a longer word it stays.")
        solve = f"sed -i 's/\\b{old}\\b/{new}/g' /app/{src}"
    else:
        lines[rng.randrange(8)] += f" {old} {old}"  # twice on one line
        expected = [l.replace(old, new) for l in lines]
        hint = "Some lines hold it more than once; replace every occurrence."
        solve = f"sed -i 's/{old}/{new}/g' /app/{src}"
    instruction = f"""In `/app/{src}`, replace every `{old}` with `{new}`, editing the file in
place. {hint} Nothing else in the file changes."""
    return Task(instruction, {src: "\n".join(lines) + "\n"},
                tests_text_equals(f"/app/{src}", "\n".join(expected) + "\n"), solve,
                tags=["text", "sed"])
