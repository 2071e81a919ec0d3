"""`evoharness init` through the CLI: the default model follows OLLAMA_HOST as the README says,
`--subset demo` takes the suite's demo tasks, the unsafe flag is recorded for the loop, and
`--trial-rollouts` caps each change's trial and `--max-changes` the changes per iteration."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evoharness.evolve.cli import main
from evoharness.evolve.run import open_run
from evoharness.tasks.split import hash_split
from evoharness.tasks.task import load_suite
from tests.fixtures.suites import write_suite

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suite"


def _init(run_dir: Path, *args: str) -> dict:
    with pytest.raises(SystemExit) as exited:
        main(["init", str(run_dir), *args])
    assert exited.value.code == 0
    return yaml.safe_load((run_dir / "run.yaml").read_text())


@pytest.mark.parametrize("host, args, expected", [
    (None, [], "embedded"),
    ("http://127.0.0.1:11434", [], "ollama:qwen2.5-coder:1.5b"),
    ("http://127.0.0.1:11434", ["--model", "embedded-small"], "embedded-small"),
])
def test_default_model_follows_ollama_host(tmp_path, monkeypatch, host, args, expected):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    if host:
        monkeypatch.setenv("OLLAMA_HOST", host)
    config = _init(tmp_path / "run", "--subset", "demo", *args)
    assert config["model"] == expected
    assert config.get("evolve_model") is None  # the evolve agent uses the same model


def test_subset_demo_takes_the_suites_demo_tasks_and_its_held_out_tasks_for_the_exam(tmp_path):
    config = _init(tmp_path / "run", "--subset", "demo")
    suite = load_suite(SUITE)
    assert config["task_ids"] == suite.demo + suite.demo_heldout
    assert len(suite.demo) == 4 and len(suite.demo_heldout) == 3
    assert set(suite.demo_heldout) <= set(suite.heldout)
    assert "split" not in config  # suite.toml's split applies


def test_a_folder_without_suite_toml_gets_a_stated_hash_split_kept_in_run_yaml(tmp_path, capsys):
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    folder = write_suite(tmp_path / "mine", words, [], split_file=False)
    ids = sorted(f"write-{w}" for w in words)  # the folder's order

    config = _init(tmp_path / "run", "--tasks", str(folder), "--model", "scripted:done")

    split = hash_split(ids)
    assert config["split"] == split.model_dump() and len(split.heldout) == 2  # a quarter of 8
    said = " ".join(capsys.readouterr().out.split())
    assert "held out 2 of 8 tasks" in said and ", ".join(split.heldout) in said
    assert "sha256" in said and "run.yaml" in said
    with open_run(tmp_path / "run") as run:  # a reopened run keeps the split
        assert run.heldout_ids == split.heldout and run.train_ids == split.train


@pytest.mark.parametrize("heldout, expected", [
    ("0.5", lambda ids: hash_split(ids, 0.5).heldout),
    ("write-beta,write-alpha", lambda ids: ["write-alpha", "write-beta"]),
])
def test_heldout_overrides_the_default_split(tmp_path, heldout, expected):
    folder = write_suite(tmp_path / "mine", ["alpha", "beta", "gamma", "delta"], [],
                         split_file=False)
    ids = [f"write-{w}" for w in ["alpha", "beta", "delta", "gamma"]]
    config = _init(tmp_path / "run", "--tasks", str(folder), "--model", "scripted:done",
                   "--heldout", heldout)
    assert config["split"]["heldout"] == expected(ids)


def test_heldout_overrides_a_suite_tomls_split(tmp_path, capsys):
    """docs/after-the-run.md: `--heldout` chooses another split, with a suite.toml too; the run
    keeps it in run.yaml and never reads suite.toml's again."""
    folder = write_suite(tmp_path / "mine", ["alpha", "beta", "gamma"], ["delta"])
    config = _init(tmp_path / "run", "--tasks", str(folder), "--model", "scripted:done",
                   "--heldout", "write-alpha,write-gamma")
    assert config["split"] == {"train": ["write-beta", "write-delta"], "validation": [],
                               "heldout": ["write-alpha", "write-gamma"]}
    assert "held out 2 of 4 tasks (--heldout)" in " ".join(capsys.readouterr().out.split())
    (folder / "suite.toml").write_text('[split]\ntrain = ["write-alpha"]\nheldout = []\n')
    with open_run(tmp_path / "run") as run:
        assert run.heldout_ids == ["write-alpha", "write-gamma"]
        assert run.train_ids == ["write-beta", "write-delta"]


def test_heldout_naming_an_unknown_task_is_refused(tmp_path, capsys):
    folder = write_suite(tmp_path / "mine", ["alpha", "beta"], [], split_file=False)
    with pytest.raises(SystemExit) as exited:
        main(["init", str(tmp_path / "run"), "--tasks", str(folder), "--heldout", "write-ghost"])
    assert exited.value.code == 2
    assert "heldout" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_unsafe_flag_is_recorded_for_the_loop(tmp_path):
    assert _init(tmp_path / "safe", "--subset", "demo").get("unsafe_no_sandbox") is False
    config = _init(tmp_path / "unsafe", "--subset", "demo", "--unsafe-no-sandbox")
    assert config["unsafe_no_sandbox"] is True


def test_trial_rollouts_caps_each_changes_probe_and_a_cap_below_one_pair_is_refused(
        tmp_path, capsys):
    default = _init(tmp_path / "default", "--subset", "demo")["verdicts"]
    capped = _init(tmp_path / "capped", "--subset", "demo", "--trial-rollouts", "24")["verdicts"]
    assert default["max_rollouts"] == 100 and capped == {**default, "max_rollouts": 24}
    with open_run(tmp_path / "capped") as run:
        assert run.config.verdicts.max_rollouts == 24
    with pytest.raises(SystemExit) as exited:
        main(["init", str(tmp_path / "bad"), "--subset", "demo", "--trial-rollouts", "1"])
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert "verdicts.max_rollouts" in said and "1" in said and not (tmp_path / "bad").exists()


def test_max_changes_is_kept_for_the_evolve_agent_and_0_is_refused(tmp_path, capsys):
    assert _init(tmp_path / "default", "--subset", "demo")["max_changes"] == 3
    _init(tmp_path / "one", "--subset", "demo", "--max-changes", "1")
    with open_run(tmp_path / "one") as run:
        assert run.config.max_changes == 1
    with pytest.raises(SystemExit) as exited:
        main(["init", str(tmp_path / "bad"), "--subset", "demo", "--max-changes", "0"])
    assert exited.value.code == 2 and "max_changes" in capsys.readouterr().err


@pytest.mark.parametrize("given, stored, n", [
    ("best-of", "best-of", None), ("best-of:8", "best-of:8", 8), ("none", None, None)])
def test_exam_baseline_is_kept_in_run_yaml(tmp_path, given, stored, n):
    config = _init(tmp_path / "run", "--subset", "demo", "--exam-baseline", given,
                   "--exam-picks", "2")
    assert config["exam"].get("baseline") == stored and config["exam"]["picks"] == 2
    with open_run(tmp_path / "run") as run:
        assert run.config.exam.baseline == stored and run.config.exam.best_of_n == n
    assert "baseline" not in _init(tmp_path / "plain", "--subset", "demo")["exam"]


@pytest.mark.parametrize("given", ["best-of:0", "best-of:x", "best", "best-of:8:2"])
def test_an_unknown_exam_baseline_is_refused_naming_the_field(tmp_path, capsys, given):
    with pytest.raises(SystemExit) as exited:
        main(["init", str(tmp_path / "bad"), "--subset", "demo", "--exam-baseline", given])
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert "exam.baseline" in said and given in said and not (tmp_path / "bad").exists()


def test_validation_draws_the_next_train_ids_by_hash_and_a_suite_toml_keeps_its_own(tmp_path,
                                                                                   capsys):
    from evoharness.tasks.split import with_validation

    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    folder = write_suite(tmp_path / "mine", words, [], split_file=False)
    ids = sorted(f"write-{w}" for w in words)
    config = _init(tmp_path / "run", "--tasks", str(folder), "--model", "scripted:done",
                   "--validation", "0.25")
    split = with_validation(hash_split(ids), 0.25)
    assert config["split"] == split.model_dump() and len(split.validation) == 2
    assert not set(split.validation) & set(split.heldout)
    said = " ".join(capsys.readouterr().out.split())
    assert f"validation 2: {', '.join(split.validation)}" in said
    with open_run(tmp_path / "run") as run:
        assert run.validation_ids == split.validation and len(run.train_ids) == 4
    with_file = write_suite(tmp_path / "suite", ["alpha", "beta"], ["gamma"])
    with pytest.raises(SystemExit) as exited:
        main(["init", str(tmp_path / "run2"), "--tasks", str(with_file), "--validation", "0.25"])
    assert exited.value.code == 2 and "validation" in capsys.readouterr().err
