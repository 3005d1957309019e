"""Which characters a regular expression can start with (for the lexer's dispatch table).

Read from the pattern's text by a small recursive-descent reader of the regex syntax
Lark's terminals use (literals, escapes, classes, groups, alternation, quantifiers,
anchors and lookarounds), not from the standard library's private regex parser.
Anything it does not model precisely answers "any character", which only costs speed,
never correctness: the lexer then tries that terminal for every first character.
Lookarounds and anchors are read as matching the empty string, so the answer is always
a superset of the true first characters.
"""
from __future__ import annotations

ANY = frozenset(map(chr, range(1, 128)))
_DIGIT = frozenset("0123456789")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = frozenset(" \t\n\r\f\v")
_CLASSES = {"d": _DIGIT, "w": _WORD, "s": _SPACE, "D": ANY - _DIGIT, "W": ANY - _WORD, "S": ANY - _SPACE}
_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "0": "\0"}
_ZERO_WIDTH = frozenset("bBAZ")


class _Unknown(Exception):
    """A construct this reader does not model: the answer is ANY."""


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.p, self.i = pattern, 0

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def take(self) -> str:
        ch = self.peek()
        self.i += 1
        return ch

    def alternation(self) -> tuple[frozenset, bool]:
        """`a|b|c` up to a closing parenthesis or the end."""
        chars, nullable = self.sequence()
        while self.peek() == "|":
            self.take()
            more, empty = self.sequence()
            chars, nullable = chars | more, nullable or empty
        return chars, nullable

    def sequence(self) -> tuple[frozenset, bool]:
        out: frozenset = frozenset()
        nullable = True
        while self.peek() not in ("", "|", ")"):
            chars, empty = self.quantified()
            if nullable:
                out |= chars
                nullable = empty
        return out, nullable

    def quantified(self) -> tuple[frozenset, bool]:
        chars, empty = self.atom()
        while self.peek() in ("*", "+", "?", "{"):
            q = self.take()
            if q in "*?":
                empty = True
            elif q == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise _Unknown
                low = self.p[self.i:end].split(",")[0].strip()
                self.i = end + 1
                empty = empty or low in ("", "0")
            if self.peek() in ("?", "+"):       # lazy or possessive: same characters
                self.take()
        return chars, empty

    def atom(self) -> tuple[frozenset, bool]:
        ch = self.take()
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.char_class(), False
        if ch == ".":
            return ANY, False
        if ch in "^$":
            return frozenset(), True
        if ch == "\\":
            esc = self.take()
            if esc in _ZERO_WIDTH:
                return frozenset(), True
            return self.escape(esc), False
        if ch in "*+?{":
            raise _Unknown
        return frozenset(ch), False

    def group(self) -> tuple[frozenset, bool]:
        lookaround = False
        if self.peek() == "?":
            self.take()
            kind = self.take()
            if kind == "P" and self.peek() == "<":
                self.i = self.p.index(">", self.i) + 1
            elif kind == "<" and self.peek() in "=!":
                self.take()
                lookaround = True
            elif kind in "=!":
                lookaround = True
            elif kind != ":":
                raise _Unknown       # inline flags, conditionals, comments, back-references
        chars, empty = self.alternation()
        if self.take() != ")":
            raise _Unknown
        return (frozenset(), True) if lookaround else (chars, empty)

    def escape(self, esc: str) -> frozenset:
        if esc in _CLASSES:
            return _CLASSES[esc]
        if esc in _CONTROL:
            return frozenset(_CONTROL[esc])
        if esc == "x":
            code = self.p[self.i:self.i + 2]
            self.i += 2
            return frozenset(chr(int(code, 16)))
        if esc.isalnum() or esc == "":
            raise _Unknown           # \u, \N{...}, back-references
        return frozenset(esc)

    def char_class(self) -> frozenset:
        negate = self.peek() == "^"
        if negate:
            self.take()
        chars: set[str] = set()
        first = True
        while True:
            ch = self.take()
            if ch == "":
                raise _Unknown
            if ch == "]" and not first:
                break
            first = False
            chars |= self._class_member(ch)
        return ANY - chars if negate else frozenset(c for c in chars if c in ANY)

    def _class_member(self, ch: str) -> frozenset:
        """One member of a bracket expression that starts with `ch`: a character, an escape, or a
        range `lo-hi` (a `-` before the closing `]`, or after a class escape such as `\\d`, is literal)."""
        lo = self.escape(self.take()) if ch == "\\" else frozenset(ch)
        if self.peek() != "-" or self.p[self.i + 1:self.i + 2] in ("]", "") or len(lo) != 1:
            return lo
        self.take()
        end = self.take()
        hi = self.escape(self.take()) if end == "\\" else frozenset(end)
        if len(hi) != 1:
            raise _Unknown
        return frozenset(chr(c) for c in range(ord(next(iter(lo))), min(ord(next(iter(hi))), 127) + 1))


def first_chars(pattern: str) -> frozenset:
    """The characters a match of `pattern` can start with (ANY when it can match empty)."""
    reader = _Reader(pattern)
    try:
        chars, nullable = reader.alternation()
        if reader.i != len(pattern):
            raise _Unknown
    except (_Unknown, ValueError, IndexError):
        return ANY
    return ANY if nullable else chars
