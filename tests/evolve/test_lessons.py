"""evolve/agent/lessons.py: when two rules are the same lesson, and which rule lines a file has."""
from __future__ import annotations

import pytest

from evoharness.evolve.agent.components import skeleton_edits
from evoharness.evolve.agent.lessons import added_text, harness_rules, restated, rule_lines, same_lesson
from evoharness.workspace.edits import commit_edits
from evoharness.workspace.repo import HarnessRepo

SEED_CHECK = "Check your work (run it, test it, read the output) before calling `done`."
SEED_ERRORS = "Read error messages and fix their cause before trying again."


@pytest.mark.parametrize("rule", [
    "Before calling done, run the program and compare its output with the task.",  # the old example
    "Check your output before calling done.",
    "When a command fails, read the error message and fix the cause before running it again.",
    "CHECK YOUR WORK: run it, test it and read the output before you call done!",
])
def test_restatements_of_a_seed_rule_are_the_same_lesson(rule: str) -> None:
    assert restated(rule, [SEED_CHECK, SEED_ERRORS]) is not None


@pytest.mark.parametrize("rule", [
    "If the same command fails twice, do not repeat it; try a different command.",
    "Quote file names that contain spaces in shell commands.",
    "Print the file you wrote with cat before moving on to the next step.",
    "Work in /app.",  # too short to compare with a long rule
])
def test_new_lessons_are_not_restatements(rule: str) -> None:
    assert restated(rule, [SEED_CHECK, SEED_ERRORS]) is None


def test_the_measure_is_symmetric_and_ignores_case_punctuation_and_inflection() -> None:
    a, b = "Run the tests.", "running TESTS!"
    assert same_lesson(a, b) and same_lesson(b, a)
    assert not same_lesson("", SEED_CHECK)


def test_rule_lines_skip_template_code_examples_and_headings(tmp_path) -> None:
    text = ('## Rules\n{% if x %}\n- Keep commands short and never wait for input.\n'
            '{"thought": "x", "tool": "shell", "arguments": {}}\n- `done`: finish the task now\n'
            'A sentence that states a rule about tests.\n{{ memory }}\n')
    assert rule_lines(text) == ["Keep commands short and never wait for input.",
                                "A sentence that states a rule about tests."]
    assert rule_lines(text, bullets_only=True) == ["Keep commands short and never wait for input."]
    repo = HarnessRepo.create(tmp_path / "ws")
    assert SEED_CHECK in harness_rules(repo, bullets_only=True)
    assert harness_rules(repo)[0].startswith("You are a careful coding agent")


def test_the_text_a_change_added_is_its_prose_never_its_code(tmp_path) -> None:
    """A reverted middleware's code is no rule: listed as one, it would be shown back to the
    evolve agent as a lesson (and compared with new rules)."""
    repo = HarnessRepo.create(tmp_path / "ws")
    commit_edits(repo, [{"op": "append_rule", "text": "Quote every path that has a space."},
                        *skeleton_edits("middleware", "guard")],
                 message="both", change_id="c1", component="middleware")
    assert added_text(repo, repo.head()) == "Quote every path that has a space."
