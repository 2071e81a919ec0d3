"""Steps-left warning (evoharness starter library): in the agent's last WARN steps, adds a line to
what the model reads saying how many steps are left and to write the task's output now. The count
is the harness's max_steps less the tool calls so far (a reply that fails to parse twice also
costs a step, so the warning may come a step late, never early)."""

WARN = 3  # steps before the limit at which the warning starts


def before_model(messages, context):
    left = context["max_steps"] - context["calls"]
    if left > WARN or left < 1:
        return None
    return messages + [{"role": "user", "content": (
        f"[{left} step(s) left. If the file the task asks for is not written yet, write it now "
        "with your best result; then call done.]")}]


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
