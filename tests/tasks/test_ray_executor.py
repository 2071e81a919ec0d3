"""tasks/ray_executor.py on a local Ray instance (2 CPUs, no dashboard) in namespaces of its own
(tests/fixtures/ray_scenarios.py): a scripted evolve decides the same as with the local executor
(verdicts, manifests, every phase's result, a verifier in a separate sandbox), a worker killed
mid-rollout has its rollout run again, a node without bwrap says so in each rollout; an unreachable cluster is a clear error, and the CLI does not import Ray."""
from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.ray_scenarios import API_KEY, launch, namespaces_available

from .conftest import needs_bwrap

pytestmark = needs_bwrap
in_namespaces = pytest.mark.skipif(not namespaces_available(),
                                   reason="needs root and unshare for a private network")
ROOT = Path(__file__).resolve().parents[2]
EVOHARNESS = str(Path(sys.executable).parent / "evoharness")


@pytest.fixture(scope="module")
def ci(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return launch("ci", tmp_path_factory.mktemp("ray-ci"), timeout=600)


@pytest.mark.slow  # the module's scenario: two evolves with trials on Ray
@in_namespaces
def test_a_ray_evolve_decides_as_the_local_one(ci: dict) -> None:
    local, on_ray = ci["local"], ci["ray"]
    assert on_ray["rollouts"] == local["rollouts"]
    assert on_ray["manifests"] == local["manifests"]
    assert on_ray["judgements"] == local["judgements"]
    assert on_ray["phases"] == local["phases"]  # every phase's typed result in the ledger
    # The scripted run is not trivial: one change kept, one reverted, outcomes that moved.
    assert [j["verdict"]["decision"] for j in local["judgements"]] == ["keep", "revert"]
    assert {r[2] for r in local["rollouts"]} == {"pass", "fail"}
    # write-gamma's verifier runs in a separate sandbox: it passes only if /app crossed over.
    assert {r[2] for r in local["rollouts"] if "write-gamma" in r[0]} == {"pass", "fail"}
    assert on_ray["repeats"] == 0 and len(on_ray["files"]) == len(on_ray["rollouts"])


@pytest.mark.slow  # the module's scenario: two evolves with trials on Ray
@in_namespaces
def test_each_rollout_records_the_node_that_ran_it(ci: dict) -> None:
    [local_node] = ci["local"]["nodes"]
    [ray_node] = ci["ray"]["nodes"]
    assert local_node == socket.gethostname()
    host, _, node_id = ray_node.partition("/")
    assert host == socket.gethostname() and len(node_id) == 56  # Ray's hex node id


@pytest.mark.slow  # the module's scenario: two evolves with trials on Ray
@in_namespaces
def test_a_killed_worker_has_its_rollout_run_again_once(ci: dict) -> None:
    killed = ci["killed"]
    assert killed["finished"]
    # The first killed worker's rollout ran again while the other worker still held its own.
    assert killed["held_after_first_kill"]
    # Ray says ActorDiedError, or ActorUnavailableError when the call failed before Ray's control
    # store had marked it dead (as a killed node gave in the cluster test): either way, lost.
    lost = killed["lost"]
    assert len(lost) == 2, lost
    assert all(re.search(r": Actor(Died|Unavailable)Error: ", message) for message in lost), lost
    rollouts = killed["summary"]["rollouts"]
    assert len(rollouts) == 3 and killed["summary"]["repeats"] == 0
    assert {r[2] for r in rollouts} == {"fail"}  # the seed harness: none is an infra_error
    [node] = killed["summary"]["nodes"]
    run_again = [r[0] for r in rollouts if any(f"again elsewhere: {r[0]} on node {node}: " in m
                                               for m in lost)]
    assert len(run_again) == 2, lost  # two different rollouts, each lost once


@in_namespaces
def test_a_node_without_bwrap_gives_infra_errors_naming_it(tmp_path: Path) -> None:
    result = launch("no_bwrap", tmp_path, timeout=600)

    [node] = result["nodes"]
    assert result["rollouts"] and all(r[2] == "infra_error" for r in result["rollouts"])
    for _, _, _, reason, _ in result["rollouts"]:
        assert reason.startswith("sandbox_error: bubblewrap (bwrap) is not installed")
        assert reason.endswith(f"on node {node}")


@pytest.mark.slow  # a Ray cluster and three scripted runs
@in_namespaces
def test_workers_get_the_model_env_and_a_rollout_lost_thrice_is_an_infra_error(tmp_path):
    """docs/scale-out.md: the driver's OLLAMA_HOST and OPENAI_API_KEY reach the workers (the
    cluster was started without them); a rollout whose worker dies is run again, at most 3
    times, then recorded as an infra_error naming the node."""
    result = launch("model_env_and_losses", tmp_path, timeout=900)

    for kind in ("ollama", "openai"):
        [(_, _, outcome, reason, _)] = result["reached"][kind]
        assert (outcome, reason) == ("fail", "done"), (kind, reason)  # the server answered
    assert result["requests"] == 2
    assert result["authorizations"] == ["", f"Bearer {API_KEY}"]  # openai: the key in its header
    lost = result["lost"]
    assert lost["finished"] and lost["killed"] == 3
    [(_, _, outcome, reason, _)] = lost["summary"]["rollouts"]
    [node] = lost["summary"]["nodes"]
    assert outcome == "infra_error" and reason.startswith("worker lost 3 times, last on node ")
    assert node in reason
    again = [m for m in lost["messages"] if "running it again elsewhere" in m]
    assert len(again) == 2 and any("recorded as infra_error" in m for m in lost["messages"])


def test_an_unreachable_cluster_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    with socket.socket() as free:  # a loopback port nothing listens on
        free.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{free.getsockname()[1]}"
    run_dir = tmp_path / "run"
    subprocess.run([EVOHARNESS, "init", str(run_dir), "--tasks", "tests/fixtures/e2e_suite",
                    "--model", "scripted:run-line", "--executor", "ray"], cwd=ROOT, check=True,
                   capture_output=True)

    done = subprocess.run([EVOHARNESS, "run", str(run_dir), "--ray-address", address],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot reach the Ray cluster at {address}" in done.stderr
    assert "ray_address" in done.stderr and "Traceback" not in done.stderr
    assert not list(run_dir.glob("iterations/*/rollouts/*.json"))


def test_the_cli_does_not_import_ray() -> None:
    code = "import sys; from evoharness.evolve.cli import app; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
