"""Reading Dockerfiles (tasks/sandbox/dockerfile.py) and the base map (tasks/sandbox/bases.py) without an engine:
Docker's name rules, stages and aliases, FROM lines replaced with nothing else touched, what
counts as building something (the `auto` rule), and bases.toml's patterns and errors."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoharness.errors import EvoError
from evoharness.tasks.sandbox.bases import BaseMap, load_map, write_default_map
from evoharness.tasks.sandbox.dockerfile import builds_something, external_bases, normalise, with_bases
from evoharness.tasks.task import load_suite, load_task

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name, full, short", [
    ("python:3.12-slim", "docker.io/library/python:3.12-slim", "python:3.12-slim"),
    ("ubuntu", "docker.io/library/ubuntu:latest", "ubuntu:latest"),
    ("python:3.11-slim@sha256:9c90", "docker.io/library/python:3.11-slim", "python:3.11-slim"),
    ("docker.io/library/debian:bookworm", "docker.io/library/debian:bookworm", "debian:bookworm"),
    ("someone/tool:1", "docker.io/someone/tool:1", "someone/tool:1"),
    ("ghcr.io/laude-institute/t-bench/python-3-13:20250620",
     "ghcr.io/laude-institute/t-bench/python-3-13:20250620",
     "ghcr.io/laude-institute/t-bench/python-3-13:20250620"),
    ("localhost:5000/x", "localhost:5000/x:latest", "localhost:5000/x:latest"),
])
def test_names_are_read_as_docker_reads_them(name, full, short):
    assert normalise(name) == (full, short)


MULTI_STAGE = """\
# syntax=docker/dockerfile:1
ARG BASE=python:3.12-slim
FROM --platform=linux/amd64 ${BASE} AS builder
RUN pip install \\
    build
FROM builder AS tested
FROM scratch
FROM ubuntu:24.04
COPY --from=builder /x /x
"""


def test_stages_that_start_from_an_earlier_stage_or_scratch_need_no_base():
    assert external_bases(MULTI_STAGE) == ["python:3.12-slim", "ubuntu:24.04"]


def test_replacing_bases_keeps_flags_aliases_and_every_other_line():
    replaced = with_bases(MULTI_STAGE, {"python:3.12-slim": "localhost/b:1",
                                        "ubuntu:24.04": "localhost/u:1"})
    lines = replaced.splitlines()
    assert "FROM --platform=linux/amd64 localhost/b:1 AS builder" in lines
    assert "FROM localhost/u:1" in lines and "FROM builder AS tested" in lines
    assert "RUN pip install \\" in lines and "    build" in lines
    assert len(lines) == len(MULTI_STAGE.splitlines())


@pytest.mark.parametrize("text, builds", [
    ("FROM ubuntu:24.04\nWORKDIR /app\n", False),
    ("FROM python:3.12\nWORKDIR /app\nCOPY data.csv /app/\nENV A=1\nUSER agent\n", False),
    ("FROM python:3.12\nRUN pip install pytest\n", True),
    ("FROM a AS x\nFROM x\n", True),
    ("FROM ubuntu\nCOPY --from=tool /bin/t /bin/t\n", True),
    ("FROM ubuntu\nADD https://example.com/data.tgz /app/\n", True),
    ("FROM ubuntu\n# RUN make\nWORKDIR /app\n", False),
])
def test_what_counts_as_building_something(text, builds):
    assert builds_something(text) is builds


def test_the_existing_suites_build_nothing_or_say_they_run_on_the_host():
    """What keeps the `auto` default from moving the project's own tasks into containers."""
    for task in load_suite(ROOT / "tasks" / "suite").tasks.values():
        assert task.suite_environment == "host", task.id
    for folder in ("tests/fixtures/tasks", "tests/fixtures/e2e_suite"):
        for task in load_suite(ROOT / folder).tasks.values():
            assert not builds_something((task.environment_dir / "Dockerfile").read_text())


def test_a_task_follows_its_suites_declaration_and_a_bad_one_is_refused(tmp_path):
    suite = tmp_path / "suite"
    task = Path(shutil.copytree(ROOT / "tests/fixtures/tasks/hello-world", suite / "hello-world"))
    (suite / "suite.toml").write_text('environment = "container"\n')
    assert load_task(task).suite_environment == "container"
    (suite / "suite.toml").write_text('environment = "cloud"\n')
    with pytest.raises(EvoError) as error:
        load_task(task)
    assert error.value.field == "environment" and "cloud" in str(error.value)


def test_the_base_map_matches_short_and_full_names_first_entry_first():
    base_map = BaseMap(bases={"python:3*": "local/py", "docker.io/library/*": "local/any"})
    assert base_map.stand_in("python:3.13-slim@sha256:00") == ("python:3*", "local/py")
    assert base_map.stand_in("docker.io/library/python:3.12") == ("python:3*", "local/py")
    assert base_map.stand_in("debian:bookworm") == ("docker.io/library/*", "local/any")
    assert base_map.stand_in("ghcr.io/x/y:1") is None


def test_the_default_map_is_written_once_and_a_bad_one_names_its_file(tmp_path):
    path = write_default_map(tmp_path, "localhost/mine:1")
    assert load_map(tmp_path).stand_in("ubuntu:24.04") == ("ubuntu:*", "localhost/mine:1")
    path.write_text('[bases]\n"ubuntu:*" = "localhost/edited:1"\n')
    write_default_map(tmp_path)  # the user's edit stays
    assert load_map(tmp_path).bases == {"ubuntu:*": "localhost/edited:1"}
    path.write_text('[bases]\n"ubuntu:*" = 3\n')
    with pytest.raises(EvoError) as error:
        load_map(tmp_path)
    assert error.value.file == str(path) and "bases" in error.value.field
    assert load_map(tmp_path / "none").bases == {}
