"""Bad input met bringing one's own tasks, through the CLI: each is one line on stderr, exit 2,
naming the file, the field and the value (never pydantic's own text), and a split with nothing to
train on is refused by `init` in the same words whether suite.toml or `--heldout` says it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from evoharness.evolve.cli import main
from evoharness.evolve.evaluate.transfer import suite_tasks
from tests.fixtures.suites import write_suite, write_task

LONG = [f"{word}-with-a-rather-long-name-for-a-task" for word in
        ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]]


def _refused(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said, said  # one line, at any width
    assert "validation error" not in said and "pydantic" not in said
    return said.removeprefix("error: ")


def _suite(tmp_path: Path, split: str) -> Path:
    folder = write_suite(tmp_path / "mine", LONG, [], split_file=False)
    (folder / "suite.toml").write_text(split)
    return folder


@pytest.mark.parametrize("split, field", [
    ('[split]\nheldout = ["write-alpha-with-a-rather-long-name-for-a-task"]\n', "split.train"),
    ('environment = "host"\n', "split"),
])
def test_a_suite_toml_without_train_or_split_is_one_line_naming_file_and_field(
        tmp_path, capsys, split, field):
    folder = _suite(tmp_path, split)
    said = _refused(["init", str(tmp_path / "run"), "--tasks", str(folder)], capsys)
    assert said.startswith(f"{folder / 'suite.toml'}: {field}: ")
    assert not (tmp_path / "run").exists()


def _ids_in(said: str) -> list[str]:
    return re.findall(r"'([^']*)'", said)


def test_every_task_held_out_is_refused_alike_from_suite_toml_and_from_heldout(tmp_path, capsys):
    ids = [f"write-{w}" for w in LONG]
    folder = _suite(tmp_path, f"[split]\ntrain = []\nheldout = {ids!r}\n".replace("'", '"'))
    from_file = _refused(["init", str(tmp_path / "a"), "--tasks", str(folder)], capsys)
    (folder / "suite.toml").unlink()
    from_flag = _refused(["init", str(tmp_path / "b"), "--tasks", str(folder),
                          "--heldout", ",".join(ids)], capsys)
    assert from_file.startswith(f"{folder / 'suite.toml'}: split: ")
    assert from_flag.startswith("heldout: ")
    for said in (from_file, from_flag):
        assert "every task would be held out: nothing to train on" in said
        shown = _ids_in(said)
        assert shown and all(i in ids for i in shown), shown  # no id cut mid-name
        assert f"... {len(ids) - len(shown)} more" in said or len(shown) == len(ids)
        assert ". Leave at least one task to train on" in said  # a sentence, not lower case
    assert from_file.split(": ", 2)[2] == from_flag.split(": ", 1)[1]  # the same words
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_subset_of_held_out_tasks_only_is_refused_too(tmp_path, capsys):
    folder = write_suite(tmp_path / "mine", ["alpha"], ["beta", "gamma"])
    said = _refused(["init", str(tmp_path / "run"), "--tasks", str(folder), "--subset",
                     "write-beta,write-gamma"], capsys)
    assert said.startswith("task_ids (--subset): every task would be held out")


def test_a_suite_of_validation_tasks_only_is_refused_too(tmp_path, capsys):
    folder = write_suite(tmp_path / "mine", [], [], split_file=False)
    for word in ("alpha", "beta"):
        write_task(folder, word)
    (folder / "suite.toml").write_text(
        '[split]\ntrain = []\nvalidation = ["write-alpha", "write-beta"]\nheldout = []\n')
    said = _refused(["init", str(tmp_path / "run"), "--tasks", str(folder)], capsys)
    assert said.startswith(f"{folder / 'suite.toml'}: split: every task would be held out")


def test_an_exam_only_suite_stays_usable_by_eval(tmp_path):
    folder = write_suite(tmp_path / "exam", [], ["alpha", "beta"])
    suite = suite_tasks(folder, "heldout")
    assert suite.tasks == ["write-alpha", "write-beta"]


@pytest.mark.parametrize("text", ['{"eval_id": "x"}', "{not json"])
def test_a_damaged_evaluation_plan_is_one_line_naming_it(tmp_path, capsys, text):
    folder = tmp_path / "evals" / "small"
    folder.mkdir(parents=True)
    (folder / "plan.json").write_text(text)
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(folder)])
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "validation error" not in said and "pydantic" not in said
    assert said.startswith(f"error: {folder / 'plan.json'}: ") and "invalid evaluation plan" in said
