"""The starter library (evolve/library/starter.py): every entry applies cleanly to the seed harness
and passes `harness check`, cues real failure patterns, and its component does what its entry
claims inside the real sandbox, on a real task and verifier, driven by a scripted code agent (a
TEST DOUBLE playing a misbehaving small model) against the seed on the same replies."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evoharness.agent.clients.scripted import ScriptedModel, json_action, native_call
from evoharness.agent.model import Message
from evoharness.debugger.patterns import DETECTORS
from evoharness.errors import EvoError
from evoharness.evolve.agent.components import RUNNER
from evoharness.evolve.cli import app
from evoharness.evolve.library.starter import PATTERN_CLASS, starter_diff, starter_entries
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.task import load_task
from evoharness.workspace.edits import apply_edits
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.spec import LoadedHarness
from evoharness.workspace.validate import load_harness

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tests" / "fixtures" / "tasks" / "hello-world"  # wants hello.txt: Hello, world!
COUNT_LINES = ROOT / "tasks" / "suite" / "count-lines"  # wants /app/line_count.txt: 14
CSV_COLUMN = ROOT / "tasks" / "suite" / "csv-column-extract"  # emails.txt: users.csv's 3rd column
COUNT_ARGS = ROOT / "tasks" / "suite" / "count-args-script"  # /app/nargs.sh prints $#
ENTRIES = {entry.id: entry for entry in starter_entries()}


def harness(tmp_path: Path, entry_id: str | None, **settings: object) -> LoadedHarness:
    """The seed, with the entry's edits applied as a `change` naming it applies them."""
    root = tmp_path / (entry_id or "seed")
    shutil.copytree(SEED_DIR, root)
    if settings:
        spec = yaml.safe_load((root / "harness.yaml").read_text())
        spec["settings"].update(settings)
        (root / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    if entry_id is not None:
        apply_edits(root, ENTRIES[entry_id].edits)
    return load_harness(root)


def rollout(tmp_path: Path, loaded: LoadedHarness, task: Path, replies: list | ScriptedModel
            ) -> tuple[RolloutResult, ScriptedModel]:
    """One rollout in the bubblewrap sandbox, judged by the task's verifier."""
    model = replies if isinstance(replies, ScriptedModel) else ScriptedModel(replies)
    out = tmp_path / "rollouts" / loaded.root.name
    [path] = run_rollouts(loaded, "test", [(load_task(task), "train")], model, run_id="starter",
                          iteration=0, out_dir=out)
    return RolloutResult.model_validate_json(path.read_text()), model


def results(result: RolloutResult) -> list[str]:
    return [e.content for e in result.events if e.kind == "tool_result"]


def shell(command: str) -> str:
    return json_action("shell", command=command)


DONE = json_action("done", summary="finished")


@pytest.mark.parametrize("entry_id", sorted(ENTRIES))
def test_each_entry_applies_to_the_seed_passes_harness_check_and_cues_known_patterns(
        tmp_path: Path, entry_id: str) -> None:
    entry = ENTRIES[entry_id]
    loaded = harness(tmp_path, entry_id)
    result = CliRunner().invoke(app, ["harness", "check", str(loaded.root)])
    assert result.exit_code == 0 and result.output.startswith("OK"), result.output
    assert entry.origin == "starter" and entry.trials == [] and entry.record() == "not tried yet"
    assert entry.cue.signature and all(
        c.startswith(PATTERN_CLASS) and c.removeprefix(PATTERN_CLASS) in DETECTORS
        for c in entry.cue.signature)
    for edit in entry.edits:  # every middleware keeps the contract's runner, word for word
        if edit.get("path", "").startswith("middleware/") and edit["path"].endswith(".py"):
            assert edit["content"].endswith(RUNNER)
    diff = starter_diff(entry_id)
    assert "+++ b/harness.yaml" in diff and all(f"+++ b/{e['path']}" in diff
                                                for e in entry.edits if "path" in e)


def test_done_guard_says_how_to_write_a_missing_output_and_turns_a_fail_into_a_pass(
        tmp_path: Path) -> None:
    """The 1.5B on count-lines: it printed the count and called done; told the file was missing,
    it made it with `touch` and called done again. Each refusal now names its last printing
    command redirected into the file; each reason refuses once, so done goes through in the end."""
    count = "wc -l < /app/poem.txt"
    replies = [shell(count), DONE, shell("touch /app/line_count.txt"), DONE,
               shell(f"{count} > /app/line_count.txt"), DONE, DONE]
    seed, _ = rollout(tmp_path, harness(tmp_path, None), COUNT_LINES, replies)
    guarded, _ = rollout(tmp_path, harness(tmp_path, "done-guard"), COUNT_LINES, replies)
    assert (seed.outcome.value, seed.steps) == ("fail", 2)
    assert (guarded.outcome.value, guarded.steps) == ("pass", 7)
    _, missing, _, empty, _, check = results(guarded)[:6]
    way = f"write it, e.g. run `{count} > /app/line_count.txt`, then look at it"
    assert missing.startswith("ERROR (permanent): blocked by middleware: not finished: the task "
                              "asks for /app/line_count.txt, which does not exist yet: " + way)
    assert empty.startswith("ERROR (permanent): blocked by middleware: not finished: "
                            "/app/line_count.txt is still empty: " + way)
    assert "/app/line_count.txt holds (each line quoted):\n    '14'\n" in check
    # Done first is refused, then done with the file missing; the third goes through.
    early, _ = rollout(tmp_path / "early", harness(tmp_path / "early", "done-guard"), HELLO,
                       [DONE, DONE, DONE, shell("echo never")])
    first, second = results(early)[:2]
    assert "nothing has been run yet" in first
    assert "hello.txt, which does not exist yet: write the task's result into it" in second
    assert (early.exit_reason, early.steps) == ("done", 3)


def test_done_guard_turns_a_command_run_in_the_shell_into_the_script_it_was_meant_for(
        tmp_path: Path) -> None:
    """The 1.5B on count-args-script ran `echo $#` in the shell and called done, the script
    never written (46 of 47 seed rollouts): redirecting that command would write `0` into the
    script, so for a missing script the guard shows the command as the script's body."""
    way = ("echo '#!/bin/bash' > /app/nargs.sh && echo 'echo $#' >> /app/nargs.sh && "
           "chmod +x /app/nargs.sh")
    replies = [shell("echo $#"), DONE, shell(way), DONE, DONE]
    seed, _ = rollout(tmp_path, harness(tmp_path, None), COUNT_ARGS, replies)
    guarded, _ = rollout(tmp_path, harness(tmp_path, "done-guard"), COUNT_ARGS, replies)
    assert (seed.outcome.value, seed.steps) == ("fail", 2)
    assert (guarded.outcome.value, guarded.steps) == ("pass", 5)
    missing = results(guarded)[1]
    assert ("the task asks for /app/nargs.sh, which does not exist yet: it is a script to "
            f"write, not commands to run: put them into it, e.g. run `{way}`") in missing


def test_done_guard_shows_the_output_beside_the_task_so_a_wrong_format_is_fixed(
        tmp_path: Path) -> None:
    """The 1.5B on count-lines wrote `wc -l FILE`'s whole line where digits only were asked for,
    printed it, and called done: the guard puts the file beside the task's words about it."""
    replies = [shell("wc -l /app/poem.txt > /app/line_count.txt"), DONE,
               shell("wc -l < /app/poem.txt > /app/line_count.txt"), DONE]
    seed, _ = rollout(tmp_path, harness(tmp_path, None), COUNT_LINES, replies)
    guarded, _ = rollout(tmp_path, harness(tmp_path, "done-guard"), COUNT_LINES, replies)
    assert (seed.outcome.value, seed.steps) == ("fail", 2)
    assert (guarded.outcome.value, guarded.steps) == ("pass", 4)
    check = results(guarded)[1]
    assert "check your output against the task" in check
    assert "/app/line_count.txt holds (each line quoted):\n    '14 /app/poem.txt'\n" in check
    assert '"Write just that number (digits only' in check


def test_repeat_breaker_refuses_the_same_call_and_quotes_what_it_returned(tmp_path: Path) -> None:
    loop = shell("cat notes.txt")
    guarded, _ = rollout(tmp_path, harness(tmp_path, "repeat-breaker"), HELLO,
                         [loop, loop, json_action("shell", command="cat   notes.txt"),
                          shell("ls"), loop, DONE])
    first, again, spaced, listing, after = results(guarded)[:5]
    assert "No such file or directory" in first
    assert again.startswith("ERROR (permanent): blocked by middleware: you just ran this exact call")
    assert "cat: notes.txt: No such file or directory" in again  # what it returned, quoted back
    assert "(refused 2 times now)" in spaced  # whitespace does not make a new command
    assert "blocked" not in listing and "No such file" in after  # once something else ran: runs
    ran = [e for e in guarded.events if e.kind == "middleware" and e.data["action"] == "block"]
    assert len(ran) == 2


def test_write_file_tool_writes_without_quoting_and_makes_scripts_executable(
        tmp_path: Path) -> None:
    content = "Hello, world!\n"
    replies = [json_action("write_file", path="hello.txt", content=content),
               json_action("write_file", path="/app/bin/run.sh",
                           content="#!/bin/bash\necho \"it's $((6 * 7))\"\n"),
               shell("/app/bin/run.sh"), json_action("write_file", path="/etc/x", content="x"),
               DONE]
    seed, _ = rollout(tmp_path, harness(tmp_path, None), HELLO, replies)
    tooled, _ = rollout(tmp_path, harness(tmp_path, "write-file-tool"), HELLO, replies)
    assert seed.outcome.value == "fail" and "unknown tool 'write_file'" in results(seed)[0]
    assert tooled.outcome.value == "pass"
    wrote, script, ran, outside = results(tooled)[:4]
    assert wrote == ("wrote 14 bytes, 1 lines to /app/hello.txt. It now holds:\nHello, world!\n")
    assert "(executable)" in script and ran.startswith("it's 42")
    assert outside.startswith("error: /etc/x is outside /app")


def test_shell_error_hints_explain_the_error_and_list_what_exists(tmp_path: Path) -> None:
    guarded, _ = rollout(tmp_path, harness(tmp_path, "shell-error-hints"), HELLO, [
        shell("mkdir -p notes && touch 'notes/meeting notes.txt' notes/todo.txt"),
        shell("cat notes/meeting"), shell("wc -l > $1"), shell("nosuchtool --version"),
        shell("ls"), DONE])
    _, missing, redirect, unknown, plain = results(guarded)[:5]
    assert "[hint: notes/meeting does not exist. /app/notes holds: 'meeting notes.txt', " \
           "todo.txt. Names with spaces must be quoted" in missing
    assert "ambiguous redirect" in redirect and "[hint: a redirect (> or <) got an empty" in redirect
    assert "[hint: nosuchtool is not installed here" in unknown
    assert "[hint" not in plain


def test_output_guard_keeps_what_the_agent_wrote_unless_it_insists(tmp_path: Path) -> None:
    replies = [shell("echo 'Hello, world!' > hello.txt"), shell("rm -f hello.txt"), DONE]
    seed, _ = rollout(tmp_path, harness(tmp_path, None), HELLO, replies)
    guarded, _ = rollout(tmp_path, harness(tmp_path, "output-guard"), HELLO, replies)
    assert (seed.outcome.value, guarded.outcome.value) == ("fail", "pass")
    assert "this deletes hello.txt, which you wrote earlier" in results(guarded)[1]
    insists, _ = rollout(tmp_path / "again", harness(tmp_path / "again", "output-guard"), HELLO,
                         [replies[0], replies[1], replies[1], shell("rm -rf /app"), DONE])
    _, refused, deleted, everything = results(insists)[:4]
    assert "blocked" in refused and "blocked" not in deleted
    assert "the task's whole folder" in everything
    assert insists.outcome.value == "fail"  # deleted on purpose: the guard costs one step


def test_steps_left_warning_is_read_in_the_last_three_steps(tmp_path: Path) -> None:
    warned, model = rollout(tmp_path, harness(tmp_path, "steps-left-warning", max_steps=5), HELLO,
                            [shell("ls"), shell("pwd"), shell("ls -a"), shell("id"), DONE])
    last_read = [call[-1].content for call in model.calls]
    assert [text.startswith("[") and "step(s) left" in text for text in last_read] == [
        False, False, True, True, True]
    assert last_read[2].startswith("[3 step(s) left") and last_read[4].startswith("[1 step(s)")
    assert warned.exit_reason == "done"


def copier(messages: list[Message]) -> str:
    """A small model's copy bias, as the 1.5B showed it in 98 of a night's 264 seed rollouts:
    it repeats its last action unless the last thing it reads asks for the step still needed."""
    if "What does the task still need?" in messages[-1].content:
        return shell("echo 'Hello, world!' > hello.txt")
    last = [m.content for m in messages if m.role == "assistant"]
    return last[-1] if last else shell("ls")


def test_task_reminder_ends_each_read_with_the_task_and_what_ran(tmp_path: Path) -> None:
    seed, _ = rollout(tmp_path, harness(tmp_path, None), HELLO, [copier] * 6)
    assert (seed.outcome.value, seed.exit_reason) == ("fail", "repeating")
    reminded, model = rollout(tmp_path, harness(tmp_path, "task-reminder"), HELLO,
                              [shell("cat notes.txt"), copier, shell("cat hello.txt"), DONE])
    assert reminded.outcome.value == "pass"
    first, second, third, _ = (call[-1].content for call in model.calls)
    assert not first.startswith("[The task:")  # nothing has run yet: the instruction is last
    assert second.startswith('[The task: Create a file called hello.txt in the current directory')
    assert "1. `cat notes.txt` -> cat: notes.txt: No such file or directory [exit code: 1]\n" \
        in second
    assert "2. `echo 'Hello, world!' > hello.txt` -> (printed nothing) [exit code: 0]\n" in third
    assert len(model.calls[2]) == len(model.calls[1]) + 2  # one exchange more; the note is not kept


def test_native_tool_calls_hand_each_result_back_as_a_tool_message(tmp_path: Path) -> None:
    write = "echo 'Hello, world!' > hello.txt"
    native, model = rollout(tmp_path, harness(tmp_path, "native-tool-calls"), HELLO, [
        native_call("shell", "call_1", command=write), native_call("done", "call_2", summary="ok")])
    assert native.outcome.value == "pass"
    system, *_, answer = model.calls[1]
    assert "through the tool-calling interface" in system.content
    assert (answer.role, answer.tool_call_id, answer.content) == ("tool", "call_1", "[exit code: 0]\n")
    seed, seed_model = rollout(tmp_path, harness(tmp_path, None), HELLO, [shell(write), DONE])
    assert seed_model.calls[1][-1].role == "user"  # the seed: "Result of shell: ..." from the user
    assert seed_model.calls[1][-1].content.startswith("Result of shell:")


def recounter(messages: list[Message]) -> str:
    """A small model that sends its own last action again (the 1.5B's loop: it reads `14
    poem.txt`, says there are 14 lines and counts them once more), and calls done after a write.
    First it counts the lines, unless its task already says what counting them printed."""
    earlier = [m.content for m in messages if m.role == "assistant"]
    if earlier:
        return DONE if "line_count.txt" in earlier[-1] else earlier[-1]
    if counted := re.search(r"Its result:\n(\d+) poem.txt", messages[1].content):
        return shell(f"echo {counted[1]} > /app/line_count.txt")
    return shell("wc -l poem.txt")


def test_fresh_start_turns_a_loop_into_a_second_attempt(tmp_path: Path) -> None:
    seed, _ = rollout(tmp_path, harness(tmp_path, None), COUNT_LINES, [recounter] * 3)
    assert (seed.outcome.value, seed.exit_reason) == ("fail", "repeating")
    fresh, model = rollout(tmp_path, harness(tmp_path, "fresh-start"), COUNT_LINES,
                         [recounter] * 5)
    assert (fresh.outcome.value, fresh.exit_reason, fresh.steps) == ("pass", "done", 5)
    [note] = [e for e in fresh.events if e.name == "fresh_start"]  # the loop stays on record
    assert note.data == {"repeated": 3, "step": 3, "temperature": 0.2}
    assert [m.role for m in model.calls[3]] == ["system", "user"]


class HotRecounter(ScriptedModel):
    """The recounter, except that a call sampled hotter than 0.5 writes the count it just read
    instead of copying its last action: the bet that resampling a repeat makes."""

    def chat(self, messages: list[Message], **options: object) -> object:
        counted = re.search(r"(\d+) poem.txt", messages[-1].content)
        if options["temperature"] > 0.5 and counted:
            self.replies[0] = shell(f"echo {counted[1]} > /app/line_count.txt")
        return super().chat(messages, **options)


def test_terse_actions_leave_the_thought_out_of_the_prompt_and_the_grammar(tmp_path: Path) -> None:
    from evoharness.agent.parsing import action_schema
    from evoharness.workspace.validate import render_system_prompt

    seed, terse = harness(tmp_path, None), harness(tmp_path, "terse-actions")
    assert '"thought"' in render_system_prompt(seed)
    assert "thought" not in render_system_prompt(terse)
    schema = action_schema(terse.tools, thought_chars=terse.spec.settings.thought_chars)
    assert all("thought" not in variant["properties"] for variant in schema["oneOf"])


def test_resample_repeats_asks_again_instead_of_running_a_copy(tmp_path: Path) -> None:
    seed, _ = rollout(tmp_path, harness(tmp_path, None), COUNT_LINES, HotRecounter([recounter] * 3))
    assert (seed.outcome.value, seed.exit_reason) == ("fail", "repeating")
    resampled, model = rollout(tmp_path, harness(tmp_path, "resample-repeats"), COUNT_LINES,
                               HotRecounter([recounter] * 4))
    assert (resampled.outcome.value, resampled.exit_reason, resampled.steps) == ("pass", "done", 3)
    [note] = [e for e in resampled.events if e.name == "repeat_resampled"]
    assert note.content == 'shell {"command": "wc -l poem.txt"}' and note.data["attempt"] == 1
    assert len(model.calls[3]) == 6  # the set-aside copy never reached the transcript


def looker(messages: list[Message]) -> str:
    """A small model that writes the output blind unless the data is in front of it: the 1.5B
    on csv-column-extract wrote `awk -F, '{print $4}' users.csv > emails.txt` (the city, with the
    header) as its first command, and called done."""
    if len(messages) > 2:
        return DONE
    task = next(m.content for m in messages if m.role == "user")
    if "  | id,name,email,city" not in task:
        return shell("awk -F, '{print $4}' users.csv > emails.txt")
    return shell("tail -n +2 users.csv | cut -d, -f3 > emails.txt")


def test_workspace_preview_puts_the_input_in_the_task_for_the_whole_rollout(tmp_path: Path) -> None:
    seed, _ = rollout(tmp_path, harness(tmp_path, None), CSV_COLUMN, [looker] * 2)
    assert seed.outcome.value == "fail"
    previewed, model = rollout(tmp_path, harness(tmp_path, "workspace-preview"), CSV_COLUMN,
                               [looker] * 2)
    assert previewed.outcome.value == "pass"
    size = (CSV_COLUMN / "environment" / "users.csv").stat().st_size
    tasks = [next(m.content for m in call if m.role == "user") for call in model.calls]
    assert tasks[0] == tasks[1]  # part of the task message: read again at every call, cached
    assert tasks[0].startswith((CSV_COLUMN / "instruction.md").read_text().rstrip() + "\n\n[What")
    assert f"\nusers.csv ({size} bytes)\n  | id,name,email,city\n  | 1,Ada Lovelace," in tasks[0]


def test_workspace_preview_is_bounded_and_never_follows_a_link_or_opens_a_pipe(
        tmp_path: Path) -> None:
    """What /app holds is input from outside: a pipe would block a reader forever, a link may
    point out of /app, a file may be binary or one endless line."""
    app, outside = tmp_path / "app", tmp_path / "outside.txt"
    (app / "deep" / "er" / "still" / "more").mkdir(parents=True)
    (app / ".git" / "objects").mkdir(parents=True)
    (app / "deep" / "er" / "still" / "more" / "hidden.txt").write_text("too deep\n")
    outside.write_text("SECRET\n")
    (app / "link.txt").symlink_to(outside)
    os.mkfifo(app / "pipe")
    (app / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (app / "long.txt").write_text("x" * 5000 + "\n")
    (app / "locked.txt").write_text("locked\n")
    (app / "locked.txt").chmod(0)
    (app / ("n" * 200 + "\n  | id,forged")).write_text("")
    (app / "many").mkdir()
    for n in range(60):
        (app / "many" / f"{n:02}.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    script = ENTRIES["workspace-preview"].edits[0]["content"]
    request = json.dumps({"hook": "before_start", "payload": "Do it.", "context": {}})
    done = subprocess.run([sys.executable, "-c", script], input=request, cwd=app,
                          capture_output=True, text=True, timeout=120, check=True)
    task = json.loads(done.stdout)
    lines = task.splitlines()
    assert lines[2].startswith("[What /app holds at the start (the first 40),")
    listed = [line for line in lines[3:] if not line.startswith("  | ")]
    assert len(listed) == 40 and listed[-1] == "many/28.txt (70 bytes)"  # top-level first
    assert "deep/er/still/" in listed and "deep/er/still/more/" not in listed  # 3 levels down
    assert ".git/" in listed and ".git/objects/" not in listed  # a repository: shown, not walked
    assert "link.txt (a link)" in listed and "SECRET" not in task
    assert "pipe (not a regular file)" in listed
    assert "n" * 117 + "... (0 bytes)" in listed and "forged" not in task  # one line, clipped
    shown = [line for line in lines if line.startswith("  | ")]
    assert "locked.txt (7 bytes)" in listed and (os.getuid() == 0 or "  | locked" not in shown)
    assert "  | " + "x" * 117 + "..." in shown and max(map(len, shown)) == 4 + 120
    # six files shown at most (long.txt, locked.txt if root can read it, the rest from many/;
    # blob.bin is binary), in 2,000 characters
    many = 5 - ("  | locked" in shown)
    assert shown.count("  | line 0") == many and len(task) <= len("Do it.\n\n") + 2000


def test_guarded_fresh_start_carries_both_remedies_into_one_rollout(tmp_path: Path) -> None:
    """The combined entry's edits are its parts' edits, and both act in one rollout: the loop
    starts a fresh attempt, and the done right after its write is shown the file first."""
    combined = ENTRIES["guarded-fresh-start"]
    assert combined.edits == ENTRIES["done-guard"].edits + ENTRIES["fresh-start"].edits
    assert combined.cue.signature == list(dict.fromkeys(
        ENTRIES["done-guard"].cue.signature + ENTRIES["fresh-start"].cue.signature))
    result, _ = rollout(tmp_path, harness(tmp_path, "guarded-fresh-start"), COUNT_LINES,
                        [recounter] * 6)
    assert (result.outcome.value, result.exit_reason, result.steps) == ("pass", "done", 6)
    assert [e.name for e in result.events if e.name in ("fresh_start", "done_guard")] == [
        "fresh_start", "done_guard"]
    assert "/app/line_count.txt holds (each line quoted):\n    '14'\n" in results(result)[-2]


def test_sure_failure_rescue_refuses_only_a_done_sure_to_fail(tmp_path: Path) -> None:
    """Done is refused while the output is missing, as by done-guard; once the file exists, a
    done goes through unchecked (done-guard would show the file and send it back), so a rollout
    on its way to passing is never sent back: here the wrong format fails as under the seed."""
    rescue = ENTRIES["sure-failure-rescue"]
    assert rescue.edits[:-1] == ENTRIES["done-guard"].edits + ENTRIES["fresh-start"].edits
    assert rescue.edits[-1]["path"] == "middleware/done_guard.json"
    # its cue leaves out the pattern whose check it switches off: a done after a write goes through
    assert rescue.cue.signature == [c for c in ENTRIES["guarded-fresh-start"].cue.signature
                                    if c != "pattern:done_after_write"]
    count = "wc -l < /app/poem.txt"
    printed, _ = rollout(tmp_path, harness(tmp_path, "sure-failure-rescue"), COUNT_LINES,
                         [shell(count), DONE, shell(f"{count} > /app/line_count.txt"), DONE])
    assert (printed.outcome.value, printed.steps) == ("pass", 4)
    assert "the task asks for /app/line_count.txt, which does not exist yet" in results(printed)[1]
    wrong = [shell("wc -l /app/poem.txt > /app/line_count.txt"), DONE, shell("echo never")]
    unchecked, _ = rollout(tmp_path / "wrong", harness(tmp_path / "wrong", "sure-failure-rescue"),
                           COUNT_LINES, wrong)
    checked, _ = rollout(tmp_path / "wrong", harness(tmp_path / "wrong", "done-guard"),
                         COUNT_LINES, wrong)
    assert (unchecked.outcome.value, unchecked.exit_reason, unchecked.steps) == ("fail", "done", 2)
    assert "check your output against the task" in results(checked)[1]


def test_the_done_guard_reads_which_reasons_it_gives_from_its_options_file(
        tmp_path: Path) -> None:
    """An options file naming a reason the guard does not know stops its hook with the file's
    name (harness check catches a file that is not a JSON object before any rollout)."""
    guard = ROOT / "evolve" / "library" / "starters" / "done-guard" / "files" / "middleware"
    (tmp_path / "done_guard.py").write_text((guard / "done_guard.py").read_text())
    (tmp_path / "done_guard.json").write_text('{"reasons": ["missing", "format"]}')
    request = {"hook": "before_tool", "payload": {"tool": "done", "arguments": {}},
               "context": {"instruction": "Write hello.txt.", "calls": 1, "history": []}}
    ran = subprocess.run([sys.executable, str(tmp_path / "done_guard.py")], cwd=tmp_path,
                         input=json.dumps(request), capture_output=True, text=True)
    assert ran.returncode != 0 and f"{tmp_path / 'done_guard.json'}: reasons must be" in ran.stderr
    (tmp_path / "done_guard.json").write_text('{"reasons": ["missing"]}')
    ran = subprocess.run([sys.executable, str(tmp_path / "done_guard.py")], cwd=tmp_path,
                         input=json.dumps(request), capture_output=True, text=True, check=True)
    assert "hello.txt, which does not exist yet" in json.loads(ran.stdout)["block"]


def write_starters(tmp_path: Path, specs: dict[str, dict]) -> Path:
    """Starter entries under tmp_path/starters, each entry.yaml its spec on a minimal one."""
    root = tmp_path / "starters"
    for name, spec in specs.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "entry.yaml").write_text(yaml.safe_dump(
            {"root_cause": "r", "targeted_fix": "f", "component": "settings", **spec}))
    return root


@pytest.mark.parametrize(("combines", "message"), [
    (["missing"], "combines an entry that is not another starter entry"),
    (["both"], "combines an entry that is not another starter entry"),  # itself
    (["pair"], "combines an entry that combines others (one level only)"),
    ([], "names no failure pattern it answers"),
    (["../plain"], "invalid starter entry: String should match pattern"),  # never a path
])
def test_a_combined_entry_names_plain_sibling_entries(
        tmp_path: Path, combines: list[str], message: str) -> None:
    root = write_starters(tmp_path, {"plain": {"patterns": ["repeated_command"]},
                                     "pair": {"combines": ["plain"]},
                                     "both": {"combines": combines}})
    with pytest.raises(EvoError, match=re.escape(message)) as raised:
        starter_entries(root)
    assert "both/entry.yaml" in str(raised.value)
    assert all(repr(name) in str(raised.value) for name in combines)


def test_a_combined_entry_leaves_out_only_patterns_its_parts_answer(tmp_path: Path) -> None:
    plain = {"patterns": ["repeated_command", "repeated_error"]}
    root = write_starters(tmp_path, {"plain": plain, "both": {
        "combines": ["plain"], "leaves_out": ["repeated_error"]}})
    both = {e.id: e for e in starter_entries(root)}["both"]
    assert both.cue.signature == ["pattern:repeated_command"]
    write_starters(tmp_path, {"both": {"combines": ["plain"], "leaves_out": ["done_first"]}})
    with pytest.raises(EvoError, match="leaves out patterns no combined entry answers") as raised:
        starter_entries(root)
    assert "both/entry.yaml" in str(raised.value) and "done_first" in str(raised.value)
