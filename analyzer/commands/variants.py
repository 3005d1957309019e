"""Lowered variants checked the same way by `lower` and `lower --configs`: the run layer's
`session.analyze_variants` (`Session.check_variants`), named here for the two command modules."""
from __future__ import annotations

from ..session import analyze_variants

__all__ = ["analyze_variants"]
