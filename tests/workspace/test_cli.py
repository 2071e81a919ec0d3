"""`evoharness harness check DIR`: exit 0 with a component summary, or exit 2 with every problem."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evoharness.evolve.cli import main


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as caught:
        main(args)
    return caught.value.code or 0


def test_check_seed_ok(harness_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["harness", "check", str(harness_dir)]) == 0
    out = capsys.readouterr().out
    assert "OK: harness 'seed'" in out and "tools: shell" in out


def test_check_json(harness_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["harness", "check", str(harness_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tools"] == ["shell"] and data["settings"]["action_format"] == "json"


def test_check_invalid_exits_2_listing_problems(
    harness_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (harness_dir / "tools" / "stray.py").write_text("x = 1\n")
    (harness_dir / "tools" / "shell.py").write_text("def (\n")
    assert run(["harness", "check", str(harness_dir)]) == 2
    err = capsys.readouterr().err
    assert "tools/stray.py" in err and "tools/shell.py" in err and "Traceback" not in err


def test_check_not_a_harness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["harness", "check", str(tmp_path)]) == 2
    assert "harness.yaml" in capsys.readouterr().err
