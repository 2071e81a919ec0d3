"""Repeat breaker (evoharness starter library): refuses a tool call identical to the last call
that ran, and quotes what that call returned. A small model stuck in a loop (the same `mv` until
the rollout's time ran out) gets the result it ignored in front of it, for the price of no
command run. `done` is never refused here."""

QUOTED = 800  # characters of the earlier output quoted back


def same(a, b):
    """Two calls alike: the same tool and arguments, a shell command's whitespace aside."""
    if a["tool"] != b["tool"]:
        return False
    if set(a["arguments"]) == set(b["arguments"]) == {"command"}:
        return str(a["arguments"]["command"]).split() == str(b["arguments"]["command"]).split()
    return a["arguments"] == b["arguments"]


def before_tool(call, context):
    if call["tool"] == "done":
        return None
    ran = [h for h in context["history"] if h["blocked"] is None]
    if not ran or not same(ran[-1], call):
        return None
    refused = 0  # how often this same call was refused since it ran
    for earlier in reversed(context["history"]):
        if earlier["blocked"] is None:
            break
        refused += same(earlier, call)
    output = ran[-1]["output"].strip() or "(no output)"
    if len(output) > QUOTED:
        output = output[:QUOTED // 2] + "\n...\n" + output[-QUOTED // 2:]
    again = f" (refused {refused + 1} times now)" if refused else ""
    return {"block": (
        f"you just ran this exact call{again}; running it again gives the same result. "
        f"It returned:\n{output}\n"
        "Read that output. If it shows an error, change the command to fix its cause (quote "
        "names with spaces, check paths with ls); if the task is finished, call done.")}


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
