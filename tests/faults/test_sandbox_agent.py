"""Sandbox escapes attempted by a scripted code agent through the rollout runner (not direct
sandbox calls): each attempt is contained, the host is unchanged, the rollout still ends as data,
and no process the agent started outlives its rollout."""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import psutil

from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_task
from tests.fixtures.containers import unique
from tests.fixtures.ollama_server import OllamaScriptServer
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness

from .conftest import FIXTURE_TASKS

MARK = unique("evoharness-escape-marker")  # a string only this suite's stray processes carry


def rollout(tmp_path: Path, *commands: str) -> tuple[RolloutResult, list[str]]:
    """One hello-world rollout whose agent runs `commands`, then done; with each command's output."""
    task = load_task(FIXTURE_TASKS / "hello-world")
    model = ScriptedModel([json_action("shell", command=c) for c in commands]
                          + [json_action("done", summary="tried")])
    [path] = run_rollouts(load_harness(SEED_DIR), "seed", [(task, "train")], model, run_id="r",
                          iteration=0, out_dir=tmp_path / "rollouts")
    result = RolloutResult.model_validate_json(path.read_text())
    outputs = [str(e.content) for e in result.events if e.kind == "tool_result"]
    return result, outputs[: len(commands)]


def test_hidden_tests_are_not_readable(tmp_path: Path) -> None:
    hidden = FIXTURE_TASKS / "hello-world" / "tests" / "test_state.py"
    result, [listing, found] = rollout(
        tmp_path, "cat /tests/test_state.py; ls /tests /solution",
        f"find / -name test_state.py -not -path '/proc/*' -exec md5sum {{}} + 2>/dev/null; "
        f"echo {MARK}")
    assert "def test" not in listing and "No such file" in listing
    assert MARK in found and hashlib.md5(hidden.read_bytes()).hexdigest() not in found
    assert result.outcome.value == "fail"


def test_writes_outside_app_do_not_reach_the_host(tmp_path: Path) -> None:
    """Host files the sandbox does show (read-only): the venv's config, /etc/passwd; and new files
    beside them. A file under the host's /tmp would prove nothing: the sandbox has its own /tmp."""
    shown = [Path(sys.prefix) / "pyvenv.cfg", Path("/etc/passwd")]
    before = {p: p.read_bytes() for p in shown}
    writes = "; ".join(f"echo pwned >> {p}" for p in shown)
    _, [out] = rollout(tmp_path, f"cat {shown[0]} > /dev/null && echo visible; {writes}; "
                                 f"echo pwned > {sys.prefix}/evil; echo pwned > /etc/evil; "
                                 f"echo pwned > /usr/evil; echo {MARK}")
    refused = out.count("Read-only file system") + out.count("Permission denied")
    assert out.startswith("visible") and refused == 5, out
    assert {p: p.read_bytes() for p in shown} == before
    assert not any(Path(p).exists() for p in (f"{sys.prefix}/evil", "/etc/evil", "/usr/evil"))
    assert MARK in out


def test_no_network_even_to_a_server_on_host_loopback(tmp_path: Path) -> None:
    with OllamaScriptServer([{"content": "leaked"}] * 5) as server:
        probe = ("python3 -c \"import urllib.request as u; "
                 f"print(u.urlopen('{server.url}/api/tags', timeout=3).read())\"; echo {MARK}")
        _, [out] = rollout(tmp_path, probe)
        assert server.requests == [] and "scripted" not in out.replace(MARK, "")
    assert MARK in out and ("Network is unreachable" in out or "Connection refused" in out
                            or "urlopen error" in out)


def test_a_fork_bomb_is_contained_and_the_rollout_ends(tmp_path: Path) -> None:
    before = _children()
    result, _ = rollout(tmp_path, "bomb() { bomb | bomb & }; bomb; sleep 2; echo after")
    assert result.outcome.value in ("fail", "timeout")
    assert _children() - before == set()


def test_filling_the_disk_stops_at_the_file_size_limit(tmp_path: Path) -> None:
    _, [out, size] = rollout(tmp_path, "head -c 400M /dev/zero > big.bin; echo rc=$?",
                             "stat -c size=%s big.bin")
    assert "rc=0" not in out
    assert int(re.search(r"size=(\d+)", size).group(1)) <= 256 << 20


def test_a_background_process_does_not_outlive_the_rollout(tmp_path: Path) -> None:
    before = _children()
    result, _ = rollout(tmp_path, f"nohup setsid sh -c 'exec -a {MARK} sleep 600' >/dev/null 2>&1 &"
                                  f" echo started")
    assert result.outcome.value == "fail"
    assert not _stray(MARK) and _children() - before == set()


def _stray(mark: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if mark in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _children() -> set[int]:
    """This process's descendants. Earlier tests may leave GitPython's long-lived `git cat-file`
    helpers running, so a test compares against what was there before its rollout."""
    return {p.pid for p in psutil.Process().children(recursive=True)}
