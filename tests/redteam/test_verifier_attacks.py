"""Attacks on the reward, as an agent (or an evolved harness teaching it) would try them, each
driven through the runner with a scripted agent and the real sandbox and verifier: shadowing the
verifier's code from /app, agent code forging the reward while the tests run it, special files in
place of the reward read by the host, shell text in verifier.env. Each must end as an ordinary
failed rollout with every event recorded, and leak nothing of the host; and each is run again
with the defence that stops it switched off, where it must succeed, so no test passes for an
attack that never worked.

Tried with every defence off (the verifier's environment, a fresh /tmp per command, the judge's
nested sandbox) and found to be no route at all, so not kept as attacks: pytest.ini, tox.ini,
setup.cfg, pyproject.toml or conftest.py in /app (pytest reads its configuration and conftests
from the tests' folder, /tests); a .pth file or sitecustomize.py in /app (site runs before the
working directory joins sys.path, and reads .pth files only in site-packages); re.py or
pathlib.py (loaded before the working directory is on the path); python3 or bash in /app (PATH
never holds /app); dotfiles and user site-packages in HOME (HOME is /tmp, and the verifier's
Python is a venv, which has no user site); files left in /tmp (nothing reads them); a process
left running (its command's PID namespace ends with it); the same shadows on the built-in
tasks (their judge runs as `python3 -I /tests/judge.py`, with /tests as sys.path[0]); a module
that exits at import or opens /proc/PID/mem (the judge loads agent code in a child and trusts
only its answer; the module wrote nothing)."""
from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from evoharness.tasks import verifier
from evoharness.errors import ValidationFailed
from evoharness.tasks.reward import read_reward
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_task

from .backends import container_home, sandbox_factory
from .verifier_rollout import (
    FIXTURES, attack, contained, succeeded, suite_task, user_task, without_nested_sandbox,
)

__all__ = ["container_home", "sandbox_factory"]  # the fixtures, used by name; tests taking
# sandbox_factory run in both backends (bubblewrap and a container)
SECRET = "evo-host-secret-7f3a"  # a string only the host's files hold


def fake_module(name: str, body: str = "import os; os._exit(0)") -> str:
    return f"printf '%s\\n' '{body}' > /app/{name}"


# Ways to change which code the verifier's interpreter runs from the agent's /app, on a user's
# Harbor task (hello-world as Harbor ships it: a shared verifier running `python3 -m pytest` with
# /app as its working directory). The defence: PYTHONSAFEPATH (tasks/verifier.py's VERIFIER_ENV)
# keeps the working directory off sys.path.
SHADOWS = {
    "fake pytest module (issue 15's reproduction)": fake_module("pytest.py", 'print("pass")'),
    "stdlib modules pytest imports shadowed": fake_module("argparse.py") + "; "
                                              + fake_module("inspect.py"),
    "pytest's own package shadowed": "mkdir -p /app/_pytest && " + fake_module("_pytest/__init__.py"),
}


@pytest.mark.parametrize("how", list(SHADOWS))
def test_a_users_harbor_task_cannot_be_shadowed_from_app(tmp_path, monkeypatch, how):
    task = load_task(FIXTURES / "hello-world")
    result, _ = attack(tmp_path / "defended", task, SHADOWS[how])
    contained(result)
    monkeypatch.setattr(verifier, "VERIFIER_ENV", {})
    succeeded(attack(tmp_path / "undefended", task, SHADOWS[how])[0])


# Agent code that the tests run while judging (a script, a module, git's config): in the built-in
# suite it runs in a nested sandbox under the judge, so it can neither write the reward nor see the
# tests. Without the nesting (without_nested_sandbox) each forges a pass.
# The late writer renames each copy into place: `echo 1 >` truncates first, and a reader under
# load caught the empty file between its truncate and its write, so the undefended control
# failed for a reason that is not the defence.
FORGER = ("ls -A /tests /logs >&2; echo 1 > /logs/verifier/reward.txt; "
          "(while :; do echo 1 > /logs/verifier/r.new; mv -f /logs/verifier/r.new "
          "/logs/verifier/reward.txt; sleep 0.01; done) & "
          "kill -9 $PPID 1 2>/dev/null; echo \"seen:$(ls -A /tests | tr '\\n' ,)\"")


def test_a_script_the_tests_run_cannot_forge_the_reward_or_read_the_tests(tmp_path):
    script = f"#!/bin/bash\n{FORGER}\n"
    command = f"cat > /app/greet.sh <<'EOF'\n{script}EOF\nchmod +x /app/greet.sh"
    result, _ = attack(tmp_path, suite_task("greet-script"), command)
    contained(result)
    # The script listed /tests and found it empty; it printed its own stdout, nothing of /tests.
    assert "printed 'seen:\\n'" in result.verifier_tail, result.verifier_tail[-1500:]
    plain = without_nested_sandbox(suite_task("greet-script"), tmp_path)
    succeeded(attack(tmp_path / "undefended", plain, command)[0])


MODULE_FORGER = (
    "import os, signal\nos.makedirs('/logs/verifier', exist_ok=True)\n"
    "open('/logs/verifier/reward.txt', 'w').write('1')\nos.kill(os.getppid(), signal.SIGKILL)")


def test_a_module_the_tests_load_cannot_forge_the_reward(tmp_path):
    command = f"cat > /app/stats.py <<'EOF'\n{MODULE_FORGER}\nEOF"
    contained(attack(tmp_path, suite_task("fix-median"), command)[0])
    plain = without_nested_sandbox(suite_task("fix-median"), tmp_path)
    succeeded(attack(tmp_path / "undefended", plain, command)[0])


def test_git_config_commands_cannot_forge_the_reward(tmp_path):
    hook = "sh -c 'mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; kill -9 $PPID'"
    commands = ("git clone -q /app/project.bundle /app/project",
                f"git -C /app/project config core.fsmonitor \"{hook}\" && "
                f"git -C /app/project config core.pager \"{hook}\"")
    contained(attack(tmp_path, suite_task("git-revert-bad-commit"), *commands)[0])
    plain = without_nested_sandbox(suite_task("git-revert-bad-commit"), tmp_path)
    succeeded(attack(tmp_path / "undefended", plain, *commands)[0])


def test_a_link_into_the_hidden_tests_does_not_cross_over(tmp_path):
    """Were the link followed, the test's message would quote the file it reads."""
    result, _ = attack(tmp_path, suite_task("create-greeting-file"),
                       "ln -s /tests/test_outputs.py /app/greeting.txt")
    contained(result)
    assert "from pathlib import Path" not in result.verifier_tail
    assert "artifact entries refused" in result.verifier_tail


# The reward file replaced by something else while the tests run (a user's task whose tests run
# the agent's check.sh), then read by the host, as root.
REWARD_SWAPS = {
    "symlink to a root-only host file": "ln -sf {secret} /logs/verifier/reward.txt",
    "symlink to the host process's environment": "ln -sf /proc/self/environ /logs/verifier/reward.txt",
    "FIFO nobody writes": "rm -f /logs/verifier/reward.txt; mkfifo /logs/verifier/reward.txt",
    "directory": "rm -f /logs/verifier/reward.txt; mkdir /logs/verifier/reward.txt",
    "huge sparse file": "truncate -s 200M /logs/verifier/reward.txt",
    "secret-looking text": "echo 'sk-live-{marker}' > /logs/verifier/reward.txt",
    "infinite reward": "rm -f /logs/verifier/reward.txt; echo '{{\"reward\": 1e999}}' > /logs/verifier/reward.json",
    "NaN reward": "echo nan > /logs/verifier/reward.txt",
}
CHECKING_TEST_SH = """#!/bin/bash
echo 0 > /logs/verifier/reward.txt
bash /app/check.sh
echo "check.sh exited $?"
"""


# What each swap does to a reader without the defences (naive_read_reward): quote a host secret
# or the host's environment, or store a reward that is not a finite number (inf and NaN are
# written as null, so the result file no longer loads: the rollout is lost). The FIFO, the directory and the 200 MB file would
# hang, crash or flood such a reader: test_read_reward_refuses_special_files_without_blocking
# covers the reader on those alone.
SWAP_HARMS = {"symlink to a root-only host file": "leak",
              "symlink to the host process's environment": "leak",
              "secret-looking text": "leak", "infinite reward": "unstorable",
              "NaN reward": "unstorable"}
# The first entry of the host process's environment as the kernel shows it (what
# /proc/self/environ holds; variables set later in this process are not in it).
HOST_ENV = Path("/proc/self/environ").read_bytes().split(b"\0")[0].decode(errors="replace")


def naive_read_reward(logs: Path) -> tuple[float | None, str]:
    """tasks/reward.py's job done without its defences: links followed, the whole file read,
    any float accepted, what does not parse quoted."""
    for name in ("reward.txt", "reward.json"):
        path = logs / name
        if path.exists():
            text = path.read_text(errors="replace")
            try:
                return float(json.loads(text)["reward"] if name == "reward.json" else text), ""
            except (ValueError, KeyError, TypeError):
                return None, f"bad reward file: {text!r}"
    return None, "no reward file"


def swap_attack(tmp_path: Path, how: str, factory=BwrapSandbox.for_task):
    """One REWARD_SWAPS attack in the sandbox `factory` makes."""
    tmp_path.mkdir()
    secret = tmp_path / "root-only.txt"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    swap = REWARD_SWAPS[how].format(secret=secret, marker=SECRET)
    os.environ["EVO_REDTEAM_KEY"] = SECRET  # in the host process's /proc/self/environ
    try:
        task = user_task(tmp_path, test_sh=CHECKING_TEST_SH)
        quoted = swap.replace('"', '\\"')  # through the agent's shell into check.sh intact
        result, _ = attack(tmp_path, task,
                           f"printf '%s\\n' \"{quoted}; kill -9 \\$PPID\" > /app/check.sh",
                           factory=factory)
    finally:
        del os.environ["EVO_REDTEAM_KEY"]
    return result


def swapped_reward_is_read_safely(tmp_path: Path, how: str, factory=BwrapSandbox.for_task) -> None:
    """One REWARD_SWAPS attack in the sandbox `factory` makes; it must be contained."""
    result = swap_attack(tmp_path / "defended", how, factory)
    contained(result)
    shown = result.verifier_tail + result.exit_reason  # the agent's own command aside
    assert SECRET not in shown and HOST_ENV not in shown
    assert "unreadable reward file" in result.verifier_tail or "no reward file" in result.verifier_tail


@pytest.mark.parametrize("how", list(REWARD_SWAPS))
def test_whatever_replaces_the_reward_file_is_read_safely(tmp_path, monkeypatch, how):
    swapped_reward_is_read_safely(tmp_path, how)
    if how not in SWAP_HARMS:
        return
    monkeypatch.setattr(verifier, "read_reward", naive_read_reward)
    if SWAP_HARMS[how] == "unstorable":
        with pytest.raises(ValidationError, match="reward"):
            swap_attack(tmp_path / "undefended", how)
        return
    undefended = swap_attack(tmp_path / "undefended", how)
    assert SECRET in undefended.verifier_tail or HOST_ENV in undefended.verifier_tail, (
        undefended.outcome, undefended.verifier_tail[-500:])


def test_read_reward_refuses_special_files_without_blocking(tmp_path):
    """The host-side reader alone, on each kind of file, including a device (as root)."""
    kinds = {"fifo": lambda p: os.mkfifo(p), "dir": lambda p: p.mkdir(),
             "link": lambda p: p.symlink_to("/etc/hostname"),
             "big": lambda p: (p.touch(), os.truncate(p, 1 << 30))}
    if os.geteuid() == 0:
        kinds["device"] = lambda p: os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    for kind, make in kinds.items():
        logs = tmp_path / kind
        logs.mkdir()
        make(logs / "reward.txt")
        value, problem = read_reward(logs)
        assert value is None and problem.startswith("unreadable reward file"), (kind, problem)
    hard = tmp_path / "hard"
    hard.mkdir()
    (tmp_path / "outside").write_text("1")
    os.link(tmp_path / "outside", hard / "reward.txt")
    assert read_reward(hard)[0] is None


def test_verifier_env_values_are_never_shell_expanded(tmp_path, sandbox_factory):
    toml = '[verifier.env]\nEVO_PROBE = "$(touch /app/ran)`touch /app/ran2`"\n'
    test_sh = ('#!/bin/bash\n[ "$EVO_PROBE" = \'$(touch /app/ran)`touch /app/ran2`\' ] '
               '&& [ ! -e /app/ran ] && [ ! -e /app/ran2 ] && echo 1 > /logs/verifier/reward.txt\n')
    task = user_task(tmp_path, test_sh=test_sh, toml=toml)
    result, _ = attack(tmp_path, task, "true", factory=sandbox_factory)
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


@pytest.mark.parametrize("field, raw, shown", [
    ("verifier.timeout_sec", "inf", "inf"),
    ("verifier.timeout_sec", "1e308", "1e+308"),
    ("verifier.timeout_sec", "nan", "nan"),
    ("verifier.pass_reward", "inf", "inf"),
    ("agent.timeout_sec", "inf", "inf"),
    ("environment.memory_mb", "1000000000000000", "1000000000000000"),
    ("environment.cpus", "100000", "100000"),
    ("environment.storage_mb", "1000000000000", "1000000000000"),
    ("agent.user", '"root"', "root"),
    ("verifier.env", '{"A B" = "x"}', "A B"),
    ("artifacts", '["/etc/passwd"]', "/etc/passwd"),
])
def test_bad_task_values_are_refused_at_load_naming_file_field_value(tmp_path, field, raw, shown):
    sections = {"verifier": {"timeout_sec": "60.0"}, "agent": {"timeout_sec": "120.0"},
                "environment": {}}
    section, _, key = field.rpartition(".")
    top = {key: raw} if not section else {}
    if section:
        sections[section][key] = raw
    text = "".join(f"{k} = {v}\n" for k, v in top.items()) + "".join(
        f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items())
        for name, values in sections.items())
    root = Path(user_task(tmp_path, test_sh="#!/bin/bash\n").root)
    (root / "task.toml").write_text(text)
    with pytest.raises(ValidationFailed) as info:
        load_task(root)
    [problem] = info.value.problems
    assert problem.file == str(root / "task.toml") and problem.field.startswith(field)
    assert shown in str(problem), str(problem)


def test_the_judge_refuses_a_link_into_the_tests_in_a_shared_verifier(tmp_path):
    """The same attack where Harbor runs the built-in task with a shared verifier: the judge
    itself looks for such links before any test reads /app."""
    root = Path(shutil.copytree(suite_task("create-greeting-file").root, tmp_path / "shared"))
    toml = (root / "task.toml").read_text().replace('environment_mode = "separate"', "")
    (root / "task.toml").write_text(toml)
    task = load_task(root)
    assert task.config.verifier.environment_mode == "shared"
    result, _ = attack(tmp_path, task, "ln -s /tests/test_outputs.py /app/greeting.txt")
    contained(result)
    assert "links under /app lead into the hidden tests" in result.verifier_tail
    assert "from pathlib import Path" not in result.verifier_tail
    judge = root / "tests" / "judge.py"  # the control: the judge without its look for links
    judge.write_text(judge.read_text().replace("bad = _links_into_hidden()", "bad = []"))
    undefended, _ = attack(tmp_path / "undefended", load_task(root),
                           "ln -s /tests/test_outputs.py /app/greeting.txt")
    assert "from pathlib import Path" in undefended.verifier_tail  # the test quoted the tests


def test_an_artifact_path_through_a_link_does_not_copy_host_files(tmp_path):
    """artifacts = ["/app/out/hostname"] with the agent's /app/out -> /etc: followed on the host,
    the copy would take the host's /etc/hostname into the verifier's sandbox."""
    test_sh = '#!/bin/bash\ncat /app/out/hostname 2>&1; echo 0 > /logs/verifier/reward.txt\n'
    task = user_task(tmp_path, test_sh=test_sh,
                     replace={"[verifier]\n": '[verifier]\nenvironment_mode = "separate"\n',
                              'version = "1.0"\n': 'version = "1.0"\nartifacts = ["/app/out/hostname"]\n'})
    result, _ = attack(tmp_path, task, "ln -s /etc /app/out")
    contained(result)
    assert Path("/etc/hostname").read_text().strip() not in result.verifier_tail
    assert "No such file" in result.verifier_tail and "artifact entries refused" in result.verifier_tail


def test_without_a_nested_sandbox_the_judge_still_writes_the_reward(tmp_path):
    """Where user namespaces are refused (Docker under Harbor) the judge runs agent code as plain
    children, simulated here with a PATH that has no bwrap. The script then sees /tests, and could
    kill the judge (same uid) and leave its own reward: the README states both limits. What still
    holds: the reward it writes and the writer it leaves running are gone before the judge's.
    (No control here: without the judge's last word the writer races the sandbox's end.)"""
    forger = FORGER.replace("kill -9 $PPID 1 2>/dev/null; ", "").replace(
        "done) &", "done) >/dev/null 2>&1 &")  # a writer that outlives the script, detached
    result, _ = attack(tmp_path, without_nested_sandbox(suite_task("greet-script"), tmp_path),
                       f"cat > /app/greet.sh <<'EOF'\n#!/bin/bash\n{forger}\nEOF\nchmod +x /app/greet.sh")
    contained(result)
    assert "seen:bin,judge.py,test.sh,test_outputs.py," in result.verifier_tail


# A separate verifier's artifacts: links that lead into the hidden tests only through each other.
ANSWER = "the hidden answer 42\n"
COMPARING_TEST_SH = ("#!/bin/bash\nif cmp -s /app/out.txt /tests/expected.txt; then echo 1; "
                     "else echo 0; fi > /logs/verifier/reward.txt\n")
LINK_CHAIN = "ln -s 'zz/../tests/expected.txt' out.txt && ln -s . zz"  # issue 21's


def _comparing_task(tmp_path, test_sh=COMPARING_TEST_SH):
    """A plain Harbor task whose tests compare an /app file with a reference under /tests."""
    return user_task(tmp_path, test_sh=test_sh, files={"tests/expected.txt": ANSWER},
                     replace={"[verifier]\n": '[verifier]\nenvironment_mode = "separate"\n',
                              'version = "1.0"\n': 'version = "1.0"\nartifacts = ["/app"]\n'})


def test_a_chain_of_links_into_the_tests_does_not_cross_over(tmp_path, sandbox_factory):
    """tar's filter checks `out.txt` before `zz` exists, when its target still looks inside
    /app; every link is checked again against the final tree."""
    result, _ = attack(tmp_path, _comparing_task(tmp_path), LINK_CHAIN, factory=sandbox_factory)
    contained(result)
    assert "1 artifact entries refused" in result.verifier_tail  # out.txt; zz -> . is harmless


def test_the_chain_of_links_passes_with_the_final_check_off(tmp_path, monkeypatch):
    """The attack is real: without the check against the final tree, it passes the task."""
    monkeypatch.setattr("evoharness.tasks.verifier.drop_escaping_links", lambda app, names: [])
    result, _ = attack(tmp_path, _comparing_task(tmp_path), LINK_CHAIN)
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


def test_links_that_stay_in_app_cross_over(tmp_path, sandbox_factory):
    test_sh = ('#!/bin/bash\n[ "$(cat /app/out.txt)" = inside ] && [ -L /app/out.txt ] '
               '&& echo 1 > /logs/verifier/reward.txt\n')
    result, _ = attack(tmp_path, _comparing_task(tmp_path, test_sh),
                       "mkdir d && echo inside > d/f && ln -s d dl && ln -s zz/dl/f out.txt "
                       "&& ln -s . zz", factory=sandbox_factory)
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail
