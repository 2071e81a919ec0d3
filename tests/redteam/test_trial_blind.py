"""A harness cannot tell a trial from an evaluation (issue 21, item 6): every rollout runs a copy of
its commit made from git's blobs, so trees identical in git are identical on disk. An evaluation
(the workspace's head, as evolve/phases.py plans it) and a trial's arm (any commit, as
evolve/trials.py plans it) run through the local executor and the real sandbox, and the agent
lists what it sees at /harness. Git attributes and ignore rules, which would make a checkout or
`git archive` differ from the tree, are refused where they could come from."""
from __future__ import annotations

from pathlib import Path

import git
import pytest

from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.errors import EvoError
from evoharness.tasks.executor import HarnessTree, LocalExecutor, RolloutSpec, execute
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_task
from tests.faults.conftest import evoharness
from evoharness.workspace.edits import EditRefused, WriteFile, apply_edits
from evoharness.workspace.repo import HarnessRepo

from .verifier_rollout import FIXTURES

# Every path under /harness with its type and mode, and every file's hash.
VIEW = ("cd /harness && find . -printf '%y %m %p\\n' | LC_ALL=C sort && "
        "find . -type f -exec sha256sum {} + | LC_ALL=C sort")
# Attributes that make `git archive` (export-subst, export-ignore) or a checkout (ident, eol)
# write other bytes than the blob's.
ATTRIBUTES = ("system_prompt.md.j2 export-subst ident\nmemory/LONG_TERM.md export-ignore\n"
              "tools/shell.yaml text eol=crlf\n")
MARKERS = "\n<!-- $Format:%H$ $Id$ -->\n"


@pytest.fixture
def repo(tmp_path: Path) -> HarnessRepo:
    return HarnessRepo.create(tmp_path / "workspace")


def harness_view(tree: HarnessTree, out: Path) -> str:
    """What a rollout's agent sees of its harness, run as the executor runs every rollout."""
    model = ScriptedModel([json_action("shell", command=VIEW), json_action("done", summary="x")])
    spec = RolloutSpec(run_id="blind", iteration=0, task=load_task(FIXTURES / "hello-world"),
                       split="train", attempt=0, harness=tree, model="scripted")
    executor = LocalExecutor(workers=1, rollout_timeout=120, sandbox_factory=BwrapSandbox.for_task,
                             model_factory=lambda _: model)
    [path] = execute(executor, [spec], out)
    result = RolloutResult.model_validate_json(path.read_text())
    return next(str(e.content) for e in result.events if e.kind == "tool_result")


def commit_with_git(repo: HarnessRepo, files: dict[str, str], message: str) -> str:
    """A commit made with plain git, as a user's own harness history could hold it (edits and
    validation never see it)."""
    for rel, text in files.items():
        (repo.path / rel).write_text(text)
    plain = git.Repo(repo.path)
    plain.git.add("-A")
    plain.git.commit("-m", message, "--no-verify",
                     env={"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x",
                          "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"})
    return plain.head.commit.hexsha


def test_an_evaluation_and_a_trial_arm_see_the_same_files(repo: HarnessRepo, tmp_path: Path):
    """The workspace's head (an evaluation) and the same tree at another commit (a trial's base
    arm): on main the first mounted the workspace itself, .git and all."""
    repo.commit_change("placebo: nothing", change_id="c1", component="settings")
    evaluation, arm = HarnessTree.at(repo), HarnessTree.at(repo, "seed")
    assert evaluation.tree == arm.tree and evaluation.commit != arm.commit

    seen = harness_view(evaluation, tmp_path / "evaluation")
    assert seen == harness_view(arm, tmp_path / "trial")
    assert "./harness.yaml" in seen and ".git" not in seen


def test_git_attributes_change_no_byte_of_a_materialised_tree(repo: HarnessRepo, tmp_path: Path):
    """A committed .gitattributes (export-subst, ident, eol, export-ignore): `git archive`, which
    trials used on main, rewrote the prompt and dropped memory; the copy is the blobs' bytes."""
    prompt = (repo.path / "system_prompt.md.j2").read_text() + MARKERS
    commit = commit_with_git(repo, {".gitattributes": ATTRIBUTES, "system_prompt.md.j2": prompt},
                             "attributes")
    out = repo.export(commit, tmp_path / "export")
    plain = git.Repo(repo.path)
    for rel in plain.git.ls_tree("-r", "--name-only", commit).splitlines():
        stored = plain.git.show(f"{commit}:{rel}", strip_newline_in_stdout=False)
        assert (out / rel).read_text() == stored, rel
    assert "$Format:%H$ $Id$" in (out / "system_prompt.md.j2").read_text()


def test_a_harness_with_git_control_files_is_refused(repo: HarnessRepo):
    for name in (".gitattributes", ".gitignore", "skills/.gitattributes"):
        (repo.path / name).parent.mkdir(exist_ok=True)
        (repo.path / name).write_text("* export-subst\n")
        done = evoharness("harness", "check", repo.path)
        assert done.returncode == 2, done.stderr
        assert f"{name}: (file): git control files are not allowed" in done.stderr, done.stderr
        (repo.path / name).unlink()
    with pytest.raises(EditRefused, match="git control files are not allowed"):
        apply_edits(repo, [WriteFile(path=".gitattributes", content="* ident\n")])
    assert not (repo.path / ".gitattributes").exists()


def test_a_committed_gitattributes_fails_validation_on_every_path(repo: HarnessRepo, tmp_path):
    commit_with_git(repo, {".gitattributes": ATTRIBUTES}, "attributes")
    with pytest.raises(EvoError, match="git control files"):
        harness_view(HarnessTree.at(repo), tmp_path / "out")


def test_git_config_and_info_rules_do_not_convert_what_is_committed(repo: HarnessRepo, tmp_path,
                                                                    monkeypatch):
    """The user's own git config (core.autocrlf, a global attributes file) does not touch what
    the evolve agent wrote; rules in .git/info, which no config turns off, refuse the workspace."""
    attributes = tmp_path / "global-attributes"
    attributes.write_text("* text eol=lf\n")
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\tautocrlf = true\n\tattributesFile = {attributes}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    text = "line one\r\nline two\r\n"
    apply_edits(repo, [WriteFile(path="memory/LONG_TERM.md", content=text)])
    commit = repo.commit_change("memory", change_id="c1", component="memory")
    stored = git.Repo(repo.path).git.show(f"{commit}:memory/LONG_TERM.md",
                                          strip_newline_in_stdout=False)
    assert stored == text
    for name in ("attributes", "exclude"):
        info = repo.path / ".git" / "info" / name
        info.parent.mkdir(exist_ok=True)
        kept = info.read_text() if info.exists() else ""
        info.write_text(kept + "# a comment is fine\n")
        HarnessRepo(repo.path)
        info.write_text(kept + "*.md export-ignore\n")
        with pytest.raises(EvoError, match=f"the workspace's git sets {name} rules"):
            HarnessRepo(repo.path)
        info.write_text(kept)
