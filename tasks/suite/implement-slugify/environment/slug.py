def slugify(title):
    """A URL slug for title: lower case; every run of characters that are not ASCII letters or
    digits becomes a single hyphen; no hyphen at the start or the end.

    slugify("Hello, World!") == "hello-world"
    slugify("  Rock & Roll -- 1969 ") == "rock-roll-1969"
    """
    raise NotImplementedError
