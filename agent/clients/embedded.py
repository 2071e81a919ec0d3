"""The embedded model: llama.cpp running in this process through the `xllamacpp` wheel, serving
the GGUF that weights.py assembled, sized to the machine's idle cores (threads) and the run's
workers (slots). Chat goes through the server's in-process OpenAI-style call, replies decoded as
compact JSON; each rollout keeps one slot (its cached prompt) and a new one takes the slot that
last held its system prompt. At exit the servers stop once the calls in flight are done."""
from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evoharness.agent.clients.boundary import text_boundary
from evoharness.agent.clients.runaway import StreamedText
from evoharness.agent.clients.speed import stall_watch
from evoharness.agent.clients.timings import StallWatch, llama_timings
from evoharness.agent.clients.weights import WEIGHTS, ModelWeights, ensure_weights
from evoharness.agent.clients.wire import openai_messages, openai_reply, response_format, tool_payload
from evoharness.agent.model import Message, Model, ModelClient, ModelError, ModelReply, ModelRequest
from evoharness.errors import EvoError

CONTEXT_PER_SLOT = 8192
MAX_SLOTS = 16  # each slot holds its own KV cache (~230 MiB for the 1.5B at CONTEXT_PER_SLOT)
THREADS_ENV = "EVOHARNESS_THREADS"
SLOTS_ENV = "EVOHARNESS_SLOTS"
REPRODUCIBLE_ENV = "EVOHARNESS_REPRODUCIBLE"
BUSY_SAMPLE_S = 0.5  # how long the server's sizing looks at the machine's CPU use
# llguidance (llama.cpp's grammar engine here) decodes JSON with no whitespace at all: the 1.5B
# pretty-printed its actions, ~23% of a reply's tokens, and a pretty reply re-tokenised for the
# next call did not match what was decoded, so the cache lost it. (Without the separators
# llguidance writes ", " and ": ", a token more each.)
COMPACT_JSON = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}
# Threads that wait at llama.cpp's barriers (OpenMP's) spin briefly, then sleep. Spinning for
# libgomp's default 300,000 turns holds a core while the thread waited for is descheduled by
# other work (2 threads at a load of 6-14 decoded 0.3-1.1 tokens/s); sleeping at once
# (OMP_WAIT_POLICY=PASSIVE) costs every barrier a wake-up. Measured on this project's 2-core
# machine, same run, arms alternated call by call (benchmarks/rollouts.py's fixture): quiet,
# 20,000 turns decoded 11.3 tokens/s, the default 11.4, passive 8.8; beside two busy loops,
# 4.8, 3.7 and 4.6.
SPIN_COUNT = ("GOMP_SPINCOUNT", "20000")


class ServerSize(BaseModel):
    """How one llama.cpp server is sized: decode threads, and slots (concurrent conversations,
    each with its own prompt cache, decoded together in one batch)."""

    model_config = ConfigDict(frozen=True)

    threads: int = Field(ge=1)
    slots: int = Field(ge=1, le=MAX_SLOTS)
    # llama.cpp computes a reply differently with what it batches beside it and with how much of
    # its prompt the cache held (measured on the 1.5B: one prompt and seed gave another reply
    # after a different prompt had left part of it cached, and beside another conversation). A
    # reproducible server has one slot and prefills from empty every call that does not continue
    # the conversation it served last, so a reply depends on its conversation alone: both arms of
    # a trial's pair then sample alike until the change acts. It costs the batching of
    # concurrent rollouts and the cached prefix of each conversation's first call (a trial of
    # 128 rollouts on the 1.5B took 1.55x the wall time of one with two slots).
    reproducible: bool = False

    @model_validator(mode="after")
    def _one_slot_if_reproducible(self) -> ServerSize:
        if self.reproducible and self.slots != 1:
            raise ValueError("a reproducible server has one slot: conversations batched "
                             "together change each other's replies")
        return self


def machine_cores() -> int:
    """Cores this process may use: physical ones (llama.cpp gains nothing from hyper-threads and
    loses to their contention), within the CPU affinity a container or `taskset` sets."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    physical = psutil.cpu_count(logical=False) or allowed or 1
    return max(1, min(allowed or 1, physical))


def idle_cores() -> int:
    """Cores not already busy with other work, at least one. llama.cpp's threads meet at a
    barrier after every operation: one thread preempted by another process stalls them all.
    Measured on this project's 2-core machine under a load of ~5 (nice 10): 1 thread decoded
    4.2-7.5 tokens/s, 2 threads 0.4-1.8 tokens/s."""
    cores = machine_cores()
    return max(1, min(cores, cores - int(busy_cores())))


def busy_cores() -> float:
    """The smaller of the 1-minute load average and the cores in use over the last moment. The
    average alone lags: right after `install.sh` or a test run it still counts work that has
    ended, and the server, sized once, would decode on one thread of two for the whole run."""
    average = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    now = psutil.cpu_percent(interval=BUSY_SAMPLE_S) / 100 * (psutil.cpu_count() or 1)
    return min(average, now)


def server_size(workers: int = 1) -> ServerSize:
    """The idle cores for one batched decode, and one slot per concurrent rollout (so rollouts
    keep their own cached prompt); EVOHARNESS_THREADS / EVOHARNESS_SLOTS override, and
    EVOHARNESS_REPRODUCIBLE=1 asks for one slot that serves one conversation at a time."""
    threads = _env_int(THREADS_ENV) or idle_cores()
    if reproducible(workers):
        return ServerSize(threads=threads, slots=1, reproducible=True)
    slots = _env_int(SLOTS_ENV) or max(1, workers)
    return ServerSize(threads=threads, slots=min(slots, MAX_SLOTS))


def reproducible(workers: int = 1) -> bool:
    """Whether EVOHARNESS_REPRODUCIBLE asks for a reproducible server (ServerSize): "1" yes, "0"
    or unset no. Its replies stay reproducible only while one conversation runs at a time, so
    with more `workers` it is an error, raised before anything runs."""
    raw = os.environ.get(REPRODUCIBLE_ENV, "").strip()
    if raw not in ("", "0", "1"):
        raise EvoError("must be 1 or 0", field=REPRODUCIBLE_ENV, value=raw)
    if raw == "1" and workers > 1:
        raise EvoError("reproducible replies need one conversation at a time",
                       field=REPRODUCIBLE_ENV, value=raw,
                       hint=f"run with --workers 1 (not {workers}), or unset {REPRODUCIBLE_ENV}")
    return raw == "1"


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise EvoError("must be a positive whole number", field=name, value=raw,
                       hint=f"unset {name} to size the embedded model from the machine")
    return int(raw)


# One llama.cpp server per weights file per process: loading a GGUF costs seconds and its memory
# must not be paid twice when the code agent and the evolve agent share a model. This is a cache
# of an immutable resource, not run state; the first caller's size holds for the process, and
# with each server its book of slots and its stall watch. `_state` guards it and the count of
# calls in flight.
_servers: dict[Path, _Served] = {}
_state = threading.Condition()
_in_flight = 0
_exiting = False


def _native() -> Any:
    """The xllamacpp module, imported (deferred: loading the native library is not free) with the
    spin count set: OpenMP reads it once, when it loads with the library. A wait policy or spin
    count of the user's own is left as it is."""
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault(*SPIN_COUNT)
    import xllamacpp

    return xllamacpp


def start_server(path: Path, size: ServerSize) -> Any:
    """A new llama.cpp server on `path` (uncached: the batching benchmark compares sizes)."""
    xllamacpp = _native()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    # llama.cpp splits n_ctx across slots. With one slot, two rollouts alternating on it evict
    # each other's cached prompt, and every step re-reads the whole conversation.
    params.n_ctx = CONTEXT_PER_SLOT * size.slots
    params.n_parallel = size.slots
    params.cpuparams.n_threads = size.threads
    params.cpuparams_batch.n_threads = size.threads
    params.verbosity = -1  # llama.cpp's per-request logs would drown the CLI's output
    return xllamacpp.Server(params)


class SlotBook:
    """Which slot of one server each live conversation holds. A conversation keeps its slot, so
    its cached prompt, until it is dropped; a new one takes the free slot that last held the same
    system prompt (whose cached tokens it reuses), else the one free longest; None when every slot
    is held (the server then chooses)."""

    def __init__(self, slots: int) -> None:
        self._free: list[tuple[int, str]] = [(slot, "") for slot in range(slots)]
        self._lock = threading.Lock()

    def take(self, prefix: str) -> int | None:
        with self._lock:
            index = next((i for i, (_, held) in enumerate(self._free) if held == prefix), 0)
            return self._free.pop(index)[0] if self._free else None

    def give_back(self, slot: int, prefix: str) -> None:
        with self._lock:
            self._free.append((slot, prefix))


@dataclass
class _Served:
    server: Any
    size: ServerSize
    slots: SlotBook
    watch: StallWatch
    last_conversation: int | None = None  # the key of the _OnSlot that made the last call

    def reuses_cache(self, conversation: int | None) -> bool:
        """Whether a call of `conversation` (None: none) may start from the cached prompt; on a
        reproducible server only one that continues the conversation served last."""
        follows = conversation is not None and conversation == self.last_conversation
        self.last_conversation = conversation
        return follows or not self.size.reproducible


@contextmanager
def _serving(path: Path, size: Callable[[], ServerSize], name: str) -> Iterator[_Served]:
    """The server of `path` (started on first use, of `size()`) for one chat call, counted while
    the call runs so that exit can wait for it."""
    global _in_flight
    with _state:
        if _exiting:
            raise ModelError("the process is exiting", kind="unavailable", field=name)
        if path not in _servers:
            if not _servers:
                atexit.register(_stop_servers)
            sized = size()
            _servers[path] = _Served(start_server(path, sized), sized, SlotBook(sized.slots),
                                     stall_watch(name))
        served = _servers[path]
        _in_flight += 1
    try:
        yield served
    finally:
        with _state:
            _in_flight -= 1
            _state.notify_all()


def _stop_servers() -> None:
    """At exit: refuse new calls, wait for those in flight, then stop each server's loop thread.

    A rollout abandoned at its deadline may still be inside a call (it cannot be cancelled).
    Exiting under it tore llama.cpp's globals down while its decode thread was computing, and the
    process died with SIGSEGV after all its work was done. A call ends within its max_tokens."""
    global _exiting
    with _state:
        _exiting = True
        if _in_flight:
            print(f"evoharness: waiting for {_in_flight} embedded model call(s) to finish "
                  "before exiting", file=sys.stderr, flush=True)
        _state.wait_for(lambda: _in_flight == 0)
        servers = [served.server for served in _servers.values()]
        _servers.clear()
    servers.clear()  # the last reference: each Server's destructor joins its loop thread


class EmbeddedModel(ModelClient):
    """Qwen2.5-Coder via in-process llama.cpp; the server starts on the first chat call, sized by
    `size`, else from the machine as it is then and `workers` (server_size). `compact_json`
    (the default) decodes JSON replies with no free whitespace, and `cut_runaways` (the default)
    stops a reply that repeats itself; off, as before each was measured (benchmarks/rollouts.py
    compares them)."""

    constrains_by_default = True  # llama.cpp turns response_format's JSON schema into a grammar

    def __init__(self, weights: ModelWeights = WEIGHTS["qwen2.5-coder-1.5b"],
                 size: ServerSize | None = None, workers: int = 1, *,
                 compact_json: bool = True, cut_runaways: bool = True) -> None:
        self.weights = weights
        self.name = f"embedded:{weights.name}"
        self.workers = workers
        self.compact_json = compact_json
        self.cut_runaways = cut_runaways
        if size is None:
            reproducible(workers)  # a conflict with the workers is an error now, not mid-run
        self._size = size

    @property
    def size(self) -> ServerSize:
        if self._size is None:  # measured once, when first needed: sizing samples the CPU
            self._size = server_size(self.workers)
        return self._size

    def for_rollout(self, key: str) -> Model:
        """This model for one conversation: its calls keep to one slot of the server."""
        return _OnSlot(self)

    @text_boundary
    def respond(self, request: ModelRequest) -> ModelReply:
        # request.context_tokens is not sent: a slot's context is CONTEXT_PER_SLOT
        return self.chat_on(None, request)

    def chat_on(self, slot: _OnSlot | None, request: ModelRequest) -> ModelReply:
        """One call, on `slot`'s slot of the server when it holds one (the server's choice
        otherwise)."""
        body = self.body(request)
        with _serving(ensure_weights(self.weights), lambda: self.size, self.name) as served:
            if slot is not None and (held := slot.held(served.slots, request.messages)) \
                    is not None:
                body["id_slot"] = held
            body["cache_prompt"] = served.reuses_cache(slot.key if slot is not None else None)
            reply = self.complete(served.server, body)
        return reply.model_copy(update={"timings": served.watch.mark(reply.timings,
                                                                     reply.tokens_out)})

    def request(self, messages: list[Message], **options: Any) -> dict[str, Any]:
        """The chat-completions body of a call with these messages and options (ModelRequest's)."""
        return self.body(ModelRequest(messages=messages, **options))

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The chat-completions body of one call (llama.cpp's OpenAI-style request)."""
        body: dict[str, Any] = {"messages": openai_messages(request.messages),
                                "temperature": request.temperature}
        if request.tools:
            body["tools"] = tool_payload(request.tools)
        schema, json_mode = request.schema, request.json_mode
        if self.compact_json and (schema is not None or json_mode):
            # As a grammar: response_format goes through llama.cpp's own converter, which
            # ignores x-guidance and lets the model pretty-print.
            body["grammar"] = _llguidance({**(schema or {"type": "object"}),
                                           "x-guidance": COMPACT_JSON})
        elif (reply_format := response_format(json_mode, schema)) is not None:
            body["response_format"] = reply_format
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        return body

    def complete(self, server: Any, body: dict[str, Any]) -> ModelReply:
        """One chat-completions request on `server`, timed and decoded. Without tools the reply
        is streamed, and one that runs away (repeats itself, agent/clients/runaway.py) is
        stopped there; native tool calls come whole."""
        if self.cut_runaways and "tools" not in body:
            return self._streamed(server, body)
        started = time.perf_counter()
        try:
            payload = server.handle_chat_completions(body)
        except RuntimeError as error:  # llama.cpp rejected the request (bad tools, too long)
            raise ModelError(str(error), kind="permanent", field=self.name) from error
        if isinstance(payload, dict) and "error" in payload:
            raise self._failed(payload["error"])
        duration_ms = (time.perf_counter() - started) * 1000
        return openai_reply(payload, model=self.name, duration_ms=duration_ms, where=self.name)

    def _streamed(self, server: Any, body: dict[str, Any]) -> ModelReply:
        # Every chunk carries the server's timings so far, so a reply stopped early keeps them.
        stream = _Stream(json_reply="grammar" in body or "response_format" in body)
        started = time.perf_counter()
        try:
            server.handle_chat_completions({**body, "stream": True, "timings_per_token": True},
                                           stream.take)
        except (RuntimeError, ValueError) as error:
            raise ModelError(str(error), kind="permanent", field=self.name) from error
        if stream.error is not None:
            raise self._failed(stream.error)
        duration_ms = (time.perf_counter() - started) * 1000
        return stream.reply(model=self.name, duration_ms=duration_ms)

    def _failed(self, error: Any) -> ModelError:
        return ModelError("the embedded model failed", kind="permanent", field=self.name,
                          value=error)


class _Stream:
    """A streamed chat completion, gathered chunk by chunk: `take` (the server's callback) says
    stop once the reply runs away or the server reports an error."""

    def __init__(self, json_reply: bool) -> None:
        self.text = StreamedText(json_reply)
        self.timings: dict[str, Any] = {}
        self.error: Any = None

    def take(self, chunk: Any) -> bool:
        if not isinstance(chunk, dict) or "error" in chunk:
            self.error = chunk.get("error") if isinstance(chunk, dict) else chunk
            return True
        self.timings = chunk.get("timings") or self.timings
        pieces = [(c.get("delta") or {}).get("content") or "" for c in chunk.get("choices") or []]
        return self.text.add("".join(pieces))

    def reply(self, *, model: str, duration_ms: float) -> ModelReply:
        content, runaway = self.text.kept()
        timings = self.timings
        return ModelReply(
            content=content,
            tokens_in=int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0)),
            tokens_out=int(timings.get("predicted_n", 0)),
            duration_ms=duration_ms, model=model,
            timings=llama_timings({"timings": timings}) if timings else None,
            runaway=runaway)


def _llguidance(schema: dict[str, Any]) -> str:
    """The llguidance grammar of a JSON schema (llama.cpp's `%llguidance` form)."""
    return _native().json_schema_to_grammar(schema)


class _OnSlot(ModelClient):
    """One conversation's view of an EmbeddedModel: from its first call it holds a slot of the
    server (SlotBook), given back when the conversation's client is dropped."""

    _keys = itertools.count()  # not id(): a dropped conversation's id can be reused

    def __init__(self, model: EmbeddedModel) -> None:
        self.model = model
        self.key = next(self._keys)
        self.name = model.name
        self.constrains_by_default = model.constrains_by_default
        self._slot: int | None = None
        self._asked = False

    def held(self, book: SlotBook, messages: list[Message]) -> int | None:
        if not self._asked:  # decided once: a conversation moved mid-way loses its cache
            self._asked = True
            prefix = hashlib.sha256(messages[0].content.encode()).hexdigest() if messages else ""
            self._slot = book.take(prefix)
            if self._slot is not None:
                weakref.finalize(self, book.give_back, self._slot, prefix)
        return self._slot

    @text_boundary
    def respond(self, request: ModelRequest) -> ModelReply:
        return self.model.chat_on(self, request)
