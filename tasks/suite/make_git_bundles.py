"""Rebuilds the git bundles that the suite's git tasks start from (environment/project.bundle).
Authors and dates are fixed, so commit SHAs (pinned in those tasks' hidden tests) never change."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = Path(__file__).resolve().parent
EPOCH = 1_700_000_000  # commit n is dated EPOCH + n hours

Step = tuple  # ("commit", message, {path: text | None}) | ("branch", name) | ("checkout", name)

DEFAULTS_JSON = json.dumps({"port": 8000, "debug": False, "workers": 3, "log_dir": "/var/log/app"},
                           indent=2) + "\n"
GREET_V1 = 'def greet(name):\n    return f"Hello, {name}!"\n'
GREET_V2 = GREET_V1 + '\n\ndef farewell(name):\n    return f"Goodbye, {name}."\n'
GREET_LOUD = GREET_V2.replace('return f"Hello, {name}!"', 'return f"HELLO, {name.upper()}!!!"')
SETTINGS = "[app]\nname = demo\nworkers = {workers}\ntimeout = {timeout}\n"
CHECK_PY = ('"""Exits 0 when calc.py behaves, 1 otherwise."""\nimport sys\nimport calc\n\n'
            'ok = calc.add(2, 3) == 5 and calc.mean([1, 2, 3, 4]) == 2.5 and calc.percent(1, 3) == 33.33\n'
            'print("ok" if ok else "broken")\nsys.exit(0 if ok else 1)\n')


def calc_source(*, docs=False, clamp=False, scale=False, bad=False, median=False, version=False) -> str:
    """calc.py as it stands after a given set of commits of the find-bad-commit history."""
    def doc(text: str) -> str:
        return f'    """{text}"""\n' if docs else ""

    parts = ['VERSION = "1.4"\n\n\n' if version else ""]
    parts.append(f"def add(a, b):\n{doc('Sum of two numbers.')}    return a + b\n")
    parts.append(f"\n\ndef mean(xs):\n{doc('Arithmetic mean of a non-empty list.')}"
                 "    return sum(xs) / len(xs)\n")
    division = "//" if bad else "/"
    parts.append(f"\n\ndef percent(part, whole):\n{doc('part as a percentage of whole, 2 decimals.')}"
                 f"    return round(100 * part {division} whole, 2)\n")
    if clamp:
        parts.append(f"\n\ndef clamp(x, lo, hi):\n{doc('x limited to [lo, hi].')}"
                     "    return max(lo, min(hi, x))\n")
    if scale:
        parts.append(f"\n\ndef scale(xs, factor):\n{doc('Every element times factor.')}"
                     "    return [x * factor for x in xs]\n")
    if median:
        parts.append(f"\n\ndef median(xs):\n{doc('Middle value of a non-empty list.')}    s = sorted(xs)\n"
                     "    n = len(s)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n")
    return "".join(parts)


def _bisect_history() -> list[Step]:
    flags: dict[str, bool] = {}

    def calc(**new: bool) -> dict[str, str]:
        flags.update(new)
        return {"calc.py": calc_source(**flags)}

    readme = "# calc\n\nSmall arithmetic helpers. Run `python3 check.py`.\n"
    return [
        ("commit", "Start calc module", {**calc(), "check.py": CHECK_PY}),
        ("commit", "Add README", {"README.md": "# calc\n\nSmall arithmetic helpers.\n"}),
        ("commit", "Add clamp helper", calc(clamp=True)),
        ("commit", "Document functions", calc(docs=True)),
        ("commit", "Add changelog", {"CHANGELOG.md": "## 1.1\n- clamp\n"}),
        ("commit", "Add scale helper", calc(scale=True)),
        ("commit", "Refactor arithmetic helpers", calc(bad=True)),
        ("commit", "Tidy README", {"README.md": readme}),
        ("commit", "Add median helper", calc(median=True)),
        ("commit", "Update changelog",
         {"CHANGELOG.md": "## 1.2\n- scale, median\n\n## 1.1\n- clamp\n"}),
        ("commit", "Add version constant", calc(version=True)),
        ("commit", "Mention license", {"README.md": readme + "\nMIT.\n"}),
    ]


NOTES_README = "# notes\n\nA tiny note-taking tool.\n"
NOTES_PY = 'import sys\n\n\ndef add(note):\n    with open("notes.txt", "a") as f:\n        f.write(note + "\\n")\n'
CACHE_PY = "class Cache:\n    def __init__(self, size):\n        self.size = size\n        self.items = {}\n"
CACHE_LEAKY = CACHE_PY + "\n    def evict(self):\n        self.items.clear()\n"
CACHE_FIXED = CACHE_PY + "\n    def evict(self):\n        self.items = {}\n"
CACHE_GET = CACHE_FIXED + "\n    def get(self, key):\n        return self.items.get(key)\n"
PARSER_V1 = "def parse(line):\n    return line.split(\",\")\n"
PARSER_V2 = "def parse(line):\n    return [field.strip() for field in line.split(\",\")]\n"
RATIO_BAD = "def ratio(a, b):\n    return a / b\n"
RATIO_FIXED = "def ratio(a, b):\n    if b == 0:\n        return 0.0\n    return a / b\n"
CLI_PY = 'import sys\n\nfrom calc import ratio\n\nprint(ratio(float(sys.argv[1]), float(sys.argv[2])))\n'
CLI_VERBOSE = CLI_PY.replace("import sys\n", "import sys\n\nVERBOSE = '-v' in sys.argv\n")
SETUP_CFG = ("[metadata]\nname = tinyfmt\nversion = {version}\ndescription = Formats small tables\n\n"
             "[options]\npy_modules = tinyfmt\npython_requires = >=3.8\n")
TINYFMT_PY = 'def row(cells):\n    return " | ".join(str(c) for c in cells)\n'


HISTORIES: dict[str, list[Step]] = {
    "git-recover-deleted-file": [
        ("commit", "Initial project layout", {
            "README.md": "# service\n", "app.py": 'import json\n\nCONFIG = "config/defaults.json"\n',
            "config/defaults.json": DEFAULTS_JSON, "old_notes.txt": "scratch\n"}),
        ("commit", "Add logging helper", {"log.py": "def log(msg):\n    print(msg)\n"}),
        ("commit", "Remove unused files", {"config/defaults.json": None, "old_notes.txt": None}),
        ("commit", "Document usage", {"README.md": "# service\n\nRun `python3 app.py`.\n"}),
    ],
    "git-revert-bad-commit": [
        ("commit", "Initial greeter", {"greet.py": GREET_V1, "README.md": "# greeter\n"}),
        ("commit", "Add farewell", {"greet.py": GREET_V2}),
        ("commit", "Make greetings louder", {"greet.py": GREET_LOUD}),
        ("commit", "Add usage docs", {"README.md": "# greeter\n\n`greet(name)` and `farewell(name)`.\n"}),
    ],
    "git-resolve-merge-conflict": [
        ("commit", "Initial settings", {"settings.conf": SETTINGS.format(workers=2, timeout=30)}),
        ("branch", "feature"),
        ("commit", "Use more workers", {"settings.conf": SETTINGS.format(workers=8, timeout=30),
                                        "CHANGELOG.md": "## Unreleased\n- 8 workers\n"}),
        ("checkout", "main"),
        ("commit", "Tune workers and timeout", {"settings.conf": SETTINGS.format(workers=4, timeout=60)}),
        ("commit", "Add README", {"README.md": "# demo\n"}),
    ],
    "git-find-bad-commit": _bisect_history(),
    "git-commit-new-file": [
        ("commit", "Start notes tool", {"notes.py": NOTES_PY, "README.md": "# notes\n"}),
        ("commit", "Describe the tool", {"README.md": NOTES_README}),
        ("commit", "Add changelog", {"CHANGELOG.md": "## 1.0.0\n- first release\n"}),
    ],
    "git-find-commit-by-message": [
        ("commit", "Add cache module", {"cache.py": CACHE_PY}),
        ("commit", "Add README", {"README.md": "# cache\n"}),
        ("commit", "Add eviction", {"cache.py": CACHE_LEAKY}),
        ("commit", "Fix memory leak in cache eviction", {"cache.py": CACHE_FIXED}),
        ("commit", "Document cache size",
         {"README.md": "# cache\n\n`Cache(size)` keeps at most size items.\n"}),
        ("commit", "Add license", {"LICENSE": "MIT\n"}),
        ("commit", "Speed up lookups", {"cache.py": CACHE_GET}),
    ],
    "git-tag-release": [
        ("commit", "Initial parser", {"parser.py": PARSER_V1, "README.md": "# parser\n"}),
        ("commit", "Strip fields", {"parser.py": PARSER_V2}),
        ("commit", "Prepare 1.0 release", {"VERSION": "1.0\n", "CHANGELOG.md": "## 1.0\n- parse lines\n"}),
        ("commit", "Start 1.1 development", {"VERSION": "1.1.dev0\n"}),
        ("commit", "Add tests folder note", {"README.md": "# parser\n\nTests live in tests/.\n"}),
    ],
    "git-amend-message": [
        ("commit", "Initial parser", {"parser.py": PARSER_V1, "README.md": "# parser\n"}),
        ("commit", "Add README usage", {"README.md": "# parser\n\n`parse(line)` splits a CSV line.\n"}),
        ("commit", "Fix teh parser", {"parser.py": PARSER_V2}),
    ],
    "git-cherry-pick-fix": [
        ("commit", "Add ratio helper", {"calc.py": RATIO_BAD, "README.md": "# calc\n"}),
        ("commit", "Add command line", {"cli.py": CLI_PY}),
        ("branch", "develop"),
        ("commit", "Add verbose flag", {"cli.py": CLI_VERBOSE}),
        ("commit", "Fix division by zero in ratio()", {"calc.py": RATIO_FIXED}),
        ("commit", "Add experimental power()",
         {"experimental.py": "def power(a, b):\n    return a ** b\n"}),
        ("checkout", "main"),
        ("commit", "Add usage to README", {"README.md": "# calc\n\nRun `python3 cli.py A B`.\n"}),
    ],
    "git-commit-changes": [
        ("commit", "Start tinyfmt", {"tinyfmt.py": TINYFMT_PY, "setup.cfg": SETUP_CFG.format(version="0.9"),
                                     "README.md": "# tinyfmt\n"}),
        ("commit", "Release 1.0", {"setup.cfg": SETUP_CFG.format(version="1.0")}),
        ("commit", "Describe usage", {"README.md": "# tinyfmt\n\n`row(cells)` joins cells with ` | `.\n"}),
    ],
}


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def build(task_id: str, dest: Path) -> dict[str, str]:
    """Replay a task's history in a temp repo, bundle all refs to dest; returns {label: sha}."""
    shas: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q", "-b", "main")
        for n, step in enumerate(HISTORIES[task_id], start=1):
            if step[0] == "branch":
                _git(repo, "checkout", "-q", "-b", step[1])
            elif step[0] == "checkout":
                _git(repo, "checkout", "-q", step[1])
            else:
                shas[step[1]] = _commit(repo, step[1], step[2], EPOCH + 3600 * n)
        _git(repo, "checkout", "-q", "main")
        _git(repo, "bundle", "create", str(dest), "--all")
    return shas


def _commit(repo: Path, message: str, files: dict[str, str | None], when: int) -> str:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    stamp = f"{when} +0000"
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
           "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    _git(repo, "commit", "-q", "-m", message, env=env)
    return _git(repo, "rev-parse", "HEAD")


def main() -> None:
    for task_id in HISTORIES:
        shas = build(task_id, SUITE / task_id / "environment" / "project.bundle")
        print(task_id, json.dumps(shas, indent=1))


if __name__ == "__main__":
    sys.exit(main())
