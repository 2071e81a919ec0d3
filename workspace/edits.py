"""Edit operations a small model can use safely on a harness workspace: confined to its root,
validated as a batch, undone exactly when refused. Choosing the edits is the evolve agent's job."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_origin

import yaml
from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, TypeAdapter,
                      ValidationError)

from evoharness.errors import EvoError, ValidationFailed, validation_problems
from evoharness.files import FileMissing, read_text_inside, write_atomic

from .bounded import MAX_EDITS, MAX_FILE_BYTES, load_yaml
from .confine import confine, restore, snapshot
from .kinds import KINDS, KindName
from .repo import HarnessRepo
from .spec import PROTECTED_BEGIN, PROTECTED_END, Budgets, HarnessSpec, LoadedHarness, Settings
from .validate import SPEC_FILE, load_harness

RULES_HEADING = "## Rules learned"
# Only the marker: the title is the rest of the line, stripped (a lazy title group followed by
# `\s*$` backtracks quadratically on a long line of spaces).
HEADING_RE = re.compile(r"^(#{1,6})\s")
# Template sections interleave with jinja blocks ({% if skills %} before "## Skills", its
# {% endif %} inside it): these keep a replaced section's block structure intact.
JINJA_OPEN_RE = re.compile(r"^\s*\{%-?\s*(if|for)\b")
JINJA_CLOSE_RE = re.compile(r"^\s*\{%-?\s*end(if|for)\b")
JINJA_OPENERS = ("{{", "{%", "{#")
BULLET_RE = re.compile(r"^[-*+]\s+")  # a markdown list marker, which append_rule adds itself
KIND_LISTS = {k.name: k.list_key for k in KINDS}
# What one edit may carry; load_harness bounds the files and bytes of the result.
RULE_CHARS = 2_000
PATH_CHARS = 255
Content = Annotated[str, Field(max_length=MAX_FILE_BYTES)]
RelPath = Annotated[str, Field(min_length=1, max_length=PATH_CHARS)]


class EditRefused(ValidationFailed):
    """The edits were not applied (the workspace is as before); `problems` says why."""


class _Edit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    op: str

    def apply(self, root: Path) -> None:
        raise NotImplementedError


class AppendRule(_Edit):
    """Add one bullet to the prompt's '## Rules learned' section (created at the end if absent)."""

    op: Literal["append_rule"] = "append_rule"
    text: str = Field(min_length=1, max_length=RULE_CHARS)

    def apply(self, root: Path) -> None:
        rel = _read_spec(root).system_prompt
        path = confine(root, rel)
        bullet = "- " + " ".join(self.text.split())
        if bullet == "- ":
            raise EvoError("the rule is empty", field="text", value=self.text)
        if any(opener in bullet for opener in JINJA_OPENERS):
            # A rule is prose, never template code; '+%}' keeps the newline trim_blocks would eat.
            bullet = "{% raw %}" + bullet + "{% endraw +%}"
        lines = _read(root, rel).splitlines()
        span = _find_section(lines, RULES_HEADING, rel)
        if span is None:
            lines += ["", RULES_HEADING, bullet]
        else:
            lines.insert(span[1], bullet)
        write_atomic(path, "\n".join(lines) + "\n")


class ReplaceSection(_Edit):
    """Replace the body of the markdown section `heading` in a .md/.j2 file; the heading stays."""

    op: Literal["replace_section"] = "replace_section"
    file: RelPath
    heading: str = Field(min_length=1, max_length=RULE_CHARS)
    text: Content

    def apply(self, root: Path) -> None:
        if not self.file.endswith((".md", ".j2")):
            raise EvoError("sections can only be replaced in .md or .j2 files", file=self.file,
                           field="file", hint="use write_file for other files")
        path = confine(root, self.file)
        lines = _read(root, self.file).splitlines()
        span = _find_section(lines, self.heading, self.file)
        if span is None:
            raise EvoError("no such section", file=self.file, field="heading", value=self.heading,
                           hint=f"headings in the file: {_headings(lines)}")
        start, end = span
        if _inside_protected(lines, start):
            raise EvoError("this section is the protected seed rules and cannot be replaced",
                           file=self.file, field="heading", value=self.heading,
                           hint="add a rule with append_rule instead")
        lines[start + 1 : end] = self.text.strip("\n").splitlines() + _outer_closers(
            lines[start + 1 : end]
        )
        write_atomic(path, "\n".join(lines) + "\n")


def prompt_sections_as_rules(root: Path, edits: list[Edit]) -> tuple[list[Edit], list[str]]:
    """Each replace_section of the system prompt under a heading the prompt does not have, read
    as its lines appended as rules (where the prompt takes new guidance), with a note saying so
    for each. The 1.5B took its heading from what it had read (the evidence's "Failure
    patterns") and was refused for it three times in a row, which ended its session."""
    try:
        prompt = _read_spec(root).system_prompt
        lines = _read(root, prompt).splitlines()
    except EvoError:
        return edits, []  # the edits' own checks name what is wrong
    read, notes = [], []
    for index, edit in enumerate(edits):
        rules = _section_as_rules(edit, prompt, lines)
        if not rules:
            # Any other edit may add the heading or change which file is the prompt (harness.yaml),
            # so the prompt as read no longer says what a later edit meets: those go as sent.
            return read + edits[index:], notes
        notes.append(f"edits[{index}]: {prompt} has no section {edit.heading!r}; its "
                     f"{len(rules)} line(s) were added as rules (append_rule)")
        read += rules
    return read, notes


def _section_as_rules(edit: Edit, prompt: str, lines: list[str]) -> list[AppendRule]:
    if not isinstance(edit, ReplaceSection) or Path(edit.file) != Path(prompt):
        return []
    try:
        if _find_section(lines, edit.heading, prompt) is not None:
            return []
        return [AppendRule(text=text) for line in edit.text.splitlines()
                if (text := BULLET_RE.sub("", line.strip()))]
    except (EvoError, ValidationError):
        return []  # several such sections, or a line too long for a rule: refused as sent


class WriteFile(_Edit):
    """Create or overwrite a file with `content`."""

    op: Literal["write_file"] = "write_file"
    path: RelPath
    content: Content

    def apply(self, root: Path) -> None:
        write_atomic(confine(root, self.path), self.content)


class AddFile(_Edit):
    """Create a new file; refused if it exists (use write_file to overwrite on purpose)."""

    op: Literal["add_file"] = "add_file"
    path: RelPath
    content: Content

    def apply(self, root: Path) -> None:
        target = confine(root, self.path)
        if target.exists():
            raise EvoError("file already exists", file=self.path, field="path",
                           hint="use write_file to overwrite it")
        write_atomic(target, self.content)


class DeleteFile(_Edit):
    """Delete one file."""

    op: Literal["delete_file"] = "delete_file"
    path: RelPath

    def apply(self, root: Path) -> None:
        target = confine(root, self.path)
        if not target.is_file():
            raise EvoError("no such file", file=self.path, field="path")
        target.unlink()


class _ComponentListEdit(_Edit):
    kind: KindName
    name: str = Field(min_length=1, max_length=PATH_CHARS)

    def apply(self, root: Path) -> None:
        data = _read_spec_data(root)
        key = KIND_LISTS[self.kind]
        names = list(data.get(key) or [])
        data[key] = self._changed(names)
        _write_spec_data(root, data)

    def _changed(self, names: list[str]) -> list[str]:
        raise NotImplementedError


class RegisterComponent(_ComponentListEdit):
    """Add a component name to harness.yaml's list for `kind` (its files must exist)."""

    op: Literal["register_component"] = "register_component"

    def _changed(self, names: list[str]) -> list[str]:
        if self.name in names:
            raise EvoError(f"{self.kind} already registered", file=SPEC_FILE,
                           field=KIND_LISTS[self.kind], value=self.name)
        return names + [self.name]


class UnregisterComponent(_ComponentListEdit):
    """Remove a component name from harness.yaml (delete its files in the same batch)."""

    op: Literal["unregister_component"] = "unregister_component"

    def _changed(self, names: list[str]) -> list[str]:
        if self.name not in names:
            raise EvoError(f"{self.kind} not registered", file=SPEC_FILE,
                           field=KIND_LISTS[self.kind], value=self.name)
        return [n for n in names if n != self.name]


def setting_keys() -> list[str]:
    """The keys set_setting takes: each scalar setting, a budget as budgets.<name>."""
    budgets = [f"budgets.{name}" for name, field in Budgets.model_fields.items()
               if get_origin(field.annotation) is not dict]
    return [name for name in Settings.model_fields if name != "budgets"] + budgets


class SetSetting(_Edit):
    """Set one of harness.yaml's settings: `key` names it (a budget as budgets.<name>); the
    harness check that follows every batch refuses a key or value the settings do not take."""

    op: Literal["set_setting"] = "set_setting"
    key: str = Field(pattern=r"^[a-z_]{1,40}(\.[a-z_]{1,40})?$")
    value: StrictBool | StrictInt | StrictFloat | Annotated[str, Field(max_length=PATH_CHARS)]

    def apply(self, root: Path) -> None:
        data = _read_spec_data(root)
        *parents, name = ["settings", *self.key.split(".")]
        section = data
        for depth, parent in enumerate(parents, 1):
            if not isinstance(section.get(parent, {}), dict):
                raise EvoError("is not a mapping", file=SPEC_FILE,
                               field=".".join(parents[:depth]), hint="set_setting sets a value")
            section = section.setdefault(parent, {})
        section[name] = self.value
        _write_spec_data(root, data)


Edit = Annotated[
    Union[AppendRule, ReplaceSection, WriteFile, AddFile, DeleteFile, RegisterComponent,
          UnregisterComponent, SetSetting],
    Field(discriminator="op"),
]
EDIT_LIST = TypeAdapter(Annotated[list[Edit], Field(max_length=MAX_EDITS)])


def parse_edits(data: Any) -> list[_Edit]:
    """Edits from JSON-like data (what a model wrote); EditRefused names each bad field."""
    try:
        return EDIT_LIST.validate_python(data)
    except ValidationError as error:
        problems = [
            EvoError(item["msg"], field="edits." + ".".join(str(p) for p in item["loc"]),
                     value=item.get("input"))
            for item in error.errors()
        ]
        raise EditRefused("edits", problems) from error


def apply_edits(target: HarnessRepo | str | Path, edits: Sequence[Any]) -> LoadedHarness:
    """Apply `edits` in order and validate the result; on any problem restore every file exactly
    as it was and raise EditRefused, so the agent can read the reasons and try again."""
    root = Path(target.path if isinstance(target, HarnessRepo) else target)
    parsed = parse_edits(list(edits))
    before = snapshot(root)
    try:
        for index, edit in enumerate(parsed):
            _apply_one(root, index, edit)
        return load_harness(root)
    except ValidationFailed as error:
        restore(root, before)
        raise EditRefused("the edited harness", error.problems) from error
    except BaseException:
        restore(root, before)
        raise


def commit_edits(repo: HarnessRepo, edits: Sequence[Any], *, message: str, change_id: str,
                 component: str, trailers: dict[str, str] | None = None) -> str:
    """Apply and validate `edits`, then commit them as one change; returns the commit sha."""
    if repo.is_dirty():
        raise EvoError("uncommitted changes in the workspace", file=repo.path,
                       hint="commit or discard them first so the change holds only these edits")
    apply_edits(repo, edits)
    return repo.commit_change(message, change_id=change_id, component=component,
                              trailers=trailers)


def _apply_one(root: Path, index: int, edit: _Edit) -> None:
    try:
        edit.apply(root)
    except OSError as error:  # e.g. writing over a folder: the agent's mistake, not a crash
        problem = EvoError(f"cannot apply: {error.strerror or error}", field=f"edits.{index}")
        raise EditRefused(f"edit {index} ({edit.op})", [problem]) from error
    except EvoError as error:
        raise EditRefused(f"edit {index} ({edit.op})", [error]) from error


def _read_spec_data(root: Path) -> dict[str, Any]:
    data = load_yaml(_read(root, SPEC_FILE), file=SPEC_FILE)
    if not isinstance(data, dict):
        raise EvoError("must be a YAML mapping", file=SPEC_FILE, field="(file)")
    return data


def _write_spec_data(root: Path, data: dict[str, Any]) -> None:
    write_atomic(confine(root, SPEC_FILE), yaml.safe_dump(data, sort_keys=False))


def _read_spec(root: Path) -> HarnessSpec:
    try:
        return HarnessSpec.model_validate(_read_spec_data(root))
    except ValidationError as error:
        first = validation_problems(error)[0]
        raise EvoError(f"invalid harness spec: {first.message}; fix it with write_file first",
                       file=SPEC_FILE, field=first.field or "(file)", value=first.value) from error


def _read(root: Path, rel: str) -> str:
    """The text of `rel`, read without following a link on its way (evoharness.files)."""
    confine(root, rel)
    try:
        return read_text_inside(root, rel, limit=MAX_FILE_BYTES)
    except FileMissing:
        raise EvoError("no such file", file=rel, field="file") from None
    except EvoError as error:
        raise EvoError(error.message, file=rel, field="file",
                       hint="replace it whole with write_file") from None


def _heading_title(line: str) -> tuple[int, str] | None:
    match = HEADING_RE.match(line)
    title = line[match.end():].strip() if match else ""
    return (len(match.group(1)), title.casefold()) if match and title else None


def _find_section(lines: list[str], heading: str, rel: str) -> tuple[int, int] | None:
    """(heading line, end) of the one section titled `heading`; it ends at the next heading of the
    same or a higher level, or at a protected marker (so no section ever spans into the block)."""
    wanted = heading.lstrip("#").strip().casefold()
    starts = [i for i, line in enumerate(lines)
              if (parsed := _heading_title(line)) and parsed[1] == wanted]
    if len(starts) > 1:
        raise EvoError("several sections have this heading", file=rel, field="heading",
                       value=heading)
    if not starts:
        return None
    start = starts[0]
    level = _heading_title(lines[start])[0]  # type: ignore[index]
    for end in range(start + 1, len(lines)):
        parsed = _heading_title(lines[end])
        if (parsed and parsed[0] <= level) or PROTECTED_BEGIN in lines[end] \
                or PROTECTED_END in lines[end]:
            return start, _trim_end(lines, start, end)
    return start, _trim_end(lines, start, len(lines))


def _trim_end(lines: list[str], start: int, end: int) -> int:
    """Trailing blank lines and block openers belong to what follows, not to this section."""
    while end > start + 1 and (not lines[end - 1].strip() or JINJA_OPEN_RE.match(lines[end - 1])):
        end -= 1
    return end


def _outer_closers(body: list[str]) -> list[str]:
    """The {% endif %}/{% endfor %} lines in `body` that close blocks opened before it."""
    depth, kept = 0, []
    for line in body:
        if JINJA_OPEN_RE.match(line):
            depth += 1
        elif JINJA_CLOSE_RE.match(line):
            if depth == 0:
                kept.append(line)
            else:
                depth -= 1
    return kept


def _inside_protected(lines: list[str], index: int) -> bool:
    begins = [i for i, line in enumerate(lines) if PROTECTED_BEGIN in line]
    ends = [i for i, line in enumerate(lines) if PROTECTED_END in line]
    return any(b <= index <= e for b in begins for e in ends)


def _headings(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if _heading_title(line)]
