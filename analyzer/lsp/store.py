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
    """`value` as an instance of the annotation `kind`, or _Bad."""
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if kind is Any:
        raise _Bad("untyped")
    if origin in (typing.Union, types.UnionType):
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
    if origin is list:
        if type(value) is not list:
            raise _Bad("not a list")
        return [decode(args[0], v) for v in value]
    if origin is tuple:
        if type(value) is not list:
            raise _Bad("not a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in value)
        if len(args) != len(value):
            raise _Bad("a tuple of another length")
        return tuple(decode(a, v) for a, v in zip(args, value))
    if origin is dict:
        if type(value) is not dict:
            raise _Bad("not a dict")
        return {decode(args[0], k): decode(args[1], v) for k, v in value.items()}
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(value)
        except ValueError:
            raise _Bad("not a member") from None
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if type(value) is not dict:
            raise _Bad("not an object")
        hints = typing.get_type_hints(kind, vars(sys.modules[kind.__module__]))
        fields = {f.name for f in dataclasses.fields(kind)}
        if set(value) != fields:
            raise _Bad(f"{kind.__name__}: other fields")
        return kind(**{name: decode(hints[name], value[name]) for name in fields})
    if kind is bool:
        if type(value) is not bool:
            raise _Bad("not a bool")
        return value
    if kind is int:
        if type(value) is not int:
            raise _Bad("not an int")
        return value
    if kind is float:
        if type(value) not in (int, float) or value != value or value in (float("inf"), float("-inf")):
            raise _Bad("not a finite number")
        return float(value)
    if kind is str:
        if type(value) is not str:
            raise _Bad("not a string")
        return value
    raise _Bad(f"cannot read a {kind}")


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
