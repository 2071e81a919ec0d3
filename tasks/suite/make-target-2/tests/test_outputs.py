from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

from judge import agent_run


def test_target_works():
    Path("/app/hello.txt").unlink(missing_ok=True)
    done = agent_run(["make", "-C", "/app", 'hello'])
    assert done.returncode == 0, f"make hello failed: {done.stderr[-400:]}"
    assert norm(read("/app/hello.txt")) == 'harbor', "make hello should write harbor to /app/hello.txt"


def test_default_target_still_works():
    Path("/app/app.txt").unlink(missing_ok=True)
    done = agent_run(["make", "-C", "/app"])
    assert done.returncode == 0, f"make failed: {done.stderr[-400:]}"
    assert read("/app/app.txt") == "source\n"
