"""Loading a harness directory and refusing it before any use: every problem found at once, each
an EvoError naming the file and field. Rendering lives in prompt.py; versioning in repo.py."""
from __future__ import annotations

import ast
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evoharness.errors import EvoError, ValidationFailed, validation_problems
from evoharness.workspace.kinds import BY_LIST, KINDS
from evoharness.files import FileMissing, read_text_inside

from .bounded import MAX_FILE_BYTES, MAX_HARNESS_BYTES, MAX_HARNESS_FILES, load_yaml
from .prompt import (
    TemplateFailed,
    missing_protocol,
    render_system_prompt,
    seed_protected_block,
)
from .schemas import schema_problems
from .spec import (
    MIDDLEWARE_HOOKS,
    PROTECTED_BEGIN,
    PROTECTED_END,
    HarnessSpec,
    LoadedHarness,
    SkillDoc,
    SubagentSpec,
    ToolSpec,
)

__all__ = ["load_harness", "render_system_prompt", "COMPONENT_DIRS"]

SPEC_FILE = "harness.yaml"
NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
RESERVED_TOOLS = frozenset({"done"})  # registered by the runtime in every harness
# harness.yaml list -> the folder its components live in (one file or one folder per name).
COMPONENT_DIRS = {k.list_key: k.folder for k in KINDS}
IGNORED_NAMES = frozenset({"__pycache__", ".DS_Store"})
# Files git reads for how to check out or add the others: with them a checkout (an evaluation's
# workspace) could differ from the tree a trial exports.
GIT_CONTROL_FILES = frozenset({".gitattributes", ".gitignore", ".gitmodules", ".git"})


_Named = TypeVar("_Named", ToolSpec, SubagentSpec)  # components whose YAML repeats their name


class _Problems(list[EvoError]):
    links = False  # the tree holds a link or a special file (_check_tree)

    def add(self, file: str, field: str | None, message: str, value: Any = None,
            hint: str | None = None) -> None:
        self.append(EvoError(message, file=file, field=field, value=value, hint=hint))


def load_harness(path: str | Path) -> LoadedHarness:
    """Read and validate the harness at `path`; raise ValidationFailed listing every problem."""
    root = Path(path)
    problems = _Problems()
    _check_tree(root, problems)
    if problems.links:  # nothing is read from a tree with links: no error could quote a target
        raise ValidationFailed(f"harness {root}", problems)
    spec = _load_spec(root, problems)
    if spec is None:
        raise ValidationFailed(f"harness {root}", problems)
    _check_names(spec, problems)
    _check_unregistered(root, spec, problems)
    tools = [t for name in spec.tools if (t := _load_tool(root, name, problems))]
    for name in spec.middleware:
        _check_middleware(root, name, problems)
    skills = [s for name in spec.skills if (s := _load_skill(root, name, problems))]
    subagents = [a for name in spec.subagents if (a := _load_subagent(root, name, spec, problems))]
    memory = _read_text(root, spec.memory, "memory", problems)
    template = _read_text(root, spec.system_prompt, "system_prompt", problems)
    harness = LoadedHarness(
        root=root, spec=spec, prompt_template=template or "", memory=memory or "", tools=tools,
        skills=skills, subagents=subagents, middleware=list(spec.middleware),
    )
    if template is not None:
        _check_prompt(harness, problems)
    if problems:
        raise ValidationFailed(f"harness {root}", problems)
    return harness


def _load_spec(root: Path, problems: _Problems) -> HarnessSpec | None:
    if not (root / SPEC_FILE).is_file():
        problems.add(SPEC_FILE, "(file)", f"file is missing in {root}",
                     hint="point at a harness directory (one with harness.yaml)")
        return None
    data = _read_yaml(root, SPEC_FILE, problems, field="(file)")
    if data is None:
        return None
    return _validate_model(HarnessSpec, data, SPEC_FILE, problems)


def _read_yaml(root: Path, rel: str, problems: _Problems, *, field: str) -> Any | None:
    text = _read_text(root, rel, field, problems)
    if text is None:
        return None
    try:
        data = load_yaml(text, file=rel, field=field)
    except EvoError as error:
        problems.append(error)
        return None
    if not isinstance(data, dict):
        problems.add(rel, field, "must be a YAML mapping", value=data)
        return None
    return data


def _validate_model(model: type[BaseModel], data: Any, rel: str, problems: _Problems) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        for problem in validation_problems(error):
            problems.add(rel, problem.field or "(root)", problem.message, value=problem.value)
        return None


def _read_text(root: Path, rel: str, field: str, problems: _Problems) -> str | None:
    """The file's text, or None after recording why it can't be read (missing, outside, a link or
    through one, not a regular file, too large, binary). Never follows a link (evoharness.files)."""
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        problems.add(rel, field, "path must stay inside the harness directory", value=rel)
        return None
    try:
        return read_text_inside(root, rel, limit=MAX_FILE_BYTES)
    except FileMissing as error:
        problems.add(rel, field, error.message, hint="create it or remove it from harness.yaml")
    except EvoError as error:
        problems.add(rel, field, error.message, hint=error.hint)
    return None


def _check_names(spec: HarnessSpec, problems: _Problems) -> None:
    # Names become paths (tools/<name>.py): anything but a plain name could leave the harness.
    for kind in COMPONENT_DIRS:
        seen: set[str] = set()
        for index, name in enumerate(getattr(spec, kind)):
            if not NAME_RE.match(name):
                problems.add(SPEC_FILE, f"{kind}[{index}]", "not a valid component name",
                             value=name, hint="use lowercase letters, digits, '_' or '-'")
            if name in seen:
                problems.add(SPEC_FILE, f"{kind}[{index}]", "listed twice", value=name)
            seen.add(name)
    for index, name in enumerate(spec.tools):
        if name in RESERVED_TOOLS:
            problems.add(SPEC_FILE, f"tools[{index}]", "name is reserved by the runtime",
                         value=name)


def _check_tree(root: Path, problems: _Problems) -> None:
    """Only regular files and folders (a link could point the runtime, an edit or an error message
    at a file outside the workspace; a FIFO would block a reader), no git control files (which
    would make a checkout differ from its commit), and a bounded number and size of files (every
    rollout's sandbox mounts them)."""
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        top = Path(dirpath) == root
        dirnames[:] = sorted(d for d in dirnames if not (top and d == ".git"))  # the repository
        for name in dirnames + sorted(filenames):
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            mode = path.lstat().st_mode
            if name == ".git" and stat.S_ISDIR(mode):
                dirnames.remove(name)  # a nested repository: git would commit a link to it
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                problems.links = True
                problems.add(rel, "(file)", "symlinks and special files are not allowed",
                             hint="replace it with a regular file")
            elif name in GIT_CONTROL_FILES:
                problems.add(rel, "(file)", "git control files are not allowed in a harness",
                             hint="delete it: attributes and ignore rules would make the files "
                                  "that run differ from the commit")
            elif name in filenames:
                count += 1
                total += path.lstat().st_size
    if count > MAX_HARNESS_FILES:
        problems.add(".", "(files)", f"the harness has {count} files; at most {MAX_HARNESS_FILES}",
                     hint="delete files no component uses")
    if total > MAX_HARNESS_BYTES:
        problems.add(".", "(files)", f"the harness's files hold {total} bytes; at most "
                     f"{MAX_HARNESS_BYTES}", hint="keep components small")


def _check_unregistered(root: Path, spec: HarnessSpec, problems: _Problems) -> None:
    for kind, folder in COMPONENT_DIRS.items():
        names = set(getattr(spec, kind))
        base = root / folder
        if not base.is_dir():
            continue
        for entry in sorted(base.iterdir()):
            if entry.name in IGNORED_NAMES or _registered(kind, entry, names):
                continue
            problems.add(f"{folder}/{entry.name}", kind, "component file is not registered",
                         hint=f"add its name to '{kind}' in harness.yaml or delete it")


def _registered(kind: str, entry: Path, names: set[str]) -> bool:
    """Whether `entry` (in the folder of harness.yaml's list `kind`) is a registered name's."""
    return (entry.is_dir() or entry.is_file()) and \
        BY_LIST[kind].owns(entry.name, entry.is_dir(), names)


def _load_named(root: Path, rel: str, model: type[_Named], name: str, field: str,
                problems: _Problems) -> _Named | None:
    """A component's YAML file as its model; its `name` must be the one harness.yaml registers."""
    data = _read_yaml(root, rel, problems, field=field)
    loaded = None if data is None else _validate_model(model, data, rel, problems)
    if loaded is not None and loaded.name != name:
        problems.add(rel, "name", f"must match the registered name {name!r}", value=loaded.name)
    return loaded


def _load_tool(root: Path, name: str, problems: _Problems) -> ToolSpec | None:
    if not NAME_RE.match(name):
        return None
    _check_python(root, f"tools/{name}.py", "tool_impl", problems)
    rel = f"tools/{name}.yaml"
    tool = _load_named(root, rel, ToolSpec, name, "tool", problems)
    if tool is None:
        return None
    found = schema_problems(tool.parameters)
    for where, message, value in found:
        problems.add(rel, f"parameters.{where}" if where else "parameters", message, value=value)
    return None if found else tool


def _check_python(root: Path, rel: str, field: str, problems: _Problems) -> ast.Module | None:
    source = _read_text(root, rel, field, problems)
    if source is None:
        return None
    try:
        compile(source, rel, "exec", dont_inherit=True)
        return ast.parse(source, rel)
    except SyntaxError as error:
        problems.add(rel, f"line {error.lineno}", f"not valid Python: {error.msg}")
    except (RecursionError, MemoryError, ValueError) as error:  # nesting past the compiler's stack
        problems.add(rel, "(file)", f"Python cannot compile it: {type(error).__name__} {error}",
                     hint="nest less deeply; no NUL bytes")
    return None


def _check_middleware(root: Path, name: str, problems: _Problems) -> None:
    if not NAME_RE.match(name):
        return
    _check_options(root, f"middleware/{name}.json", problems)
    rel = f"middleware/{name}.py"
    module = _check_python(root, rel, "middleware", problems)
    if module is None:
        return
    defined = {node.name for node in module.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not defined.intersection(MIDDLEWARE_HOOKS):
        problems.add(rel, "hooks", "defines none of the middleware hooks",
                     hint=f"define at least one of {list(MIDDLEWARE_HOOKS)}")
    elif not any(_is_main_guard(node) for node in module.body):
        # Each hook call runs the file as a script: without the runner nothing calls the hook,
        # and the middleware silently does nothing.
        problems.add(rel, "runner", "has no `if __name__ == \"__main__\":` runner, so its hooks "
                     "never run", hint="end the file with the runner of agent/middleware.py's "
                     "contract (the evolve agent's `skeleton` tool writes one)")


def _check_options(root: Path, rel: str, problems: _Problems) -> None:
    """A middleware's options file, where there is one: a JSON object (the hook reads it)."""
    if not (root / rel).is_file():
        return
    text = _read_text(root, rel, "(file)", problems)
    if text is None:
        return
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        problems.add(rel, "(file)", f"not valid JSON: {error}")
        return
    if not isinstance(data, dict):
        problems.add(rel, "(file)", "must be a JSON object", value=data)


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _load_skill(root: Path, name: str, problems: _Problems) -> SkillDoc | None:
    if not NAME_RE.match(name):
        return None
    rel = f"skills/{name}/SKILL.md"
    text = _read_text(root, rel, "skill", problems)
    if text is None:
        return None
    match = re.match(r"^---\s*\n(.*?)\n---\s*(?:\n|$)", text, re.DOTALL)
    if not match:
        problems.add(rel, "front matter", "must start with YAML front matter between '---' lines",
                     hint="add name: and description: fields")
        return None
    try:
        meta = load_yaml(match.group(1), file=rel, field="front matter")
    except EvoError as error:
        problems.append(error)
        return None
    meta = meta if isinstance(meta, dict) else {}
    missing = [f for f in ("name", "description")
               if not isinstance(meta.get(f), str) or not meta[f].strip()]
    for field in missing:
        problems.add(rel, f"front matter.{field}", "missing or empty", value=meta.get(field))
    if missing:
        return None
    if meta["name"] != name:
        problems.add(rel, "front matter.name", f"must match the registered name {name!r}",
                     value=meta["name"])
    return SkillDoc(name=name, description=meta["description"], body=text[match.end():])


def _load_subagent(
    root: Path, name: str, spec: HarnessSpec, problems: _Problems
) -> SubagentSpec | None:
    if not NAME_RE.match(name):
        return None
    rel = f"subagents/{name}/agent.yaml"
    agent = _load_named(root, rel, SubagentSpec, name, "subagent", problems)
    if agent is None:
        return None
    for index, tool in enumerate(agent.tools):
        if tool not in spec.tools and tool not in RESERVED_TOOLS:
            problems.add(rel, f"tools[{index}]", "names a tool the harness does not register",
                         value=tool, hint=f"registered tools: {spec.tools}")
    return agent


def _check_prompt(harness: LoadedHarness, problems: _Problems) -> None:
    rel, template = harness.spec.system_prompt, harness.prompt_template
    for marker in (PROTECTED_BEGIN, PROTECTED_END):
        if template.count(marker) != 1:
            problems.add(rel, "protected block", f"marker {marker} must appear exactly once",
                         value=template.count(marker))
    if seed_protected_block() not in template:
        problems.add(rel, "protected block", "the seed's rules were removed or altered",
                     hint="restore the text between the protected markers exactly as the seed has it")
    try:
        rendered = render_system_prompt(harness)
    except TemplateFailed as error:
        problems.add(rel, error.field, error.message, hint=error.hint)
        return
    missing = missing_protocol(rendered, harness.spec.settings)
    if missing:
        problems.add(rel, "reply protocol", "the rendered prompt no longer explains how to reply",
                     value=missing, hint="keep the action format and the `done` tool instructions")
