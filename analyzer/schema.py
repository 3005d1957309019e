"""The JSON Schema of `[tool.pipelint]` (`config.schema.json`, shipped in the package and
published in the repository for editors: Even Better TOML / taplo, VS Code) and validation
of a configuration table against it.

The schema is the one description of the configuration's shape: `load_config` validates
with it before reading a single value.  With `jsonschema` installed (the `test` extra has
it) it does the validating; the core install stays at four light dependencies, so without
it a small interpreter of the keywords this schema uses (type, enum, properties,
additionalProperties, items, $ref, minimum, exclusiveMinimum, maximum, minLength, pattern)
does the same.  Either way the first problem becomes one message naming the key.

Every number has a maximum as well as a minimum (issue 38): `time-budget = 1e308` used to
reach `setitimer` and end the run with an OverflowError.  The command-line flags of the same
settings take their range from here too (`setting_range`, read by `commands.flags.flag_type`), so
both give a usage error (exit 2).
"""
from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).with_name("config.schema.json")

Problem = tuple[tuple[str | int, ...], str, Any, Any]     # (path, keyword, keyword's value, instance)

_WORDS = {"boolean": "true or false", "integer": "an integer", "number": "a number", "string": "a string",
          "array": "a list", "object": "a table"}


@functools.lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


def problems(table: dict[str, Any]) -> list[Problem]:
    """Every way `table` breaks the schema, most relevant first."""
    try:
        import jsonschema
    except ImportError:
        return list(_check(table, schema(), ()))
    errors = list(jsonschema.Draft202012Validator(schema()).iter_errors(table))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        errors = [best, *(e for e in errors if e is not best)]
    return [(tuple(e.absolute_path), str(e.validator), e.validator_value, e.instance) for e in errors]


def message(problem: Problem) -> str:
    """`key: expected ..., got ...` for a person."""
    path, keyword, expected, got = problem
    where = ".".join(str(p) for p in path)
    if keyword == "additionalProperties" and isinstance(got, dict):
        return _unknown_keys(path, got, where)
    describe = _EXPECTED.get(keyword)
    text = describe(expected) if describe else f"{keyword} {expected}"
    return f"{where}: expected {text}, got {got!r}"


def _unknown_keys(path: tuple[str | int, ...], got: dict[str, Any], where: str) -> str:
    """An unknown key is named with the closest known one: a misspelt setting is the usual cause."""
    from .options import did_you_mean

    props = _at(path).get("properties", {})
    unknown = sorted(k for k in got if k not in props)
    hint = did_you_mean(unknown[0], props) if unknown and props else ""
    return f"unknown key(s) {', '.join(unknown)}{hint}" + (f" in {where}" if where else "")


def _expected_type(expected: Any) -> str:
    kinds = expected if isinstance(expected, list) else [expected]
    return " or ".join(_WORDS.get(str(k), str(k)) for k in kinds)


def _expected_enum(expected: Any) -> str:
    # Lower-cased and deduplicated: the schema lists `"error"` and `"ERROR"` alike, a person needs one.
    return "one of " + ", ".join(json.dumps(v) for v in dict.fromkeys(str(x).lower() for x in expected))


# What a keyword's value asks for, in words: one entry per keyword config.schema.json uses, so
# a keyword added to the schema without words here still gets `keyword value`.
_EXPECTED: dict[str, Callable[[Any], str]] = {
    "type": _expected_type,
    "enum": _expected_enum,
    "minimum": lambda expected: f"a number >= {expected}",
    "exclusiveMinimum": lambda expected: f"a number > {expected}",
    "maximum": lambda expected: f"a number <= {expected}",
    "minLength": lambda expected: "a non-empty string",
    "pattern": lambda expected: "OLD=NEW" if "=" in str(expected) else f"text matching {expected}",
}


def setting_range(key: str) -> tuple[float, bool, float]:
    """(lowest, whether the lowest itself is excluded, highest) of the numeric setting `key`
    (`lower.timeout` for a nested one), as the schema says."""
    node = _at(tuple(key.split(".")))
    if "exclusiveMinimum" in node:
        return float(node["exclusiveMinimum"]), True, float(node["maximum"])
    return float(node["minimum"]), False, float(node["maximum"])


def _at(path: tuple[str | int, ...]) -> dict[str, Any]:
    """The schema of the value at `path` (for an unknown key's suggestions)."""
    node = schema()
    for step in path:
        node = _resolve(node)
        node = node.get("properties", {}).get(step) or node.get("additionalProperties") or {}
    return _resolve(node) if isinstance(node, dict) else {}


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    target: Any = schema()
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def _is(value: Any, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "array": list, "object": dict}[kind])


def _check(value: Any, node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Problem]:
    """The keywords config.schema.json uses, as JSON Schema defines them."""
    node = _resolve(node)
    kinds = node.get("type")
    if kinds is not None and not any(_is(value, k) for k in (kinds if isinstance(kinds, list) else [kinds])):
        yield path, "type", kinds, value
        return
    if "enum" in node and value not in node["enum"]:
        yield path, "enum", node["enum"], value
    if _is(value, "number"):
        yield from _check_number(value, node, path)
    if isinstance(value, str):
        yield from _check_string(value, node, path)
    if isinstance(value, list) and "items" in node:
        for i, item in enumerate(value):
            yield from _check(item, node["items"], (*path, i))
    if isinstance(value, dict):
        yield from _check_table(value, node, path)


# A bound's keyword and when a value breaks it, in the order the problems are reported.
_BOUNDS: tuple[tuple[str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", operator.lt),
    ("exclusiveMinimum", operator.le),
    ("maximum", operator.gt),
)


def _check_number(value: float, node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Problem]:
    """minimum, exclusiveMinimum and maximum: every number setting has a range (issue 38)."""
    for keyword, breaks in _BOUNDS:
        if keyword in node and breaks(value, node[keyword]):
            yield path, keyword, node[keyword], value


def _check_string(value: str, node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Problem]:
    """minLength and pattern."""
    if len(value) < node.get("minLength", 0):
        yield path, "minLength", node["minLength"], value
    if "pattern" in node and not re.search(node["pattern"], value):
        yield path, "pattern", node["pattern"], value


def _check_table(value: dict[str, Any], node: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Problem]:
    """properties and additionalProperties: the unknown keys first, then each value in turn."""
    props = node.get("properties", {})
    extra = node.get("additionalProperties", True)
    if extra is False and set(value) - set(props):
        yield path, "additionalProperties", False, value
    for key, item in value.items():
        if key in props:
            yield from _check(item, props[key], (*path, key))
        elif isinstance(extra, dict):
            yield from _check(item, extra, (*path, key))
