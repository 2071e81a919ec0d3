import pytest

from judge import agent_calls

MODULE = "/app/duration.py"
GOOD = [("45s", 45), ("2m", 120), ("2h", 7200), ("1h30m", 5400), ("1h5s", 3605), ("1h1m1s", 3661),
        ("0s", 0), ("90m", 5400), ("10h0m5s", 36005)]
BAD = ["", "5", "5x", "1m1h", "1h1h", "1h 30m", "h", "-5s", "1.5h", " 5s"]


@pytest.fixture(scope="module")
def results():
    """All cases in one child process, by input."""
    texts = [text for text, _ in GOOD] + BAD
    return dict(zip(texts, agent_calls(MODULE, [("parse_duration", (text,)) for text in texts])))


@pytest.mark.parametrize("text,expected", GOOD)
def test_values(results, text, expected):
    got = results[text]
    assert got.get("value") == expected, f"parse_duration({text!r}) returned {got}, expected {expected}"


@pytest.mark.parametrize("text", BAD)
def test_rejects(results, text):
    got = results[text]
    assert got.get("raised") == "ValueError", f"parse_duration({text!r}) must raise ValueError, got {got}"
