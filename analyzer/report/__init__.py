"""Reporters: pure functions from a `Report` to text."""
from __future__ import annotations

from collections.abc import Callable

from ..findings import Report

Reporter = Callable[..., str]


def get_reporter(name: str, host: object = None) -> Reporter:
    """The renderer of an output format: the plugin host's registry (built-in and plugin
    formats), or the built-ins when no host is at hand."""
    formats = getattr(host, "formats", None)
    if not formats:
        from .builtin import pipelint_output_formats

        formats = pipelint_output_formats()
    try:
        return formats[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (known: {', '.join(sorted(formats))})") from None


__all__ = ["Report", "get_reporter"]
