"""The server's analysis cache: a Python buffer's FileAnalysis, stored beside its lowering.

A cached lowering still had to be checked (the lowered CUDA of every variant parsed, modelled
and checked: 0.2 s on a quiet machine, 2 s at a load of 8, in a child process that must be
forked first).  An unchanged buffer now reads its analysis back instead: the entry is keyed by
the lowering's key, the buffer's whole text (comments count here: `# pipelint: ignore`),
the configuration file's path and bytes, pipelint's and the plugins' code (`cache.code_stamp`)
and the budgets.  Entries are JSON (never pickle: a cache folder is not trusted code), written
and read through `cachedir` (no link followed), in the `lsp/<40 hex>.json` format the lowering
entries use, and decoded field by field against the dataclasses' own annotations: anything
that does not fit exactly is a miss (and is overwritten).  Results that hit a budget, or name
a generated CUDA file that no longer exists, are not served.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import os
import sys
import types
import typing
from pathlib import Path
from typing import Any

FORMAT = "pipelint-lsp-analysis-1"
NOT_STORED = {"analysis-limit", "analysis-timeout"}


class _Bad(Exception):
    pass


def encode(value: Any) -> Any:
    """A dataclass tree as JSON values (tuples as lists, enums by value)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _Bad("a dict key that is not a string")
        return {k: encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise _Bad(f"cannot store a {type(value).__name__}")


def decode(kind: Any, value: Any) -> Any:
    """`value` as an instance of the annotation `kind`, or _Bad: generic annotations by their
    origin (`_GENERIC`), enums and dataclasses by their class, scalars exactly (`_SCALARS`)."""
    if kind is Any:
        raise _Bad("untyped")
    generic = _GENERIC.get(typing.get_origin(kind))
    if generic is not None:
        return generic(kind, typing.get_args(kind), value)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _enum(kind, value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind, value)
    scalar = _SCALARS.get(kind)
    if scalar is None:
        raise _Bad(f"cannot read a {kind}")
    accepts, why = scalar
    if not accepts(value):
        raise _Bad(why)
    return float(value) if kind is float else value


def _union(kind: Any, args: tuple, value: Any) -> Any:
    """The first option of `X | Y | None` that `value` decodes as."""
    for option in args:
        if option is type(None):
            if value is None:
                return None
            continue
        try:
            return decode(option, value)
        except _Bad:
            continue
    raise _Bad(f"{value!r} is none of {kind}")


def _list(kind: Any, args: tuple, value: Any) -> list:
    if type(value) is not list:
        raise _Bad("not a list")
    return [decode(args[0], v) for v in value]


def _tuple(kind: Any, args: tuple, value: Any) -> tuple:
    """`tuple[X, ...]` of any length, or `tuple[X, Y]` of exactly that length (JSON: a list)."""
    if type(value) is not list:
        raise _Bad("not a list")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(decode(args[0], v) for v in value)
    if len(args) != len(value):
        raise _Bad("a tuple of another length")
    return tuple(decode(a, v) for a, v in zip(args, value))


def _dict(kind: Any, args: tuple, value: Any) -> dict:
    if type(value) is not dict:
        raise _Bad("not a dict")
    return {decode(args[0], k): decode(args[1], v) for k, v in value.items()}


_GENERIC = {typing.Union: _union, types.UnionType: _union, list: _list, tuple: _tuple, dict: _dict}


def _enum(kind: type[enum.Enum], value: Any) -> enum.Enum:
    try:
        return kind(value)
    except ValueError:
        raise _Bad("not a member") from None


def _dataclass(kind: type, value: Any) -> Any:
    """A dataclass from an object with exactly its fields, each decoded by its annotation."""
    if type(value) is not dict:
        raise _Bad("not an object")
    hints = typing.get_type_hints(kind, vars(sys.modules[kind.__module__]))
    fields = {f.name for f in dataclasses.fields(kind)}
    if set(value) != fields:
        raise _Bad(f"{kind.__name__}: other fields")
    return kind(**{name: decode(hints[name], value[name]) for name in fields})


def _finite(value: Any) -> bool:
    return type(value) in (int, float) and value == value and value not in (float("inf"), float("-inf"))


# Scalars are taken only as exactly their JSON type (a bool is no int here); floats finite.
_SCALARS: dict[Any, tuple[Any, str]] = {
    bool: (lambda v: type(v) is bool, "not a bool"),
    int: (lambda v: type(v) is int, "not an int"),
    float: (_finite, "not a finite number"),
    str: (lambda v: type(v) is str, "not a string"),
}


def key(lowering_key: str, text: str, config: Any, host: Any, budgets: Any, dump: Path) -> str:
    """Everything besides the lowered CUDA that decides a buffer's analysis."""
    import importlib

    from .. import __version__
    from ..cache import code_stamp

    config_path = getattr(config, "path", None)
    config_bytes = b""
    if config_path:
        try:
            with open(config_path, "rb") as fh:
                config_bytes = fh.read(1 << 20)
        except OSError:
            config_bytes = b"?"
    modules = [sys.modules[__package__.rsplit(".", 1)[0] if __package__ else "pipelint"],
               importlib.import_module("pipelint.grammars"), *host.pm.get_plugins()]
    text_digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    raw = json.dumps([FORMAT, __version__, lowering_key, text_digest, str(config_path),
                      hashlib.sha256(config_bytes).hexdigest(), code_stamp(modules),
                      sorted(host.rules), repr(budgets), str(dump)])
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


def load(folder: Path, entry_key: str) -> Any:
    """The FileAnalysis stored under `entry_key`, or None."""
    from .. import cachedir
    from .analysis import FileAnalysis

    where = cachedir.prepared(folder, 1, create=False)
    data = None if where is None else cachedir.read_file(where / f"{entry_key}.json")
    if data is None:
        return None
    try:
        entry = json.loads(data)
        if type(entry) is not dict or entry.get("format") != FORMAT or set(entry) != {"format", "analysis"}:
            return None
        analysis = decode(FileAnalysis, entry["analysis"])
    except (_Bad, ValueError, TypeError, RecursionError):
        return None
    for d in analysis.diagnostics:
        for r in d.related:
            if os.path.isabs(r.path) and r.path.endswith(".cu") and not os.path.isfile(r.path):
                return None         # the generated CUDA it names is gone: analyse again (it is rewritten)
    return analysis


def store(folder: Path, entry_key: str, analysis: Any) -> bool:
    from .. import cachedir

    if any(d.rule in NOT_STORED for d in analysis.diagnostics):
        return False
    try:
        data = json.dumps({"format": FORMAT, "analysis": encode(analysis)}).encode()
    except (_Bad, ValueError, TypeError):
        return False
    where = cachedir.prepared(folder, 1)
    return where is not None and cachedir.write_file(where, f"{entry_key}.json", data)
