"""Object-like macros with constant values, expanded as the preprocessor would.

Hand-written kernels size their tiles and blocks with macros: `#define TILE 32`, `#define NB
(4 * 32)`, then `__shared__ float s[TILE][TILE + 1]`, `__launch_bounds__(NB)`, `s[(t + NB - 1) %
NB]`.  The parser reads the code as written (a dumped kernel is usually preprocessed already; a
hand-written one is not), so without this every such name was "a local with no value" and the
block size the 128-thread default.  Each `#define NAME value` whose value is an integer constant
expression (of numbers and earlier such macros) is substituted for `NAME` in every kernel, its
attributes included, before the model is built.  Function-like macros, macros whose value is not
a constant (`#define IDX(i) ...`, `#define T float`) and names a kernel redeclares are left alone;
`#undef` ends a macro.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from ..cuda import ast as A
from .evaluate import evaluate

_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(?!\()\s+(.+?)\s*$", re.S)
_UNDEF = re.compile(r"#\s*undef\s+([A-Za-z_]\w*)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_WORD = re.compile(r"[A-Za-z_]\w*")
_SUFFIX = re.compile(r"(?<=\d)[uUlL]+\b")


def constants_of(unit: A.TranslationUnit) -> dict[str, int]:
    """The object-like macros of a file whose values are integer constants, by name."""
    found: dict[str, int] = {}
    for directive in unit.directives:
        undef = _UNDEF.match(directive.text)
        if undef:
            found.pop(undef.group(1), None)
            continue
        define = _DEFINE.match(directive.text.replace("\\\n", " "))
        if define is None:
            continue
        name, text = define.groups()
        value = _constant(_COMMENT.sub(" ", text), found)
        if value is None:
            found.pop(name, None)
        else:
            found[name] = value
    return found


def _constant(text: str, known: Mapping[str, int]) -> int | None:
    """The value of a macro body made of numbers, operators and known constants, or None."""
    words = set(_WORD.findall(_SUFFIX.sub("", text)))
    if any(w not in known for w in words):
        return None
    body = _WORD.sub(lambda m: str(known[m.group()]), _SUFFIX.sub("", text))
    from ..cuda import CudaSyntaxError, parse

    try:
        parsed = parse(f"int __pipelint_macro = ({body});")
    except CudaSyntaxError:
        return None
    decl = next((n for n in parsed.unit.items if isinstance(n, A.Declaration)), None)
    if decl is None or decl.declarators[0].init is None:
        return None
    value = evaluate(decl.declarators[0].init, {})
    return value if isinstance(value, int) else None


def expand_constants(func: A.FunctionDef, constants: Mapping[str, int]) -> A.FunctionDef:
    """`func` (its attributes and body) with each use of a constant macro replaced by its value
    (the same object where it uses none).  A name the kernel declares itself is not a macro use."""
    if not constants or func.body is None:
        return func
    declared = {p.name for p in func.params if p.name}
    declared |= {d.name for n in func.body.walk() if isinstance(n, A.Declaration) for d in n.declarators}
    active = {name: value for name, value in constants.items() if name not in declared}
    if not active:
        return func

    def value(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Name) and not node.scope and not node.template_args and node.ident in active:
            return A.Number(str(active[node.ident]), node.span)
        return None

    found = A.transform(func, value)
    assert isinstance(found, A.FunctionDef)
    return found
