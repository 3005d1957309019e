"""Settles `T * x` vs `a * b` in the lexer, before the LALR parser.

C++ cannot be parsed context-free: whether `half_t* p` declares a pointer
depends on `half_t` being a type.  Like every C front end we feed that fact
back to the parser, but from the text instead of a symbol table: a name is a
TYPE when it is a known CUDA/TileLang type, a name the file declares as a
type (struct, class, typedef, using, template parameter), or when the text
after it can only continue a declaration (`X y`, `X* y =`, `(X*)`,
`X* __restrict__`) and the text before it is not an operator.  Generated
code never writes expression statements like `a * b;`, so the guesses are
safe where they matter.
"""
from __future__ import annotations

import re

BUILTIN_TYPES = frozenset(
    """
    half_t bfloat16_t half half2 __half __half2 nv_bfloat16 nv_bfloat162 __nv_bfloat16
    __nv_bfloat162 bfloat162 fp8_e4_t fp8_e5_t fp8_e8_t fp8_e4_2_t fp8_e4_4_t fp8_e5_2_t
    fp8_e5_4_t fp8_e4_8_t fp8_e4_16_t fp8_e5_8_t fp8_e5_16_t __nv_fp8_e4m3 __nv_fp8_e5m2
    uchar ushort uint ulong int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    size_t ptrdiff_t intptr_t uintptr_t dim3 CUtensorMap Barrier cudaStream_t
    char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4
    ushort1 ushort2 ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint3 uint4
    long1 long2 long3 long4 ulong1 ulong2 ulong3 ulong4 longlong1 longlong2 longlong4
    ulonglong1 ulonglong2 ulonglong4 float1 float2 float3 float4 double1 double2 double3
    double4 GmmaDescriptor Tcgen05SMemDescriptor Tcgen05InstrDescriptor tfloat32_t
    float_e4m3_t float_e5m2_t __nv_fp8_e8m0 fp4_e2_t fp4_e2_2_t fp4_e2_4_t fp4_e2_8_t fp4_e2_16_t
    fp4_e2_32_t fp4_e2_64_t fp8_e4_32_t fp8_e5_32_t fp8_e8_2_t fp8_e8_4_t fp8_e8_8_t fp8_e8_16_t
    fp8_e8_32_t int4_t
    """.split()
)
CAST_KEYWORDS = frozenset({"reinterpret_cast", "static_cast", "const_cast", "dynamic_cast"})
_DECLARED_TYPE = re.compile(
    r"\b(?:struct|class|union|typename|enum)\s+([A-Za-z_]\w*)"
    r"|\btypedef\b[^;{]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*;"
    r"|\busing\s+([A-Za-z_]\w*)\s*="
)
# After a type comes a declarator: a name (not `::` or a call), or pointers
# followed by a qualifier, `)` (a cast) or a name and then `=`, `;` or `[`.
_AFTER_TYPE = re.compile(
    r"[ \t]*(?:[A-Za-z_]\w*\b(?![ \t]*(?:::|\())"
    r"|(?:[*&][ \t]*)+(?:(?:const|volatile|__restrict__|__restrict)\b|\)"
    r"|[A-Za-z_]\w*[ \t]*(?:=(?!=)|;|\[)))"
)
# ... unless an operator or `return` precedes it: then `a * b` is arithmetic.
# A scope (`tl::X y`) is not an operator: only a lone `:` (a ternary) is.
_BEFORE_EXPR = re.compile(r"(?:[-=+*/%&|^!~?\[<>]|(?<!:):|\breturn)[ \t]*\Z")


def declared_types(source: str) -> frozenset[str]:
    """Names the source declares as types, found before parsing."""
    found: set[str] = set()
    for match in _DECLARED_TYPE.finditer(source):
        found.update(g for g in match.groups() if g)
    return frozenset(found)


# A type name used as a variable: declared right after a type (`int half = ...`), or followed by
# what only follows a value (`half = `, `A[half]`, `half + 1`, `half;`).
_VALUE_FOLLOWS = re.compile(r"[ \t]*(?:=(?!=)|[-+*/%&|^]=|\]|;|\.(?!\.)|->|\+(?!\+)|%|/(?![/*])"
                            r"|==|!=|>>|<<|\?|&&|\|\|)")
_AFTER_A_TYPE = re.compile(r"\b([A-Za-z_]\w*)[ \t]*\Z")
_C_TYPES = frozenset("int float double char short long bool unsigned signed auto void".split())
_QUALIFIERS = frozenset("const volatile static extern register inline __shared__ __restrict__ return "
                        "typedef struct class union enum typename sizeof new delete case goto".split())


def variable_declarations(source: str, types: frozenset[str]) -> dict[str, list[int]]:
    """Where each name is declared as a *variable* (the offset just after the name).

    A C++ front end decides `(half * x)` from the declarations in scope, and so does this: a
    local or parameter called `half` or `a` is a value within its block, not a type.  A
    declaration is a type word (a C type, a CUDA/TileLang type or one the file declares), its
    template arguments, pointers and qualifiers, then the name and what ends a declarator
    (`=`, `;`, `,`, `[`, `)`); `typedef`/`using` statements declare types instead."""
    words = _C_TYPES | types
    found: dict[str, list[int]] = {}
    for m in _DECLARATION.finditer(source):
        name = m.group(2)
        if m.group(1) not in words or name in _QUALIFIERS or name in _C_TYPES:
            continue
        statement = source[max(source.rfind(";", 0, m.start()), source.rfind("{", 0, m.start()),
                                source.rfind("}", 0, m.start())) + 1:m.start()]
        if "typedef" in statement or "using" in statement:
            continue
        found.setdefault(name, []).append(m.end(2))
    return found


def _block_end(source: str, pos: int) -> int:
    """The end of the innermost `{ ... }` block holding `pos` (the end of the text at top level)."""
    depth = 0
    for m in _BRACES.finditer(source, pos):
        depth += 1 if m.group() == "{" else -1
        if depth < 0:
            return m.start()
    return len(source)


_BRACES = re.compile(r"[{}]")
# a type word, its template arguments, pointers and qualifiers, a name, and what ends a declarator
_DECLARATION = re.compile(r"\b([A-Za-z_]\w*)(?:[ \t]*<[^<>;{}()]*>)?"
                          r"(?:[ \t]*(?:\*|&|\bconst\b|\b__restrict__\b|\bvolatile\b))*[ \t]+([A-Za-z_]\w*)"
                          r"[ \t]*(?=[=;,\[)])")


class TypeNames:
    """Decides, token by token, whether a NAME/TNAME is a type."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.types = BUILTIN_TYPES | declared_types(source) if source else BUILTIN_TYPES
        self._declared: dict[str, list[int]] | None = None
        self._scopes: dict[str, list[tuple[int, int]]] = {}

    def variable_here(self, name: str, start: int) -> bool:
        """Whether a variable of this name is in scope at `start`: after its declaration, before
        the end of the block holding it.  The declarations are found once per file; a name's
        blocks only when it is asked about (most type names are never declared as variables)."""
        if self._declared is None:
            self._declared = variable_declarations(self.source, self.types) if self.source else {}
        where = self._declared.get(name)
        if not where:
            return False
        scopes = self._scopes.get(name)
        if scopes is None:
            scopes = self._scopes[name] = [(pos, _block_end(self.source, pos)) for pos in where]
        return any(lo <= start < hi for lo, hi in scopes)

    def retype(self, value: str, start: int, end: int, templated: bool) -> str:
        base = value.split("<", 1)[0] if templated else value
        if base in CAST_KEYWORDS:
            return "TNAME"
        if not templated and base in self.types and self._named(start, end):
            return "NAME"
        is_type = base in self.types or (
            _AFTER_TYPE.match(self.source, end) is not None
            and _BEFORE_EXPR.search(self.source, max(0, start - 12), start) is None)
        if templated:
            return "TTYPE" if is_type else "TNAME"
        # a name that would be a type here is a value where a variable of that name is in scope
        return "TYPE" if is_type and not self.variable_here(base, start) else "NAME"

    def _named(self, start: int, end: int) -> bool:
        """Whether a known type's name is used as a variable here (a local called `half`)."""
        if _VALUE_FOLLOWS.match(self.source, end):
            return True
        before = _AFTER_A_TYPE.search(self.source, max(0, start - 40), start)
        if before is None:
            return False
        word = before.group(1)
        return word not in _QUALIFIERS and (word in _C_TYPES or word in self.types)
