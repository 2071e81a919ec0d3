"""Base images where no registry answers: the user-editable map (bases.toml) from the names a
Dockerfile starts FROM to local stand-ins, the resolution of each FROM name (a local image, else a
stand-in, else a pull as on any machine), and `env setup`, which makes the stand-in base from
Debian's archive with mmdebstrap (or from a root filesystem tarball) with this host's CA
certificates in it. Building task images on these bases is images.py's."""
from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import tempfile
import time
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evoharness.errors import EvoError
from evoharness.files import write_atomic
from evoharness.tasks.sandbox.dockerfile import normalise
from evoharness.tasks.sandbox.engine import Engine, EngineError, last_lines

DEFAULT_BASE = "localhost/evoharness/debian:bookworm"
MAP_FILE = "bases.toml"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
PULL_TIMEOUT_S = 600.0
MMDEBSTRAP_TIMEOUT_S = 1800.0
# What the stand-in base holds beyond Debian's minbase: TLS roots, useradd, and a Python with
# pip that installs system-wide, as in Docker Hub's python images.
DEFAULT_PACKAGES = ["ca-certificates", "passwd", "python3", "python3-pip", "python3-venv",
                    "python-is-python3"]
_CA = "/etc/ssl/certs/ca-certificates.crt"
CA_ENV = {"SSL_CERT_FILE": _CA, "PIP_CERT": _CA, "REQUESTS_CA_BUNDLE": _CA,
          "CURL_CA_BUNDLE": _CA, "NODE_EXTRA_CA_CERTS": _CA}
_MAP_HEADER = """\
# evoharness: local stand-ins for the base images Dockerfiles start FROM, used only when the
# engine has no image by that name. Each key is a shell pattern matched against the short name
# (python:3.12-slim) and the full one (docker.io/library/python:3.12-slim); the first match whose
# image exists locally wins. A stand-in is not the image it replaces: the Debian base tagged for
# python:3.13-slim has Debian bookworm's Python 3.11. Each build log names the stand-in it used.
"""
DEFAULT_PATTERNS = ("python:3*", "python:latest", "debian:*", "ubuntu:*", "buildpack-deps:*",
                    "ghcr.io/laude-institute/t-bench/*")


def containers_home() -> Path:
    """Where the base map and the image cache live ($EVOHARNESS_CONTAINERS overrides)."""
    return Path(os.environ.get("EVOHARNESS_CONTAINERS")
                or Path.home() / ".cache" / "evoharness" / "containers")


class BaseMap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bases: dict[str, str] = {}  # pattern -> local image, in the file's order

    def stand_in(self, name: str) -> tuple[str, str] | None:
        """(pattern, image) of the first entry matching `name`, None when none does."""
        full, short = normalise(name)
        for pattern, image in self.bases.items():
            if fnmatch.fnmatchcase(short, pattern) or fnmatch.fnmatchcase(full, pattern):
                return pattern, image
        return None


def load_map(home: Path) -> BaseMap:
    """home/bases.toml; no file is an empty map (no stand-ins: `env setup` writes it)."""
    path = home / MAP_FILE
    if not path.is_file():
        return BaseMap()
    try:
        return BaseMap.model_validate(tomllib.loads(path.read_text()))
    except tomllib.TOMLDecodeError as error:
        raise EvoError(f"not valid TOML: {error}", file=path) from None
    except ValidationError as error:
        problem = error.errors()[0]
        raise EvoError(problem["msg"], file=path, field=".".join(map(str, problem["loc"])),
                       hint="write [bases] with \"PATTERN\" = \"LOCAL IMAGE\" lines") from None


def write_default_map(home: Path, image: str = DEFAULT_BASE) -> Path:
    """home/bases.toml standing `image` in for the common bases, unless the user has one."""
    path = home / MAP_FILE
    if not path.exists():
        lines = [f'"{pattern}" = "{image}"' for pattern in DEFAULT_PATTERNS]
        write_atomic(path, _MAP_HEADER + "[bases]\n" + "\n".join(lines) + "\n")
    return path


class Resolution(BaseModel):
    """Where one FROM name comes from here."""

    model_config = ConfigDict(frozen=True)

    name: str  # as the Dockerfile writes it
    image: str  # the local image the build starts from
    image_id: str
    stand_in: str = ""  # the bases.toml pattern when `image` stands in for `name`

    def describe(self) -> str:
        if self.stand_in:
            return (f"FROM {self.name} -> stand-in {self.image} (bases.toml pattern "
                    f"{self.stand_in!r}; not the image named: its contents may differ)")
        return f"FROM {self.name} -> {self.image} ({self.image_id[:19]})"


def resolve_base(engine: Engine, name: str, base_map: BaseMap) -> Resolution | str:
    """The image to build FROM for `name`, or why there is none: a local image by that name,
    else the map's stand-in (when it exists locally), else the image pulled."""
    full, _ = normalise(name)
    for local in (name, full):
        if found := engine.image_id(local):
            return Resolution(name=name, image=local, image_id=found)
    entry = base_map.stand_in(name)
    if entry is not None and (found := engine.image_id(entry[1])):
        return Resolution(name=name, image=entry[1], image_id=found, stand_in=entry[0])
    pulled = engine.run(["pull", full], check=False, timeout=PULL_TIMEOUT_S)
    if pulled.returncode == 0 and (found := engine.image_id(full)):
        return Resolution(name=name, image=full, image_id=found)
    why = last_lines(pulled.stderr, 1)
    if entry is not None:
        return (f"base image {name!r} is not here and cannot be pulled ({why}); its stand-in "
                f"{entry[1]!r} (bases.toml {entry[0]!r}) does not exist: run `evoharness env "
                "setup`")
    return (f"base image {name!r} is not here, cannot be pulled ({why}), and no bases.toml "
            "entry maps it to a local image: add one, or pull it")


class SetupReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    image: str
    image_id: str
    source: str  # "mmdebstrap SUITE" or the root filesystem tarball
    seconds: float
    map_file: Path


def debootstrap(suite: str, packages: list[str], dest: Path) -> Path:
    """A Debian root filesystem tarball from the package archive (the registry this kind of
    machine reaches), with pip free to install system-wide as in Docker Hub's python images."""
    if shutil.which("mmdebstrap") is None:
        raise EvoError("mmdebstrap is not installed", field="rootfs",
                       hint="apt install mmdebstrap (./install.sh does), or pass --rootfs TAR")
    argv = ["mmdebstrap", "--variant=minbase", f"--include={','.join(packages)}",
            "--customize-hook=rm -f \"$1\"/usr/lib/python3*/EXTERNALLY-MANAGED", suite, str(dest)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=MMDEBSTRAP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise EvoError(f"mmdebstrap ran past {MMDEBSTRAP_TIMEOUT_S:g}s", field="rootfs") from None
    if done.returncode != 0:
        raise EvoError(f"mmdebstrap failed: {last_lines(done.stderr)}", field="rootfs",
                       value=suite, hint="check that Debian's archive is reachable (apt-get update)")
    return dest


def _base_dockerfile(rootfs_image: str, host_ca: bool) -> str:
    """The base on top of the imported root filesystem: this host's CA bundle (a TLS proxy's CA
    included) as the image's, also where update-ca-certificates keeps it, and the variables
    pip, requests, curl and node read."""
    env = " ".join(f"{k}={v}" for k, v in {
        "LANG": "C.UTF-8",
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", **CA_ENV}.items())
    ca = (f"COPY host-ca.crt {_CA}\n"
          "COPY host-ca.crt /usr/local/share/ca-certificates/evoharness-host.crt\n")
    return f"FROM {rootfs_image}\n{ca if host_ca else ''}ENV {env}\nCMD [\"/bin/bash\"]\n"


def setup_base(engine: Engine, home: Path, *, rootfs: Path | None = None, suite: str = "bookworm",
               packages: list[str] | None = None, image: str = DEFAULT_BASE) -> SetupReport:
    """Make the stand-in base `image` (from `rootfs`, else from Debian's archive) and write the
    default base map when there is none. Idempotent: run again, the image is made again."""
    start = time.monotonic()
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evo-base-", dir=home) as scratch:
        work = Path(scratch)
        source = str(rootfs) if rootfs else f"mmdebstrap {suite}"
        tarball = rootfs or debootstrap(suite, packages or DEFAULT_PACKAGES, work / "rootfs.tar")
        if not Path(tarball).is_file():
            raise EvoError("root filesystem tarball does not exist", file=tarball, field="rootfs")
        staged = f"{image}-rootfs"
        engine.run(["import", str(tarball), staged], timeout=MMDEBSTRAP_TIMEOUT_S)
        context = work / "context"  # the tarball stays out of the build context
        context.mkdir()
        (context / "Dockerfile").write_text(_base_dockerfile(staged, HOST_CA.is_file()))
        if HOST_CA.is_file():
            shutil.copyfile(HOST_CA, context / "host-ca.crt")
        try:
            engine.run(["build", *build_pull_flags(engine), *engine.ulimits(), "-t", image,
                        str(context)], timeout=MMDEBSTRAP_TIMEOUT_S)
        finally:
            engine.run(["rmi", staged], check=False)
    found = engine.image_id(image)
    if found is None:
        raise EngineError("the base image was built but is not there", field="image", value=image)
    return SetupReport(image=image, image_id=found, source=source,
                       seconds=time.monotonic() - start, map_file=write_default_map(home, image))


def build_pull_flags(engine: Engine) -> list[str]:
    """Never pull during a build: every FROM is resolved to a local image first (docker's
    build does not pull an image it has)."""
    return ["--pull=never"] if engine.name == "podman" else []
