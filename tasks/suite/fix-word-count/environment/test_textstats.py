from textstats import count_words


def test_simple():
    assert count_words("one two three") == 3


def test_double_space():
    assert count_words("one  two") == 2
