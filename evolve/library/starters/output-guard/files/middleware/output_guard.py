"""Output guard (evoharness starter library): refuses a shell command that deletes a file the agent
wrote earlier in this rollout (AHE's agent removing its own outputs while tidying up), naming it;
the same command sent again goes through, so a deliberate deletion costs one step. Deleting /app
itself, or everything in it, is always refused."""
import re

DELETES = re.compile(r"(?:^|[;&|(]\s*)(?:rm|unlink)\s+([^;&|)]*)")
WRITE_TARGET = re.compile(r"(?:(?<![0-9&<])>{1,2}|\btee(?:\s+-a)?)\s*(?!&|/dev/null)([^\s;|&<>]+)")
EVERYTHING = {"/app", "/app/", "/app/*", ".", "./", "*", "./*", "/", "/*", "~"}


def name(path):
    return path.strip("'\"").rstrip("/").rsplit("/", 1)[-1]


def written(history):
    """Base names of the files the agent's earlier calls wrote (redirects, tee, write_file)."""
    names = set()
    for call in history:
        if call["blocked"] is not None:
            continue
        arguments = call["arguments"]
        if call["tool"] == "shell":
            names |= {name(t) for t in WRITE_TARGET.findall(str(arguments.get("command", "")))}
        elif "path" in arguments and "content" in arguments:
            names.add(name(str(arguments["path"])))
    return names


def before_tool(call, context):
    command = str(call["arguments"].get("command", "")) if call["tool"] == "shell" else ""
    targets = [word for found in DELETES.findall(command) for word in found.split()
               if not word.startswith("-")]
    if not targets:
        return None
    if any(t.strip("'\"") in EVERYTHING for t in targets):
        return {"block": "this deletes the task's whole folder (/app): the task's files and your "
                         "work would be gone. Delete only the files you mean, by name."}
    insisted = any(h["blocked"] and h["arguments"] == call["arguments"] for h in context["history"])
    mine = sorted({name(t) for t in targets} & written(context["history"]))
    if not mine or insisted:
        return None
    return {"block": (
        f"this deletes {', '.join(mine)}, which you wrote earlier for this task. If it is the "
        "task's output, keep it. If you really mean to delete it, send the same command again.")}


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
