"""write_file tool (evoharness starter library): writes a whole file from JSON on stdin
({"path": str, "content": str}), so a small model never has to quote file contents for a shell.
The working directory is the task's /app; only files under it outlive the command."""
import json
import os
import sys

SHOWN_LINES = 30  # lines of the written file shown back


def main() -> int:
    args = json.load(sys.stdin)
    path = os.path.abspath(str(args["path"]))
    content = str(args["content"])
    if not (path == "/app" or path.startswith("/app/")):
        print(f"error: {path} is outside /app; only files under /app are kept. Write e.g. "
              f"/app/{os.path.basename(path) or 'file.txt'}")
        return 0
    if os.path.isdir(path):
        print(f"error: {path} is a folder; give a file path inside it")
        return 0
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
        executable = content.startswith("#!")
        if executable:
            os.chmod(path, 0o755)
    except OSError as error:
        print(f"error: cannot write {path}: {error.strerror or error}")
        return 0
    lines = content.splitlines()
    shown = "\n".join(lines[:SHOWN_LINES])
    more = f"\n... ({len(lines) - SHOWN_LINES} more lines)" if len(lines) > SHOWN_LINES else ""
    print(f"wrote {len(content.encode())} bytes, {len(lines)} lines to {path}"
          f"{' (executable)' if executable else ''}. It now holds:\n{shown}{more}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
