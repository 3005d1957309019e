"""pipelint: a static analyzer for the software pipelines in TileLang's CUDA.

The plugin API lives here: decorate hook implementations with `hookimpl`,
declare `Rule`s and return `Finding`s at a `Severity`; a rule with the code that reports it is
one `KernelCheck` (or `VariantCheck`) returned from `pipelint_checks`.  See docs/plugins.md.
"""
# First, before any other import: nothing may come from the folder pipelint is run in (_safepath.py).
from ._safepath import drop_unsafe_path as _drop_unsafe_path

_drop_unsafe_path()

import pluggy  # noqa: E402 - after the path is made safe

from .findings import Finding, Location, Rule, Severity  # noqa: E402

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("pipelint")

__all__ = ["__version__", "hookimpl", "Finding", "KernelCheck", "Location", "Rule", "Severity", "VariantCheck"]


def __getattr__(name: str) -> object:
    """`KernelCheck` and `VariantCheck` (`pipelint.checks`), imported when first named."""
    if name in ("KernelCheck", "VariantCheck"):
        from . import checks

        return getattr(checks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
