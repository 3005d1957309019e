"""What a kernel's model needs from the rest of its file: the `__device__` helpers it may call
(`model.inline`) and the constant macros it may use (`model.macros`), found once per file."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..cuda import ast as A
from .inline import helpers_of, inline_calls
from .macros import constants_of, expand_constants


@dataclass(frozen=True)
class UnitFacts:
    helpers: Mapping[str, A.FunctionDef] = field(default_factory=dict)
    constants: Mapping[str, int] = field(default_factory=dict)

    def apply(self, func: A.FunctionDef) -> A.FunctionDef:
        """`func` as the compiler sees it: helpers inlined, then constant macros expanded (in the
        helpers' bodies too)."""
        return expand_constants(inline_calls(func, self.helpers), self.constants)


def unit_facts(unit: A.TranslationUnit) -> UnitFacts:
    return UnitFacts(helpers_of(unit), constants_of(unit))
