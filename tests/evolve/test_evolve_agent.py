"""evolve/agent: a scripted evolve agent on a real seed HarnessRepo, evidence folder and DuckDB file."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from evoharness.agent.events import ListSink
from evoharness.errors import EvoError
from evoharness.evolve.agent import EvolveOutcome, run_evolve_agent
from evoharness.evolve.agent.change import applying_call, change_spec
from evoharness.evolve.agent.components import skeleton_edits
from evoharness.evolve.agent.tools import LibraryOffer
from evoharness.evolve.library.starter import starter_entries
from tests.manifests.builders import judge
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.revert import RevertRecord
from evoharness.manifests.schema import ChangeManifestEntry, IterationManifest
from evoharness.agent.clients.scripted import ScriptedModel, json_action, native_call
from evoharness.traces.store import TraceStore
from evoharness.workspace.edits import apply_edits
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import Settings
from evoharness.workspace.validate import load_harness

TRAIN = ["fix-parser", "count-lines"]
HELDOUT = "secret-heldout-task"
OVERVIEW = "# Evidence overview\nfix-parser fails: the agent calls done without running the tests."
RULE = "When the same command fails twice, try a different command instead of repeating it."
REASON = "The overview shows no failing task: fix-parser and count-lines both pass every rollout."


@dataclass
class Run:
    root: Path
    repo: HarnessRepo
    evidence: Path
    db: Path

    def evolve(self, replies: list, **kwargs: Any) -> tuple[EvolveOutcome, ScriptedModel, ListSink]:
        model, sink = ScriptedModel(replies), ListSink()
        options = {"max_changes": 3, "max_steps": 20, "scoreboard_md": "", **kwargs}
        outcome = run_evolve_agent(repo=self.repo, model=model, evidence_dir=self.evidence,
                                   db_path=self.db, run_id="run1", iteration=1,
                                   train_tasks=TRAIN, sink=sink, **options)
        return outcome, model, sink


@pytest.fixture
def run(tmp_path: Path) -> Run:
    repo = HarnessRepo.create(tmp_path / "workspace")
    evidence = tmp_path / "evidence"
    (evidence / "tasks").mkdir(parents=True)
    (evidence / "overview.md").write_text(OVERVIEW)
    (evidence / "tasks" / "fix-parser.md").write_text("rollout r1: done without a test run")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "task.toml").write_text("oracle")
    db = tmp_path / "traces.duckdb"
    with TraceStore(db) as store:
        for rollout, task, split in [("r1", "fix-parser", "train"), ("r2", "count-lines", "train"),
                                     ("r3", HELDOUT, "heldout")]:
            store.con.execute(
                "INSERT INTO rollouts (rollout_id, run_id, iteration, task_id, split, attempt,"
                " harness_commit, model, outcome, reward, tokens_in, tokens_out, steps,"
                " duration_s, exit_reason, verifier_tail, started_at) VALUES (?, 'run1', 0, ?, ?,"
                " 0, 'abc', 'm', 'fail', 0, 1, 1, 1, 1.0, 'done', '', 0)",
                [rollout, task, split])
    return Run(tmp_path, repo, evidence, db)


def manifest(**changes: Any) -> dict[str, Any]:
    fields = {"component": "system_prompt", "root_cause": "The agent calls done without checking.",
              "targeted_fix": "A rule to check the output before done.",
              "failure_evidence": [{"task_id": "fix-parser", "rollout_id": "r1"}],
              "predicted_fixes": [{"task_id": "fix-parser", "probability": 0.5}],
              "predicted_regressions": [], "expected_delta": 5}
    return {**fields, **changes}


def change(edit: dict[str, Any] | None = None, **fields: Any) -> str:
    return json_action("change", edit=edit or {"op": "append_rule", "text": RULE}, **manifest(**fields))


def results(sink: ListSink) -> list[str]:
    """What each tool call returned, as the model read it."""
    return [e.content for e in sink.events if e.kind == "tool_result"]


def errors(sink: ListSink) -> list[bool]:
    return [e.data["error"] is not None for e in sink.events if e.kind == "tool_result"]


def test_reads_the_overview_and_commits_two_changes_with_their_manifest(run: Run):
    seed = run.repo.head()
    memory = {"op": "write_file", "path": "memory/LONG_TERM.md",
              "content": "Quote file names that may contain spaces.\n"}
    outcome, model, sink = run.evolve([
        json_action("read_evidence", path="overview.md"),
        json_action("read_evidence", path="tasks/fix-parser.md"),
        change(),
        change(memory, component="memory",
               predicted_fixes=[{"task_id": "count-lines", "probability": 0.3}],
               predicted_regressions=[{"task_id": "fix-parser", "probability": 0.1}]),
        json_action("done", summary="two changes"),
    ])
    assert (outcome.exit_reason, outcome.no_change_reason, outcome.steps) == ("done", None, 5)
    assert OVERVIEW in model.calls[1][-1].content
    first, second = outcome.manifest_changes
    log = run.repo.log()
    assert [c.sha for c in log[:3]] == [second.commit, first.commit, seed]
    assert log[1].trailers["Change-Id"] == first.id == "run1-it001-c1"
    assert log[1].trailers["Component"] == "system_prompt"
    assert log[1].trailers["Predicted-Fixes"] == "fix-parser:0.50"
    assert log[0].trailers["Predicted-Regressions"] == "fix-parser:0.10"
    assert (first.files, second.files) == (["system_prompt.md.j2"], ["memory/LONG_TERM.md"])
    assert RULE in run.repo.read_file("system_prompt.md.j2", first.commit)
    assert load_harness(run.repo.path).memory.startswith("Quote file names")
    IterationManifest(run_id="run1", iteration=1, harness_commit_before=seed,
                      changes=outcome.manifest_changes)  # the loop's wrapper accepts them
    assert ChangeManifestEntry.model_validate(first.model_dump()) == first
    assert "committed change run1-it001-c1" in results(sink)[2]
    assert not run.repo.is_dirty()


def test_an_edit_dropping_the_protected_block_is_refused_and_the_retry_succeeds(run: Run):
    seed, tree = run.repo.head(), run.repo.tree_id()
    rewrite = {"op": "write_file", "path": "system_prompt.md.j2",
               "content": "You are a coding agent. Always check your output.\n"}
    outcome, _, sink = run.evolve([change(rewrite), change(), json_action("done", summary="ok")])
    refusal = results(sink)[0]
    assert "edit refused; nothing was changed" in refusal and "protected" in refusal
    assert len(outcome.manifest_changes) == 1
    assert run.repo.log()[1].sha == seed and run.repo.tree_id(f"{seed}") == tree
    assert RULE in (run.repo.path / "system_prompt.md.j2").read_text()


def test_paths_outside_the_workspace_and_evidence_are_refused_and_nothing_changes(run: Run):
    outside = run.root / "outside.txt"
    outside.write_text("untouched")
    os.symlink(outside.parent, run.repo.path / "escape")
    os.symlink(outside, run.evidence / "leak.md")
    run.repo.commit_change("a symlink out", change_id="link", component="settings")
    head = run.repo.head()
    writes = [{"op": "write_file", "path": path, "content": "pwned"}
              for path in ["../evidence/overview.md", "../tasks/task.toml", "../traces.duckdb",
                           str(outside), "escape/outside.txt", ".git/config"]]
    writes.append({"op": "delete_file", "path": "../evidence/overview.md"})
    reads = [json_action("read_file", path="../traces.duckdb"),
             json_action("read_file", path="/etc/passwd"),
             json_action("read_file", path="escape/outside.txt"),
             json_action("list_files", path=".."),
             json_action("read_evidence", path="../workspace/harness.yaml"),
             json_action("read_evidence", path="leak.md")]
    seen = []
    # Two refused changes per session: a third in a row would end the session early.
    for batch in [reads, *([change(a), change(b)] for a, b in zip(writes[::2], writes[1::2])),
                  [change(writes[-1])]]:
        outcome, _, sink = run.evolve([*batch, json_action("done", summary=REASON)])
        assert errors(sink) == [True] * len(batch) + [False]
        assert outcome.manifest_changes == [] and run.repo.head() == head
        seen += results(sink)
    assert len(seen) == len(reads) + len(writes) + 5 and "untouched" not in "".join(seen)
    assert outside.read_text() == "untouched"
    assert (run.evidence / "overview.md").read_text() == OVERVIEW
    assert (run.root / "tasks" / "task.toml").read_text() == "oracle"
    assert not run.repo.is_dirty()


def test_two_refusals_get_a_corrective_turn_and_a_third_ends_the_session(run: Run):
    head, tree = run.repo.head(), run.repo.tree_id()
    bad = manifest(predicted_fixes=[{"task_id": "fix-parser", "probability": 1.5}])
    del bad["root_cause"]
    replies = [json_action("change", edit={"op": "append_rule", "text": RULE}, **bad)] * 3
    outcome, model, sink = run.evolve([*replies, change(), json_action("done", summary="x")])
    first, second, third = results(sink)
    assert "root_cause: Field required" in first
    assert "predicted_fixes[0].probability" in first and "call change again" in first
    assert "last try" in second and '"root_cause": "<fix: root_cause>"' in second
    assert '"component": "system_prompt"' in second  # what was right is kept for the retry
    assert "the session ends here" in third
    assert outcome.exit_reason == "invalid_manifest" and outcome.manifest_changes == []
    assert outcome.no_change_reason.startswith("no valid change after 3 refused attempts")
    assert "root_cause" in outcome.no_change_reason
    assert len(model.replies) == 2  # the session stopped: the valid change was never asked for
    assert (run.repo.head(), run.repo.tree_id()) == (head, tree) and not run.repo.is_dirty()
    IterationManifest(run_id="run1", iteration=1, harness_commit_before=head,
                      no_change_reason=outcome.no_change_reason)


def test_a_change_without_a_prediction_is_refused_and_the_retry_succeeds(run: Run):
    outcome, _, sink = run.evolve([change(predicted_fixes=[]), change(),
                                   json_action("done", summary="x")])
    assert "no prediction" in results(sink)[0] and "call change again" in results(sink)[0]
    assert len(outcome.manifest_changes) == 1 and outcome.no_change_reason is None


def test_what_costs_nothing_is_read_as_meant_and_the_agent_is_told(run: Run):
    sloppy = json_action(
        "change", edits={"text": RULE}, component="prompt", summary="a loop breaker",
        root_cause="The agent repeats a failing command.",
        failure_evidence={"task_name": "Fix-Parser", "outcome": "fail", "error": "loop",
                          "rollout_id": "rollouts/r1.md"},
        predicted_fixes=[{"task_id": "COUNT-LINES", "probability": "40%", "why": "it loops"}],
        expected_delta="+5%")
    outcome, _, sink = run.evolve([sloppy, json_action("done", summary="x")])
    (entry,) = outcome.manifest_changes
    assert entry.component == "system_prompt" and entry.expected_delta == 5.0
    assert [(e.task_id, e.rollout_id) for e in entry.failure_evidence] == [("fix-parser", "r1")]
    assert [(p.task_id, p.probability) for p in entry.predicted_fixes] == [("count-lines", 0.4)]
    assert entry.targeted_fix == f"append_rule: {RULE}"
    told = results(sink)[0]
    for note in ["ignored unknown field(s): summary", "failure_evidence: read the single item",
                 "dropped unknown key(s) error, outcome", "read task 'Fix-Parser' as 'fix-parser'",
                 "read probability '40%' as 0.4", "read as append_rule",
                 "component 'prompt' is not one of", "dropped unknown key(s) why"]:
        assert note in told, note
    assert RULE in (run.repo.path / "system_prompt.md.j2").read_text()


def test_the_component_is_the_one_the_edits_change(run: Run):
    memory = {"op": "write_file", "path": "memory/LONG_TERM.md", "content": "- Quote paths.\n"}
    outcome, _, sink = run.evolve([change(component="middleware"),  # a rule, called a middleware
                                   change(memory, component="memory"),
                                   json_action("done", summary="x")])
    assert [e.component for e in outcome.manifest_changes] == ["system_prompt", "memory"]
    assert "component 'middleware': the edits change system_prompt" in results(sink)[0]
    assert "component" not in results(sink)[1]


def test_a_rule_the_harness_has_or_a_placeholder_is_refused_before_an_evaluation(run: Run):
    head = run.repo.head()
    restated = {"op": "append_rule",
                "text": "Before calling done, run the program and compare its output with the task."}
    placeholder = {"op": "append_rule", "text": "<one general rule that stops the root cause>"}
    memory = {"op": "write_file", "path": "memory/LONG_TERM.md",
              "content": "- Check your output before you call done.\n"}
    outcome, _, sink = run.evolve([change(restated), change(placeholder),
                                   json_action("done", summary=REASON)])
    assert "already in the harness: 'Check your work (run it, test it, read the output) " in results(sink)[0]
    assert "placeholder" in results(sink)[1]
    outcome, _, sink = run.evolve([change(memory), json_action("done", summary=REASON)])
    assert "already in the harness" in results(sink)[0]
    assert outcome.manifest_changes == [] and run.repo.head() == head and not run.repo.is_dirty()
    mixed = {"op": "write_file", "path": "memory/LONG_TERM.md",
             "content": "- Check your output before you call done.\n- Quote file names with spaces.\n"}
    outcome, _, _ = run.evolve([change(mixed), json_action("done", summary="x")])
    assert len(outcome.manifest_changes) == 1  # one new lesson makes the change worth judging


def test_a_rule_reverted_earlier_in_the_run_is_refused_and_the_lessons_are_listed(run: Run):
    (run.repo.path / "memory" / "LONG_TERM.md").write_text("- Print the file after you write it.\n")
    sha = run.repo.commit_change("memory: print after write", change_id="run1-it000-c1",
                                 component="memory")
    revert_sha = run.repo.revert(sha, reason="not shown")
    entry = ChangeManifestEntry.model_validate(
        {**manifest(root_cause="It never looks at what it wrote."), "id": "run1-it000-c1",
         "files": ["memory/LONG_TERM.md"], "commit": sha})
    # Its real trial: fix-parser fails on both arms, so the gain is not shown and it is reverted.
    judged = judge(entry, "fix-parser=0/2", {"fix-parser": "0"}, {"fix-parser": "0"})
    assert (judged.outcome, judged.decision) == ("not_shown", "revert")
    reverted = RevertRecord(change_id=entry.id, commit=sha, revert_commit=revert_sha,
                            reason="not shown", iteration=1)
    tried = [ChangeRecord(iteration=0, entry=entry, judgement=judged, revert=reverted)]
    again = {"op": "append_rule", "text": "After writing a file, print the file you wrote."}
    outcome, model, sink = run.evolve([change(again), json_action("done", summary=REASON)],
                                      tried=tried)
    assert ("already tried in iteration 0 (run1-it000-c1, not_shown) and reverted: "
            "'Print the file after you write it.'") in results(sink)[0]
    system = model.calls[0][0].content
    assert ('iteration 0, run1-it000-c1 (not_shown, reverted): "Print the file after you write '
            'it." (root cause: It never looks at what it wrote.)') in system
    assert "- Check your work (run it, test it, read the output)" in system


def test_unknown_and_held_out_task_ids_are_refused(run: Run):
    head = run.repo.head()
    outcome, model, sink = run.evolve([
        change(predicted_fixes=[{"task_id": HELDOUT, "probability": 0.9}]),
        change(failure_evidence=[{"task_id": "made-up"}]),
    ])
    assert f"unknown task '{HELDOUT}'" in results(sink)[0]
    assert "failure_evidence[0].task_id: unknown task 'made-up'" in results(sink)[1]
    assert outcome.manifest_changes == [] and run.repo.head() == head
    assert HELDOUT not in model.calls[0][0].content and "fix-parser" in model.calls[0][0].content


def test_max_changes_is_enforced(run: Run):
    second = {"op": "append_rule", "text": "Read error messages twice."}
    outcome, _, sink = run.evolve([change(), change(second), json_action("done", summary="x")],
                                  max_changes=1)
    assert len(outcome.manifest_changes) == 1
    assert "limit of 1 change(s)" in results(sink)[1]
    assert "Read error messages twice" not in (run.repo.path / "system_prompt.md.j2").read_text()


def test_sql_sees_train_rollouts_only_and_refuses_writes(run: Run):
    query = "SELECT task_id, split FROM rollouts ORDER BY task_id"
    with TraceStore(run.db) as store:  # the loop holds the database open while the agent runs
        _, _, sink = run.evolve([json_action("sql", query=query),
                                 json_action("sql", query="DELETE FROM rollouts"),
                                 json_action("sql", query=f"SELECT * FROM rollouts WHERE task_id = '{HELDOUT}'"),
                                 json_action("done", summary="x")], store=store)
    listed, delete, heldout, _ = results(sink)
    assert "count-lines" in listed and "fix-parser" in listed and HELDOUT not in listed
    assert "only read-only queries" in delete and "(0 row(s))" in heldout
    with TraceStore(run.db) as store:
        assert store.con.execute("SELECT count(*) FROM rollouts").fetchone() == (3,)


def test_workspace_listing_and_reading(run: Run):
    _, _, sink = run.evolve([json_action("list_files"), json_action("read_file", path="harness.yaml"),
                             json_action("read_evidence", path="tasks"),
                             json_action("done", summary="x")])
    listing, spec, tasks, _ = results(sink)
    assert "tools/shell.py" in listing and ".git" not in listing
    assert "name: seed" in spec and "tasks/fix-parser.md" in tasks


def test_ending_without_a_change_needs_a_specific_reason(run: Run):
    outcome, _, sink = run.evolve([json_action("done", summary=REASON)])
    assert outcome.no_change_reason == f"no change: {REASON}" and outcome.specific
    outcome, _, sink = run.evolve([json_action("done", summary="nothing to change"),
                                   json_action("done", summary="nothing to change")])
    assert "does not say why" in results(sink)[0]  # one corrective turn, then it is accepted
    assert outcome.no_change_reason == "no change: nothing to change" and not outcome.specific
    outcome, _, sink = run.evolve([json_action("read_evidence")] * 5, max_steps=5)
    assert outcome.no_change_reason == "the evolve agent made no change (max_steps)"
    assert "[3 step(s) left: make your change now" in results(sink)[1]
    assert "step(s) left" not in results(sink)[0]


def test_native_tool_calls_and_the_scoreboard_reach_the_agent(run: Run):
    edit = {"op": "append_rule", "text": RULE}
    outcome, model, _ = run.evolve(
        [native_call("change", edit=edit, **manifest()), native_call("done", "c2", summary="x")],
        settings=Settings(action_format="native"), scoreboard_md="| c1 | reverted: task hint |")
    assert len(outcome.manifest_changes) == 1
    assert "reverted: task hint" in model.calls[0][0].content
    assert model.calls[1][-1].role == "tool" and "committed change" in model.calls[1][-1].content


def test_a_dirty_workspace_is_refused(run: Run):
    (run.repo.path / "stray.txt").write_text("hand edit")
    with pytest.raises(EvoError, match="uncommitted changes"):
        run.evolve([json_action("done", summary="x")])


def test_the_change_schema_is_shown_to_the_json_agent(run: Run):
    _, model, _ = run.evolve([json_action("done", summary="x")])
    system = model.calls[0][0].content
    assert '"tool": "change"' in system and "append_rule" in system and '"thought"' in system
    assert json.dumps("read_evidence") in system


def test_edits_that_break_the_harness_are_refused_with_the_reason(run: Run):
    tree = run.repo.tree_id()
    broken = [{"op": "delete_file", "path": "tools/shell.py"},
              {"op": "replace_section", "file": "system_prompt.md.j2", "heading": "How to reply",
               "text": "Answer in plain English."},
              {"op": "register_component", "kind": "skill", "name": "missing"}]
    outcome, _, sink = run.evolve([*[change(edit) for edit in broken],
                                   json_action("done", summary="x")])
    deleted, protocol, unregistered = results(sink)
    assert "tools/shell.py" in deleted
    assert "no longer explains how to reply" in protocol
    assert "missing" in unregistered
    assert outcome.manifest_changes == [] and run.repo.tree_id() == tree
    assert not run.repo.is_dirty()


class Constraining(ScriptedModel):
    """The scripted model as a server that decodes under a schema: it keeps each reply's schema
    (its scripted replies do not follow it; the tests check the schemas)."""

    constrains_by_default = True

    def __init__(self, replies: list) -> None:
        super().__init__(replies)
        self.schemas: list = []

    def chat(self, messages, **options):
        self.schemas.append(options.get("schema"))
        return super().chat(messages, **options)


def decoded(run: Run, replies: list, **options: Any) -> tuple[EvolveOutcome, Constraining,
                                                             ListSink]:
    model, sink = Constraining(replies), ListSink()
    outcome = run_evolve_agent(repo=run.repo, model=model, evidence_dir=run.evidence,
                               db_path=run.db, run_id="run1", iteration=1, train_tasks=TRAIN,
                               sink=sink, scoreboard_md="", **{"max_changes": 1, **options})
    return outcome, model, sink


def test_replies_are_decoded_under_the_strict_change_schema(run: Run):
    """With constrained decoding, the model's change call is forced into known task ids, closed
    evidence items, a component kind and a prediction (the registry itself stays forgiving)."""
    _, model, _ = decoded(run, [json_action("done", summary=REASON)], max_steps=5)
    valid = Draft202012Validator(model.schemas[0]).is_valid
    good = json.loads(change(edit=None))
    good["arguments"]["edits"] = [good["arguments"].pop("edit")]
    good["arguments"]["failure_evidence"] = [{"task_id": "fix-parser", "attempt": 0}]
    good["thought"] = "the agent loops"
    assert valid(good)

    def variant(**changes: Any) -> dict:
        return {**good, "arguments": {**good["arguments"], **changes}}

    assert not valid(variant(failure_evidence=[{"task_id": "fix-parser", "outcome": "fail"}]))
    assert not valid(variant(predicted_fixes=[{"task_id": HELDOUT, "probability": 0.5}]))
    assert not valid(variant(predicted_fixes=[]))
    assert not valid(variant(component="prompt"))
    assert not valid(variant(edits=[{"op": "append_rule", "text": RULE, "why": "x"}]))
    assert not valid({**good, "tool": "write_harness"})
    assert not valid(variant(library_entry="quote-paths"))  # no library entry was offered


def test_a_library_entry_is_applied_only_when_offered_and_named_in_a_trailer(run: Run):
    offer = LibraryOffer(entry_id="quote-paths-1a2b3c", summary="quote paths", text="the entry")
    outcome, _, sink = run.evolve([change(library_entry="made-up"),
                                   change(library_entry=" quote-paths-1a2b3c "),
                                   json_action("done", summary="applied")], library=[offer])
    refused_first = results(sink)[0]
    assert "library_entry: no such library entry was offered" in refused_first
    assert "quote-paths-1a2b3c" in refused_first  # the refusal names what is offered
    [entry] = outcome.manifest_changes
    assert run.repo.commit_info(entry.commit).trailers["Library-Entry"] == "quote-paths-1a2b3c"


def test_an_offered_entry_is_applied_by_its_id_with_its_own_edits(run: Run):
    """A small model cannot copy a middleware file into a JSON string: naming the entry is enough,
    and its edits are applied exactly (so its record is about one thing)."""
    [starter] = [e for e in starter_entries() if e.id == "write-file-tool"]
    offer = LibraryOffer(starter.id, starter.summary(), "text", edits=tuple(starter.edits),
                         component=starter.component,
                         root_cause=starter.cue.root_cause, targeted_fix=starter.targeted_fix,
                         tasks=("count-lines",))
    applies = json.dumps({"tool": "change", "arguments": {
        "library_entry": starter.id, "component": "system_prompt",
        "predicted_fixes": [{"task_id": "count-lines", "probability": 0.4}],
        "predicted_regressions": [], "expected_delta": 20,
        "edits": [{"op": "append_rule", "text": RULE}]}})
    outcome, _, sink = run.evolve([json_action("library", entry=starter.id), applies,
                                   json_action("done", summary="applied")], library=[offer])
    read, committed = results(sink)[:2]
    assert 'call change with "library_entry": "write-file-tool"' in read
    assert "the edits of library entry write-file-tool were applied as they are (the edits sent " \
           "were left out" in committed
    assert "root_cause missing: taken from library entry" in committed
    [entry] = outcome.manifest_changes
    # its component is the entry's (the call said system_prompt; the edits alone say tool_impl)
    assert entry.component == "tool" and entry.root_cause == starter.cue.root_cause
    assert [e.task_id for e in entry.failure_evidence] == ["count-lines"]
    assert sorted(entry.files) == ["harness.yaml", "tools/write_file.py", "tools/write_file.yaml"]
    assert [t.name for t in load_harness(run.repo.path).tools] == ["shell", "write_file"]
    assert RULE not in (run.repo.path / "system_prompt.md.j2").read_text()


def _starter_offer(entry_id: str, tasks: tuple[str, ...]) -> LibraryOffer:
    [starter] = [e for e in starter_entries() if e.id == entry_id]
    return LibraryOffer(starter.id, starter.summary(), "text", edits=tuple(starter.edits),
                        component=starter.component, root_cause=starter.cue.root_cause,
                        targeted_fix=starter.targeted_fix, tasks=tasks)


def offered_call(result: str) -> dict[str, Any]:
    """The complete `change` call a hint shows for an offered remedy."""
    start = result.index("with: change {") + len("with: change ")
    call, _ = json.JSONDecoder().raw_decode(result, start)
    return call


def test_ending_with_no_change_while_remedies_are_offered_is_sent_the_call_that_applies_one(
        run: Run):
    """The 1.5B read the evidence, named the pattern an offered entry answers, and called done:
    the first such done comes back with a complete call for the best match, which works as sent;
    a second done with its reason still ends the session."""
    offers = [_starter_offer("done-guard", ("count-lines", "fix-parser")),
              _starter_offer("repeat-breaker", ("count-lines",))]
    outcome, _, sink = run.evolve([json_action("done", summary=REASON)], library=offers)
    refusal = results(sink)[0]
    assert "apply the best match, done-guard, with: change {" in refusal
    assert "or another offered entry: repeat-breaker" in refusal
    call = offered_call(refusal)
    assert call["library_entry"] == "done-guard" and call["predicted_regressions"] == []

    outcome, _, sink = run.evolve([json_action("done", summary=REASON),
                                   json.dumps({"tool": "change", "arguments": call}),
                                   json_action("done", summary="applied")], library=offers)
    [entry] = outcome.manifest_changes
    assert entry.component == "middleware" and "committed change" in results(sink)[1]
    assert [p.task_id for p in entry.predicted_fixes] == ["count-lines", "fix-parser"]
    assert run.repo.commit_info("HEAD").trailers.get("Library-Entry") == "done-guard"

    outcome, _, _ = run.evolve([json_action("done", summary=REASON)] * 2, library=offers)
    assert outcome.manifest_changes == [] and outcome.no_change_reason == f"no change: {REASON}"


def test_every_call_shown_follows_the_order_the_server_decodes_in() -> None:
    """A server decoding under the change tool's schema (llama.cpp's llguidance) writes its
    properties in the schema's order. Shown an entry's call with library_entry first while the
    schema had it last, the 1.5B wrote every field but that one. The call a hint shows and the
    prompt's examples follow the schema's order, the entry first, and the call is valid."""
    spec = change_spec(["count-lines", "fix-parser"], ["done-guard"])
    order = list(spec.parameters["properties"])
    assert order[0] == "library_entry"
    call = applying_call(_starter_offer("done-guard", ("count-lines", "fix-parser")))
    Draft202012Validator(spec.parameters).validate(call)
    root = Path(__file__).resolve().parents[2]
    template = (root / "evolve/agent/templates/system.md.j2").read_text()
    examples = [json.loads(line)["arguments"] for line in template.splitlines()
                if line.startswith('{"thought"') and '"tool": "change"' in line]
    assert len(examples) == 2
    for keys in [list(call), *(list(example) for example in examples)]:
        assert keys == sorted(keys, key=order.index), keys


def test_an_offered_call_sent_without_its_entry_name_applies_the_entry(run: Run):
    """The 1.5B's call on the README's main job of 2026-12-02, four times: the offered call for
    done-guard with every field but library_entry, so with no edits. Its targeted fix is the
    entry's word for word: it applies the entry and says how it was read. A call with a fix of
    its own and no edits is still refused."""
    offers = [_starter_offer("done-guard", ("count-lines", "fix-parser"))]
    call = applying_call(offers[0])
    del call["library_entry"]
    outcome, _, sink = run.evolve([json.dumps({"tool": "change", "arguments": call}),
                                   json_action("done", summary="applied")], library=offers)
    [entry] = outcome.manifest_changes
    assert entry.component == "middleware"
    assert run.repo.commit_info("HEAD").trailers.get("Library-Entry") == "done-guard"
    assert "library_entry missing: the call is library entry done-guard's as offered" \
        in results(sink)[0]

    own = {**call, "targeted_fix": "Check the output file before calling done."}
    outcome, _, sink = run.evolve([json.dumps({"tool": "change", "arguments": own}),
                                   json_action("done", summary=REASON)] * 2, library=offers)
    assert outcome.manifest_changes == [] and "no edits given" in results(sink)[0]


def test_while_remedies_are_offered_each_next_step_shows_the_call_for_the_next_one(run: Run):
    """The README demo's session on the 1.5B, offered five entries: it read a rollout and the
    prompt, wrote the overview's prose rule, then a near-copy of it (refused twice), and ended.
    After a read (the overview's first), after its own change and on its last try, the hint
    carries the complete call for the best offered entry not applied yet; once one is applied,
    the next one's."""
    offers = [_starter_offer("repeat-breaker", ("count-lines",)),
              _starter_offer("done-guard", ("count-lines", "fix-parser"))]
    bad = manifest()
    del bad["root_cause"]
    refused_change = json_action("change", edit={"op": "append_rule", "text": RULE}, **bad)
    _, _, sink = run.evolve([json_action("read_evidence", path="overview.md"),
                             json_action("read_evidence", path="tasks/fix-parser.md"), change(),
                             refused_change, refused_change, json_action("done", summary="x")],
                            library=offers)
    overview, read, committed, _, last_try = results(sink)[:5]
    assert overview.rpartition("\n[")[2].startswith("next: apply the offered remedy")
    for hint in (overview, read, committed, last_try):
        assert "apply the offered remedy repeat-breaker" in hint, hint
        assert offered_call(hint)["library_entry"] == "repeat-breaker"
    assert "last try" in last_try

    outcome, _, sink = run.evolve([json_action("read_evidence", path="tasks/fix-parser.md")],
                                  library=offers)
    call = offered_call(results(sink)[0])
    outcome, _, sink = run.evolve([json.dumps({"tool": "change", "arguments": call}),
                                   json_action("done", summary="applied")], library=offers)
    applied = results(sink)[0]
    assert applied.startswith("committed change"), applied
    assert offered_call(applied)["library_entry"] == "done-guard"  # the next one, not the same
    assert run.repo.commit_info("HEAD").trailers.get("Library-Entry") == "repeat-breaker"


def test_skeleton_gives_the_contract_and_edits_that_pass_the_harness_check(run: Run):
    outcome, _, sink = run.evolve([
        json_action("skeleton", kind="middleware", name="loop_guard", hook="after_tool"),
        json_action("skeleton", kind="tool", name="shell"),
        json_action("skeleton", kind="skill", name="Bad Name"),
        json_action("done", summary=REASON)])
    middleware, taken, bad = results(sink)[:3]
    assert "after_tool(result, context)" in middleware and '"history"' in middleware
    assert "next: write the body of the skeleton's file" in middleware
    edits, _ = json.JSONDecoder().raw_decode(middleware, middleware.index("\n[\n") + 1)
    assert [e["op"] for e in edits] == ["add_file", "register_component"]
    assert "def after_tool(result, context):" in edits[0]["content"]
    assert "tools/shell.yaml: path: file already exists" in taken
    assert "not a valid component name" in bad
    assert not run.repo.is_dirty()  # checked on a copy
    for kind, name in [("middleware", "a"), ("tool", "b"), ("skill", "c")]:
        apply_edits(run.repo.path, skeleton_edits(kind, name))
    assert load_harness(run.repo.path).middleware == ["a"]


def test_a_repeated_read_is_not_run_again_and_each_read_says_what_comes_next(run: Run):
    (run.evidence / "overview.md").write_text(
        OVERVIEW + "\n- [r1](rollouts/r1.md) (fix-parser): `ls` ran 5 times\n")
    read = json_action("read_evidence", path="overview.md")
    _, _, sink = run.evolve([read, read, json_action("read_file", path="harness.yaml"),
                             json_action("done", summary=REASON)])
    first, again, spec, _ = results(sink)
    assert OVERVIEW in first and 'e.g. read_evidence {"path": "rollouts/r1.md"}' in first
    assert "you just made this same call" in again and OVERVIEW not in again
    assert "next: call change with the root cause" in spec
    assert errors(sink) == [False, True, False, False]


def test_one_refusal_names_the_manifest_and_the_edit_problems_together(run: Run):
    outcome, _, sink = run.evolve([change({"op": "rewrite_everything"}, predicted_fixes=[]),
                                   json_action("done", summary=REASON)])
    refusal = results(sink)[0]
    assert refusal.startswith("ERROR (permanent): invalid manifest; nothing was changed")
    assert "no prediction" in refusal and "rewrite_everything" in refusal
    assert outcome.manifest_changes == [] and not run.repo.is_dirty()


def test_after_a_change_the_next_unaddressed_pattern_is_named(run: Run):
    (run.evidence / "overview.md").write_text(
        "# Evidence overview\n\n## Failure patterns (what the agent did)\n\n"
        "### The agent runs the same command again and again\n\n- [r1](rollouts/r1.md)\n\n"
        "### The agent calls done right after writing a file, without running or showing it\n\n"
        "## Failure classes\n\n### Agent exit reasons\n")
    _, _, sink = run.evolve([json_action("read_evidence"),
                             change(root_cause="The agent runs the same command again and again."),
                             json_action("done", summary="one change")], max_changes=2)
    committed = results(sink)[1]
    assert committed.startswith("committed change")
    assert ('e.g. "The agent calls done right after writing a file, without running or showing '
            'it", make one change for it') in committed


def test_a_stuck_agent_is_left_only_change_or_done_until_it_commits(run: Run):
    """The README demo's session on the 1.5B: told twice that a read's result is above, it read
    the same file until its steps ran out. From the second refused repeat on, each reply is
    decoded under change and done only, and any other call is refused; a commit lifts it."""
    read = json_action("read_file", path="harness.yaml")
    outcome, model, sink = decoded(run, [read, read, read, json_action("read_evidence"),
                                         change(), json_action("read_evidence",
                                                               path="tasks/fix-parser.md"),
                                         json_action("done", summary="made")],
                                   max_steps=20)

    def tools(schema: dict) -> set[str]:
        return {one["properties"]["tool"]["const"] for one in schema["oneOf"]}

    everything = tools(model.schemas[0])
    assert {"read_file", "read_evidence", "sql", "change", "done"} <= everything
    assert [tools(s) == {"change", "done"} for s in model.schemas] == [
        False, False, False, True, True, False, False]
    said = results(sink)
    assert "you just made this same call" in said[1] and "you just made this same call" in said[2]
    assert "no more read_evidence: only change or done remain" in said[3]
    assert len(outcome.manifest_changes) == 1  # then reads are allowed again
    assert "done without a test run" in said[5] and errors(sink)[5] is False


def test_with_few_steps_left_and_nothing_committed_only_change_or_done_remain(run: Run):
    read = json_action("read_evidence")
    outcome, model, sink = decoded(run, [read, json_action("read_file", path="harness.yaml"),
                                         json_action("sql", query="SELECT 1"),
                                         json_action("done", summary=REASON)], max_steps=5)
    narrowed = [len(schema["oneOf"]) == 2 for schema in model.schemas]
    assert narrowed == [False, False, True, True]  # 5, 4, then 3 steps left
    assert "only change or done remain" in results(sink)[2]
    assert outcome.no_change_reason == f"no change: {REASON}"


def test_a_prompt_section_that_does_not_exist_is_read_as_rules_and_the_agent_is_told(run: Run):
    """The README demo's second session: the 1.5B replaced a "Failure patterns" section (a heading
    of the evidence it had read) in the system prompt, which has none, and was refused for it
    three times. Its lines are rules, added where the prompt takes them."""
    lines = ["If a command fails twice, change the approach instead of running it again.",
             "Read the file you wrote before calling done."]
    section = {"op": "replace_section", "file": "system_prompt.md.j2",
               "heading": "Failure patterns", "text": "\n".join(f"- {line}" for line in lines)}
    outcome, _, sink = run.evolve([change(section), json_action("done", summary="made")])

    [entry] = outcome.manifest_changes
    prompt = (run.repo.path / "system_prompt.md.j2").read_text()
    assert prompt.endswith("## Rules learned\n" + "".join(f"- {line}\n" for line in lines))
    assert "Failure patterns" not in prompt and entry.component == "system_prompt"
    assert ("read as meant: edits[0]: system_prompt.md.j2 has no section 'Failure patterns'; "
            "its 2 line(s) were added as rules (append_rule)") in results(sink)[0]
    other = {**section, "file": "skills/none.md"}  # not the prompt: refused as sent
    _, _, sink = run.evolve([change(other), json_action("done", summary=REASON)])
    assert errors(sink)[0] and "append_rule" not in results(sink)[0]


def test_a_missing_section_is_read_as_rules_only_before_any_other_edit(run: Run):
    """An edit that comes after another may meet a prompt the other changed (here one that adds
    the heading): it is applied as sent."""
    prompt = (run.repo.path / "system_prompt.md.j2").read_text()
    adds = {"op": "write_file", "path": "system_prompt.md.j2",
            "content": prompt + "\n## Failure patterns\nold\n"}
    section = {"op": "replace_section", "file": "system_prompt.md.j2",
               "heading": "Failure patterns", "text": "* " + RULE}
    outcome, _, sink = run.evolve([json_action("change", edits=[adds, section], **manifest()),
                                   json_action("done", summary="made")])

    assert len(outcome.manifest_changes) == 1 and "append_rule" not in results(sink)[0]
    assert (run.repo.path / "system_prompt.md.j2").read_text().endswith(
        f"## Failure patterns\n* {RULE}\n")
