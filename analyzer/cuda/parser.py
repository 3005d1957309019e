"""Parse CUDA source into a `TranslationUnit` with a `#line` map.

The grammar (grammars/cuda.lark) is compiled once per process and its tables
are cached on disk by Lark, so a `pipelint check` process pays for it once, in
milliseconds.  Lark's cache is a pickle, and loading a pickle runs code: it is
kept only in a folder of the user's cache that only the user can write (mode
0700, owned by the user, checked before every load), never in the shared temp
folder where Lark's `cache=True` would put it under a predictable name.
"""
from __future__ import annotations

import functools
import hashlib
import os
import stat
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import lark
from lark import Lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .ast import Directive, TranslationUnit
from .build import AstBuilder
from .lexer import FastLexer
from .linemap import LineMap
from .newlines import normalize
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
                         cache=grammar_cache_file(grammar, self.fast) or False, **options)

    def parse(self, source: str) -> ParsedFile:
        source = normalize(source)      # CR/CRLF line ends and a BOM, as nvcc reads them
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


def grammar_cache_file(grammar: str, fast: bool) -> str | None:
    """Where Lark may keep the compiled grammar: a file only this user can have written, or None
    (compile in memory).  A file that fails the checks is removed, never loaded."""
    folder = _private_folder()
    if folder is None:
        return None
    key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{fast}".encode()).hexdigest()[:20]
    path = os.path.join(folder, f"cuda-{key}.lark")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path                 # Lark writes it (the folder is private)
    except OSError:
        return None
    if _trusted(st, dir_mode=False):
        return path
    try:
        os.unlink(path)
    except OSError:
        return None
    return path


def _private_folder() -> str | None:
    """`grammar-<uid>` in the user's cache folder (`$PIPELINT_CACHE_DIR` or the platform's, never
    a project's `cache-dir`), created 0700; None when it is not a real folder of ours, or when
    someone else could swap it for another between the check and Lark's load."""
    from ..cachedir import CacheRefused, default_dir, open_root

    uid = getattr(os, "getuid", None)
    try:
        root = open_root(default_dir())      # a tagged root of the user's, never through a link
    except CacheRefused:
        return None
    folder = os.path.join(root, f"grammar-{uid()}" if uid else "grammar")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if uid and not _ancestors_private(folder, uid()):
            return None
        st = os.lstat(folder)
        if _trusted(st, dir_mode=True):
            return folder
        if stat.S_ISDIR(st.st_mode) and uid and st.st_uid == uid():
            # ours but open to others: whatever is inside may have been planted; start afresh
            os.chmod(folder, 0o700)
            for name in os.listdir(folder):
                os.unlink(os.path.join(folder, name))
            return folder
    except OSError:
        pass
    return None


def _ancestors_private(folder: str, uid: int) -> bool:
    """Whether every folder above `folder` is owned by this user or root and is writable by no one
    else, or is sticky (/tmp: others cannot rename what is in it) — OpenSSH's StrictModes test."""
    here = os.path.dirname(os.path.realpath(folder))
    while True:
        st = os.stat(here)
        if st.st_uid not in (uid, 0) or (st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX):
            return False
        parent = os.path.dirname(here)
        if parent == here:
            return True
        here = parent


def _trusted(st: os.stat_result, dir_mode: bool) -> bool:
    """A real folder (mode 0700) or regular file (not group/world-writable) owned by this user."""
    kind = stat.S_ISDIR if dir_mode else stat.S_ISREG
    if not kind(st.st_mode):
        return False
    uid = getattr(os, "getuid", None)
    if uid is None:                 # Windows: the user's profile folder is private by ACL
        return True
    return st.st_uid == uid() and not st.st_mode & (0o077 if dir_mode else 0o022)


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
