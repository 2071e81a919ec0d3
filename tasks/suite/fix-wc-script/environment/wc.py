"""Usage: python3 wc.py FILE [FILE...]

For each FILE prints one line `<lines> <words> <bytes> <FILE>` (single spaces): the number of
newline characters, of words (runs of non-whitespace, as str.split() finds them) and of bytes
in the file. With more than one FILE, a last line `<lines> <words> <bytes> total` sums them.
A FILE that cannot be read prints `wc.py: <FILE>: cannot read` to stderr and is skipped; the
exit status is then 1 (else 0)."""
import sys


def main(paths):
    totals = [0, 0, 0]
    for path in paths:
        text = open(path, encoding="utf-8").read()
        counts = [text.count("\n"), len(text.split(" ")), len(text)]
        print(*counts, path)
        totals = [t + c for t, c in zip(totals, counts)]
    print(*totals, "total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
