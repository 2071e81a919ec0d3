"""The registry of the component kinds a harness registers by name (tool, middleware, skill,
subagent): what each is called, the harness.yaml list that names it, the folder and files it lives
in. The spec, validation, the edits, the evolve agent's tools and tidying, and the starter library
read it here; what a kind's files must hold is validate.py's, what it does at run time agent/'s."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Kind:
    """One kind of registered component."""

    name: str  # what an edit, a manifest and a starter entry call it: "tool"
    list_key: str  # harness.yaml's list of its names: "tools"
    folder: str  # where its files live, under the harness root
    suffixes: tuple[str, ...] = ()  # its files, <folder>/<name><suffix>; () for one folder a name
    # Other names a change manifest gives a part of it: a tool's code is its `tool_impl`.
    parts: tuple[str, ...] = ()

    @property
    def per_folder(self) -> bool:
        """Whether each component is a folder of its own (<folder>/<name>/...)."""
        return not self.suffixes

    def owns(self, entry_name: str, is_dir: bool, names: set[str]) -> bool:
        """Whether a folder entry is one of the registered `names`' files."""
        if self.per_folder:
            return is_dir and entry_name in names
        stem, dot, suffix = entry_name.rpartition(".")
        return not is_dir and bool(dot) and f".{suffix}" in self.suffixes and stem in names


KINDS: tuple[Kind, ...] = (
    Kind("tool", "tools", "tools", (".yaml", ".py"), parts=("tool_impl",)),
    # A middleware may keep its options beside its code (middleware/<name>.json).
    Kind("middleware", "middleware", "middleware", (".py", ".json")),
    Kind("skill", "skills", "skills"),
    Kind("subagent", "subagents", "subagents"),
)
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
# What a change manifest may name as its component: the prompt, each kind and its parts, the
# memory and the settings.
COMPONENT_NAMES: tuple[str, ...] = ("system_prompt", *(n for k in KINDS for n in (k.name, *k.parts)),
                                    "memory", "settings")
BY_NAME = {k.name: k for k in KINDS}
BY_LIST = {k.list_key: k for k in KINDS}
# The kinds as a type, for pydantic fields (a starter entry's `registers`, an edit's `kind`).
KindName = Literal[KIND_NAMES]  # type: ignore[valid-type]


def kind_of_path(path: str) -> Kind | None:
    """The kind whose folder holds `path` (relative to the harness root), if any."""
    return next((k for k in KINDS if path.startswith(f"{k.folder}/")), None)
