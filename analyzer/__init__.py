"""pipelint: a static analyzer for the software pipelines in TileLang's CUDA.

The plugin API lives here: decorate hook implementations with `hookimpl`,
declare `Rule`s and return `Finding`s at a `Severity`.  See docs/plugins.md.
"""
import pluggy

from .findings import Finding, Location, Rule, Severity

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("pipelint")

__all__ = ["__version__", "hookimpl", "Finding", "Location", "Rule", "Severity"]
