"""The `evoharness` command line: one Typer app, one module per noun (harness, tasks, env,
traces, manifest, run, report, exam, library). Each module registers its commands and imports a command's machinery only
when that command runs, so the CLI starts fast; this one turns errors into messages."""
from __future__ import annotations

import inspect
import os
import signal
import sys

import typer

from evoharness.errors import EvoError

from . import env, exam, harness, library, manifest, model, report, run, tasks, traces

app = typer.Typer(
    name="evoharness",
    help="Evolve a coding agent's harness overnight, with pre-registered predictions.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: rendering it with rich costs more than the CLI's start
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _global(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of short errors."),
) -> None:
    """evoharness VERB [NOUN] RUN_DIR [options]; see `evoharness VERB --help`."""


for module in (harness, model, tasks, env, traces, manifest, run, report, exam, library):
    module.register(app)


def examples_verbatim(help_text: str) -> str:
    """`help_text` with its `Example:` lines kept one to a line: click rewraps a paragraph, which
    ran two examples into one line and folded a long one in two; a paragraph opened by `\\b`
    it prints as written."""
    lines = inspect.cleandoc(help_text).splitlines()
    shown: list[str] = []
    for line in lines:
        starts = line.startswith("Example") and not (shown and shown[-1].startswith("Example"))
        if starts:
            if shown and shown[-1].strip():
                shown.append("")
            shown.append("\b")
        shown.append(line)
    return "\n".join(shown)


def _keep_examples(typer_app: typer.Typer) -> None:
    """Every command's help, the sub-apps' too, with its examples one to a line."""
    for info in typer_app.registered_commands:
        text = info.help or inspect.getdoc(info.callback) or ""
        info.help = examples_verbatim(text)
    for group in typer_app.registered_groups:
        _keep_examples(group.typer_instance)


_keep_examples(app)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="evoharness")
    except EvoError as error:
        if "--debug" in args:
            raise
        from rich.console import Console
        from rich.text import Text

        # One line (an engine's output quoted in it came with its own line breaks), or one per
        # problem; never cut at the terminal's width, where an id or a path would break in two.
        text = str(error) if error.keeps_lines else " ".join(str(error).split())
        Console(stderr=True, soft_wrap=True).print(Text("error: ", style="bold red") + Text(text))
        sys.exit(2)


def console() -> None:
    """The `evoharness` program (tests call main in their own process, with its own signals)."""
    stop_like_ctrl_c()
    main()


def stop_like_ctrl_c() -> None:
    """SIGTERM (`kill`, a service manager, a job's time limit) and SIGINT stop a command as Ctrl-C
    does: the rollouts in flight end, the queued ones never start. A shell starts a background job
    (`evoharness evolve RUN &`, nohup) with SIGINT ignored, and Python then leaves it ignored, so
    without this a night started that way could be stopped only by losing its rollouts in flight."""
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, _stopping)


def _stopping(signum: int, frame: object) -> None:
    # os.write, not print: the signal may come while the main thread is printing.
    os.write(2, b"\nstopping: the rollouts in flight end first, queued ones never start; what "
                b"finished is kept, and `evoharness evolve RUN --resume` (or the same command "
                b"again) goes on\n")
    raise KeyboardInterrupt  # typer exits with 130 on it
