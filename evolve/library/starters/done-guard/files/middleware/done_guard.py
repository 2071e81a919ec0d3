"""Done guard (evoharness starter library): refuses the agent's first `done` when nothing ran yet,
when a file the instruction asks to write or create does not exist or is empty, or, when it
does exist, shows the file beside what the instruction says about it, so the agent checks the
format before it finishes (the 1.5B wrote `14 /app/poem.txt` where digits only were asked for,
printed it, and called done). Without a named output it refuses a `done` right after a command
that wrote a file the agent never looked at. It refuses once per rollout, so a task that means
a named file to go away costs one step, never the rollout."""
import os
import re

# A sentence that asks for output, and the paths in it: under /app, or a bare file name.
OUTPUT_VERB = re.compile(r"\b(write|writes|save|saves|create|creates|produce|produces|output|"
                         r"store|put|generate|merge)\b", re.IGNORECASE)
PATH = re.compile(r"(?<![\w/.-])(/app/[\w./-]*\w|[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/-])")
# A shell command that writes a file (debugger/patterns.py reads writes the same way).
WRITES = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&|/dev/null)\S|<<|\btee\b|\bsed\s+-i|\b(cp|mv)\s")


SHOWN_LINES, SHOWN_CHARS, SAID_CHARS = 8, 400, 300  # what one file's check may show


def sentences(instruction):
    return [s.strip() for s in re.split(r"(?<=[.!?:])\s+|\n\s*\n|\n\s*[-*]\s", instruction)
            if s.strip()]


def named_outputs(instruction):
    """The files the instruction asks for, as paths to check from /app."""
    found = []
    for sentence in sentences(instruction):
        if OUTPUT_VERB.search(sentence):
            found += [p.rstrip(".") for p in PATH.findall(sentence)]
    return list(dict.fromkeys(found))


def said_about(path, instruction):
    """The instruction's sentences that name `path` (or its file name), clipped."""
    name = os.path.basename(path)
    return [s[:SAID_CHARS] for s in sentences(instruction) if path in s or name in s][:3]


def shown(path):
    """The head of a file as the agent would see it with cat, clipped."""
    with open(path, "rb") as f:
        head = f.read(SHOWN_CHARS + 1)
    text = head[:SHOWN_CHARS].decode("utf-8", "replace")
    lines = text.splitlines()
    more = len(head) > SHOWN_CHARS or len(lines) > SHOWN_LINES
    body = "\n".join(f"    {line!r}"[:120] for line in lines[:SHOWN_LINES])
    return body + ("\n    ..." if more else "")


def check_against_task(named, instruction):
    """Each existing named file beside what the task says about it."""
    parts = []
    for path in [p for p in named if os.path.isfile(p)]:
        said = " ".join(f'"{s}"' for s in said_about(path, instruction))
        parts.append(f"{path} holds (each line quoted):\n{shown(path)}\nThe task says: {said}")
    if not parts:
        return None
    return ("check your output against the task before you finish.\n" + "\n".join(parts)
            + "\nIf every file is exactly what the task asks for, format included, call done "
            "again; if not, fix it first")


def exists(path, most=5000):
    """An /app path as named; a bare file name anywhere under /app (a cloned repository's file)."""
    if "/" in path or os.path.exists(path):
        return os.path.exists(path)
    for seen, (_, _, files) in enumerate(os.walk(".")):
        if path in files:
            return True
        if seen >= most:
            return True  # too big to be sure: do not refuse
    return False


def wrote(call):
    if call["tool"] == "shell":
        return bool(WRITES.search(str(call["arguments"].get("command", ""))))
    return call["tool"] not in ("done",) and "content" in call["arguments"]


def reason(context):
    history = context["history"]
    ran = [h for h in history if h["blocked"] is None and h["tool"] != "done"]
    if context["calls"] == 0:
        return ("nothing has been run yet. Look at the files in /app and do the task with "
                "commands first")
    named = named_outputs(context["instruction"])
    missing = [p for p in named if not exists(p)]
    if missing:
        return (f"the task asks for {', '.join(missing)}, which does not exist yet. Create it "
                "with the result first (if the task meant it to be gone, call done again)")
    empty = [p for p in named if os.path.isfile(p) and os.path.getsize(p) == 0]
    if empty:  # the 1.5B, told a file was missing, once made it with `touch`
        return (f"{', '.join(empty)} is empty. Write the task's result into it first (if it "
                "is meant to be empty, call done again)")
    check = check_against_task(named, context["instruction"])
    if check:
        return check
    if ran and wrote(ran[-1]):
        return ("your last command wrote a file and you have not looked at the result. Print "
                "it (cat FILE) or run it, check it against the task, then call done")
    return None


def before_tool(call, context):
    if call["tool"] != "done":
        return None
    if any(h["tool"] == "done" and h["blocked"] for h in context["history"]):
        return None  # refused once already: the agent insists
    why = reason(context)
    return {"block": f"not finished: {why}."} if why else None


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
