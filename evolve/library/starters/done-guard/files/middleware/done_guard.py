"""Done guard (evoharness starter library): refuses the agent's first `done` when nothing ran yet,
when a file the instruction asks to write or create does not exist or is empty, or when the last
command wrote a file the agent never looked at, and says which. It refuses once per rollout, so a task that
means a named file to go away costs one step, never the rollout."""
import os
import re

# A sentence that asks for output, and the paths in it: under /app, or a bare file name.
OUTPUT_VERB = re.compile(r"\b(write|writes|save|saves|create|creates|produce|produces|output|"
                         r"store|put|generate|merge)\b", re.IGNORECASE)
PATH = re.compile(r"(?<![\w/.-])(/app/[\w./-]*\w|[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/-])")
# A shell command that writes a file (debugger/patterns.py reads writes the same way).
WRITES = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&|/dev/null)\S|<<|\btee\b|\bsed\s+-i|\b(cp|mv)\s")


def named_outputs(instruction):
    """The files the instruction asks for, as paths to check from /app."""
    found = []
    for sentence in re.split(r"(?<=[.!?:])\s+|\n\s*\n|\n\s*[-*]\s", instruction):
        if OUTPUT_VERB.search(sentence):
            found += [p.rstrip(".") for p in PATH.findall(sentence)]
    return list(dict.fromkeys(found))


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
