from pagination import page_count, page_items


def test_page_count():
    assert page_count(10, 3) == 4


def test_first_page():
    assert page_items(list(range(10)), 1, 3) == [0, 1, 2]
