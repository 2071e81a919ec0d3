"""Task reminder (evoharness starter library): at every step after the first, ends what the model
reads with the task, the commands already run (each with the first line it printed and the exit
code the seed's shell prints last) and a request for the step the task still needs. A small model
that has just read a result tends to describe it and copy its last action; with the task and its
own progress as the last thing it reads, it plans the next action from the task, not from its
previous reply. The note is for that model call only, so the transcript does not grow with it."""

TASK_CHARS = 600  # the instruction, clipped: the reminder stays short beside the transcript
LINE_CHARS = 100  # each command and the first line it printed


def one_line(text):
    text = " ".join(str(text).split())
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS - 3] + "..."


def step(call):
    if call["tool"] == "shell":
        what = f"`{one_line(call['arguments'].get('command', ''))}`"
    else:
        what = f"{call['tool']} {one_line(call['arguments'])}"
    if call["blocked"] is not None:
        return f"{what} -> refused: {one_line(call['blocked'])}"
    lines = [line for line in call["output"].splitlines() if line.strip()]
    status = lines.pop() if lines and lines[-1].startswith("[exit code:") else ""
    printed = one_line(lines[0]) if lines else "(printed nothing)"
    return f"{what} -> {printed} {status}".rstrip()


def before_model(messages, context):
    done = context["history"]
    if not done:
        return None
    task = context["instruction"].strip()
    if len(task) > TASK_CHARS:
        task = task[:TASK_CHARS] + " ..."
    first = context["calls"] - len(done) + 1  # the context holds the last few calls only
    ran = "\n".join(f"{n}. {step(call)}" for n, call in enumerate(done, first))
    return messages + [{"role": "user", "content": (
        f"[The task: {task}\n"
        f"Already done:\n{ran}\n"
        "What does the task still need? Reply with that one action; it is not a repeat of a "
        "step above. If every file the task asks for is written and right, call done.]")}]


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
