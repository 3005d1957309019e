"""Parse CUDA source into a `TranslationUnit` with a `#line` map.

The grammar (grammars/cuda.lark) is compiled once per process and cached on
disk by Lark, so a `pipelint check` process pays for it once, in milliseconds.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from lark import Lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .ast import Directive, TranslationUnit
from .build import AstBuilder
from .lexer import FastLexer
from .linemap import LineMap
from .typenames import TypeNames


@dataclass(frozen=True, slots=True)
class ParsedFile:
    unit: TranslationUnit
    lines: LineMap
    source: str
    registry: dict = field(default_factory=dict, compare=False, repr=False)


class CudaSyntaxError(Exception):
    """Where parsing stopped and what the grammar expected there."""

    def __init__(self, message: str, line: int, column: int, expected: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected


try:
    import lark_cython as _lark_cython

    class CythonTokenLexer(FastLexer):
        """FastLexer making lark-cython tokens (module level: Lark's cache pickles it)."""

        token_class = _lark_cython.Token
except ImportError:  # the `fast` extra is not installed
    CythonTokenLexer = None  # type: ignore[assignment,misc]


def _fast_options() -> dict | None:
    """lark-cython's LALR parser when installed (`pipelint[fast]`), else None.

    Only the parser: lark-cython's lexers do not take a custom lexer, so a
    small thread object feeds its parser tokens from FastLexer (made as
    lark-cython tokens).
    """
    if CythonTokenLexer is None:
        return None
    import lark_cython

    return {"lexer": CythonTokenLexer,
            "_plugins": {"LALR_Parser": lark_cython.plugins["LALR_Parser"], "LexerThread": _TokenFeed}}


class _TokenFeed:
    """What lark-cython's parser pulls tokens from: `next_token()`."""

    def __init__(self, tokens) -> None:
        self._next = tokens.__next__

    @classmethod
    def from_text(cls, lexer: Any, text: str) -> _TokenFeed:
        return cls(lexer.lexer.lex(text))

    def next_token(self, *_args: object) -> Any:
        try:
            return self._next()
        except StopIteration:
            raise EOFError from None


class _Parser:
    def __init__(self, fast: bool = True) -> None:
        self.builder = AstBuilder()
        grammar = resources.files("pipelint.grammars").joinpath("cuda.lark").read_text(encoding="utf-8")
        options = (_fast_options() if fast else None) or {"lexer": FastLexer}
        self.fast = "_plugins" in options
        self.lark = Lark(grammar, parser="lalr", transformer=self.builder, maybe_placeholders=False,
                         cache=True, **options)

    def parse(self, source: str) -> ParsedFile:
        directives: list[Directive] = []
        FastLexer.directives = directives
        FastLexer.types = TypeNames(source)
        registry = self.builder.new_registry()
        try:
            tree: Any = self.lark.parse(source)    # the transformer builds a TranslationUnit
        except UnexpectedInput as err:
            raise _syntax_error(err, source) from None
        except LarkError as err:  # pragma: no cover - grammar/transformer bug
            raise CudaSyntaxError(f"cannot parse: {err}", 1, 1) from None
        unit = TranslationUnit(tree.items, tree.span, tuple(directives))
        return ParsedFile(unit, LineMap(directives), source, registry)


_NICE = {"SEMI": "';'", "RPAR": "')'", "LPAR": "'('", "RBRACE": "'}'", "LBRACE": "'{'",
         "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "NAME": "a name", "TYPE": "a type",
         "NUMBER": "a number", "ASSIGN": "'='", "COLON": "':'"}


def _nice(names: set[str] | frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(_NICE.get(n, n) for n in names if not n.startswith("__")))


def _syntax_error(err: UnexpectedInput, source: str) -> CudaSyntaxError:
    line = getattr(err, "line", None) or 1
    column = getattr(err, "column", None) or 1
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        body = source.rstrip()
        last = body.count("\n") + 1
        column = len(body) - body.rfind("\n")
        expected = _nice(set(err.expected))
        return CudaSyntaxError(f"unexpected end of file (truncated kernel?); expected {', '.join(expected[:6])}",
                               last, column, expected)
    if isinstance(err, UnexpectedToken):
        try:
            accepts = err.accepts
        except AttributeError:  # lark-cython's parser state cannot replay
            accepts = None
        expected = _nice(accepts or err.expected)
        return CudaSyntaxError(f"unexpected {err.token.value!r}; expected one of {', '.join(expected[:8])}",
                               line, column, expected)
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream or 0
        char = source[pos] if pos < len(source) else "?"
        return CudaSyntaxError(f"unexpected character {char!r}", line, column)
    return CudaSyntaxError(str(err).splitlines()[0], line, column)


@functools.lru_cache(maxsize=1)
def _parser() -> _Parser:
    return _Parser()


def parse(source: str) -> ParsedFile:
    """Parse CUDA text; raises `CudaSyntaxError` at the first bad token."""
    return _parser().parse(source)


def parse_file(path: str) -> ParsedFile:
    with open(path, encoding="utf-8") as fh:
        return parse(fh.read())


__all__ = ["CudaSyntaxError", "ParsedFile", "parse", "parse_file"]
