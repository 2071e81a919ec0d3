"""Shared pytest setup. Fixture tasks carry their own hidden tests (tests/test_*.py) that only the
verifier may run, inside a sandbox: pytest must not collect them as project tests. The slow-mark
check (tests/slow_mark.py) runs in every session."""

collect_ignore_glob = ["fixtures/tasks/*"]
pytest_plugins = ["tests.slow_mark", "pytester"]

import os  # noqa: E402
import tempfile  # noqa: E402

# This machine's measured model speed (agent/clients/speed.py) is kept out of a test session's
# way: the session's runs would otherwise replace it with a test's figures, and read it back.
os.environ.setdefault("EVOHARNESS_SPEED_CACHE", tempfile.mkdtemp(prefix="evoharness-speed-"))

# Each xdist worker gets its share of the cores for the embedded model. A server sized by the
# cores idle when it starts runs a thread per core, and those threads stall at llama.cpp's
# barriers whenever another worker's test gets busy: one test's replies took 89 s that way
# against 36 s on one thread, beside a busy loop on this 2-core machine.
_CORES = len(os.sched_getaffinity(0))
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("EVOHARNESS_THREADS", str(max(1, _CORES // _WORKERS)))


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: a worker more than the cores. Most tests wait on sandboxes, git and model
    servers, and two workers left about a third of this 2-core machine idle. With three (and the
    model threads above) the whole suite took 1,062 s, against 1,198 s with two workers and a
    model thread per idle core (one run each, here)."""
    return _CORES + 1


# The files whose tests take minutes in all start first. A file goes to one worker whole (--dist
# loadfile), so one collected late, as tests/tasks/test_suite_tasks.py with its task proofs is,
# ran on alone for minutes at the end while the other workers sat idle.
LONG_FILES = ("tasks/test_suite_tasks.py", "evolve/test_e2e_embedded.py",
              "evolve/test_trials.py", "manifests/test_verdicts_benchmark.py",
              "evolve/test_library_starter.py", "tasks/test_ray_executor.py",
              "tasks/test_ray_cluster.py")


def pytest_collection_modifyitems(config, items) -> None:
    def long_first(item) -> int:
        path = item.path.as_posix()
        return next((i for i, name in enumerate(LONG_FILES) if path.endswith(f"tests/{name}")),
                    len(LONG_FILES))
    items.sort(key=long_first)  # stable: each file's tests stay in their order
