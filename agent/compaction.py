"""The conversation a rollout builds (system prompt, task instruction, then one exchange per step)
and its deterministic compaction when the context budget is exceeded. When to compact is the loop's call."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evoharness.agent.model import Message
from evoharness.agent.tools import ToolResult

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
    """System prompt and instruction are never dropped. Compaction keeps only the newest exchange
    (its output is new to the model anyway) and appends one note listing the actions of the ones
    it dropped; notes, once written, never change. So the prompt up to the kept exchange stays
    what the server has cached, and the next compaction is far away: before, a note rewritten in
    front of three kept exchanges made the next call read them all again (674 tokens, ~45 s for
    one call of the 1.5B on 2 cores)."""

    def __init__(self, system: str, instruction: str) -> None:
        self.head = [Message(role="system", content=system), Message(role="user", content=instruction)]
        self.exchanges: list[Exchange] = []
        self.compacted: list[str] = []  # summaries of the exchanges already dropped
        self.notes: list[Message] = []  # one per compaction, in order
        self._measured: tuple[int, int] | None = None  # (server tokens_in, messages it covered)

    def add(self, messages: list[Message], summary: str) -> None:
        self.exchanges.append(Exchange(messages, summary))

    def messages(self) -> list[Message]:
        return self.head + self.notes + [m for ex in self.exchanges for m in ex.messages]

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

    def compact(self, keep_last: int = 1) -> tuple[int, int]:
        """Drop all but the last `keep_last` exchanges into one new note. Returns the estimate
        before and after."""
        before = self.estimate()
        self._measured = None  # the server's count described the uncompacted conversation
        dropped = self.exchanges[: max(0, len(self.exchanges) - keep_last)]
        if dropped:
            first = len(self.compacted) + 1
            self.compacted += [ex.summary for ex in dropped]
            self.notes.append(Message(role="user", content=_note(first, self.compacted[first - 1:])))
            self.exchanges = self.exchanges[len(dropped):]
        return before, self.estimate()


def _note(first: int, summaries: list[str]) -> str:
    last = first + len(summaries) - 1
    lines = summaries[-NOTE_LINES:]
    skipped = len(summaries) - len(lines)
    header = f"[Context compacted: steps {first}-{last} summarised"
    header += f", the first {skipped} not listed]" if skipped else "]"
    body = "\n".join(f"- {line}" for line in lines)
    return f"{header}\nActions taken in them:\n{body}"


def _chars_estimate(messages: list[Message]) -> int:
    chars = sum(len(m.content) + sum(len(json.dumps(c.arguments)) for c in m.tool_calls)
                for m in messages)
    return chars // 4
