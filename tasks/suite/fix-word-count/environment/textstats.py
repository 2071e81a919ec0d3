def count_words(text):
    """The number of words in text. Words are separated by any run of whitespace (spaces, tabs,
    newlines); whitespace at the start or end does not make a word, so "" and "  " have 0."""
    return len(text.split(" "))
