"""Harness-authored JSON schemas (a tool's `parameters`): refused at load when they reach outside
themselves, use a regex RE2 cannot run or are too large; and a bounded validator for the arguments a
model sends. Dispatching tool calls is agent/tools.py's; loading tool files is validate.py's.

Validation runs in-process: RE2 matches in linear time, a step budget bounds the keyword
evaluations of one call (recursive references, nested combinators), and the reference registry
refuses every retrieval, so nothing outside the schema is ever fetched or read."""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextvars import ContextVar
from functools import lru_cache
from itertools import islice
from typing import Any

import re2
import referencing
import referencing.exceptions
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import SchemaError

from evoharness.text import scrub

MAX_SCHEMA_NODES = 2_000  # schema objects in one tool's parameters
MAX_PATTERN_CHARS = 1_000
MAX_ARGUMENT_BYTES = 256 * 1024  # the arguments of one call, as JSON
MAX_ARGUMENT_DEPTH = 32
VALIDATION_STEPS = 20_000  # keyword evaluations for one call; an ordinary call needs tens
MAX_REPORTED = 5  # argument errors shown to the model
MESSAGE_CHARS = 300  # of each
DIALECTS = ("https://json-schema.org/draft/2020-12/schema",
            "https://json-schema.org/draft/2020-12/schema#")
REFUSED = {
    # jsonschema evaluates it with Python's backtracking `re` over patternProperties, outside the
    # keywords this module replaces, and re-validates every subschema for every property.
    "unevaluatedProperties": "use additionalProperties instead",
}

# Which keywords hold subschemas (JSON Schema 2020-12); the rest hold data or annotations, which a
# validator never follows, so a "$ref" inside `enum` or `default` is plain data.
_ONE = ("additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # an invalid pattern is reported to the agent, not to stderr
_RE2_OPTIONS.max_mem = 8 << 20  # RE2 refuses patterns whose automaton would need more

Problem = tuple[str, str, Any]  # (field, message, value)


class SchemaTooCostly(Exception):
    """Internal: one call's validation used up its step budget."""


class BrokenSchema(Exception):
    """The schema itself failed while checking arguments (not the arguments): the message says
    how, for the model and for the load-time dry run."""


def _refuse_retrieval(uri: str) -> referencing.Resource:
    raise referencing.exceptions.NoSuchResource(ref=uri)


# The draft's own meta-schemas stay resolvable (jsonschema adds them); nothing else is retrieved.
_NO_RETRIEVAL = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def schema_problems(schema: Any) -> list[Problem]:
    """Why a tool's parameter schema cannot be used, as (field under `parameters`, message,
    value); empty when it can. Structure first, so the meta-schema check never sees a huge or
    remote schema, then the meta-schema, then a dry run."""
    if not isinstance(schema, dict):
        return [("", "must be a JSON schema object", schema)]
    if not _plain_json(schema):  # YAML also has dates, sets, binary, non-string keys and .inf
        return [("", "must be plain JSON (strings as keys; no dates, binary, sets or .inf)", None)]
    problems = _structure_problems(schema)
    if problems:
        return problems
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return [(_dotted(error.path), f"not a valid JSON schema: {error.message}", None)]
    if schema.get("type") != "object":
        return [("type", "tool arguments must be a JSON object schema", schema.get("type"))]
    try:
        ToolSchema(schema).check({})
    except BrokenSchema as error:
        return [("", str(error), None)]
    return []


def _plain_json(schema: dict[str, Any]) -> bool:
    """Whether the schema survives JSON unchanged: it is sent to model servers as JSON."""
    try:
        return json.loads(json.dumps(schema, allow_nan=False)) == schema
    except (TypeError, ValueError, RecursionError):
        return False


def _structure_problems(schema: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    for count, (path, node) in enumerate(_schema_nodes(schema), start=1):
        if count > MAX_SCHEMA_NODES:
            return [("", f"the schema has more than {MAX_SCHEMA_NODES} subschemas", None)]
        problems += _node_problems(path, node)
    return problems


def _schema_nodes(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object with its dotted path, without recursion (depth comes from the agent)."""
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue  # `true`/`false` schemas, or a type error the meta-schema check reports
        yield path, node
        children = [(f"{path}.{key}", node.get(key)) for key in _ONE]
        children += [(f"{path}.{key}.{i}", item) for key in _LIST
                     if isinstance(node.get(key), list) for i, item in enumerate(node[key])]
        children += [(f"{path}.{key}.{name}", item) for key in _MAP
                     if isinstance(node.get(key), dict) for name, item in node[key].items()]
        stack += reversed([(p.lstrip("."), child) for p, child in children if child is not None])


def _node_problems(path: str, node: dict[str, Any]) -> list[Problem]:
    at = f"{path}." if path else ""
    problems: list[Problem] = []
    for key in ("$ref", "$dynamicRef"):
        ref = node.get(key)
        if isinstance(ref, str) and not ref.startswith("#"):
            problems.append((at + key, "may only point inside this schema (start with '#'); "
                             "nothing outside the schema is fetched or read", ref))
    dialect = node.get("$schema")
    if dialect is not None and dialect not in DIALECTS:
        problems.append((at + "$schema", f"tool schemas are JSON Schema 2020-12 ({DIALECTS[0]})",
                         dialect))
    for key, hint in REFUSED.items():
        if key in node:
            problems.append((at + key, f"not supported in tool schemas; {hint}", None))
    if isinstance(node.get("pattern"), str):
        problems += _pattern_problems(at + "pattern", node["pattern"])
    if isinstance(node.get("patternProperties"), dict):
        for pattern in node["patternProperties"]:
            problems += _pattern_problems(f"{at}patternProperties", pattern)
    return problems


def _pattern_problems(field: str, pattern: str) -> list[Problem]:
    if len(pattern) > MAX_PATTERN_CHARS:
        return [(field, f"pattern is longer than {MAX_PATTERN_CHARS} characters", pattern)]
    try:
        _regex(pattern)
    except re2.error as error:
        reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) \
            else str(error)
        return [(field, f"pattern cannot run in linear time (RE2: {reason})", pattern)]
    return []


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    return re2.compile(pattern, _RE2_OPTIONS)


def _search(pattern: str, text: str) -> bool:
    try:
        return _regex(pattern).search(text) is not None
    except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8
        return _regex(pattern).search(scrub(text)) is not None


# --- the bounded validator --------------------------------------------------------------------

_STEPS: ContextVar[list[int]] = ContextVar("schema_steps")


def _spend() -> None:
    left = _STEPS.get(None)
    if left is None:
        return  # validation outside ToolSchema.problems (e.g. jsonschema's own tests of a class)
    left[0] -= 1
    if left[0] < 0:
        raise SchemaTooCostly


def _counted(keyword: Any) -> Any:
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _spend()
        return keyword(validator, value, instance, schema)
    return counted


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r:.100} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any,
                        schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any,
                           schema: Any) -> Iterator[ValidationError]:
    # jsonschema's own version matches patternProperties with Python's backtracking `re`.
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [name for name in instance if name not in known
              and not any(_search(pattern, name) for pattern in patterns)]
    if validator.is_type(additional, "object"):
        for name in extras:
            yield from validator.descend(instance[name], additional, path=name)
    elif not additional and extras:
        names = ", ".join(repr(name) for name in extras[:10])
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")


def _unique_items(validator: Any, unique: bool, instance: Any,
                  schema: Any) -> Iterator[ValidationError]:
    # jsonschema compares unhashable items pairwise (quadratic); canonical JSON makes it linear.
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = json.dumps(_canonical(item), sort_keys=True)
        if key in seen:
            yield ValidationError(f"{instance!r:.100} has non-unique elements")
            return
        seen.add(key)


def _canonical(value: Any) -> Any:
    """JSON Schema equality as JSON text: 1 == 1.0, but true != 1."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    return value


_REPLACED = {"pattern": _pattern, "patternProperties": _pattern_properties,
             "additionalProperties": _additional_properties, "uniqueItems": _unique_items}
_BoundedValidator = validators.extend(Draft202012Validator, {
    keyword: _counted(_REPLACED.get(keyword, function))
    for keyword, function in Draft202012Validator.VALIDATORS.items()
})


class ToolSchema:
    """A tool's parameter schema, ready to check the arguments of many calls."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator = _BoundedValidator(schema, registry=_NO_RETRIEVAL)

    def problems(self, arguments: Any) -> list[str]:
        """What is wrong with `arguments` (at most MAX_REPORTED messages); empty when valid."""
        try:
            return self.check(arguments)
        except BrokenSchema as error:
            return [str(error)]

    def check(self, arguments: Any) -> list[str]:
        """Like problems(), but raises BrokenSchema when the schema itself fails."""
        too_big = _size_problem(arguments)
        if too_big:
            return [too_big]
        token = _STEPS.set([VALIDATION_STEPS])
        try:
            errors = list(islice(self._validator.iter_errors(arguments), MAX_REPORTED))
        except SchemaTooCostly:
            raise BrokenSchema(f"the tool's schema needs more than {VALIDATION_STEPS} steps to "
                               "check these arguments; send simpler arguments") from None
        except RecursionError:
            raise BrokenSchema("the tool's schema refers to itself without end") from None
        except referencing.exceptions.Unresolvable as error:
            ref = getattr(error, "ref", "?")
            raise BrokenSchema(f"the tool's schema refers to {ref!r}, which is not in it") from None
        finally:
            _STEPS.reset(token)
        return [_describe(error) for error in errors]


def _size_problem(arguments: Any) -> str | None:
    depth = _depth(arguments)
    if depth > MAX_ARGUMENT_DEPTH:
        return f"the arguments are nested {depth} levels deep; at most {MAX_ARGUMENT_DEPTH}"
    size = len(json.dumps(arguments))
    if size > MAX_ARGUMENT_BYTES:
        return f"the arguments are {size} bytes of JSON; at most {MAX_ARGUMENT_BYTES}"
    return None


def _depth(value: Any) -> int:
    """Nesting depth of lists and dicts, without recursion; stops counting past the limit."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        deepest = max(deepest, level)
        if deepest > MAX_ARGUMENT_DEPTH:
            return deepest
        stack += [(child, level + 1) for child in (node.values() if isinstance(node, dict) else node)]
    return deepest


def _describe(error: ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    text = f"{where}: {error.message}" if where else error.message
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"


def _dotted(path: Any) -> str:
    return ".".join(str(part) for part in path)
