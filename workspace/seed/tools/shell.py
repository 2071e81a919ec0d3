"""Seed tool: run one bash command in the current directory and print its output and exit code.

Arguments arrive as JSON on stdin ({"command": str}); the caller enforces the timeout."""
import json
import subprocess
import sys


def main() -> int:
    args = json.load(sys.stdin)
    done = subprocess.run(
        ["bash", "-c", args["command"]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream keeps errors next to the output that caused them
        check=False,
    )
    output = done.stdout.decode(errors="replace")
    if output and not output.endswith("\n"):
        output += "\n"
    sys.stdout.write(f"{output}[exit code: {done.returncode}]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
