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


@pytest.mark.parametrize("setting, value", [("fresh_start_temperature", 0.8),
                                            ("resample_temperature", 0.9)])
def test_an_old_harness_setting_a_dropped_knob_is_refused_saying_what_to_do(
        harness_dir: Path, capsys: pytest.CaptureFixture[str], setting: str, value: float) -> None:
    """Settings whose only users were reverted experiments are gone: a harness.yaml that still
    sets one is refused in one line naming the file, the setting and what to do (not pydantic's
    "Extra inputs are not permitted", and not run as if it had the setting)."""
    import yaml

    spec_file = harness_dir / "harness.yaml"
    spec = yaml.safe_load(spec_file.read_text())
    spec.setdefault("settings", {})[setting] = value
    spec_file.write_text(yaml.safe_dump(spec))
    assert run(["harness", "check", str(harness_dir)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "harness.yaml" in err and f"{setting} is no longer a setting" in err
    assert "delete it from harness.yaml" in err and "Extra inputs" not in err
    spec["settings"].pop(setting)
    spec["settings"]["repeat_resamples"] = 4  # kept: the starter entry resample-repeats sets it
    spec_file.write_text(yaml.safe_dump(spec))
    assert run(["harness", "check", str(harness_dir)]) == 0
