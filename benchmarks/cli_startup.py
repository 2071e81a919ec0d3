"""Benchmark (not a test): how fast the CLI starts. `evoharness --help` imports only the command
table (each command imports its machinery when it runs); Python's own start-up is printed beside
it, so a figure from a loaded machine can be read against it.

Prints `metric: value unit` lines. Run: .venv/bin/python benchmarks/cli_startup.py"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 9
EVOHARNESS = str(Path(sys.executable).parent / "evoharness")
IMPORT_CLI = ("import time; started = time.perf_counter(); import evoharness.evolve.cli; "
              "print(time.perf_counter() - started)")


def median_seconds(argv: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def import_seconds() -> float:
    runs = [float(subprocess.run([sys.executable, "-c", IMPORT_CLI], check=True, text=True,
                                 capture_output=True).stdout) for _ in range(RUNS)]
    return statistics.median(runs)


def main() -> None:
    print(f"cli_help_median: {median_seconds([EVOHARNESS, '--help']):.3f} s")
    print(f"python_startup_median: {median_seconds([sys.executable, '-c', 'pass']):.3f} s")
    print(f"cli_import_median: {1000 * import_seconds():.0f} ms")


if __name__ == "__main__":
    main()
