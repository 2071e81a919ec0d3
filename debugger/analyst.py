"""The optional LLM analyst: one root-cause paragraph per failing task, read from its task file.

Bounded concurrency and a per-call timeout; a failed or slow call is counted, never raised, so
the iteration goes on without it. Which model to use is the caller's choice (off by default).
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from pydantic import BaseModel, Field

from evoharness.agent.model import Message, Model

log = logging.getLogger(__name__)

SYSTEM = (
    "You are debugging a coding agent's harness. You get the evidence file of one task the agent "
    "failed: its rollouts, the verifier's failing lines, where passing and failing rollouts "
    "diverge, and error events. Reply with one paragraph: the most likely root cause in the "
    "harness (prompt, tools, middleware, settings) and the evidence for it. No preamble."
)


class AnalystReport(BaseModel):
    enabled: bool = True
    paragraphs: dict[str, str] = Field(default_factory=dict)
    failed: list[str] = Field(default_factory=list)  # task ids whose call failed or timed out

    def summary(self) -> str:
        """The overview's one line about the analyst."""
        if not self.enabled:
            return "off"
        text = f"root causes for {len(self.paragraphs)} failing tasks (under Analyst in the task files)"
        if self.failed:
            text += f"; analyst unavailable for {len(self.failed)} tasks"
        return text


class Analyst:
    """Runs at most `max_workers` model calls at a time, each given `timeout_s` seconds."""

    def __init__(self, model: Model, *, max_workers: int = 4, timeout_s: float = 120.0) -> None:
        self.model = model
        self.max_workers = max_workers
        self.timeout_s = timeout_s

    def ask(self, task_text: str) -> str:
        messages = [Message(role="system", content=SYSTEM), Message(role="user", content=task_text)]
        return self.model.chat(messages, temperature=0.0).content

    def analyse(self, task_texts: dict[str, str]) -> AnalystReport:
        """Batches of max_workers calls on a fresh pool each, so a hung call cannot starve later
        batches; its thread is abandoned, not joined."""
        report = AnalystReport()
        items = list(task_texts.items())
        for start in range(0, len(items), self.max_workers):
            batch = items[start:start + self.max_workers]
            pool = ThreadPoolExecutor(max_workers=len(batch), thread_name_prefix="analyst")
            futures = {tid: pool.submit(self.ask, text) for tid, text in batch}
            deadline = time.monotonic() + self.timeout_s
            for tid, future in futures.items():
                try:
                    paragraph = future.result(timeout=max(deadline - time.monotonic(), 0))
                except FutureTimeout:
                    log.warning("analyst timed out on task %s after %.0f s", tid, self.timeout_s)
                    report.failed.append(tid)
                except Exception as exc:  # any model failure is data here, not the end of the run
                    log.warning("analyst failed on task %s: %s", tid, exc)
                    report.failed.append(tid)
                else:
                    if paragraph.strip():
                        report.paragraphs[tid] = paragraph
                    else:
                        report.failed.append(tid)
            pool.shutdown(wait=False, cancel_futures=True)
        return report
