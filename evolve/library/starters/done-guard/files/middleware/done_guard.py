"""Done guard (evoharness starter library): refuses `done` while the task is visibly not finished,
and says what to do instead: nothing ran yet; a file the instruction asks to write or create is
missing or empty (with the agent's last printing command, redirected into it, as the way to
write it: the 1.5B printed its count, then, told the file was missing, made it with `touch`; for
a script, the command it ran in the shell as the script's body);
the files exist but the agent has not checked them (each is shown beside what the instruction
says about it: the 1.5B wrote `14 /app/poem.txt` where digits only were asked for, printed it,
and called done); or, with no named file, the last command wrote a file nobody looked at. Each
reason refuses at most once in the calls the hook sees (the last 12), so a task that means a
named file to go away costs a step or two, never the rollout.

A `done_guard.json` beside this file, `{"reasons": [...]}`, names the reasons its harness gives
(all five without one): `sure-failure-rescue` gives only the three that refuse a done the verifier
would fail whatever the files hold (nothing ran, a named file missing or empty), so a rollout on
its way to passing is never sent back."""
import json
import os
import re
import shlex

# A sentence that asks for output, and the paths in it: under /app, or a bare file name.
OUTPUT_VERB = re.compile(r"\b(write|writes|save|saves|create|creates|produce|produces|output|"
                         r"store|put|generate|merge)\b", re.IGNORECASE)
PATH = re.compile(r"(?<![\w/.-])(/app/[\w./-]*\w|[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/-])")
# A shell command that writes a file (debugger/patterns.py reads writes the same way).
WRITES = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&|/dev/null)\S|<<|\btee\b|\bsed\s+-i|\b(cp|mv)\s")
EXIT_NOTE = re.compile(r"\[exit code: -?\d+\]")  # the shell tool's own line, not printed output
SHOWN_LINES, SHOWN_CHARS, SAID_CHARS = 8, 400, 300  # what one file's check may show
# Each reason's refusal starts with its own words, so a reason is given once per rollout.
NOTHING_RAN, MISSING, EMPTY, CHECK, UNSEEN = (
    "nothing has been run yet", "the task asks for", "still empty", "check your output",
    "your last command wrote a file")
REASONS = {"nothing_ran": NOTHING_RAN, "missing": MISSING, "empty": EMPTY, "check": CHECK,
           "unseen": UNSEEN}
OPTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "done_guard.json")


def given_reasons(path=OPTIONS):
    """The markers of the reasons this harness gives: those its done_guard.json names, else all."""
    if not os.path.exists(path):
        return set(REASONS.values())
    with open(path, encoding="utf-8") as f:
        try:
            options = json.load(f)
        except ValueError as error:
            raise ValueError(f"{path}: not JSON ({error})") from None
    names = options.get("reasons") if isinstance(options, dict) else None
    if not isinstance(names, list) or not names or set(map(str, names)) - set(REASONS):
        raise ValueError(f"{path}: reasons must be a list of some of {', '.join(REASONS)}, "
                         f"not {names!r}")
    return {REASONS[name] for name in names}


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


def last_command(ran, printed=True):
    """The agent's last one-line shell command that succeeded and wrote nothing (and, with
    `printed`, printed something)."""
    for call in reversed(ran):
        command = str(call["arguments"].get("command", "")).strip()
        output = EXIT_NOTE.sub("", str(call.get("output", ""))).strip()
        if (call["tool"] == "shell" and call.get("exit_code") == 0 and command
                and "\n" not in command and not wrote(call) and (output or not printed)):
            return command
    return None


def way_to_write(path, ran):
    """What a small model needs to see to write `path`. A data file: its last printing command,
    redirected into it. A script: the command it ran in the shell, as the script's body (on
    count-args-script the 1.5B ran `echo $#` and called done in 46 of 47 rollouts; redirected,
    that command would have written `0` into the script)."""
    if path.endswith(".sh"):
        command = last_command(ran, printed=False)
        body = f" && echo {shlex.quote(command)} >> {path}" if command else ""
        return (f"it is a script to write, not commands to run: put them into it, e.g. run "
                f"`echo '#!/bin/bash' > {path}{body} && chmod +x {path}`, then run it to test it")
    command = last_command(ran)
    if command:
        return f"write it, e.g. run `{command} > {path}`, then look at it"
    return "write the task's result into it with a command"


def said_about(path, instruction):
    """The instruction's sentences that name `path` (or its file name), clipped."""
    name = os.path.basename(path)
    return [s[:SAID_CHARS] for s in sentences(instruction) if path in s or name in s][:3]


def shown(path):
    """The head of a file, each line quoted so stray spaces show, clipped."""
    with open(path, "rb") as f:
        head = f.read(SHOWN_CHARS + 1)
    lines = head[:SHOWN_CHARS].decode("utf-8", "replace").splitlines()
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
    return (f"{CHECK} against the task before you finish.\n" + "\n".join(parts)
            + "\nIf every file is exactly what the task asks for, format included, call done "
            "again; if not, fix it first")


def reasons(context):
    """Why this `done` is early, most basic first (several can hold at once): (marker, text)."""
    ran = [h for h in context["history"] if h["blocked"] is None and h["tool"] != "done"]
    if context["calls"] == 0:
        yield NOTHING_RAN, (f"{NOTHING_RAN}. Look at the files in /app and do the task with "
                            "commands first")
        return
    named = named_outputs(context["instruction"])
    missing = [p for p in named if not exists(p)]
    if missing:
        yield MISSING, (f"{MISSING} {', '.join(missing)}, which does not exist yet: "
                        f"{way_to_write(missing[0], ran)} (if the task meant it to be gone, "
                        "call done again)")
    empty = [p for p in named if os.path.isfile(p) and os.path.getsize(p) == 0]
    if empty:  # the 1.5B, told a file was missing, made it with `touch`
        yield EMPTY, (f"{', '.join(empty)} is {EMPTY}: {way_to_write(empty[0], ran)} (if it is "
                      "meant to be empty, call done again)")
    if not missing and not empty:
        check = check_against_task(named, context["instruction"])
        if check:
            yield CHECK, check
        elif ran and wrote(ran[-1]):
            yield UNSEEN, (f"{UNSEEN} and you have not looked at the result. Print it (cat FILE) "
                           "or run it, check it against the task, then call done")

def before_tool(call, context):
    if call["tool"] != "done":
        return None
    given = " ".join(h["blocked"] or "" for h in context["history"] if h["tool"] == "done")
    allowed = given_reasons()
    for marker, why in reasons(context):
        if marker in allowed and marker not in given:  # each reason once per rollout
            return {"block": f"not finished: {why}."}
    return None


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
