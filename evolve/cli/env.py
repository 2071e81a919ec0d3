"""CLI commands for the env noun: `evoharness env setup` makes the local stand-in base image for
machines no image registry answers, `env status` says what tasks would run in and with which
bases, `env sweep` removes containers that dead processes left. The work is tasks/sandbox/bases.py's and
tasks/sandbox/engine.py's."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from evoharness.text import comma_list

from .run import ENGINE_HELP


def register(app: typer.Typer) -> None:
    env_app = typer.Typer(help="Task environments: container engine, base images, sweeps.",
                          no_args_is_help=True, rich_markup_mode=None)
    env_app.command("setup")(setup)
    env_app.command("status")(status)
    env_app.command("sweep")(sweep)
    app.add_typer(env_app, name="env")


def setup(
    rootfs: Path = typer.Option(None, "--rootfs", help="A root filesystem tarball to make the base "
                                "from, instead of Debian's archive (mmdebstrap)."),
    suite: str = typer.Option("bookworm", "--suite", help="The Debian release mmdebstrap fetches."),
    include: str = typer.Option("", "--include", help="More Debian packages for the base, "
                                "comma-separated (default: ca-certificates, passwd, python3, "
                                "pip, venv)."),
    image: str = typer.Option(None, "--image", help="The base image's name (default "
                              "localhost/evoharness/debian:bookworm, what bases.toml maps to)."),
    engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP),
) -> None:
    """Make the local base image that stands in for the bases Dockerfiles start FROM where no
    registry answers (python:3*, debian:*, ubuntu:* ...; edit bases.toml for more), with this
    host's CA certificates in it; write the map unless one exists. Takes about two minutes.

    Example: evoharness env setup --include curl,git
    """
    from rich.console import Console

    from evoharness.tasks.sandbox.bases import DEFAULT_BASE, DEFAULT_PACKAGES, containers_home, setup_base
    from evoharness.tasks.sandbox.engine import require_engine

    console = Console(soft_wrap=True, highlight=False)
    packages = DEFAULT_PACKAGES + comma_list(include)
    console.print(f"making {image or DEFAULT_BASE} from "
                  f"{rootfs or f'Debian {suite} (mmdebstrap: about two minutes)'}", markup=False)
    report = setup_base(require_engine(engine), containers_home(), rootfs=rootfs, suite=suite,
                        packages=packages, image=image or DEFAULT_BASE)
    console.print(f"made {report.image} ({report.image_id[:19]}) in {report.seconds:.0f}s; "
                  f"FROM names it stands in for: {report.map_file}", markup=False)


def status(
    engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON."),
) -> None:
    """Say which container engine works here, where images are cached, and the base map.

    Example: evoharness env status --json
    """
    from evoharness.tasks.sandbox.bases import containers_home, load_map
    from evoharness.tasks.sandbox.engine import find_engine

    found = find_engine(engine)
    home = containers_home()
    bases = load_map(home).bases
    data = {"engine": found.name if found else None, "binary": found.binary if found else None,
            "home": str(home), "bases": {pattern: {"image": image,
                                                   "present": bool(found and found.image_id(image))}
                                         for pattern, image in bases.items()}}
    if as_json:
        print(json.dumps(data, indent=2))
        return
    print(f"engine: {data['engine'] or 'none works here (tasks run on the host)'}")
    print(f"images and base map: {home}")
    for pattern, entry in data["bases"].items():
        print(f"  FROM {pattern} -> {entry['image']}{'' if entry['present'] else ' (missing)'}")
    if not bases:
        print("  no base map: `evoharness env setup` writes one")


def sweep(engine: str = typer.Option("auto", "--engine", help=ENGINE_HELP)) -> None:
    """Remove the containers and temporary folders evoharness processes left when they were
    killed (every batch of rollouts does this too).

    Example: evoharness env sweep
    """
    from evoharness.tasks.sandbox.engine import require_engine
    from evoharness.tasks.sandbox.leftovers import sweep_dirs

    removed = require_engine(engine).sweep()
    print(f"removed {len(removed)} container(s) left by processes that are gone"
          + (f": {', '.join(removed)}" if removed else ""))
    folders = sweep_dirs()
    print(f"removed {len(folders)} temporary folder(s) left by processes that are gone")
