"""The built-in suite's judge: every task's tests/judge.py is a copy of this file (tasks/suite/judge.py;
`python3 sync_verifiers.py` copies it). tests/test.sh runs `python3 -I /tests/judge.py`.

It runs the hidden tests with pytest inside this process, and the agent's code (its scripts, its
modules, git on its repository) only in child processes through `agent_run` / `agent_calls`: in a
nested bubblewrap sandbox that hides /tests and /logs where the machine allows one, else as plain
children. No child can reach this process (it is not dumpable, so not traceable, and a nested
child is in another PID namespace), and it writes the reward itself, last, after killing every
process the tests started. So nested agent code can neither forge the reward nor read the tests.
A plain child (no nesting possible) can read the tests, and can kill this process and leave a
reward file of its own: only a separate uid would stop that.
"""
from __future__ import annotations

import ast
import ctypes
import os
import shutil
import signal
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

TESTS, LOGS, APP = "/tests", "/logs/verifier", "/app"
PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
MARK = "@@judge-result@@"


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


@lru_cache(maxsize=1)
def _nested() -> tuple[str, ...]:
    """The argv prefix of a nested sandbox hiding the tests and the reward, or () where this
    machine cannot make one (no bubblewrap, or user namespaces refused as in Docker's default)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ()
    prefix = (bwrap, "--dev-bind", "/", "/", "--tmpfs", TESTS, "--tmpfs", str(Path(LOGS).parent),
              "--unshare-user", "--unshare-pid", "--unshare-ipc", "--disable-userns",
              "--die-with-parent", "--new-session", "--")
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=60)
    return prefix if probe.returncode == 0 else ()


def agent_run(argv: list[str], *, cwd: str | None = None, input: str | None = None,
              timeout: float = 20) -> subprocess.CompletedProcess:
    """Run a command that executes the agent's code (its script, git on its repository)."""
    return subprocess.run([*_nested(), *argv], capture_output=True, text=True, cwd=cwd,
                          input=input, timeout=timeout)


_CALLS = """
import ast, importlib.util, sys
spec = importlib.util.spec_from_file_location("agent_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
construct, calls = ast.literal_eval(sys.stdin.read())
target = getattr(module, construct)() if construct else module
results = []
for name, args in calls:
    try:
        results.append({"value": getattr(target, name)(*args), "args": args})
    except Exception as error:
        results.append({"raised": type(error).__name__, "args": args})
print("\\n" + sys.argv[2] + repr(results))
"""


def agent_calls(path: str, calls: list[tuple[str, tuple]], *, construct: str | None = None,
                timeout: float = 20) -> list[dict]:
    """Load the agent's Python module at `path` in a child and make `calls` ((name, args) pairs,
    args literals) in order, on the module or on one `construct()` instance of its class. Returns
    one dict per call: {"value": result} or {"raised": exception class name}, with "args" as they
    were after the call. Only literals cross back (ast.literal_eval), never the agent's objects."""
    done = agent_run([sys.executable, "-I", "-c", _CALLS, path, MARK],
                     input=repr((construct, calls)), timeout=timeout)
    found = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    assert found, f"loading {path} failed:\n{(done.stdout + done.stderr)[-1500:]}"
    return ast.literal_eval(found[-1][len(MARK):])


def _links_into_hidden() -> list[str]:
    """Links under /app that lead to the tests or the reward (their text would land in the
    verifier's output)."""
    hidden = [os.path.realpath(TESTS), os.path.realpath(LOGS)]
    bad = []
    for root, dirs, files in os.walk(APP):
        for name in dirs + files:
            path = os.path.join(root, name)
            target = os.path.realpath(path) if os.path.islink(path) else ""
            if any(target == h or target.startswith(h + "/") for h in hidden):
                bad.append(path)
    return bad


def _children() -> list[int]:
    me, found = str(os.getpid()), []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue  # gone meanwhile
        if stat.rsplit(")", 1)[-1].split()[1] == me:
            found.append(int(entry))
    return found


def _end_descendants() -> None:
    """Kill every process the tests started, orphans included (they come to this process, their
    subreaper), and reap them, until none is left. A killed process cannot fork any more."""
    while children := _children():
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _write_reward(value: int) -> None:
    """Replace whatever is in /logs/verifier (children may have left links or FIFOs there) with
    one fresh reward.txt."""
    for entry in os.scandir(LOGS):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
    fd = os.open(f"{LOGS}/reward.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{value}\n")


def main(test_file: str) -> int:
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    os.makedirs(LOGS, exist_ok=True)
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        os.environ.pop(name, None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.chdir(TESTS)  # nothing the agent wrote is on the path or in pytest's config search
    bad = _links_into_hidden()
    if bad:
        print(f"links under /app lead into the hidden tests or the reward: {bad[:5]}")
        code = 1
    else:
        import pytest
        code = pytest.main(["-q", "-rA", "-p", "no:cacheprovider", "-c", os.devnull,
                            "--rootdir", TESTS, test_file])
    sys.stdout.flush()
    _end_descendants()
    _write_reward(1 if code == 0 else 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
