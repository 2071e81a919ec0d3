"""The child process that renders an agent-written template: jinja2's sandbox under an address-space
and CPU limit, output cut off at a size cap. Run as a script by prompt.py, which owns the timeout.

Reads {"template", "variables", "max_chars"} as JSON on stdin; writes {"text"} or {"error": {"kind",
"message", "line"}} on stdout. Imports only jinja2, so a render costs one interpreter start."""
from __future__ import annotations

import json
import resource
import sys
from functools import cache
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment

MEMORY_BYTES = 512 << 20
CPU_SECONDS = 10  # an honest prompt template renders in milliseconds
ERROR_CHARS = 500


@cache
def jinja_env() -> SandboxedEnvironment:
    """Sandboxed because the evolve agent writes the template: no attribute tricks reach Python."""
    env = SandboxedEnvironment(
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}  # schemas read better in file order
    return env


def render(template: str, variables: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """The rendered text, or the error; rendering stops as soon as the output passes max_chars."""
    try:
        chunks, size = [], 0
        for chunk in jinja_env().from_string(template).generate(**variables):
            size += len(chunk)
            if size > max_chars:
                return _error("too_long", f"the rendered prompt passes {max_chars} characters")
            chunks.append(chunk)
        return {"text": "".join(chunks)}
    except TemplateSyntaxError as error:
        return _error("syntax", f"template syntax error: {error.message}", error.lineno)
    except MemoryError:
        return _error("memory", f"rendering needs more than {MEMORY_BYTES >> 20} MB")
    except Exception as error:  # noqa: BLE001 - any failure of agent-written template code is reported
        return _error("render", f"template fails to render: {type(error).__name__}: {error}")


def _error(kind: str, message: str, line: int | None = None) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message[:ERROR_CHARS], "line": line}}


def main() -> None:
    request = json.load(sys.stdin)
    # After the imports and the request: the limits are for what the template does.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # it writes nothing but its answer (a pipe)
    answer = render(request["template"], request["variables"], request["max_chars"])
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
