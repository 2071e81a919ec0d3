"""harness.yaml merged by its structure (workspace/spec_merge.py): a change that registers a
component after a sibling's registration applies alone to a base without the sibling; changes that
really collide, and hostile YAML, still do not apply."""
from __future__ import annotations

import yaml

from evoharness.evolve.library.starter import starter_entries
from evoharness.workspace.edits import commit_edits
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec_merge import merge_spec
from evoharness.workspace.validate import load_harness

BASE = "name: seed\nmiddleware: []\ntools: [shell]\nsettings: {max_steps: 20, temperature: 0.2}\n"


def merged(parent: str, change: str, base: str = BASE) -> dict | None:
    text = merge_spec(parent, base, change)
    return None if text is None else yaml.safe_load(text)


def test_a_list_keeps_the_bases_items_less_the_removed_plus_the_added() -> None:
    parent = BASE.replace("middleware: []", "middleware: [a]").replace("[shell]", "[shell, x]")
    change = parent.replace("[a]", "[a, b]").replace("[shell, x]", "[shell]")
    assert merged(parent, change, BASE.replace("[shell]", "[shell, x, y]")) == {
        "name": "seed", "middleware": ["b"], "tools": ["shell", "y"],
        "settings": {"max_steps": 20, "temperature": 0.2}}


def test_settings_merge_key_by_key_and_a_collision_is_a_conflict() -> None:
    parent = BASE.replace("max_steps: 20", "max_steps: 25")
    change = parent.replace("temperature: 0.2", "temperature: 0.0").replace(
        "settings: {", "skills: [s]\nsettings: {")
    assert merged(parent, change) == {
        "name": "seed", "middleware": [], "tools": ["shell"],
        "settings": {"max_steps": 20, "temperature": 0.0}, "skills": ["s"]}
    # the change moves what its parent had moved too: base 20, parent 25, change 30
    assert merged(parent, parent.replace("max_steps: 25", "max_steps: 30")) is None
    # a key the change deletes goes; one the base lacks and the change edits is a conflict
    assert "temperature" not in merged(BASE, BASE.replace(", temperature: 0.2", ""))["settings"]
    assert merged(parent, parent.replace("name: seed", "name: mine"),
                  BASE.replace("name: seed\n", "")) is None


def test_yaml_that_is_not_a_mapping_or_is_hostile_does_not_merge() -> None:
    bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"  # aliases are refused before expanding
    for text in ("- a list\n", "name: [unclosed\n", bomb, ""):
        assert merge_spec(BASE, BASE, text) is None
        assert merge_spec(text, BASE, BASE.replace("[]", "[b]")) is None


def test_a_registration_after_a_siblings_applies_alone_to_the_base(repo: HarnessRepo) -> None:
    """Two starter entries in one session: the second's `middleware: [done_guard,
    repeat_breaker]` conflicts line by line with the base's `[]`, but not as data."""
    entries = {entry.id: entry for entry in starter_entries()}
    base = repo.head()
    commit_edits(repo, entries["done-guard"].edits, message="guard", change_id="c1",
                 component="middleware")
    second = commit_edits(repo, entries["repeat-breaker"].edits, message="breaker",
                          change_id="c2", component="middleware")
    alone = repo.apply_alone(second, base, message="c2 alone")
    assert alone is not None and repo.parent(alone) == base
    assert sorted(repo.changed_files(alone)) == ["harness.yaml", "middleware/repeat_breaker.py"]
    spec = yaml.safe_load(repo.read_file("harness.yaml", alone))
    assert spec == yaml.safe_load(repo.read_file("harness.yaml", base)) | {
        "middleware": ["repeat_breaker"]}
    assert repo.head() == second and not repo.is_dirty()
    repo.reset_hard(alone)
    assert load_harness(repo.path).middleware == ["repeat_breaker"]
