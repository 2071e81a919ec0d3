"""Workspace preview (evoharness starter library): before the first step, adds to the task what
/app holds: each file and folder with its size (and whether it is executable), and the first
lines of the small text files. A small model that has not looked writes its output blind (the
1.5B wrote the fourth column of a CSV whose emails are the third, and called done); with the
input in front of it from the start, its first command can be right. The preview is part of the
task message, so the model reads it once and the prompt cache keeps it. Everything shown is
bounded: what a task's files hold is input from outside, like any command's output."""
import os
import stat

MAX_ENTRIES = 40  # files and folders listed
MAX_DEPTH = 3  # levels below /app listed
SHOWN_FILES = 6  # text files whose first lines are shown
HEAD_LINES = 12  # a short script whole: greet.py's typo is on its line 7
LINE_CHARS = 120
READ_BYTES = 4096  # of each shown file: its first lines are in here, or it is not shown
PREVIEW_CHARS = 2000  # the whole preview
SKIPPED = {".git", "__pycache__", "node_modules", ".venv"}  # listed, never walked


def listing(root):
    """(relative path, lstat) of what is under root, top level first, sorted: MAX_ENTRIES of them
    and one more if there are more. Links are listed, never followed."""
    found = []
    for folder, dirs, files in os.walk(root):
        depth = 0 if folder == root else os.path.relpath(folder, root).count(os.sep) + 1
        names = sorted(dirs) + sorted(files)  # .git is listed (a repository is there), not walked
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED) if depth + 1 < MAX_DEPTH else []
        for name in names:
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, root), os.lstat(path)))
            if len(found) > MAX_ENTRIES:
                return found
    return found


def head(path, info):
    """The first lines of a regular text file, or None (a link, a pipe, empty, unreadable,
    binary)."""
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    try:
        with open(path, "rb") as file:
            data = file.read(READ_BYTES)
    except OSError:  # not the agent's to read either: listed, not shown
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:  # binary, unless only the last character was cut
        if len(data) < READ_BYTES or error.start < len(data) - 3:
            return None
        text = data[:error.start].decode("utf-8")
    lines = text.splitlines()
    shown = [printable(line) for line in lines[:HEAD_LINES]]
    more = len(lines) > HEAD_LINES or info.st_size > READ_BYTES
    return shown + (["..."] if more else [])


def printable(line):
    line = "".join(c if c.isprintable() or c == "\t" else "?" for c in line)
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 3] + "..."


def describe(path, info):
    path = printable(path)  # a name may hold a newline, to fake a line of the preview
    if stat.S_ISDIR(info.st_mode):
        return f"{path}/"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} (a link)"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} (not a regular file)"
    runs = ", executable" if info.st_mode & stat.S_IXUSR else ""
    return f"{path} ({info.st_size} bytes{runs})"


def preview(root="."):
    entries = listing(root)
    if not entries:
        return "[/app is empty at the start.]"
    lines, shown = [], 0
    for path, info in entries[:MAX_ENTRIES]:
        entry = [describe(path, info)]
        first = head(os.path.join(root, path), info) if shown < SHOWN_FILES else None
        if first and chars(lines + entry) + chars(first) <= PREVIEW_CHARS:
            entry += ["  | " + line for line in first]
            shown += 1
        if chars(lines + entry) > PREVIEW_CHARS:
            break
        lines += entry
    listed = sum(not line.startswith("  | ") for line in lines)
    more = f" (the first {listed})" if listed < len(entries) else ""
    return (f"[What /app holds at the start{more}, with the first lines of small text files; "
            "look further with commands:]\n" + "\n".join(lines))


def chars(lines):
    return sum(len(line) + 1 for line in lines)


def before_start(instruction, context):
    return instruction.rstrip() + "\n\n" + preview()


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
