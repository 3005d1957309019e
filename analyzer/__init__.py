"""pipelint: a static analyzer for the software pipelines in TileLang's CUDA.

The plugin API lives here: decorate hook implementations with `hookimpl`,
declare `Rule`s and return `Finding`s at a `Severity`.  See docs/plugins.md.
"""
# First, before any other import: nothing may come from the folder pipelint is run in (_safepath.py).
from ._safepath import drop_unsafe_path as _drop_unsafe_path

_drop_unsafe_path()

import pluggy  # noqa: E402 - after the path is made safe

from .findings import Finding, Location, Rule, Severity  # noqa: E402

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("pipelint")

__all__ = ["__version__", "hookimpl", "Finding", "Location", "Rule", "Severity"]
