"""The wheel as a user installs it: built from this tree, installed with no dependencies into a
fresh virtual environment (the project's dependencies made importable from this one's
site-packages by a .pth path line, so no network is needed), then run from a folder that holds the
user's own `tasks`, `agent` and `evolve` modules. Only `evoharness` may land at the top of
site-packages, the user's `tasks` must stay the one `import tasks` gets, and the wheel must carry
the package data the commands read (the seed harness, the starter library, the built-in suite...)."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
# Package data each command needs at run time: (folder in the tree, where it lands in the wheel).
PACKAGE_DATA = [
    ("workspace/seed", "evoharness/workspace/seed"),
    ("evolve/library/starters", "evoharness/evolve/library/starters"),
    ("agent/clients/scripts", "evoharness/agent/clients/scripts"),
    ("evolve/agent/templates", "evoharness/evolve/agent/templates"),
    ("debugger/templates", "evoharness/debugger/templates"),
    ("evolve/report/templates", "evoharness/evolve/report/templates"),
    ("tasks/suite", "evoharness/tasks/suite"),
]
USER_MODULES = {"tasks/__init__.py": 'WHOSE = "the user\'s tasks"\n',
                "agent.py": 'WHOSE = "the user\'s agent"\n',
                "evolve.py": 'WHOSE = "the user\'s evolve"\n'}




def _setuptools_here() -> bool:
    """setuptools >= 69 (what pyproject.toml asks for) importable here: build without isolation."""
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 69


def _tracked(*under: str) -> list[str]:
    """The files git tracks under these folders (or, given git ls-files options, those too)."""
    options = [u for u in under if u.startswith("--")]
    folders = [u for u in under if not u.startswith("--")]
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", *options, "--", *folders],
                            cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    return [path for path in listed.split("\0") if path]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the files git does not ignore: an in-tree build would leave build/ in
    # the checkout, whose stale copies of deleted modules a later wheel takes.
    source = tmp_path_factory.mktemp("source")
    for rel in _tracked("--others", "--exclude-standard"):
        if (ROOT / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, source / rel)
    # Without setuptools >= 69 here, pip builds in isolation, fetching setuptools from the
    # configured index (a local one on an offline machine).
    isolation = ["--no-build-isolation"] if _setuptools_here() else []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation,
                            "-q", "-w", str(out), str(source)], capture_output=True, text=True)
    if built.returncode != 0 and not isolation and "setuptools" in built.stderr:
        pytest.skip(f"no setuptools>=69 here nor from an index: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = out.glob("evoharness-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel alone, this environment's site-packages on its path."""
    env_dir = tmp_path_factory.mktemp("venv") / "fresh"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # A plain path line: its folder joins sys.path, but the .pth files in it (this checkout's
    # editable finder among them) are not run, so `evoharness` can only come from the wheel.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-index", "-q", str(wheel)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return env_dir


@pytest.fixture
def user_dir(tmp_path) -> Path:
    for rel, text in USER_MODULES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _run(installed: Path, user_dir: Path, *argv: str) -> subprocess.CompletedProcess:
    """A command of the fresh venv, run from the user's folder with it first on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env |= {"PYTHONPATH": str(user_dir), "PATH": f"{installed / 'bin'}:{env['PATH']}"}
    return subprocess.run(list(argv), cwd=user_dir, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_wheel_puts_only_evoharness_at_the_top_and_carries_its_package_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        top_level = archive.read(f"{info}/top_level.txt").decode().split()
        record = [row[0] for row in csv.reader(io.StringIO(archive.read(f"{info}/RECORD")
                                                           .decode()))]
    assert top_level == ["evoharness"]
    assert {path.split("/")[0] for path in record} == {"evoharness", info}
    shipped = set(names)
    tracked = _tracked(*(source for source, _ in PACKAGE_DATA))
    assert tracked, "no package data found in git"
    for source, target in PACKAGE_DATA:
        files = [path for path in tracked if path.startswith(source + "/")]
        assert files, f"nothing tracked under {source}"
        missing = [path for path in files if f"{target}{path[len(source):]}" not in shipped]
        assert not missing, f"the wheel lacks {missing[:5]} ({len(missing)} files)"


def test_the_installed_cli_runs_beside_a_users_own_tasks_agent_and_evolve(installed, user_dir):
    python = str(installed / "bin" / "python")
    probe = _run(installed, user_dir, python, "-c", (
        "import json, sys, tasks, agent, evolve, evoharness, evoharness.tasks.task\n"
        "print(json.dumps({'tasks': tasks.WHOSE, 'agent': agent.WHOSE, 'evolve': evolve.WHOSE,"
        " 'evoharness': evoharness.__file__, 'stage': evoharness.tasks.task.__file__,"
        " 'editable': [m for m in sys.modules if 'editable' in m]}))"))
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    assert (seen["tasks"], seen["agent"], seen["evolve"]) == (
        "the user's tasks", "the user's agent", "the user's evolve")
    for path in (seen["evoharness"], seen["stage"]):  # the wheel's copy, not this checkout
        assert Path(path).is_relative_to(installed) and not Path(path).is_relative_to(ROOT), path
    assert seen["editable"] == []  # this checkout's editable finder never ran

    shown = _run(installed, user_dir, "evoharness", "--help")
    assert shown.returncode == 0, shown.stderr
    assert "init" in shown.stdout and "tasks" in shown.stdout


def test_the_installed_cli_creates_a_run_from_the_wheels_own_suite_and_seed(installed,
                                                                           user_dir):
    """`init` reads the built-in suite and copies the seed harness: both package data."""
    site = next((installed / "lib").glob("python3*/site-packages"))
    made = _run(installed, user_dir, "evoharness", "init", "run", "--subset", "demo",
                "--model", "scripted:done")
    assert made.returncode == 0, made.stdout + made.stderr
    config = (user_dir / "run" / "run.yaml").read_text()
    assert f"tasks: {site / 'evoharness' / 'tasks' / 'suite'}" in config  # the wheel's suite
    checked = _run(installed, user_dir, "evoharness", "harness", "check", "run/workspace")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # and the user's `tasks` module is still what `import tasks` gets, beside the run
    again = _run(installed, user_dir, str(installed / "bin" / "python"), "-c",
                 "import tasks; print(tasks.WHOSE)")
    assert again.stdout.strip() == "the user's tasks"
