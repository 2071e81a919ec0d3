import pytest

from judge import agent_calls

CASES = [("one two three", 3), ("one  two", 2), ("  leading and trailing  ", 3), ("", 0), ("   ", 0),
         ("tabs\tand\nnewlines\n", 3), ("single", 1)]


@pytest.fixture(scope="module")
def results():
    """All cases in one child process."""
    return agent_calls("/app/textstats.py", [("count_words", (text,)) for text, _ in CASES])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_count_words(results, case):
    (text, expected), got = CASES[case], results[case]
    assert got.get("value") == expected, f"count_words({text!r}) returned {got}, expected {expected}"
