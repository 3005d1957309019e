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
settings take their range from here too (`flag_type`), so both give a usage error (exit 2).
"""
from __future__ import annotations

import functools
import json
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
    from .options import did_you_mean

    path, keyword, expected, got = problem
    where = ".".join(str(p) for p in path)
    if keyword == "additionalProperties" and isinstance(got, dict):
        props = _at(path).get("properties", {})
        unknown = sorted(k for k in got if k not in props)
        hint = did_you_mean(unknown[0], props) if unknown and props else ""
        return f"unknown key(s) {', '.join(unknown)}{hint}" + (f" in {where}" if where else "")
    if keyword == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        text = " or ".join(_WORDS.get(str(k), str(k)) for k in kinds)
    elif keyword == "enum":
        text = "one of " + ", ".join(json.dumps(v) for v in dict.fromkeys(str(x).lower() for x in expected))
    elif keyword in ("minimum", "exclusiveMinimum", "maximum"):
        text = f"a number {dict(minimum='>=', exclusiveMinimum='>', maximum='<=')[keyword]} {expected}"
    elif keyword == "minLength":
        text = "a non-empty string"
    elif keyword == "pattern":
        text = "OLD=NEW" if "=" in str(expected) else f"text matching {expected}"
    else:
        text = f"{keyword} {expected}"
    return f"{where}: expected {text}, got {got!r}"


def setting_range(key: str) -> tuple[float, bool, float]:
    """(lowest, whether the lowest itself is excluded, highest) of the numeric setting `key`
    (`lower.timeout` for a nested one), as the schema says."""
    node = _at(tuple(key.split(".")))
    if "exclusiveMinimum" in node:
        return float(node["exclusiveMinimum"]), True, float(node["maximum"])
    return float(node["minimum"]), False, float(node["maximum"])


def flag_type(key: str, integer: bool = False) -> Callable[[str], float]:
    """An argparse `type` for the flag of setting `key`: a finite number in the schema's range,
    else argparse's usage error (exit 2) that says the range."""
    import argparse
    import math

    low, exclusive, high = setting_range(key)
    kind = "an integer" if integer else "a number"
    expected = f"{kind} {'>' if exclusive else '>='} {low:g} and <= {high:g}"

    def convert(text: str) -> float:
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not math.isfinite(value) or value < low or (exclusive and value == low) or value > high:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    convert.__name__ = key      # argparse names the type in some messages
    return convert


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
        if "minimum" in node and value < node["minimum"]:
            yield path, "minimum", node["minimum"], value
        if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
            yield path, "exclusiveMinimum", node["exclusiveMinimum"], value
        if "maximum" in node and value > node["maximum"]:
            yield path, "maximum", node["maximum"], value
    if isinstance(value, str):
        if len(value) < node.get("minLength", 0):
            yield path, "minLength", node["minLength"], value
        if "pattern" in node and not re.search(node["pattern"], value):
            yield path, "pattern", node["pattern"], value
    if isinstance(value, list) and "items" in node:
        for i, item in enumerate(value):
            yield from _check(item, node["items"], (*path, i))
    if isinstance(value, dict):
        props = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        if extra is False and set(value) - set(props):
            yield path, "additionalProperties", False, value
        for key, item in value.items():
            if key in props:
                yield from _check(item, props[key], (*path, key))
            elif isinstance(extra, dict):
                yield from _check(item, extra, (*path, key))
