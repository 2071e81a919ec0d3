"""This host's Python inside a container of any image: harness scripts run with the interpreter and
packages they run with under bubblewrap, whatever the image holds (no Python, another version, musl).
The interpreter, its libraries and the virtual environment are mounted read-only under one private
prefix, and started through this host's own dynamic loader, so nothing of the image's C library is
used and nothing (no PYTHONHOME, no LD_LIBRARY_PATH) leaks into the commands it starts. This
host's bash is mounted and started the same way: the shell every command runs in is at a path no
image can replace."""
from __future__ import annotations

import os
import shutil
import site
import struct
import sys
import sysconfig
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

PREFIX = "/opt/evoharness/host"  # where the host's paths appear in the container
_PT_INTERP = 3
# Started with -I (no PYTHON* variables, no user site, no unsafe path: /app is never on sys.path)
# and -S; then the virtual environment's packages are added and the script runs as __main__ with
# its own directory first on sys.path, as `python3 SCRIPT` would have it.
BOOT = ("import os, runpy, site, sys\n"
        "site.addsitedir(sys.argv[1])\n"
        "script = sys.argv[2]\n"
        "sys.argv = [script]\n"
        "sys.path.insert(0, os.path.dirname(script))\n"
        "runpy.run_path(script, run_name='__main__')\n")


class HostPython(BaseModel):
    model_config = ConfigDict(frozen=True)

    mounts: list[str]  # host paths, each mounted at PREFIX + itself, read-only
    argv: list[str]  # the command line before the script's path
    bash: list[str] = []  # this host's bash, started the same way: `BASH -c COMMAND`

    def command(self, script: str) -> list[str]:
        return [*self.argv, script]


def inside(path: str | Path) -> str:
    return PREFIX + os.path.realpath(path)


def _interpreter(binary: str) -> str:
    """The ELF program interpreter (dynamic loader) a 64-bit little-endian binary names."""
    with open(binary, "rb") as handle:
        header = handle.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            raise OSError(f"{binary} is not a 64-bit little-endian ELF binary")
        phoff, = struct.unpack_from("<Q", header, 0x20)
        entsize, count = struct.unpack_from("<HH", header, 0x36)
        for index in range(count):
            handle.seek(phoff + index * entsize)
            kind, _, offset, _, _, size = struct.unpack("<IIQQQQ", handle.read(40))
            if kind == _PT_INTERP:
                handle.seek(offset)
                return handle.read(size).rstrip(b"\0").decode()
    raise OSError(f"{binary} names no dynamic loader (a static binary needs none)")


def _covered(path: str, others: list[str]) -> bool:
    return any(path == o or path.startswith(o.rstrip("/") + "/") for o in others)


def hidden_suites(roots: list[str]) -> list[str]:
    """The built-in suite's folders (hidden tests/ and solution/ of every task) that an install
    of evoharness put under one of `roots` (a sandbox mounts them for Python): a sandbox puts an
    empty tmpfs over each. An editable install keeps the suite in the checkout, mounted nowhere."""
    import evoharness.tasks

    prefixes = {sys.prefix, sys.base_prefix, "/usr/local", "/usr"}
    sites = {d for p in prefixes for d in site.getsitepackages([p])}
    found = {os.path.realpath(Path(d) / "evoharness" / "tasks" / "suite") for d in sites}
    found.add(os.path.realpath(Path(evoharness.tasks.__file__).parent / "suite"))
    real = [os.path.realpath(r) for r in roots]
    return sorted(d for d in found if os.path.isdir(d) and _covered(d, real))


@cache
def host_python() -> HostPython:
    """How to run this process's Python in a container: what to mount and the command line."""
    base = os.path.realpath(sys._base_executable)  # the venv's python links to this one
    loader = os.path.realpath(_interpreter(base))
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    libdir = sysconfig.get_config_var("LIBDIR") or ""  # libpython, when it is shared
    candidates = [libdir, os.path.dirname(loader), f"/usr/lib/{arch}", f"/lib/{arch}",
                  "/usr/lib", "/lib", "/usr/local/lib"]
    libraries = list(dict.fromkeys(os.path.realpath(p) for p in candidates if p and os.path.isdir(p)))
    roots = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, *libraries)]
    mounts: list[str] = []
    for root in sorted(set(roots), key=len):
        if not _covered(root, mounts):
            mounts.append(root)
    site = sysconfig.get_paths()["purelib"]  # the venv's packages (the base's, without one)
    library_path = ":".join(inside(p) for p in libraries)
    bash = os.path.realpath(shutil.which("bash", path="/usr/bin:/bin") or "/bin/bash")
    if not _covered(bash, mounts):
        mounts.append(bash)
    argv = [inside(loader), "--library-path", library_path, inside(base), "-I", "-S", "-c",
            BOOT, inside(site)]
    return HostPython(mounts=mounts, argv=argv,
                      bash=[inside(loader), "--library-path", library_path, inside(bash)])
