"""What an agent left (tasks/left_behind.py): /app against the task's starting files, read as
hostile (no link followed, no FIFO opened, a file with two names not read, every bound held),
and, through the real runner and bubblewrap, captured before the verifier ran: nothing the
verifier printed or could read reaches it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.tasks import left_behind
from evoharness.tasks.left_behind import MAX_FILES, MAX_TEXT_CHARS, capture
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from tests.redteam.verifier_rollout import user_task

from .conftest import needs_bwrap

SECRET = "host-secret-7f3a"


def start_and_app(tmp_path: Path) -> tuple[Path, Path]:
    """A task's environment/ (with a Dockerfile, never copied) and an /app copied from it."""
    env = tmp_path / "environment"
    (env / "src").mkdir(parents=True)
    (env / "Dockerfile").write_text("FROM debian\n")
    (env / "keep.txt").write_text("unchanged\n")
    (env / "src" / "main.py").write_text("print('start')\n")
    (env / "gone.txt").write_text("to be deleted\n")
    app = tmp_path / "app"
    shutil.copytree(env, app, symlinks=True, ignore=shutil.ignore_patterns("Dockerfile"))
    return env, app


def test_added_changed_and_deleted_files_are_listed_with_their_text(tmp_path: Path) -> None:
    env, app = start_and_app(tmp_path)
    (app / "src" / "main.py").write_text("print('fixed')\n")
    (app / "gone.txt").unlink()
    (app / "out").mkdir()
    (app / "out" / "result.csv").write_text("a,b\n1,2\n")
    (app / "blob.bin").write_bytes(b"\x00\x01binary")
    (app / "Dockerfile").write_text("the agent's own file\n")  # not the task's: added

    left = capture(env, app, summary="fixed main.py", ended="done")

    assert [(f.path, f.change, f.kind) for f in left.files] == [
        ("Dockerfile", "added", "text"), ("blob.bin", "added", "binary"),
        ("gone.txt", "deleted", "text"), ("out/result.csv", "added", "text"),
        ("src/main.py", "changed", "text")]
    texts = {f.path: f.text for f in left.files}
    assert texts["src/main.py"] == "print('fixed')\n" and texts["blob.bin"] == ""
    assert (left.summary, left.ended, left.complete) == ("fixed main.py", "done", True)


def test_links_fifos_and_second_names_are_never_read(tmp_path: Path) -> None:
    env, app = start_and_app(tmp_path)
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    (app / "peek").symlink_to(secret)  # the host would follow it; the capture must not
    (app / "peekdir").symlink_to(secret.parent, target_is_directory=True)
    os.mkfifo(app / "pipe")  # opening it for reading would wait for a writer forever
    os.link(secret, app / "hard") if secret.stat().st_dev == app.stat().st_dev else None

    left = capture(env, app, summary="", ended="done")

    kinds = {f.path: (f.kind, f.text) for f in left.files}
    assert kinds["peek"] == ("link", str(secret)) and kinds["peekdir"] == ("link", str(secret.parent))
    assert kinds["pipe"] == ("special", "")
    if (app / "hard").exists():
        assert kinds["hard"] == ("unreadable", "")
    assert SECRET not in left.model_dump_json()


def test_every_bound_holds(tmp_path: Path, monkeypatch) -> None:
    env, app = start_and_app(tmp_path)
    for n in range(MAX_FILES + 5):
        (app / f"f{n:03d}.txt").write_text("x" * 5000)
    (app / "huge.txt").write_text("y" * (3 << 20))
    deep = app
    for n in range(left_behind.MAX_DEPTH + 2):
        deep = deep / f"d{n}"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("too deep")

    left = capture(env, app, summary="\x1b[31mred\u202e" + "s" * 5000, ended="done")

    assert len(left.files) == MAX_FILES and left.more_files >= 5
    assert sum(len(f.text) for f in left.files) <= MAX_TEXT_CHARS
    assert all(len(f.text) <= left_behind.MAX_FILE_CHARS for f in left.files)
    assert left.summary.startswith("[31mred") and "\x1b" not in left.summary  # controls gone
    assert "\u202e" not in left.summary and len(left.summary) == left_behind.MAX_SUMMARY_CHARS
    assert not left.complete  # the deep file was not reached, so deletions are not claimed
    assert not any(f.change == "deleted" for f in left.files)
    monkeypatch.setattr(left_behind, "MAX_ENTRIES", 10)
    assert not capture(env, app, summary="", ended="done").complete


@needs_bwrap
def test_a_rollout_keeps_what_the_agent_left_before_the_verifier_ran(tmp_path: Path) -> None:
    """The agent writes its answer and links to the task's hidden tests by their host path; the
    verifier (shared /app) prints a marker and writes a file into /app. The capture holds the
    answer and the link's target text, and nothing of the tests, the marker or the verifier's
    file."""
    from evoharness.workspace.repo import SEED_DIR
    from evoharness.workspace.validate import load_harness

    test_sh = ("#!/bin/bash\necho VERIFIER-MARKER\necho judged > /app/verifier-was-here.txt && echo WROTE-IT\n"
               f"# {SECRET}\necho 1 > /logs/verifier/reward.txt\n")
    task = user_task(tmp_path, test_sh=test_sh)
    hidden = task.tests_dir / "test.sh"
    model = ScriptedModel([json_action("shell", command="echo 42 > answer.txt"),
                           json_action("shell", command=f"ln -s {hidden} peek"),
                           json_action("done", summary="wrote answer.txt")])
    [path] = run_rollouts(load_harness(SEED_DIR), "seed", [(task, "heldout")], model,
                          run_id="left", iteration=0, out_dir=tmp_path / "out", keep_left=True)
    result = RolloutResult.model_validate_json(path.read_text())
    # the verifier ran, printed its marker and wrote into /app (after the capture)
    assert "VERIFIER-MARKER" in result.verifier_tail and "WROTE-IT" in result.verifier_tail

    left = result.left
    assert left is not None and (left.summary, left.ended) == ("wrote answer.txt", "done")
    files = {f.path: f for f in left.files}
    assert files["answer.txt"].text == "42\n"
    assert (files["peek"].kind, files["peek"].text) == ("link", str(hidden))
    assert "verifier-was-here.txt" not in files
    captured = left.model_dump_json()
    assert SECRET not in captured and "VERIFIER-MARKER" not in captured
    [plain] = run_rollouts(load_harness(SEED_DIR), "seed", [(task, "heldout")],
                           ScriptedModel([json_action("done", summary="x")]), run_id="plain",
                           iteration=0, out_dir=tmp_path / "plain")
    assert RolloutResult.model_validate_json(plain.read_text()).left is None  # only when asked
