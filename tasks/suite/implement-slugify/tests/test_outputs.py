import pytest

from judge import agent_calls

CASES = [("Hello, World!", "hello-world"), ("  Rock & Roll -- 1969 ", "rock-roll-1969"),
         ("snake_case_name", "snake-case-name"), ("C3PO's  droids", "c3po-s-droids"),
         ("already-a-slug", "already-a-slug"), ("---", ""), ("MiXeD CaSe", "mixed-case"),
         ("café au lait", "caf-au-lait")]


@pytest.fixture(scope="module")
def results():
    """All cases in one child process."""
    return agent_calls("/app/slug.py", [("slugify", (title,)) for title, _ in CASES])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_slugify(results, case):
    (title, expected), got = CASES[case], results[case]
    assert got.get("value") == expected, f"slugify({title!r}) returned {got}, expected {expected!r}"
