"""Control characters made visible in human-facing output: `pipelint.escape`, where the core
modules that print input (the cache's warnings, configuration errors, progress) find it too
without reaching up into the reporters."""
from __future__ import annotations

from ..escape import has_hidden, visible, visible_lines

__all__ = ["has_hidden", "visible", "visible_lines"]
