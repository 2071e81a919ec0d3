"""debugger/patterns.py: each pattern found from stored events, counted, with examples; passing and
held-out rollouts never counted; the overview names them with their remedies."""
from __future__ import annotations

from pathlib import Path

from evoharness.debugger import queries as q
from evoharness.debugger.distill import distill
from evoharness.debugger.patterns import find_patterns, patterns_by_rollout
from tests.debugger.conftest import RUN, output, shell

FAILED = "bash: line 1: $1: ambiguous redirect\n[exit code: 1]\n"


def failed(text: str = FAILED) -> tuple[str, str, str, dict]:
    return ("tool_result", "shell", text, {"exit_code": 0})  # the seed tool itself exits 0


def tool(name: str, **arguments) -> tuple[str, str, str, dict]:
    return ("tool_call", name, "", {"arguments": arguments})


def refused(message: str) -> tuple[str, str, str, dict]:
    return ("tool_result", "x", f"ERROR (permanent): {message}",
            {"exit_code": None, "error": {"kind": "permanent", "message": message}})


def found(traces, hidden: tuple[str, ...] = ()) -> dict:
    scope = q.Scope(run_id=RUN, iteration=1, previous=0, hidden=hidden)
    return {p.name: p for p in find_patterns(traces.con, scope)}


def test_a_command_repeated_with_the_same_error_is_two_patterns(traces) -> None:
    loop = [shell("wc -l < $1"), failed()] * 18
    traces.rollout("count-script", 0, "fail", exit_reason="max_steps", events=loop)
    traces.rollout("count-script", 1, "fail", events=[shell("wc -l < $1"), failed()] * 2
                   + [tool("done", summary="x")])  # twice is a retry, not a loop
    traces.rollout("count-script", 2, "pass", events=loop)  # passing rollouts are not evidence
    patterns = found(traces)
    repeated = patterns["repeated_command"]
    assert (repeated.rollouts, repeated.tasks, repeated.occurrences) == (1, 1, 18)
    assert repeated.examples[0].detail == "`wc -l < $1` ran 18 times"
    assert repeated.examples[0].link == "rollouts/it001-count-script-a00.md"
    assert patterns["repeated_error"].examples[0].detail == (
        "18 times: bash: line 1: $1: ambiguous redirect")
    assert patterns["max_steps"].rollouts == 1
    assert any(r.startswith("middleware:") for r in repeated.remedies)


def test_done_after_a_write_first_done_invented_tools_and_parse_failures(traces) -> None:
    traces.rollout("a", 0, "fail", events=[shell("ls"), output("x"),
                                           shell("echo 3 > count.txt"), output(""),
                                           tool("done", summary="wrote it")])
    traces.rollout("b", 0, "fail", events=[shell("echo 3 > count.txt"), output(""),
                                           shell("cat count.txt"), output("3"),
                                           tool("done", summary="checked")])
    traces.rollout("c", 0, "fail", events=[tool("done", summary="nothing")])
    traces.rollout("d", 0, "fail", events=[tool("python", code="1"), refused("unknown tool 'python'"),
                                           ("error", "ParseError", "no JSON object found", {}),
                                           tool("shell"), refused("invalid arguments for shell: x")])
    patterns = found(traces)
    assert [e.task_id for e in patterns["done_after_write"].examples] == ["a"]  # b ran it after
    assert [e.task_id for e in patterns["done_first"].examples] == ["c"]
    assert [e.task_id for e in patterns["blind_write"].examples] == ["b"]  # a looked first
    assert patterns["blind_write"].examples[0].detail == "first command: `echo 3 > count.txt`"
    assert patterns["invented_tool"].examples[0].detail == "called python"
    assert patterns["parse_failure"].occurrences == 1
    assert patterns["invalid_arguments"].rollouts == 1
    assert "repeated_command" not in patterns


def test_done_without_a_write_shell_errors_and_deleting_its_own_output(traces) -> None:
    traces.rollout("count", 0, "fail", events=[shell("wc -l poem.txt"), output("14 poem.txt"),
                                               tool("done", summary="counted")])
    traces.rollout("count", 1, "fail", events=[shell("wc -l poem.txt > out.txt"), output(""),
                                               tool("done", summary="wrote it")])
    traces.rollout("quote", 0, "fail", events=[
        shell("cat <<EOF > a.py"), failed("bash: line 3: warning: here-document at line 1 "
                                          "delimited by end-of-file (wanted `EOF')\n[exit code: 0]"),
        shell("jq .version package.json"), failed("bash: line 1: jq: command not found\n"),
        shell("cat /app/nope.txt"), failed("cat: /app/nope.txt: No such file or directory\n")])
    traces.rollout("clean", 0, "fail", events=[
        shell("sort words.txt > /app/sorted.txt"), output(""), shell("cat sorted.txt"),
        output("a"), shell("rm -f tmp.txt sorted.txt"), output(""), tool("done", summary="x")])
    patterns = found(traces)
    assert [e.task_id for e in patterns["done_without_write"].examples] == ["count"]  # a00 only
    assert patterns["done_without_write"].rollouts == 1
    assert patterns["quoting_error"].examples[0].detail.startswith("bash: line 3: warning: here-doc")
    assert patterns["missing_command"].examples[0].detail == "jq not installed"
    assert patterns["missing_file"].examples[0].task_id == "quote"
    assert patterns["deleted_output"].examples[0].detail == "deleted what it wrote: sorted.txt"
    assert patterns_by_rollout(traces.con, q.Scope(run_id=RUN, iteration=1, previous=0)) == {
        "it001-count-a00": {"done_without_write"},
        "it001-count-a01": {"done_after_write", "blind_write"},
        "it001-quote-a00": {"quoting_error", "missing_command", "missing_file", "blind_write"},
        "it001-clean-a00": {"deleted_output", "blind_write"}}


def test_held_out_tasks_and_other_iterations_are_not_read(traces) -> None:
    loop = [shell("make"), failed()] * 4
    traces.rollout("secret", 0, "fail", split="heldout", events=loop)
    traces.rollout("hidden", 0, "fail", events=loop)
    traces.rollout("earlier", 0, "fail", iteration=0, events=loop)
    assert found(traces, hidden=("hidden",)) == {}


def test_timeouts_count_the_rollout_and_its_stopped_commands(traces) -> None:
    stopped = refused("the tool was stopped (timeout) after 30s")
    traces.rollout("slow", 0, "timeout", exit_reason="wall_time",
                   events=[shell("sleep 100"), stopped])
    traces.rollout("slow", 1, "fail", events=[shell("sleep 100"), stopped,
                                              tool("done", summary="x")])
    timeouts = found(traces)["timeouts"]
    assert (timeouts.rollouts, timeouts.occurrences) == (2, 3)


def test_the_overview_names_the_patterns_with_examples_and_remedies(traces, tmp_path: Path) -> None:
    traces.rollout("count-script", 0, "fail", exit_reason="max_steps",
                   events=[shell("wc -l < $1"), failed()] * 5)
    traces.rollout("fine", 0, "pass")
    text = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=set()).overview.read_text()
    section = text.split("## Failure patterns")[1].split("## Failure classes")[0]
    assert "### The agent runs the same command again and again\n" in section
    assert "`repeated_command`: 1 rollouts in 1 tasks, 5 times." in section
    assert "[it001-count-script-a00](rollouts/it001-count-script-a00.md)" in section
    assert 'Addressed by: rule: "If a command fails twice' in section
    assert (tmp_path / "evidence" / "rollouts" / "it001-count-script-a00.md").is_file()
