"""A fast single-regex lexer for the CUDA grammar, plugged into Lark.

Lark's own basic lexer costs ~10 us per token in pure Python; generated CUDA
is ~5 bytes per token, so lexing alone capped pipelint at 0.5 MB/s.  This
lexer compiles every terminal of grammars/cuda.lark into one alternation (in
Lark's own priority order), so each token is one `re.match` and one `Token`.
It also does two jobs that would otherwise need extra passes:

* retypes NAME to TYPE where the name is a type (see `typenames.py`);
* collects preprocessor lines, which the parser ignores, for the `#line` map.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer

from .ast import Directive
from .firstchar import first_chars
from .typenames import TypeNames


class FastLexer(Lexer):
    """Lark custom lexer (interface 0): `lex(text)` yields Tokens."""

    __future_interface__ = 0
    # Set by the parser before each parse (one parse at a time per process).
    types = TypeNames("")
    directives: list[Directive] = []
    token_class: type = Token

    def __init__(self, lexer_conf) -> None:
        terminals = sorted(lexer_conf.terminals,
                           key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        self.ignore = frozenset(lexer_conf.ignore)
        self.keywords = _keywords(terminals)
        groups = _groups(terminals, self.keywords, self.ignore)
        # One alternation per first character, in Lark's priority order: a
        # token costs one dict lookup and one short `re.match`.
        flags = lexer_conf.g_regex_flags
        self.master = _Deferred("|".join(g for g, _ in groups), flags, {}, ())   # the fallback
        self.dispatch = _dispatch(groups, flags)
        # only these terminals can span lines (comments, continued directives, strings)
        self.multiline = frozenset(t.name for t in terminals if "\\n" in t.pattern.to_regexp()
                                   or t.name in ("COMMENT", "PP", "TEMPLATE_HEAD", "TNAME", "STRING",
                                                 "PRIM_TYPE", "LINKAGE"))
        self.blank = re.compile(r"(?:[ \t\f\r\n]|\\\r?\n)*")

    def lex(self, text: str) -> Iterator[Token]:  # type: ignore[override]  # lark-cython calls lex(text)
        dispatch, fallback = self.dispatch, self.master
        blank = self.blank.match
        ignore, keywords, retype = self.ignore, self.keywords, self.types.retype
        directives = FastLexer.directives
        make_token = type(self).token_class
        multiline = self.multiline
        pos, line, line_start, end = 0, 1, 0, len(text)
        while pos < end:
            ch = text[pos]
            if ch in " \t\n\r\f\\":
                stop = blank(text, pos).end()  # type: ignore[union-attr]  # matches the empty string
                if stop > pos:
                    skipped = text.count("\n", pos, stop)
                    if skipped:
                        line += skipped
                        line_start = text.rindex("\n", pos, stop) + 1
                    pos = stop
                    continue
            m = dispatch.get(ch, fallback)(text, pos)
            if m is None:
                raise UnexpectedCharacters(text, pos, line, pos - line_start + 1)
            kind = m.lastgroup
            value = m.group()
            column = pos - line_start + 1
            newlines = value.count("\n") if kind in multiline else 0
            if newlines:
                end_line = line + newlines
                end_column = len(value) - value.rfind("\n")
            else:
                end_line, end_column = line, column + len(value)
            stop = m.end()
            if kind in ignore:
                if kind == "PP":
                    directives.append(Directive(value, line, column))
            else:
                if kind == "NAME":
                    kind = keywords.get(value, "NAME")
                    if kind == "NAME":
                        kind = retype(value, pos, stop, False)
                elif kind == "TNAME":
                    kind = retype(value, pos, stop, True)
                yield make_token(kind, value, pos, line, column, end_line, end_column, stop)
            if newlines:
                line = end_line
                line_start = pos + value.rfind("\n") + 1
            pos = stop


def _keywords(terminals: list[Any]) -> dict[str, str]:
    """Keyword text -> terminal name, for the string terminals that look like names: they are
    lexed as NAME and looked up, so the alternation does not try every keyword at each name."""
    name_re = re.compile(r"[A-Za-z_]\w*\Z")
    return {t.pattern.value: t.name for t in terminals if t.pattern.type == "str" and name_re.match(t.pattern.value)}


def _groups(terminals: list[Any], keywords: dict[str, str], ignore: frozenset[str]) -> list[tuple[str, frozenset]]:
    """(named regex group, characters it can start with) of every terminal the alternation
    matches, in priority order: not the keywords (matched as NAME) nor plain whitespace (the
    lexer skips it before matching); preprocessor lines and comments stay, they are collected."""
    groups = []
    for t in terminals:
        if t.pattern.type == "str" and t.pattern.value in keywords:
            continue  # matched as NAME, then looked up
        if t.name in ignore and t.name not in ("PP", "COMMENT"):
            continue  # plain whitespace: `lex` skips it before matching
        groups.append((f"(?P<{t.name}>{t.pattern.to_regexp()})", first_chars(t.pattern.to_regexp())))
    return groups


def _dispatch(groups: list[tuple[str, frozenset]], flags: int) -> dict[str, Callable[..., Any]]:
    """ASCII character -> `match` of the alternation of the groups a token can start with it;
    a character no group starts with is absent (the lexer falls back to the whole alternation).
    Each alternation is compiled when a token first starts with one of its characters
    (`_Deferred`): compiling all of them was 40 ms of every process's start-up, and a kernel
    starts its tokens with a fraction of them."""
    dispatch: dict[str, Callable[..., Any]] = {}
    by_pattern: dict[str, list[str]] = {}
    for ch in map(chr, range(1, 128)):
        alts = [g for g, firsts in groups if ch in firsts]
        if alts:
            by_pattern.setdefault("|".join(alts), []).append(ch)
    for pattern, chars in by_pattern.items():
        deferred = _Deferred(pattern, flags, dispatch, tuple(chars))
        for ch in chars:
            dispatch[ch] = deferred
    return dispatch


class _Deferred:
    """A `match` compiled on its first call, which then takes its place in the dispatch table."""

    __slots__ = ("pattern", "flags", "table", "chars")

    def __init__(self, pattern: str, flags: int, table: dict[str, Callable[..., Any]], chars: tuple[str, ...]) -> None:
        self.pattern, self.flags, self.table, self.chars = pattern, flags, table, chars

    def __call__(self, text: str, pos: int) -> re.Match[str] | None:
        match = re.compile(self.pattern, self.flags).match     # cached by `re` after the first time
        for ch in self.chars:
            self.table[ch] = match
        return match(text, pos)
