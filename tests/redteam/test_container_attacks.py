"""The host sandbox's reward-file and artifact attacks replayed in the container backend, each
driven through the runner with a scripted agent, a real engine and the real verifier: whatever the
agent leaves in place of the reward file is read safely by the host, a link in /app does not carry
the hidden tests or a host file across to a separate verifier, a process left running cannot write
the reward, and the agent's container has no /logs to write to."""
from __future__ import annotations

import os

import pytest

from evoharness.tasks.sandbox.environments import EnvironmentSettings, environments
from evoharness.tasks.task import load_task
from tests.fixtures.containers import container_home, needs_engine

from .test_verifier_attacks import REWARD_SWAPS, SECRET, swapped_reward_is_read_safely
from .verifier_rollout import attack, contained, user_task

pytestmark = needs_engine
__all__ = ["container_home"]  # the fixture, used by name


@pytest.fixture
def in_container(container_home):
    """The container factory over the test base, which stands in for hello-world's ubuntu."""
    return environments(EnvironmentSettings(kind="container", home=container_home))


@pytest.mark.parametrize("how", list(REWARD_SWAPS))
def test_whatever_replaces_the_reward_file_is_read_safely(tmp_path, in_container, how):
    swapped_reward_is_read_safely(tmp_path, how, factory=in_container)


SEPARATE = {"[verifier]\n": '[verifier]\nenvironment_mode = "separate"\n'}


def test_an_artifact_path_through_a_link_does_not_copy_host_files(tmp_path, in_container):
    test_sh = '#!/bin/bash\ncat /app/out/hostname 2>&1; echo 0 > /logs/verifier/reward.txt\n'
    task = user_task(tmp_path, test_sh=test_sh, replace={
        **SEPARATE, 'version = "1.0"\n': 'version = "1.0"\nartifacts = ["/app/out/hostname"]\n'})
    result, _ = attack(tmp_path, task, "ln -s /etc /app/out", factory=in_container)
    contained(result)
    assert open("/etc/hostname").read().strip() not in result.verifier_tail
    assert "No such file" in result.verifier_tail and "artifact entries refused" in result.verifier_tail


def test_a_link_into_the_hidden_tests_does_not_cross_over(tmp_path, in_container):
    """Were the link kept, the verifier's `cat` would print its own test.sh."""
    test_sh = ('#!/bin/bash\n# marker-in-the-hidden-test\ncat /app/answer.txt 2>&1\n'
               'echo 0 > /logs/verifier/reward.txt\n')
    task = user_task(tmp_path, test_sh=test_sh, replace={
        **SEPARATE, 'version = "1.0"\n': 'version = "1.0"\nartifacts = ["/app"]\n'})
    result, _ = attack(tmp_path, task, "ln -s /tests/test.sh /app/answer.txt",
                       factory=in_container)
    contained(result)
    assert "marker-in-the-hidden-test" not in result.verifier_tail.split("cat /app")[-1]
    assert "artifact entries refused" in result.verifier_tail


def test_a_process_left_running_cannot_write_the_reward(tmp_path, in_container):
    """The verifier waits, then writes nothing: a writer the agent left (or a reward it wrote
    into a /logs of its own) would make this a pass."""
    test_sh = "#!/bin/bash\nsleep 2\n"
    task = user_task(tmp_path, test_sh=test_sh)
    result, outputs = attack(
        tmp_path, task,
        "nohup setsid sh -c 'while :; do mkdir -p /logs/verifier; echo 1 > "
        "/logs/verifier/reward.txt; sleep 0.05; done' >/dev/null 2>&1 & sleep 0.3; "
        "ls /logs/verifier", factory=in_container)
    contained(result)
    assert "no reward file" in result.verifier_tail
    # The agent's container had no /logs: it could not even make one at /.
    assert "Permission denied" in outputs[0] or "No such file" in outputs[0]


def test_nothing_of_the_hosts_environment_reaches_the_agent(tmp_path, in_container):
    task = load_task(user_task(tmp_path, test_sh="#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
                               ).root)
    os.environ["EVO_REDTEAM_KEY"] = SECRET  # what an API key in the driver's environment is
    try:
        result, outputs = attack(tmp_path, task, "env; touch /harness/x", factory=in_container)
    finally:
        del os.environ["EVO_REDTEAM_KEY"]
    assert result.outcome.value == "pass"  # the task's own test passes: the setup works
    assert "PATH=" in outputs[0] and SECRET not in outputs[0]
    assert "Read-only file system" in outputs[0]


def test_the_images_environment_does_not_lead_the_verifier_into_app(tmp_path, in_container):
    """An image whose ENV puts /app on PATH and names a bash startup file there (a Dockerfile
    may): the verifier's commands get neither, so the agent's files are not what runs."""
    forge = "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n"
    task = user_task(tmp_path, test_sh="#!/bin/bash\ncat /app/hello.txt >/dev/null 2>&1\n",
                     files={"environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n"
                            "ENV PATH=/app/bin:/usr/bin:/bin BASH_ENV=/app/startup.sh\n"})
    result, _ = attack(tmp_path, task, f"mkdir -p /app/bin && printf '{forge}' | tee /app/bin/cat "
                       "/app/startup.sh >/dev/null && chmod +x /app/bin/cat /app/startup.sh",
                       factory=in_container)
    contained(result)


def test_the_verifier_is_never_the_images_user(tmp_path, in_container):
    """With no agent.user, the agent runs as the image's USER; the verifier must not."""
    task = user_task(tmp_path, test_sh='#!/bin/bash\n[ "$(id -u)" != 4242 ] && '
                     "echo 1 > /logs/verifier/reward.txt\n",
                     files={"environment/Dockerfile": "FROM ubuntu:24.04\nRUN echo "
                            "'builder:x:4242:4242::/tmp:/bin/bash' >> /etc/passwd\n"
                            "WORKDIR /app\nUSER builder\n"})
    result, outputs = attack(tmp_path, task, "id -u", factory=in_container)
    assert outputs[0].startswith("4242")
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


NON_ROOT_IMAGE = ("FROM ubuntu:24.04\nRUN echo 'builder:x:4242:4242::/tmp:/bin/bash' >> "
                  "/etc/passwd\nWORKDIR /app\nRUN chown 4242 /app\nUSER builder\n")


def test_an_image_with_a_non_root_user_runs_every_command(tmp_path, in_container):
    """The agent is the image's USER; neither the wrapper's `kill -9 -1` after each command nor
    the agent's own `kill 1` may end the container (command 1 ran, every later one exited 255)."""
    task = user_task(tmp_path, test_sh='#!/bin/bash\n[ "$(cat /app/out.txt)" = done ] && '
                     "echo 1 > /logs/verifier/reward.txt\n",
                     files={"environment/Dockerfile": NON_ROOT_IMAGE})
    result, outputs = attack(tmp_path, task, "id -u", "kill -9 -1; echo unreached",
                             "kill 1; kill -9 1; echo survived", "echo done > /app/out.txt",
                             factory=in_container)
    assert outputs[0].startswith("4242") and "survived" in outputs[2], outputs
    assert (result.outcome.value, result.reward) == ("pass", 1.0), (outputs,
                                                                    result.verifier_tail)


# Each fake records who ran it, then does the real thing.
FAKE = '#!/bin/sh\\nid -u >> /app/ran-fakes\\nexec /usr/bin/NAME "$@"\\n'
PLANTED_IMAGE = ("FROM ubuntu:24.04\nWORKDIR /app\nRUN mkdir /app/bin && touch /app/ran-fakes && "
                 "chmod 666 /app/ran-fakes && " + " && ".join(
                     f"printf '{FAKE.replace('NAME', n)}' > /app/bin/{n} && chmod 755 /app/bin/{n}"
                     for n in ("cat", "bash", "kill", "sh")) +
                 "\nENV PATH=/app/bin:/usr/local/bin:/usr/bin:/bin\n")


def test_the_host_never_runs_a_command_the_image_put_on_path(tmp_path, in_container):
    """/app/bin first on PATH holds a fake cat, bash, kill and sh: the host's own commands in the
    container (the shell each command runs in, the kill after a timeout, the memory check after
    a kill) must not run them, as the agent or as root."""
    task = user_task(tmp_path, test_sh="#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
                     files={"environment/Dockerfile": PLANTED_IMAGE},
                     replace={"memory_mb = 2048": "memory_mb = 64"})
    box = in_container(task)
    try:
        said = box.exec("echo $PATH", timeout=60)
        assert said.output.startswith("/app/bin:"), said.output
        assert box.exec("tail /dev/zero", timeout=60).exit_reason == "memory_limit"
        assert box.exec("exec sleep 300", timeout=1).exit_reason == "timeout"
        ran = (box.app_dir / "ran-fakes").read_text()
    finally:
        box.close()
    assert ran == "", ran


def test_a_container_stopped_from_outside_is_the_sandboxs_failure(tmp_path, in_container):
    """Not the agent's doing (it cannot end the container): the rollout's infra error."""
    from tests.fixtures.containers import ENGINE

    task = user_task(tmp_path, test_sh="#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    box = in_container(task)
    try:
        assert box.exec("true", timeout=60).exit_code == 0
        ENGINE.run(["kill", box.name])
        ENGINE.run(["wait", box.name], timeout=120)  # it has stopped, not only been signalled
        assert box.exec("echo hi", timeout=60).exit_reason == "sandbox_error"
    finally:
        box.close()


# Two files of 15 MB, each deleted while still open (so no walk of paths sees them) and held
# until the command ends: 30 MB on a 20 MB disk. One file stays under RLIMIT_FSIZE's 20 MB.
# Written, the command holds them until the watchdog ends it.
HIDDEN_WRITES = ("exec 3>{dir}/a 4>{dir}/b; rm {dir}/a {dir}/b; head -c 15M /dev/zero >&3 && "
                 "head -c 15M /dev/zero >&4 || exit 1; echo wrote-both; "
                 "while :; do sleep 0.1; done")


@pytest.mark.parametrize("where", ["/app", "/var/tmp"])
def test_files_deleted_while_open_count_against_the_disk(tmp_path, in_container, where):
    """In /app the kernel refuses the write (the volume is full); in the writable layer the
    watchdog counts what the container's processes hold and ends the command."""
    task = user_task(tmp_path, test_sh="#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
                     replace={"storage_mb = 10240": "storage_mb = 20"})
    box = in_container(task)
    try:
        done = box.exec(HIDDEN_WRITES.format(dir=where), timeout=120)
    finally:
        box.close()
    if where == "/app":
        assert "No space left" in done.output and "wrote-both" not in done.output, done
    else:
        assert done.exit_reason == "disk_limit", done
