"""What the harness already says and what this run already tried: the rule lines of the harness,
the lessons of earlier changes with their verdicts (the ledger's change records and each change's
git diff), and the test that a new rule restates one of them. Refusing such a change is change.py's
job.

Similarity: two rules are the same lesson when, after normalising (lower case, words only, common
English function words dropped, a light suffix stem), the smaller rule's words are mostly inside
the larger's: |A ∩ B| / min(|A|, |B|) ≥ OVERLAP. The overlap coefficient, not Jaccard, because a
restatement usually adds words ("before calling done, run the program and compare its output with
the task" restates "check your work (run it, test it, read the output) before calling done": 5 of
its 8 words, 0.62, while Jaccard is 0.42), and a rule shorter than MIN_WORDS words is compared only
when the other is as short (a three-word overlap says little)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import git
from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.files import read_inside
from evoharness.manifests.record import ChangeRecord
from evoharness.workspace.bounded import MAX_FILE_BYTES
from evoharness.workspace.repo import HarnessRepo

OVERLAP = 0.6
MIN_WORDS = 3
LESSON_CHARS = 160  # a tried lesson as the prompt shows it
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the and or but of to in on at for with by from as into onto about is are
was were be been being it its this that these those your you yours i we our they them their he she
any each every all some then than so such if when whenever while do does did doing has have had
can could should would will shall must may might always just only also very more most own same
what which who whom there here""".split())
_SUFFIXES = ("ings", "ing", "edly", "ed", "es", "s", "ly")


class Lesson(BaseModel):
    """An earlier change of the run: its rule text (the lines it added), why, and its fate."""

    model_config = ConfigDict(frozen=True)

    change_id: str
    iteration: int
    rule: str
    root_cause: str
    verdict: str  # "pending" until judged
    decision: str  # keep | revert | pending


def words(text: str) -> frozenset[str]:
    """The normalised content words of `text` (see the module docstring)."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":  # running -> run
                word = word[:-1]
            break
    return word.rstrip("e") if len(word) >= 3 else word


def same_lesson(a: str, b: str) -> bool:
    wa, wb = words(a), words(b)
    small = min(len(wa), len(wb))
    if small == 0 or (small < MIN_WORDS and max(len(wa), len(wb)) >= MIN_WORDS):
        return False
    return len(wa & wb) / small >= OVERLAP


def restated(text: str, known: list[str]) -> str | None:
    """The first of `known` that `text` restates, or None."""
    return next((rule for rule in known if same_lesson(text, rule)), None)


def rule_lines(text: str, *, bullets_only: bool = False) -> list[str]:
    """The prose lines of a harness file that can state a rule: bullets and sentences, without
    template code, JSON examples or headings."""
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if bullets_only and not line.startswith(("- ", "* ")):
            continue
        line = line.lstrip("-*0123456789. ").strip()
        if line.startswith(("#", "{", "`")) or any(m in line for m in ("{%", "{{", "{#")):
            continue
        if len(words(line)) >= MIN_WORDS:
            lines.append(line)
    return lines


def harness_rules(repo: HarnessRepo, *, bullets_only: bool = False) -> list[str]:
    """Every rule line of the workspace as it is now: the prose of its .md and .j2 files (prompt,
    memory, skills), the system prompt first; `bullets_only` for the rules as listed."""
    files = sorted((p for p in repo.path.rglob("*") if p.suffix in (".md", ".j2")
                    and ".git" not in p.relative_to(repo.path).parts and p.is_file()),
                   key=lambda p: (p.suffix != ".j2", str(p)))
    texts = [workspace_text(repo.path, path.relative_to(repo.path).as_posix()) for path in files]
    return [line for text in texts for line in rule_lines(text, bullets_only=bullets_only)]


def workspace_text(root: Path, rel: str) -> str:
    """A workspace file's text ('' when it is absent, a link or leads through one, or too large):
    what an edit meets there, read without following links (evoharness.files)."""
    try:
        return read_inside(root, rel, limit=MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except EvoError:
        return ""


def tried_lessons(records: Sequence[ChangeRecord], repo: HarnessRepo) -> list[Lesson]:
    """The run's changes as the ledger records them (oldest first), each with its verdict and
    decision so far and the text it added (from its commit, so any kind of edit counts)."""
    return [Lesson(change_id=r.id, iteration=r.iteration, rule=added_text(repo, r.entry.commit),
                   root_cause=r.entry.root_cause, verdict=r.verdict, decision=r.decision)
            for r in records]


def added_text(repo: HarnessRepo, commit: str) -> str:
    """The prose lines a commit added to .md/.j2 files (its rule), joined; '' when it added none
    (a middleware or tool change: its code is no rule) or is gone."""
    try:
        diff = repo.diff(f"{commit}^", commit)
    except (git.GitCommandError, EvoError):  # a commit lost to a hand edit: no text to show
        return ""
    added, prose = [], False
    for line in diff.splitlines():
        if line.startswith("+++"):
            prose = line.endswith((".md", ".j2"))
        elif line.startswith("+") and prose:
            added.append(line[1:])
    return " ".join(rule_lines("\n".join(added)))


def lessons_markdown(lessons: list[Lesson]) -> str:
    """The tried lessons as the evolve agent's prompt lists them."""
    if not lessons:
        return "None: no change has been made in this run yet."
    lines = []
    for lesson in lessons:
        fate = ("not judged yet" if lesson.decision == "pending"
                else f"{lesson.verdict}, {'kept' if lesson.decision == 'keep' else 'reverted'}")
        rule = _clip(lesson.rule) or "(no rule text)"
        lines.append(f"- iteration {lesson.iteration}, {lesson.change_id} ({fate}): \"{rule}\" "
                     f"(root cause: {_clip(lesson.root_cause)})")
    return "\n".join(lines)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LESSON_CHARS else text[: LESSON_CHARS - 3] + "..."
