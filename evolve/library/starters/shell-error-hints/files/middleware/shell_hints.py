"""Shell error hints (evoharness starter library): after a command, adds a hint to the shell
errors small models meet most (ambiguous redirect, quoting and here-document errors, command not
found, No such file or directory, Permission denied). For a missing path it looks at what exists:
the hint lists the nearest existing folder's entries, quoted where they hold spaces."""
import os
import re

LISTED = 15  # entries of a folder a hint lists
INSTEAD = {  # programs that are not installed, and what to use instead
    "jq": "python3 -c 'import json,sys; print(json.load(open(\"FILE\"))[\"KEY\"])'",
    "python": "python3", "pip": "nothing: no package can be installed here",
    "rg": "grep -rn", "bc": "python3 -c 'print(...)' or $(( ... ))",
    "vi": "a command that writes the whole file", "vim": "a command that writes the whole file",
    "nano": "a command that writes the whole file",
}
MISSING = [  # how tools report a missing path: the path is group 1
    re.compile(r"cannot (?:stat|access|open|remove) '([^']+)': No such file or directory"),
    re.compile(r"(?:target|directory) '([^']+)': No such file or directory"),
    re.compile(r"No such file or directory: '([^']+)'"),
    re.compile(r"can't open file '([^']+)'"),
    re.compile(r"^(?:[\w.-]+: )?(?:line \d+: )?([^:\s][^:]*): No such file or directory", re.M),
]


def quoted(name):
    return f"'{name}'" if " " in name else name


def listing(path):
    """The nearest existing folder above `path`, and what it holds."""
    folder = os.path.dirname(os.path.normpath(path)) or "."
    while folder not in ("", "/") and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        names = sorted(os.listdir(folder or "/"))
    except OSError:
        return None
    shown = ", ".join(quoted(n) for n in names[:LISTED]) or "nothing"
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    where = os.path.abspath(folder or "/")
    spaces = (" Names with spaces must be quoted (\"$file\")." if any(" " in n for n in names)
              else "")
    return f"{where} holds: {shown}{more}.{spaces}"


def missing_path(output):
    for pattern in MISSING:
        found = pattern.search(output)
        if found:
            return found.group(1).strip()
    return None


def hints(output):
    found = []
    if "ambiguous redirect" in output:
        found.append("a redirect (> or <) got an empty name or one with spaces: an unset "
                     "variable such as $1 is empty. Quote the name (> \"$out\") and make sure "
                     "the variable is set.")
    if re.search(r"unexpected EOF while looking for matching|syntax error near unexpected token|"
                 r"here-document at line \d+ delimited by end-of-file", output):
        found.append("the shell could not parse the command: a quote or a here-document is not "
                     "closed. Write a file with one simple command (printf '%s\\n' ...) or "
                     "python3, and keep every quote closed.")
    for name in dict.fromkeys(re.findall(r"([\w.+-]+): command not found", output)):
        instead = INSTEAD.get(name, "standard tools (grep, sed, awk, sort, cut) or python3")
        found.append(f"{name} is not installed here and nothing can be installed. Use {instead}.")
    if "No such file or directory" in output:
        path = missing_path(output)
        seen = listing(path) if path else None
        found.append(f"{quoted(path) if path else 'a path'} does not exist."
                     + (f" {seen}" if seen else " List the folder with ls first."))
    if "Permission denied" in output and re.search(r"(^|\s)\./\S+|/app/\S+\.sh", output):
        found.append("a script that is not executable: run it as bash FILE, or chmod +x FILE "
                     "first.")
    return found[:3]


def after_tool(result, context):
    if result["tool"] != "shell" or result.get("error"):
        return None
    found = hints(result["output"])
    if not found:
        return None
    result["output"] = result["output"].rstrip("\n") + "\n" + "".join(
        f"[hint: {hint}]\n" for hint in found)
    return result


if __name__ == "__main__":
    import json
    import sys

    request = json.load(sys.stdin)
    result = globals()[request["hook"]](request["payload"], request["context"])
    if result is not None:
        print(json.dumps(result))
