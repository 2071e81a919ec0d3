"""load_harness: the seed loads; every bad input is refused with an error naming file and field."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evoharness.errors import EvoError, ValidationFailed
from evoharness.workspace.spec import PROTECTED_BEGIN, PROTECTED_END
from evoharness.workspace.validate import load_harness, render_system_prompt

PROMPT = "system_prompt.md.j2"


def problems(path: Path) -> list[EvoError]:
    with pytest.raises(ValidationFailed) as caught:
        load_harness(path)
    return caught.value.problems


def assert_problem(path: Path, file: str, field: str, words: str = "") -> EvoError:
    found = problems(path)
    for problem in found:
        if problem.file == file and problem.field == field and words in problem.message:
            return problem
    raise AssertionError(f"no problem for {file}:{field} ({words!r}) in {[str(p) for p in found]}")


def edit_yaml(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_seed_loads_and_renders(harness_dir: Path) -> None:
    harness = load_harness(harness_dir)
    assert [tool.name for tool in harness.tools] == ["shell"]
    assert harness.spec.settings.action_format == "json"
    assert harness.memory == ""
    prompt = render_system_prompt(harness)
    assert '"tool": "done"' in prompt and "`shell`" in prompt
    assert "Check your work" in prompt
    assert PROTECTED_BEGIN not in prompt  # markers are jinja comments, invisible to the model


def test_render_extra_overrides_and_native_format(harness_dir: Path) -> None:
    harness = load_harness(harness_dir)
    native = harness.spec.settings.model_copy(update={"action_format": "native"})
    prompt = render_system_prompt(harness, settings=native, memory="Use pytest -x.")
    assert '"thought"' not in prompt and "`done`" in prompt
    assert "Use pytest -x." in prompt


def test_missing_harness_yaml(harness_dir: Path) -> None:
    (harness_dir / "harness.yaml").unlink()
    assert_problem(harness_dir, "harness.yaml", "(file)", "missing")


def test_invalid_yaml_names_line(harness_dir: Path) -> None:
    (harness_dir / "harness.yaml").write_text("name: x\ntools: [shell\n")
    problem = problems(harness_dir)[0]
    assert problem.file == "harness.yaml" and problem.field.startswith("line ")


def test_schema_error_names_field_and_value(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", settings={"max_steps": -3, "colour": "red"})
    problem = assert_problem(harness_dir, "harness.yaml", "settings.max_steps")
    assert problem.value == -3
    assert_problem(harness_dir, "harness.yaml", "settings.colour")


def test_a_repeat_budget_of_1_is_refused_by_name(harness_dir: Path) -> None:
    spec = yaml.safe_load((harness_dir / "harness.yaml").read_text())
    spec["settings"]["budgets"]["repeated_steps"] = 1
    (harness_dir / "harness.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    problem = assert_problem(harness_dir, "harness.yaml", "settings.budgets.repeated_steps",
                             "after its first step")
    assert problem.value == 1


def test_all_problems_reported_at_once(harness_dir: Path) -> None:
    (harness_dir / "tools" / "shell.py").write_text("def broken(:\n")
    (harness_dir / "memory" / "LONG_TERM.md").unlink()
    (harness_dir / "tools" / "stray.py").write_text("print(1)\n")
    files = {p.file for p in problems(harness_dir)}
    assert {"tools/shell.py", "memory/LONG_TERM.md", "tools/stray.py"} <= files


def test_registered_tool_missing_files(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", tools=["shell", "grep"])
    assert_problem(harness_dir, "tools/grep.yaml", "tool", "missing")
    assert_problem(harness_dir, "tools/grep.py", "tool_impl", "missing")


@pytest.mark.parametrize("rel", ["tools/extra.yaml", "middleware/log.py", "skills/notes/SKILL.md",
                                 "subagents/helper/agent.yaml"])
def test_unregistered_file_rejected(harness_dir: Path, rel: str) -> None:
    path = harness_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("name: x\n")
    kind = rel.split("/")[0]
    registered_as = "/".join(rel.split("/")[:2])
    assert_problem(harness_dir, registered_as, kind, "not registered")


MIDDLEWARE = ("def before_tool(call, context):\n    return None\n\n"
              "if __name__ == \"__main__\":\n    pass\n")


@pytest.mark.parametrize(("options", "words"), [
    ('{"reasons": [', "not valid JSON"),
    ('["missing"]', "must be a JSON object"),
    ("[" * 100_000, "not valid JSON"),  # nesting past the parser's stack
])
def test_a_middleware_keeps_options_beside_it_as_a_json_object(
        harness_dir: Path, options: str, words: str) -> None:
    edit_yaml(harness_dir / "harness.yaml", middleware=["guard"])
    (harness_dir / "middleware").mkdir(exist_ok=True)
    (harness_dir / "middleware" / "guard.py").write_text(MIDDLEWARE)
    (harness_dir / "middleware" / "guard.json").write_text('{"reasons": ["missing"]}')
    assert load_harness(harness_dir).spec.middleware == ["guard"]
    (harness_dir / "middleware" / "guard.json").write_text(options)
    assert_problem(harness_dir, "middleware/guard.json", "(file)", words)
    (harness_dir / "middleware" / "guard.json").rename(harness_dir / "middleware" / "other.json")
    assert_problem(harness_dir, "middleware/other.json", "middleware", "not registered")


def test_component_name_cannot_escape(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", tools=["shell", "../../etc/passwd"])
    assert_problem(harness_dir, "harness.yaml", "tools[1]", "not a valid component name")


def test_reserved_tool_name(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", tools=["shell", "done"])
    assert_problem(harness_dir, "harness.yaml", "tools[1]", "reserved")


def test_bad_json_schema(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "tools" / "shell.yaml",
              parameters={"type": "object", "properties": {"command": {"type": "strng"}}})
    assert_problem(harness_dir, "tools/shell.yaml", "parameters.properties.command.type",
                   "not a valid JSON schema")


def test_tool_name_mismatch(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "tools" / "shell.yaml", name="bash")
    assert_problem(harness_dir, "tools/shell.yaml", "name", "must match")


def test_tool_missing_description(harness_dir: Path) -> None:
    data = yaml.safe_load((harness_dir / "tools" / "shell.yaml").read_text())
    del data["description"]
    (harness_dir / "tools" / "shell.yaml").write_text(yaml.safe_dump(data))
    assert_problem(harness_dir, "tools/shell.yaml", "description")


def test_tool_python_syntax_error(harness_dir: Path) -> None:
    (harness_dir / "tools" / "shell.py").write_text("import json\nif True\n    pass\n")
    assert_problem(harness_dir, "tools/shell.py", "line 2", "not valid Python")


def test_middleware_without_hooks(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", middleware=["audit"])
    (harness_dir / "middleware").mkdir()
    (harness_dir / "middleware" / "audit.py").write_text("def helper():\n    return 1\n")
    assert_problem(harness_dir, "middleware/audit.py", "hooks")


RUNNER = 'if __name__ == "__main__":\n    print()\n'


def test_middleware_with_hook_loads(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", middleware=["audit"])
    (harness_dir / "middleware").mkdir()
    (harness_dir / "middleware" / "audit.py").write_text("def before_tool(call):\n    return call\n"
                                                         + RUNNER)
    assert load_harness(harness_dir).middleware == ["audit"]


def test_middleware_without_its_runner_is_refused(harness_dir: Path) -> None:
    """Its hooks would never be called: each call runs the file as a script."""
    edit_yaml(harness_dir / "harness.yaml", middleware=["audit"])
    (harness_dir / "middleware").mkdir()
    (harness_dir / "middleware" / "audit.py").write_text(
        "def before_tool(call):\n    return call\n\nif __name__ == 'other':\n    pass\n")
    assert_problem(harness_dir, "middleware/audit.py", "runner")


def write_skill(root: Path, text: str) -> None:
    edit_yaml(root / "harness.yaml", skills=["pytest"])
    (root / "skills" / "pytest").mkdir(parents=True)
    (root / "skills" / "pytest" / "SKILL.md").write_text(text)


def test_skill_loads_and_is_listed(harness_dir: Path) -> None:
    write_skill(harness_dir, "---\nname: pytest\ndescription: Run tests.\n---\nUse -x.\n")
    harness = load_harness(harness_dir)
    assert harness.skills[0].body == "Use -x.\n"
    assert "`pytest`: Run tests." in render_system_prompt(harness)


def test_skill_front_matter_missing_description(harness_dir: Path) -> None:
    write_skill(harness_dir, "---\nname: pytest\n---\nbody\n")
    assert_problem(harness_dir, "skills/pytest/SKILL.md", "front matter.description")


def test_skill_without_front_matter(harness_dir: Path) -> None:
    write_skill(harness_dir, "# just a heading\n")
    assert_problem(harness_dir, "skills/pytest/SKILL.md", "front matter")


def test_subagent_unknown_tool(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", subagents=["tester"])
    (harness_dir / "subagents" / "tester").mkdir(parents=True)
    (harness_dir / "subagents" / "tester" / "agent.yaml").write_text(yaml.safe_dump({
        "name": "tester", "description": "runs tests", "system_prompt": "Test.",
        "tools": ["shell", "browser"]}))
    problem = assert_problem(harness_dir, "subagents/tester/agent.yaml", "tools[1]", "does not")
    assert problem.value == "browser"


def test_subagent_invalid_yaml_schema(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", subagents=["tester"])
    (harness_dir / "subagents" / "tester").mkdir(parents=True)
    (harness_dir / "subagents" / "tester" / "agent.yaml").write_text("name: tester\n")
    assert_problem(harness_dir, "subagents/tester/agent.yaml", "description")


def test_protected_block_removed(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    start, end = text.index(PROTECTED_BEGIN), text.index(PROTECTED_END) + len(PROTECTED_END)
    (harness_dir / PROMPT).write_text(text[:start] + text[end:])
    assert_problem(harness_dir, PROMPT, "protected block", "removed or altered")


def test_protected_block_altered(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    (harness_dir / PROMPT).write_text(text.replace("before calling `done`", "if you like"))
    assert_problem(harness_dir, PROMPT, "protected block", "removed or altered")


def test_template_syntax_error(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    (harness_dir / PROMPT).write_text("Intro\n{{ tools | }}\n" + text)
    assert_problem(harness_dir, PROMPT, "line 2", "syntax error")


def test_template_undefined_variable(harness_dir: Path) -> None:
    with (harness_dir / PROMPT).open("a") as handle:
        handle.write("{{ task_hint }}\n")
    assert_problem(harness_dir, PROMPT, "template", "task_hint")


def test_template_cannot_reach_python_internals(harness_dir: Path) -> None:
    with (harness_dir / PROMPT).open("a") as handle:
        handle.write("{{ tools.__class__.__mro__ }}\n")
    assert_problem(harness_dir, PROMPT, "template", "fails to render")


def test_reply_protocol_dropped(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    start, end = text.index("## How to reply"), text.index("## Tools")
    (harness_dir / PROMPT).write_text(text[:start] + "Do your best.\n\n" + text[end:])
    problem = assert_problem(harness_dir, PROMPT, "reply protocol")
    assert '"thought"' in problem.value


def test_a_prompt_for_actions_without_a_thought_need_not_mention_one(harness_dir: Path) -> None:
    text = (harness_dir / PROMPT).read_text()
    (harness_dir / PROMPT).write_text(text.replace('"thought": "<why this action>", ', "", 1)
                                      .replace('"thought"', '"reason"'))
    assert '"thought"' in assert_problem(harness_dir, PROMPT, "reply protocol").value
    edit_yaml(harness_dir / "harness.yaml", settings={"thought_chars": 0})
    load_harness(harness_dir)  # valid: the reply protocol has no thought to explain


def test_symlink_in_harness_rejected(harness_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("secret")
    (harness_dir / "memory" / "LONG_TERM.md").unlink()
    (harness_dir / "memory" / "LONG_TERM.md").symlink_to(tmp_path / "outside.md")
    assert_problem(harness_dir, "memory/LONG_TERM.md", "(file)", "symlinks")


def test_memory_path_outside_rejected(harness_dir: Path) -> None:
    edit_yaml(harness_dir / "harness.yaml", memory="../secrets.md")
    assert_problem(harness_dir, "../secrets.md", "memory", "inside the harness")
