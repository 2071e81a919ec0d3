"""Splitting a list into pages."""


def page_count(n_items, per_page):
    """Number of pages needed for n_items items, per_page items per page."""
    return (n_items + per_page - 1) // per_page


def page_items(items, page, per_page):
    """The items shown on page `page` (pages are numbered from 1); [] past the last page."""
    start = page * per_page
    return items[start:start + per_page]
