"""Greet someone: `python3 greet.py NAME` prints `Hello, NAME!`."""
import sys


def main():
    name = sys.argv[1]
    pritn(f"Hello, {name}!")


if __name__ == "__main__":
    main()
