"""workspace/kinds.py: the one registry of the component kinds a harness registers by name. The
spec, validation, the edits, the evolve agent's `change` tool and tidying, and the starter
library all read it, so they cannot disagree on which kinds exist."""
from __future__ import annotations

from typing import get_args

from pydantic import TypeAdapter, ValidationError
import pytest

from evoharness.evolve.agent.change import _EDITS
from evoharness.evolve.agent.components import KINDS as SKELETON_KINDS
from evoharness.evolve.agent.tidy import component_of
from evoharness.evolve.library.starter import StarterSpec
from evoharness.workspace.edits import KIND_LISTS, RegisterComponent
from evoharness.workspace.kinds import BY_LIST, KIND_NAMES, KINDS, kind_of_path
from evoharness.workspace.spec import ComponentKind, HarnessSpec
from evoharness.workspace.validate import COMPONENT_DIRS


def test_every_stage_reads_the_same_kinds():
    assert KIND_NAMES == ("tool", "middleware", "skill", "subagent")
    assert KIND_LISTS == {k.name: k.list_key for k in KINDS}
    assert COMPONENT_DIRS == {k.list_key: k.folder for k in KINDS}
    assert set(KIND_NAMES) <= set(get_args(ComponentKind))
    assert set(SKELETON_KINDS) <= set(KIND_NAMES)
    for op, properties in _EDITS:
        if op.endswith("register_component"):
            assert properties["kind"]["enum"] == list(KIND_NAMES)
    registers = StarterSpec.model_fields["registers"].annotation
    assert set(get_args(get_args(registers)[0])) == set(KIND_NAMES)


def test_the_spec_has_a_list_for_each_kind_and_no_other_list_of_names():
    lists = {name for name, field in HarnessSpec.model_fields.items()
             if getattr(field.annotation, "__origin__", None) is list
             or "list" in str(field.annotation)}
    assert lists == set(BY_LIST)


def test_an_edit_takes_a_registered_kind_only():
    RegisterComponent(kind="subagent", name="helper")
    with pytest.raises(ValidationError):
        TypeAdapter(RegisterComponent).validate_python({"kind": "plugin", "name": "x"})


@pytest.mark.parametrize("entry, is_dir, owned", [
    ("shell.py", False, True), ("shell.yaml", False, True), ("shell.json", False, False),
    ("other.py", False, False), ("shell", True, False)])
def test_a_tool_owns_its_yaml_and_py_only(entry, is_dir, owned):
    assert BY_LIST["tools"].owns(entry, is_dir, {"shell"}) is owned


def test_a_skill_owns_its_folder_and_a_middleware_its_options_file():
    assert BY_LIST["skills"].owns("debug", True, {"debug"})
    assert not BY_LIST["skills"].owns("debug.md", False, {"debug"})
    assert BY_LIST["middleware"].owns("guard.json", False, {"guard"})


@pytest.mark.parametrize("edit, component", [
    ({"op": "add_file", "path": "tools/grep.py"}, "tool_impl"),
    ({"op": "add_file", "path": "tools/grep.yaml"}, "tool"),
    ({"op": "write_file", "path": "subagents/x/agent.yaml"}, "subagent"),
    ({"op": "write_file", "path": "skills/x/SKILL.md"}, "skill"),
    ({"op": "add_file", "path": "middleware/g.py"}, "middleware"),
    ({"op": "register_component", "kind": "skill", "name": "x"}, "skill"),
    ({"op": "register_component", "kind": "plugin", "name": "x"}, "settings"),
    ({"op": "write_file", "path": "memory/LONG_TERM.md"}, "memory"),
])
def test_tidying_reads_a_component_from_the_registry(edit, component):
    assert component_of(edit) == component
    path = edit.get("path", "")
    assert (kind_of_path(path) is not None) == path.startswith(
        tuple(f"{k.folder}/" for k in KINDS))
