import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


FLAKY = """#!/bin/bash
# Fails (status 7) until it has been run SUCCEED_ON times; logs each run's arguments.
count=$(( $(cat "$COUNTER" 2>/dev/null || echo 0) + 1 ))
echo "$count" > "$COUNTER"
printf '%s|' "$@" >> "$COUNTER.args"; echo >> "$COUNTER.args"
[ "$count" -ge "$SUCCEED_ON" ] && exit 0
exit 7
"""


def flaky(tmp_path, succeed_on):
    script = tmp_path / "flaky.sh"
    script.write_text(FLAKY.replace("$COUNTER", str(tmp_path / "count")).replace("$SUCCEED_ON", str(succeed_on)))
    script.chmod(0o755)
    return script


def attempts(tmp_path):
    path = tmp_path / "count"
    return int(path.read_text()) if path.exists() else 0


def test_succeeds_on_third_attempt(tmp_path):
    done = run("/app/retry.sh", 5, flaky(tmp_path, 3))
    assert done.returncode == 0, f"retry.sh 5 CMD exited with {done.returncode} though CMD succeeded on attempt 3"
    assert attempts(tmp_path) == 3, f"CMD ran {attempts(tmp_path)} times, expected 3 (stop at the first success)"


def test_gives_up_with_last_status(tmp_path):
    done = run("/app/retry.sh", 2, flaky(tmp_path, 10))
    assert attempts(tmp_path) == 2, f"retry.sh 2 CMD ran CMD {attempts(tmp_path)} times, expected 2"
    assert done.returncode == 7, f"retry.sh exited with {done.returncode}, expected CMD's last status 7"


def test_first_success_runs_once(tmp_path):
    done = run("/app/retry.sh", 3, flaky(tmp_path, 1))
    assert done.returncode == 0 and attempts(tmp_path) == 1, f"exit {done.returncode}, {attempts(tmp_path)} runs"


def test_arguments_kept(tmp_path):
    run("/app/retry.sh", 3, flaky(tmp_path, 2), "two words", "x")
    logged = (tmp_path / "count.args").read_text().split("\n")[:2]
    assert logged == ["two words|x|", "two words|x|"], f"CMD got the arguments {logged}"


def test_usage(tmp_path):
    cmd = flaky(tmp_path, 1)
    for args in [(0, cmd), ("abc", cmd), (-1, cmd), (3,), ()]:
        done = run("/app/retry.sh", *args)
        assert done.returncode == 2, f"retry.sh {' '.join(map(str, args))} exited with {done.returncode}, expected 2"
    assert attempts(tmp_path) == 0, "CMD ran although the arguments were invalid"
