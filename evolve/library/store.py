"""The library directory: a git repository of plain files a person can read and review, one YAML
file per entry (entry.py's record) and its diff beside it; every `library add` is one commit.
What goes into an entry is filing.py's."""
from __future__ import annotations

from pathlib import Path

import git
import yaml
from pydantic import ValidationError

from evoharness.errors import EvoError, validation_problems
from evoharness.files import write_atomic

from .entry import LibraryEntry

README = """# Improvement library

Changes that evoharness runs kept, one per file in entries/: ENTRY.yaml (the cue: the failure
pattern it answers; the edit; the manifest; every run that judged it, with the model, the suite,
the decision and the numbers) and ENTRY.diff (the edit as a patch). `evoharness library add RUN`
files a run's kept changes and the outcome of every entry that run applied; `evoharness init
--library DIR` lets a run's evolve agent read the entries that match its failures.
"""
_ACTOR = git.Actor("evoharness", "evoharness@localhost")


class Library:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.entries_dir = self.root / "entries"

    def exists(self) -> bool:
        return (self.root / ".git").is_dir() and self.entries_dir.is_dir()

    def require(self) -> Library:
        if not self.exists():
            raise EvoError("not an improvement library", file=self.root,
                           hint="make one with `evoharness library add RUN --library DIR`")
        return self

    def entries(self) -> list[LibraryEntry]:
        """Every entry, by id; none when the library does not exist yet."""
        if not self.exists():
            return []
        return [self._load(p) for p in sorted(self.entries_dir.glob("*.yaml"))]

    def entry(self, entry_id: str) -> LibraryEntry:
        path = self.entries_dir / f"{entry_id}.yaml"
        if not path.is_file():
            raise EvoError("no such library entry", file=self.root, field="entry", value=entry_id,
                           hint="see `evoharness library list DIR`")
        return self._load(path)

    def diff(self, entry_id: str) -> str:
        path = self.entries_dir / f"{entry_id}.diff"
        return path.read_text() if path.is_file() else ""

    def save(self, entries: list[tuple[LibraryEntry, str | None]], message: str) -> str | None:
        """Write each (entry, its diff or None to keep the stored one) and commit them; returns
        the commit, None when nothing changed."""
        repo = self._repo()
        for entry, diff in entries:
            data = yaml.safe_dump(entry.model_dump(mode="json"), sort_keys=False,
                                  allow_unicode=True, width=100)
            write_atomic(self.entries_dir / f"{entry.id}.yaml", data)
            if diff is not None:
                write_atomic(self.entries_dir / f"{entry.id}.diff", diff)
        repo.git.add("-A")
        if not repo.is_dirty(untracked_files=True):
            return None
        return repo.index.commit(message, author=_ACTOR, committer=_ACTOR).hexsha

    def _repo(self) -> git.Repo:
        if self.exists():
            return git.Repo(self.root)
        if self.root.exists() and any(self.root.iterdir()):
            raise EvoError("not an improvement library, and not empty", file=self.root,
                           hint="choose a new directory for the library")
        self.entries_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.root / "README.md", README)
        return git.Repo.init(self.root, initial_branch="main")

    def _load(self, path: Path) -> LibraryEntry:
        try:
            return LibraryEntry.model_validate(yaml.safe_load(path.read_text()))
        except yaml.YAMLError as error:
            raise EvoError(f"invalid library entry: {error}".splitlines()[0], file=path,
                           hint="fix the file (it is plain YAML), or revert it with git") from None
        except ValidationError as error:
            first = validation_problems(error)[0]
            raise EvoError(f"invalid library entry: {first.message}", file=path,
                           field=first.field, value=first.value,
                           hint="fix the file (it is plain YAML), or revert it with git") from None
