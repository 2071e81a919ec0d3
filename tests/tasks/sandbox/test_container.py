"""The container backend through a real engine (podman, as install.sh installs it): a task whose
Dockerfile installs a command this host lacks fails on the host and passes in its image; the
agent never sees the hidden tests; images are built once per content; a failed build and a base
that cannot be had are each a task's clear report before any rollout; `env setup` makes a base
from a root filesystem with this host's CA; the limits hold in the container; and the `auto`
rule leaves the project's own tasks on the host."""
from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.evolve.cli import main
from evoharness.errors import ValidationFailed
from evoharness.tasks.sandbox.bases import HOST_CA, load_map, setup_base
from evoharness.tasks.sandbox.engine import find_engine
from evoharness.tasks.sandbox.environments import EnvironmentSettings, Environments, environments
from evoharness.tasks.sandbox.images import ImageBuilder
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_task
from tests.fixtures.containers import (
    ENGINE, TOOL, container_home, host_files, make_rootfs, needs_engine, tool_task, unique,
)
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness

pytestmark = needs_engine
ROOT = Path(__file__).resolve().parents[3]
__all__ = ["container_home"]  # the fixture, used by name


def _exit(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


def _in_container(home: Path, **extra) -> Environments:
    return environments(EnvironmentSettings(kind="container", home=home, **extra))


def _rollout(tmp_path: Path, task, factory, *commands: str) -> tuple[RolloutResult, list[str]]:
    model = ScriptedModel([json_action("shell", command=c) for c in commands]
                          + [json_action("done", summary="finished")])
    [path] = run_rollouts(load_harness(SEED_DIR), "seed", [(task, "train")], model, run_id="ct",
                          iteration=0, out_dir=tmp_path / "rollouts", sandbox_factory=factory)
    result = RolloutResult.model_validate_json(path.read_text())
    return result, [str(e.content) for e in result.events if e.kind == "tool_result"]


def test_a_task_needing_its_image_fails_on_the_host_and_passes_in_it(tmp_path, container_home,
                                                                    monkeypatch, capsys):
    assert shutil.which(TOOL) is None  # what makes the host fail it
    task = tool_task(tmp_path / "needs-tool")
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    monkeypatch.setenv("COLUMNS", "1000")  # a path stays on one line
    assert _exit(["tasks", "check", str(task), "--environment", "host", "--json"]) == 1
    [host] = json.loads(capsys.readouterr().out)
    assert host["where"] == "host" and not host["oracle"]["passed"]
    assert f"{TOOL}: command not found" in host["oracle"]["output_tail"]
    # `auto` puts it in its image: its Dockerfile builds something and an engine works here.
    assert _exit(["tasks", "check", str(task), "--json"]) == 0
    [inside] = json.loads(capsys.readouterr().out)
    assert inside["where"] == f"container ({ENGINE.name})" and inside["ok"], inside


def test_the_agent_sees_the_image_but_never_the_hidden_tests(tmp_path, container_home):
    task = tool_task(tmp_path / "look")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\n[ -f /tests/test.sh ] && [ -f /app/built.txt ] && [ ! -e /app/seen ] "
        "&& echo 1 > /logs/verifier/reward.txt\n")
    result, outputs = _rollout(tmp_path, load_task(task), _in_container(container_home),
                               f"{TOOL} hi; ls -A /; ls /tests /logs; cat /app/built.txt; id -u",
                               "ls /tests >/dev/null 2>&1 && touch /app/seen; true")
    assert f"{TOOL} says hi" in outputs[0] and "built" in outputs[0]
    assert "cannot access '/tests'" in outputs[0] and "cannot access '/logs'" in outputs[0]
    assert outputs[0].split()[-4] != "0"  # not root: the last line before [exit code: N]
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


def test_a_separate_verifier_gets_the_images_app_and_only_the_artifacts(tmp_path,
                                                                        container_home):
    task = load_task(tool_task(tmp_path / "separate", toml='artifacts = ["/app/out.txt"]\n'
                               '[verifier.environment]\n'))
    assert task.config.verifier.environment_mode == "separate"
    result, _ = _rollout(tmp_path, task, _in_container(container_home),
                         f"{TOOL} hello > /app/out.txt; rm /app/built.txt; echo x > /app/extra")
    # built.txt comes back from the image; the agent's other files do not cross over.
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


def test_images_are_built_once_per_content_and_the_log_is_kept(tmp_path, container_home):
    said: list[str] = []
    logs = tmp_path / "builds"
    builder = ImageBuilder(ENGINE, container_home, load_map(container_home), logs)
    task = load_task(tool_task(tmp_path / "cached"))
    first = builder.ensure(task, said.append)
    again = builder.ensure(task, said.append)
    assert first == again and len([s for s in said if "building" in s]) <= 1
    log = (logs / "cached.log").read_text()
    assert "stand-in" in log and "ubuntu:24.04" in log and "bases.toml" in log
    (task.environment_dir / "more.txt").write_text("new\n")
    changed = builder.ensure(task, said.append)
    assert changed.key != first.key and changed.ref != first.ref


def test_a_failed_build_is_the_tasks_error_before_any_rollout(tmp_path, container_home,
                                                              monkeypatch, capsys):
    suite = tmp_path / "suite"
    tool_task(suite / "breaks", dockerfile_tail="RUN echo broken-step-output && exit 3\n")
    (suite / "suite.toml").write_text('[split]\ntrain = ["breaks"]\nheldout = []\n')
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    monkeypatch.setenv("COLUMNS", "1000")  # a path stays on one line
    assert _exit(["init", str(tmp_path / "run"), "--tasks", str(suite), "--model",
                  "scripted:done", "--environment", "container"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert str(suite / "breaks" / "environment" / "Dockerfile") in said
    assert "exit 3" in said and "broken-step-output" in said and "build log" in said
    assert not (tmp_path / "run").exists()  # no run, so no rollout
    executor = Environments(EnvironmentSettings(kind="container", home=container_home), None)
    with pytest.raises(ValidationFailed):
        executor.prepare([load_task(suite / "breaks")]).raise_problems()


def test_a_task_whose_base_cannot_be_had_is_skipped_with_its_reason(tmp_path, container_home,
                                                                    monkeypatch, capsys):
    suite = tmp_path / "suite"
    tool_task(suite / "fine")
    tool_task(suite / "unmapped")
    dockerfile = suite / "unmapped" / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("ubuntu:24.04",
                                                         "evoharness.invalid/no-such-base:1"))
    (suite / "suite.toml").write_text('[split]\ntrain = ["fine", "unmapped"]\nheldout = []\n')
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    monkeypatch.setenv("COLUMNS", "1000")  # a path stays on one line
    assert _exit(["init", str(tmp_path / "run"), "--tasks", str(suite), "--model",
                  "scripted:done"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "skipped unmapped: base image 'evoharness.invalid/no-such-base:1'" in said
    assert "no bases.toml entry maps it" in said and "(1 tasks" in said
    assert yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())["task_ids"] == ["fine"]
    assert "unmapped:" in (tmp_path / "run" / "builds" / "skipped.txt").read_text()
    assert _exit(["tasks", "check", str(suite)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "skipped" in out and "1/2 tasks proven (1 could not run here)" in out


def test_env_setup_makes_a_base_with_this_hosts_ca_and_the_map(tmp_path):
    home = tmp_path / "home"
    image = f"{unique('localhost/evoharness-test/setup')}:1"
    rootfs = make_rootfs(tmp_path / "rootfs.tar", host_files())
    try:
        report = setup_base(ENGINE, home, rootfs=rootfs, image=image)
        assert ENGINE.image_id(image) == report.image_id
        inside = ENGINE.run(["run", "--rm", *ENGINE.ulimits(), image, "cat",
                             "/etc/ssl/certs/ca-certificates.crt"]).stdout
        assert inside == HOST_CA.read_bytes()
        env = ENGINE.text(["image", "inspect", "--format", "{{.Config.Env}}", image])
        assert "PIP_CERT=/etc/ssl/certs/ca-certificates.crt" in env
        assert load_map(home).stand_in("python:3.13-slim") == ("python:3*", image)
    finally:
        ENGINE.run(["rmi", "-f", image], check=False)


def test_memory_processes_network_and_disk_are_limited(tmp_path, container_home):
    root = tool_task(tmp_path / "limited")
    text = (root / "task.toml").read_text().replace("memory_mb = 512",
                                                    "memory_mb = 64\nstorage_mb = 20")
    (root / "task.toml").write_text(text)
    box = _in_container(container_home)(load_task(root))
    try:
        assert box.exec("tail /dev/zero", timeout=60).exit_reason == "memory_limit"
        assert not Path("oom").exists()  # conmon's note of it stays in the sandbox's directory
        # The kernel enforces the cgroup's process cap (a fork bomb would only wait on bash's
        # fork retries, 15 s): what is checked is that the container has the task's cap.
        pids = box.exec("cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null",
                        timeout=30)
        assert pids.output.split()[0] == str(box.limits.nproc), pids.output
        net = box.exec("echo > /dev/tcp/1.1.1.1/53", timeout=30)
        assert net.exit_code != 0 and "unreachable" in net.output.lower()
        full = box.exec("for i in $(seq 60); do head -c 1M /dev/zero > /var/tmp/f$i; sleep 0.1;"
                        " done", timeout=120)
        assert full.exit_reason == "disk_limit"
        slow = box.exec("sleep 300 & sleep 300", timeout=2)
        assert slow.exit_reason == "timeout"
        left = box.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '", timeout=30).output
        assert "sleep 300" not in left
    finally:
        box.close()
    assert ENGINE.run(["inspect", box.name], check=False).returncode != 0  # removed


def test_the_agents_user_is_the_images_named_user_or_a_fresh_one(tmp_path, container_home):
    root = tool_task(tmp_path / "users",
                     dockerfile_tail="RUN echo 'builder:x:4242:4242::/home/builder:/bin/bash' "
                                     ">> /etc/passwd\n")
    (root / "task.toml").write_text('version = "1.0"\n[agent]\nuser = "builder"\n')
    box = _in_container(container_home)(load_task(root))
    try:
        assert box.exec("id -u; echo $HOME", timeout=30).output.split() == ["4242", "/home/builder"]
    finally:
        box.close()
    (root / "task.toml").write_text('version = "1.0"\n[agent]\nuser = "stranger"\n')
    box = _in_container(container_home)(load_task(root))
    try:
        out = box.exec("id -un; id -u; touch /app/mine && echo writable", timeout=30).output
        assert out.split()[0] == "stranger" and out.split()[1] != "0" and "writable" in out
    finally:
        box.close()


def test_auto_runs_a_task_in_its_image_only_when_it_needs_it(tmp_path, container_home,
                                                            monkeypatch):
    auto = Environments(EnvironmentSettings(home=container_home), None)
    assert auto.in_container(load_task(tool_task(tmp_path / "needs")))
    assert not auto.in_container(load_task(ROOT / "tests/fixtures/tasks/hello-world"))
    assert not auto.in_container(load_task(ROOT / "tasks/suite/count-lines"))  # suite says host
    needs = load_task(tool_task(tmp_path / "no-engine"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-engines-here"))
    find_engine.cache_clear()
    try:
        assert not Environments(EnvironmentSettings(), None).in_container(needs)
    finally:
        find_engine.cache_clear()


def test_env_sweep_removes_only_containers_whose_owner_is_gone(tmp_path, container_home,
                                                               monkeypatch, capsys):
    import socket

    from evoharness.tasks.sandbox.engine import OWNER_LABEL, owner_label
    from evoharness.tasks.sandbox.leftovers import owned_dir
    from tests.fixtures.containers import base_image
    from tests.tasks.sandbox.test_owners import dead_token

    dead, live = unique("evo-sweep-dead"), unique("evo-sweep-live")
    owners = {dead: f"{socket.gethostname()}:{dead_token()}", live: owner_label()}
    left_dir = Path(tempfile.gettempdir()) / f"evo-box-{dead_token()}-{unique('x')}"
    (left_dir / "deep").mkdir(parents=True)  # a killed process's private folder
    live_dir = owned_dir("box")
    for name, owner in owners.items():
        ENGINE.run(["create", "--name", name, "--label", f"{OWNER_LABEL}={owner}", base_image(),
                    "true"])
    try:
        monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
        assert _exit(["env", "sweep"]) == 0
        swept = capsys.readouterr().out
        left = ENGINE.text(["ps", "-a", "--format", "{{.Names}}"]).split()
        assert dead not in left and live in left
        # Any sweep on this machine may remove it (a suite running beside this one sweeps at
        # every batch), so what is checked of this one's is that it names each it removed.
        said = re.fullmatch(r"removed (\d+) container\(s\) left by processes that are gone"
                            r"(?:: (.+))?\nremoved \d+ temporary folder\(s\) left by "
                            r"processes that are gone\n", swept)
        assert not left_dir.exists() and live_dir.is_dir()
        assert said, swept
        names = said.group(2).split(", ") if said.group(2) else []
        assert len(names) == int(said.group(1)) and live not in names, swept
        assert _exit(["env", "status", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["engine"] == ENGINE.name and status["bases"]["ubuntu:*"]["present"]
    finally:
        ENGINE.remove(list(owners))
        shutil.rmtree(live_dir, ignore_errors=True)
        shutil.rmtree(left_dir, ignore_errors=True)


def test_what_the_agent_left_is_compared_with_the_images_app(tmp_path, container_home):
    """The image built /app/built.txt: not the agent's, so not listed as added."""
    task = load_task(tool_task(tmp_path / "left"))
    model = ScriptedModel([json_action("shell", command=f"{TOOL} hello > /app/out.txt"),
                           json_action("done", summary="solved")])
    [path] = run_rollouts(load_harness(SEED_DIR), "seed", [(task, "train")], model, run_id="ct",
                          iteration=0, out_dir=tmp_path / "rollouts", keep_left=True,
                          sandbox_factory=_in_container(container_home))
    left = RolloutResult.model_validate_json(path.read_text()).left
    assert left is not None
    assert {(f.path, f.change) for f in left.files} == {("out.txt", "added")}, left.files
