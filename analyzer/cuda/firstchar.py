"""Which characters a regular expression can start with (for the lexer's dispatch table).

Read from Python's own regex parser (`re._parser`); anything it does not
model precisely answers "any character", which only costs speed, never
correctness: the lexer then tries that terminal for every first character.
"""
from __future__ import annotations

try:  # Python 3.11+
    import re._constants as _C
    import re._parser as _parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

ANY = frozenset(map(chr, range(1, 128)))
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CATEGORY = {"CATEGORY_DIGIT": frozenset("0123456789"), "CATEGORY_WORD": _WORD,
             "CATEGORY_SPACE": frozenset(" \t\n\r\f\v")}
_REPEATS = tuple(op for op in (getattr(_C, n, None) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
                 if op is not None)


def _charset(items) -> frozenset:
    chars: set[str] = set()
    negate = False
    for op, av in items:
        if op is _C.NEGATE:
            negate = True
        elif op is _C.LITERAL:
            chars.add(chr(av))
        elif op is _C.RANGE:
            chars.update(chr(c) for c in range(av[0], min(av[1], 127) + 1))
        elif op is _C.CATEGORY and str(av) in _CATEGORY:
            chars |= _CATEGORY[str(av)]
        else:
            return ANY
    return ANY - chars if negate else frozenset(chars)


def _first(seq) -> tuple[frozenset, bool]:
    """(possible first characters, whether the sequence can match empty)."""
    out: frozenset = frozenset()
    for op, av in seq:
        if op is _C.LITERAL:
            chars, nullable = frozenset(chr(av)), False
        elif op is _C.IN:
            chars, nullable = _charset(av), False
        elif op is _C.BRANCH:
            chars, nullable = frozenset(), False
            for alt in av[1]:
                f, n = _first(alt)
                chars, nullable = chars | f, nullable or n
        elif op is _C.SUBPATTERN:
            chars, nullable = _first(av[-1])
        elif op in _REPEATS:
            chars, nullable = _first(av[2])
            nullable = nullable or av[0] == 0
        elif op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):
            chars, nullable = frozenset(), True
        else:
            return ANY, False
        out |= chars
        if not nullable:
            return out, False
    return out, True


def first_chars(pattern: str) -> frozenset:
    chars, nullable = _first(_parser.parse(pattern))
    return ANY if nullable else chars
