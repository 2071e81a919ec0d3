"""Git versioning of a harness workspace (GitPython): create from the seed, commit one change with
trailers, revert, tag, diff, read a file at a commit. What a change means is manifests/' job."""
from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import git
from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.files import read_text_inside

from .bounded import MAX_FILE_BYTES
from .prompt import SEED_DIR
from .spec_merge import merge_spec
from .validate import SPEC_FILE

__all__ = ["SEED_DIR", "CommitInfo", "HarnessRepo", "RevertConflict"]

AUTHOR = {
    "GIT_AUTHOR_NAME": "evoharness", "GIT_AUTHOR_EMAIL": "evoharness@localhost",
    "GIT_COMMITTER_NAME": "evoharness", "GIT_COMMITTER_EMAIL": "evoharness@localhost",
}
# Field and record separators for one `git log` call that returns every commit's parts.
_FS, _RS = "\x1f", "\x1e"
LINK_MODE = 0o120000  # a symbolic link's mode in a git tree
# No git attribute and no line-end conversion touches what is committed or checked out, whatever
# the user's or the repository's config says: the workspace's files are its commit's bytes (the
# tree's own .gitattributes is refused by validation; .git/info ones are refused on open).
NO_CONVERSION = {
    "GIT_ATTR_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "core.autocrlf", "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "core.attributesFile", "GIT_CONFIG_VALUE_1": "/dev/null",
    "GIT_CONFIG_KEY_2": "core.excludesFile", "GIT_CONFIG_VALUE_2": "/dev/null",
}


class RevertConflict(EvoError):
    """A later commit touched the same lines: the revert was aborted and the tree left clean."""


class CommitInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    sha: str
    summary: str
    message: str
    trailers: dict[str, str]
    time: datetime


class HarnessRepo:
    """A harness directory under git; every method leaves the working tree consistent."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as error:
            raise EvoError("not a harness git repository", file=self.path,
                           hint="create one with HarnessRepo.create") from error
        self._git = self._repo.git
        self._git.update_environment(**AUTHOR, **NO_CONVERSION)
        _refuse_info_rules(Path(self._repo.git_dir))

    @classmethod
    def create(cls, path: str | Path, seed: str | Path = SEED_DIR) -> HarnessRepo:
        """Copy `seed` to `path` (which must not exist or be empty), commit it, tag it 'seed'."""
        path = Path(path)
        if path.exists() and any(path.iterdir()):
            raise EvoError("directory is not empty", file=path, hint="choose a new path")
        shutil.copytree(seed, path, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        git.Repo.init(path, initial_branch="main")
        repo = cls(path)
        repo._git.add("-A")
        repo._git.commit("-m", "Seed harness", "--no-verify")
        repo.tag("seed")
        return repo

    def head(self) -> str:
        return self._repo.head.commit.hexsha

    def commit_change(self, message: str, *, change_id: str, component: str,
                      trailers: dict[str, str] | None = None) -> str:
        """Stage everything and commit it as one change; empty changes (placebos) are allowed."""
        fields = {"Change-Id": change_id, "Component": component, **(trailers or {})}
        return self._commit(message, fields)

    def _commit(self, message: str, trailers: dict[str, str], *, stage: bool = True) -> str:
        if stage:
            self._git.add("-A")
        args = ["-m", message, "--allow-empty", "--no-verify"]
        for key, value in trailers.items():
            args += ["--trailer", f"{key}: {_one_line(value)}"]
        self._git.commit(*args)
        return self.head()

    def revert(self, commit: str, *, reason: str) -> str:
        """Undo `commit` with a new commit that says why; RevertConflict if it can't apply."""
        if self.is_dirty():
            raise EvoError("uncommitted changes in the workspace", file=self.path,
                           hint="commit or discard them before reverting")
        original = self.commit_info(commit)
        try:
            self._git.revert("--no-commit", original.sha)
        except git.GitCommandError as error:
            conflicted = self._git.diff("--name-only", "--diff-filter=U").split()
            self._abort_revert()
            if not self._undo_where_it_stands(original.sha):
                raise RevertConflict(
                    f"reverting {original.sha[:12]} ({original.summary!r}) conflicts with later "
                    "commits", file=", ".join(conflicted) or None, field="revert",
                    value=original.sha, hint="revert the later commits touching these files first",
                ) from error
        message = f'Revert "{original.summary}"\n\n{reason}\n\nThis reverts commit {original.sha}.'
        trailers = {"Reverts-Commit": original.sha}
        if "Change-Id" in original.trailers:
            trailers["Reverts-Change-Id"] = original.trailers["Change-Id"]
        if "Component" in original.trailers:
            trailers["Component"] = original.trailers["Component"]
        return self._commit(message, trailers, stage=False)

    def _undo_where_it_stands(self, sha: str) -> bool:
        """Undo a commit by putting back, in each of its hunks, the lines it replaced where the
        lines it wrote stand now, found by `git blame` (by position, never by a look-alike line
        elsewhere): what `git revert` does, for the case its 3-way merge refuses only because a
        later commit changed the lines next to the commit's (the next appended rule, or the
        revert of a neighbour). Staged. Every line the commit wrote must still be there as its
        own; else (a later change rewrote one, or a hunk only deleted lines, which leaves nothing
        to find) nothing is touched and the answer is False. A commit that changed nothing (git
        revert refuses it) is undone by an empty revert."""
        parent = self.parent(sha)
        edited: dict[str, list[str]] = {}
        for name in self.changed_files(sha):
            hunks = _hunks(self._git.diff("--unified=0", "--no-color", "--no-ext-diff", parent,
                                          sha, "--", name))
            text = _read_text(self.path, name)
            if hunks is None or text is None:
                return False
            lines = _lines(text)
            runs = _runs(self._line_commits(name, len(lines)), sha)
            if len(runs) != len(hunks):
                return False
            for (start, end), (removed, added) in reversed(list(zip(runs, hunks))):
                if lines[start:end] != added:
                    return False
                lines[start:end] = removed
            edited[name] = lines
        for name, lines in edited.items():
            (self.path / name).write_bytes("".join(lines).encode())
        if edited:
            self._git.add("--", *edited)
        return True

    def _line_commits(self, name: str, count: int) -> list[str | None]:
        """The commit that wrote each line of `name` at HEAD."""
        owners: list[str | None] = [None] * count
        for entry in self._repo.blame_incremental("HEAD", name):
            for number in entry.linenos:
                if 0 < number <= count:
                    owners[number - 1] = entry.commit.hexsha
        return owners

    def _abort_revert(self) -> None:
        try:
            self._git.revert("--abort")
        except git.GitCommandError:
            # --no-commit conflicts may leave no sequencer state to abort; reset is equivalent.
            self._git.reset("--hard", "HEAD")

    def tag(self, name: str, commit: str | None = None) -> None:
        """Tag `commit` (default HEAD); re-tagging the same commit is a no-op, moving a tag is not."""
        target = self._resolve(commit or "HEAD")
        if name in self._repo.tags:
            existing = self._repo.tags[name].commit.hexsha
            if existing != target:
                raise EvoError("tag already points at another commit", field="tag", value=name,
                               hint=f"it marks {existing[:12]}")
            return
        self._repo.create_tag(name, ref=target)

    def diff(self, a: str, b: str | None = None) -> str:
        """`git diff a b`; with no `b`, the working tree against `a`."""
        return self._git.diff(a, *([b] if b else []))

    def read_file(self, relpath: str, commit: str = "HEAD") -> str:
        """The file's exact text at `commit`."""
        try:
            return self._git.show(f"{self._resolve(commit)}:{relpath}",
                                  strip_newline_in_stdout=False)
        except git.GitCommandError as error:
            raise EvoError("file not in commit", file=relpath, value=commit) from error

    def parent(self, commit: str) -> str:
        """The first parent of `commit` (the commit it was made on)."""
        return self._repo.commit(self._resolve(commit)).parents[0].hexsha

    def apply_alone(self, commit: str, onto: str, *, message: str) -> str | None:
        """A commit on `onto` holding only what `commit` changed against its parent, made without
        touching the working tree or HEAD (a scratch index); `commit` itself when `onto` is its
        parent; None when the change does not apply cleanly to `onto`: a 3-way line merge
        conflict, except in harness.yaml, which then merges by its structure (spec_merge.py)."""
        sha, base = self._resolve(commit), self._resolve(onto)
        parent = self.parent(sha)
        if parent == base:
            return sha
        patch = self._git.diff("--binary", "--full-index", parent, sha,
                               strip_newline_in_stdout=False)
        with tempfile.TemporaryDirectory(prefix="evo-index-") as scratch:
            tree = self._patched_tree(patch, base, Path(scratch))
            if tree is None and SPEC_FILE in self.changed_files(sha):
                spec = merge_spec(*(self._spec_text(c) for c in (parent, base, sha)))
                if spec is not None:
                    tree = self._patched_tree(patch, base, Path(scratch), spec=spec)
        return None if tree is None else self._git.commit_tree(tree, "-p", base, "-m", message)

    def _patched_tree(self, patch: str, base: str, scratch: Path, *,
                      spec: str | None = None) -> str | None:
        """The tree of `base` with `patch` applied (3-way) in a scratch index; with `spec`, the
        patch leaves harness.yaml alone and `spec` is put there instead. None on a conflict."""
        env = {"GIT_INDEX_FILE": str(scratch / "index")}
        self._git.read_tree(base, env=env)
        (scratch / "change.patch").write_text(patch)
        exclude = [] if spec is None else [f"--exclude={SPEC_FILE}"]
        try:
            if patch:
                self._git.apply("--cached", "--3way", *exclude, str(scratch / "change.patch"),
                                env=env)
        except git.GitCommandError:
            return None
        if spec is not None:
            (scratch / SPEC_FILE).write_text(spec, encoding="utf-8")
            blob = self._git.hash_object("-w", "--no-filters", str(scratch / SPEC_FILE))
            self._git.update_index("--add", "--cacheinfo", f"100644,{blob},{SPEC_FILE}", env=env)
        return self._git.write_tree(env=env)

    def _spec_text(self, commit: str) -> str:
        try:
            return self.read_file(SPEC_FILE, commit)
        except EvoError:
            return ""

    def set_branch(self, name: str, commit: str) -> None:
        """Point branch `name` at `commit` (created or moved; HEAD stays where it is)."""
        self._git.branch("-f", name, self._resolve(commit))

    def tree_id(self, commit: str = "HEAD") -> str:
        return self._repo.commit(self._resolve(commit)).tree.hexsha

    def is_dirty(self) -> bool:
        return self._repo.is_dirty(untracked_files=True)

    def changed_files(self, commit: str) -> list[str]:
        """Files the commit changed relative to its first parent (all files for the root)."""
        out = self._git.diff_tree("--no-commit-id", "--name-only", "-r", "--root",
                                  self._resolve(commit))
        return out.split("\n") if out else []

    def commit_info(self, commit: str = "HEAD") -> CommitInfo:
        return self.log(rev=commit, max_count=1)[0]

    def log(self, max_count: int | None = None, *, rev: str = "HEAD") -> list[CommitInfo]:
        """Commits reachable from `rev`, newest first, with their parsed trailers."""
        fmt = _FS.join(["%H", "%ct", "%s", "%B", "%(trailers:only,unfold)"]) + _RS
        args = [f"--format={fmt}", self._resolve(rev)]
        if max_count is not None:
            args.insert(0, f"--max-count={max_count}")
        records = self._git.log(*args).split(_RS)
        return [_parse_commit(record) for record in records if record.strip()]

    def archive(self, commit: str) -> bytes:
        """The tree of `commit` as a tar archive of its blobs exactly as stored: a harness as it
        was, to unpack elsewhere. Not `git archive`, which applies attributes (export-subst,
        export-ignore, eol, ident, filters): every copy of one tree (a trial's arm, an
        evaluation, a Ray node's) holds the same bytes, so no harness can tell which it is. The
        archive depends on the tree alone (no times, no owners)."""
        tree = self._repo.commit(self._resolve(commit)).tree
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for item in tree.traverse():
                tar.addfile(*_tar_entry(item))
        return archive.getvalue()

    def export(self, commit: str, dest: str | Path) -> Path:
        """Write the tree of `commit` into the directory `dest` (no .git): a harness as it was."""
        with tarfile.open(fileobj=io.BytesIO(self.archive(commit))) as tar:
            try:
                tar.extractall(dest, filter="data")
            except tarfile.FilterError as error:
                raise EvoError(f"the commit holds a link that leaves the harness: {error}",
                               field="commit", value=commit) from None
        return Path(dest)

    def save_uncommitted(self, branch: str) -> str | None:
        """Keep uncommitted edits (untracked files included) as a commit on `branch`, leaving
        HEAD and the working tree as they are; None when there is nothing to keep."""
        if not self.is_dirty():
            return None
        self._git.add("-A")
        sha = self._git.stash("create", f"uncommitted edits kept on {branch}")
        self._git.reset("--mixed", "-q")
        self._git.branch(branch, sha)
        return sha

    def reset_hard(self, commit: str) -> None:
        """Make the working tree exactly `commit`, untracked files included."""
        self._git.reset("--hard", self._resolve(commit))
        self._git.clean("-fd")

    def _resolve(self, rev: str) -> str:
        try:
            return self._repo.commit(rev).hexsha
        except (git.BadName, ValueError) as error:
            raise EvoError("unknown commit", field="commit", value=rev) from error


def _tar_entry(item: git.objects.base.IndexObject) -> tuple[tarfile.TarInfo, io.BytesIO | None]:
    """One entry of a commit's tree as git stores it: a file (its mode's executable bit kept), a
    link (checked when unpacked) or a folder (a submodule too, as `git archive` writes it)."""
    info = tarfile.TarInfo(item.path)  # mtime 0, owner root
    if item.type != "blob":
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        return info, None
    data = item.data_stream.read()
    if item.mode & 0o170000 == LINK_MODE:
        info.type, info.linkname = tarfile.SYMTYPE, data.decode(errors="surrogateescape")
        return info, None
    info.size, info.mode = len(data), 0o755 if item.mode & 0o111 else 0o644
    return info, io.BytesIO(data)


def _parse_commit(record: str) -> CommitInfo:
    sha, stamp, summary, message, trailer_text = record.strip("\n").split(_FS)
    trailers = {}
    for line in trailer_text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            trailers[key.strip()] = value.strip()
    return CommitInfo(sha=sha, summary=summary, message=message.strip(), trailers=trailers,
                      time=datetime.fromtimestamp(int(stamp), tz=timezone.utc))


def _refuse_info_rules(git_dir: Path) -> None:
    """.git/info/attributes (and exclude) apply to every checkout and add; no config turns them
    off, so a workspace that sets any is refused (git's own template holds only comments)."""
    for name in ("attributes", "exclude"):
        path = git_dir / "info" / name
        if not path.is_file():
            continue
        lines = path.read_text(errors="replace").splitlines()
        if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            raise EvoError(f"the workspace's git sets {name} rules", file=path,
                           hint="delete the file: the harness's files must be its commits' bytes")


def _one_line(value: str) -> str:
    # A newline would end the trailer and corrupt the block git parses back.
    return " ".join(value.split())


def _hunks(diff: str) -> list[tuple[list[str], list[str]]] | None:
    """(lines removed, lines added) per hunk of a zero-context diff of one text file, each line
    with its end; None when it does anything else (creates or deletes the file, changes its mode,
    is binary, touches a last line without a newline) or a hunk adds nothing."""
    hunks: list[tuple[list[str], list[str]]] = []
    for line in _lines(diff + "\n"):
        if line.startswith("@@"):
            hunks.append(([], []))
        elif not hunks:  # the header
            if line.startswith(("new file", "deleted file", "old mode", "Binary")):
                return None
        elif line.startswith(("-", "+")):
            hunks[-1][line.startswith("+")].append(line[1:])
        else:  # "\ No newline at end of file"
            return None
    return hunks if hunks and all(added for _, added in hunks) else None


def _runs(owners: list[str | None], sha: str) -> list[tuple[int, int]]:
    """[start, end) of each run of consecutive lines that `sha` wrote."""
    runs: list[tuple[int, int]] = []
    for index, owner in enumerate(owners):
        if owner != sha:
            continue
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def _read_text(root: Path, rel: str) -> str | None:
    """A file's text as stored (line ends untouched); None for anything but a regular UTF-8
    file (a link is never followed, on the way either: the revert writes the file back)."""
    try:
        return read_text_inside(root, rel, limit=MAX_FILE_BYTES)
    except EvoError:
        return None


def _lines(text: str) -> list[str]:
    """Lines split at newlines only, each keeping its end."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
