"""Safe edit operations: each op works, each confinement attack is refused with nothing changed
(inside or outside the workspace), and a batch that breaks the harness is undone exactly."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from evoharness.errors import EvoError
from evoharness.workspace.edits import EditRefused, apply_edits, commit_edits, parse_edits
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import PROTECTED_BEGIN
from evoharness.workspace.validate import load_harness, render_system_prompt

PROMPT = "system_prompt.md.j2"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root except git's internals (which change on any commit)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def refused(root: Path, edits: list[dict], words: str) -> EditRefused:
    before = tree(root)
    with pytest.raises(EditRefused) as caught:
        apply_edits(root, edits)
    assert words in str(caught.value), str(caught.value)
    assert tree(root) == before
    return caught.value


def test_append_rule_creates_section_then_appends(harness_dir: Path) -> None:
    apply_edits(harness_dir, [{"op": "append_rule", "text": "Run the tests\nbefore done."}])
    harness = apply_edits(harness_dir, [{"op": "append_rule", "text": "Read files first."}])
    prompt = render_system_prompt(harness)
    assert "## Rules learned\n- Run the tests before done.\n- Read files first.\n" in prompt


def test_append_rule_keeps_template_syntax_literal(harness_dir: Path) -> None:
    harness = apply_edits(harness_dir, [{"op": "append_rule", "text": "Never print {{ secrets }}"},
                                        {"op": "append_rule", "text": "Be brief."}])
    assert "- Never print {{ secrets }}\n- Be brief.\n" in render_system_prompt(harness)


def test_append_rule_refuses_blank_text(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "append_rule", "text": " \n "}], "empty")


def test_replace_section(harness_dir: Path) -> None:
    harness = apply_edits(harness_dir, [{"op": "replace_section", "file": PROMPT,
                                         "heading": "## Tools", "text": "- `shell`: bash.\n"
                                         "- `done`: finish."}])
    prompt = render_system_prompt(harness)
    assert "- `shell`: bash.\n- `done`: finish.\n" in prompt
    assert "JSON schema" not in prompt and "Check your work" in prompt


def test_replace_section_inside_jinja_block(harness_dir: Path) -> None:
    skill = "---\nname: tdd\ndescription: Write a test first.\n---\nbody\n"
    apply_edits(harness_dir, [{"op": "add_file", "path": "skills/tdd/SKILL.md", "content": skill},
                              {"op": "register_component", "kind": "skill", "name": "tdd"}])
    harness = apply_edits(harness_dir, [{"op": "replace_section", "file": PROMPT,
                                         "heading": "Skills (loaded on demand)",
                                         "text": "Ask for a skill before a hard step."}])
    prompt = render_system_prompt(harness)
    assert "## Skills (loaded on demand)\nAsk for a skill before a hard step.\n" in prompt
    assert "Write a test first." not in prompt


def test_replace_section_refuses_protected_block(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "replace_section", "file": PROMPT, "heading": "Rules",
                           "text": "- anything goes"}], "protected seed rules")


def test_replace_section_unknown_heading_lists_headings(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "replace_section", "file": PROMPT, "heading": "Nope",
                           "text": "x"}], "## How to reply")


def test_replace_section_dropping_reply_protocol_refused(harness_dir: Path) -> None:
    error = refused(harness_dir, [{"op": "replace_section", "file": PROMPT,
                                   "heading": "How to reply", "text": "Be helpful."}],
                    "reply protocol")
    assert error.problems[0].file == PROMPT


def test_add_tool_as_one_batch(harness_dir: Path) -> None:
    schema = {"name": "check", "description": "Run the tests.",
              "parameters": {"type": "object", "properties": {}}}
    harness = apply_edits(harness_dir, [
        {"op": "add_file", "path": "tools/check.yaml", "content": yaml.safe_dump(schema)},
        {"op": "add_file", "path": "tools/check.py", "content": "print('ok')\n"},
        {"op": "register_component", "kind": "tool", "name": "check"},
    ])
    assert [t.name for t in harness.tools] == ["shell", "check"]


def test_unregistered_add_refused_and_undone(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "add_file", "path": "tools/check.py", "content": "x = 1\n"}],
            "not registered")
    assert not (harness_dir / "tools" / "check.py").exists()


def test_add_file_refuses_existing(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "add_file", "path": "tools/shell.py", "content": ""}],
            "already exists")


def test_write_and_delete_file(harness_dir: Path) -> None:
    harness = apply_edits(harness_dir, [
        {"op": "write_file", "path": "memory/LONG_TERM.md", "content": "Use python3.\n"},
        {"op": "add_file", "path": "notes/ideas.md", "content": "x"},
        {"op": "delete_file", "path": "notes/ideas.md"},
    ])
    assert harness.memory == "Use python3.\n"


def test_deleting_registered_file_refused(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "delete_file", "path": "tools/shell.py"}], "missing")


def test_unregister_and_delete_tool(harness_dir: Path) -> None:
    apply_edits(harness_dir, [{"op": "add_file", "path": "tools/x.yaml", "content": yaml.safe_dump(
        {"name": "x", "description": "d", "parameters": {"type": "object"}})},
        {"op": "add_file", "path": "tools/x.py", "content": ""},
        {"op": "register_component", "kind": "tool", "name": "x"}])
    harness = apply_edits(harness_dir, [
        {"op": "unregister_component", "kind": "tool", "name": "x"},
        {"op": "delete_file", "path": "tools/x.yaml"}, {"op": "delete_file", "path": "tools/x.py"}])
    assert [t.name for t in harness.tools] == ["shell"]


def test_set_setting_sets_a_setting_or_a_budget_and_refuses_what_the_settings_do_not_take(
        harness_dir: Path) -> None:
    harness = apply_edits(harness_dir, [
        {"op": "set_setting", "key": "action_format", "value": "native"},
        {"op": "set_setting", "key": "budgets.repeated_steps", "value": 5}])
    settings = harness.spec.settings
    assert (settings.action_format, settings.budgets.repeated_steps) == ("native", 5)
    assert settings.max_steps == 20  # the others as they were
    refused(harness_dir, [{"op": "set_setting", "key": "action_format", "value": "xml"}],
            "settings.action_format: Input should be 'json' or 'native' (got 'xml')")
    refused(harness_dir, [{"op": "set_setting", "key": "max_step", "value": 5}],
            "settings.max_step: is not a known field (got 5)")
    refused(harness_dir, [{"op": "set_setting", "key": "max_steps.x", "value": 5}],
            "harness.yaml: settings.max_steps: is not a mapping")
    refused(harness_dir, [{"op": "set_setting", "key": "budgets.tokens", "value": [1]}],
            "edits.0.set_setting.value")  # a scalar only: no list, mapping or YAML to inject
    refused(harness_dir, [{"op": "set_setting", "key": "../harness", "value": 1}],
            "edits.0.set_setting.key: String should match pattern")


def test_failed_batch_restores_earlier_edits_and_new_folders(harness_dir: Path) -> None:
    refused(harness_dir, [
        {"op": "write_file", "path": "memory/LONG_TERM.md", "content": "changed"},
        {"op": "add_file", "path": "skills/deep/nested/SKILL.md", "content": "x"},
        {"op": "delete_file", "path": "no-such-file.md"},
    ], "no such file")
    assert not (harness_dir / "skills").exists()


@pytest.mark.parametrize("path", ["../x", "tools/../../x", "/etc/passwd", "~/x", "",
                                  ".git/config", ".git/hooks/pre-commit", "tools/.GIT/x"])
def test_confinement_attacks_refused(repo: HarnessRepo, path: str) -> None:
    outside = repo.path.parent / "x"
    refused(repo.path, [{"op": "write_file", "path": path, "content": "pwned"}], "path")
    assert not outside.exists()
    assert "pwned" not in (repo.path / ".git" / "config").read_text()


def test_run_files_beside_the_workspace_are_out_of_reach(tmp_path: Path) -> None:
    run = tmp_path / "run"
    repo = HarnessRepo.create(run / "workspace")
    (run / "traces.duckdb").write_bytes(b"db")
    (run / "tasks" / "t1" / "tests").mkdir(parents=True)
    (run / "tasks" / "t1" / "tests" / "test.sh").write_text("exit 1\n")
    before = tree(run)
    for path in ["../traces.duckdb", "../tasks/t1/tests/test.sh", str(run / "traces.duckdb")]:
        for op in ({"op": "write_file", "path": path, "content": "x"},
                   {"op": "delete_file", "path": path}):
            refused(repo.path, [op], "path")
    assert tree(run) == before


def test_symlink_leading_outside_refused(harness_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (harness_dir / "memory" / "link").symlink_to(outside)
    (harness_dir / "memory" / "file_link").symlink_to(outside / "victim.txt")
    refused(harness_dir, [{"op": "write_file", "path": "memory/link/evil.md", "content": "x"}],
            "symlink")
    refused(harness_dir, [{"op": "write_file", "path": "memory/file_link", "content": "x"}],
            "symlink")
    assert list(outside.iterdir()) == []


def test_deleting_protected_block_via_write_refused(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    stripped = text[: text.index(PROTECTED_BEGIN)]
    refused(harness_dir, [{"op": "write_file", "path": PROMPT, "content": stripped}],
            "seed's rules were removed")


def test_writing_over_a_folder_is_an_edit_error(harness_dir: Path) -> None:
    refused(harness_dir, [{"op": "write_file", "path": "tools", "content": "x"}], "cannot apply")


def test_parse_edits_names_bad_fields() -> None:
    with pytest.raises(EditRefused) as caught:
        parse_edits([{"op": "append_rule"}, {"op": "launch_missiles"}])
    fields = [p.field for p in caught.value.problems]
    assert "edits.0.append_rule.text" in fields and any(f.startswith("edits.1") for f in fields)


def test_commit_edits_commits_one_change(repo: HarnessRepo) -> None:
    sha = commit_edits(repo, [{"op": "append_rule", "text": "Test before done."}],
                       message="Add a rule", change_id="c1", component="system_prompt")
    info = repo.commit_info(sha)
    assert info.trailers["Change-Id"] == "c1" and repo.changed_files(sha) == [PROMPT]
    assert not repo.is_dirty()


def test_commit_edits_refused_leaves_head_and_tree(repo: HarnessRepo) -> None:
    head = repo.head()
    with pytest.raises(EditRefused):
        commit_edits(repo, [{"op": "delete_file", "path": PROMPT}], message="m", change_id="c",
                     component="system_prompt")
    assert repo.head() == head and not repo.is_dirty()


def test_commit_edits_requires_clean_tree(repo: HarnessRepo) -> None:
    (repo.path / "memory" / "LONG_TERM.md").write_text("stray")
    with pytest.raises(EvoError, match="uncommitted"):
        commit_edits(repo, [], message="m", change_id="c", component="memory")


def test_restore_keeps_file_modes(harness_dir: Path) -> None:
    tool = harness_dir / "tools" / "shell.py"
    tool.chmod(0o755)
    refused(harness_dir, [{"op": "write_file", "path": "tools/shell.py", "content": "if\n"}],
            "not valid Python")
    assert os.stat(tool).st_mode & 0o777 == 0o755
    load_harness(harness_dir)
