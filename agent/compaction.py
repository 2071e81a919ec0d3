"""The conversation a rollout builds (system prompt, task instruction, then one exchange per step)
and its deterministic compaction when the context budget is exceeded. When to compact is the loop's call."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agent.model import Message
from agent.tools import ToolResult

NOTE_LINES = 40  # the compaction note lists at most this many earlier actions
# Tools like the seed's shell exit 0 themselves and print the command's exit code last.
_REPORTED_EXIT = re.compile(r"exit code:? (-?\d+)\]?\s*$", re.IGNORECASE)


@dataclass
class Exchange:
    """One step: the model's reply and what it got back, with a one-line summary for compaction."""

    messages: list[Message]
    summary: str


def step_line(tool: str, arguments: dict[str, Any], result: ToolResult) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    args = args if len(args) <= 120 else args[:117] + "..."
    if result.error is not None:
        outcome = f"error ({result.error.kind}): {result.error.message[:100]}"
    elif reported := _REPORTED_EXIT.search(result.output):
        outcome = f"exit {reported.group(1)}"
    else:
        outcome = f"exit {result.exit_code}" if result.exit_code is not None else "ok"
    return f"{tool} {args} -> {outcome}"


class Transcript:
    """System prompt and instruction are never dropped; compaction replaces the oldest exchanges
    with a note listing the actions they took."""

    def __init__(self, system: str, instruction: str) -> None:
        self.head = [Message(role="system", content=system), Message(role="user", content=instruction)]
        self.exchanges: list[Exchange] = []
        self.compacted: list[str] = []  # summaries of the exchanges already dropped
        self._measured: tuple[int, int] | None = None  # (server tokens_in, messages it covered)

    def add(self, messages: list[Message], summary: str) -> None:
        self.exchanges.append(Exchange(messages, summary))

    def messages(self) -> list[Message]:
        note = [Message(role="user", content=self._note())] if self.compacted else []
        return self.head + note + [m for ex in self.exchanges for m in ex.messages]

    def observe(self, tokens_in: int) -> None:
        """Remember the server's prompt token count for the messages just sent."""
        if tokens_in > 0:
            self._measured = (tokens_in, len(self.messages()))

    def estimate(self) -> int:
        """Tokens of the next prompt: the server's last count plus chars/4 of what was added since;
        chars/4 of everything when the server gave no count."""
        messages = self.messages()
        if self._measured is None:
            return _chars_estimate(messages)
        tokens, covered = self._measured
        return tokens + _chars_estimate(messages[covered:])

    def compact(self, limit: int, keep_last: int = 3) -> tuple[int, int]:
        """Keep the last `keep_last` exchanges, fewer (down to one) while the estimate is still over
        `limit`. Returns the estimate before and after."""
        before = self.estimate()
        self._measured = None  # the server's count described the uncompacted conversation
        keep = min(keep_last, len(self.exchanges))
        while keep >= 1:
            dropped = self.exchanges[: len(self.exchanges) - keep]
            self.compacted += [ex.summary for ex in dropped]
            self.exchanges = self.exchanges[len(dropped):]
            if self.estimate() <= limit:
                break
            keep -= 1
        return before, self.estimate()

    def _note(self) -> str:
        lines = self.compacted[-NOTE_LINES:]
        skipped = len(self.compacted) - len(lines)
        header = f"[Context compacted: {len(self.compacted)} earlier steps summarised"
        header += f", the first {skipped} not listed]" if skipped else "]"
        body = "\n".join(f"- {line}" for line in lines)
        return f"{header}\nActions taken so far:\n{body}"


def _chars_estimate(messages: list[Message]) -> int:
    chars = sum(len(m.content) + sum(len(json.dumps(c.arguments)) for c in m.tool_calls)
                for m in messages)
    return chars // 4
