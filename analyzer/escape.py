"""Control characters made visible in human-facing output.

File names and messages come from the input: a `#line` name, a file in a pull
request, a plugin's exception text.  Printed raw, ESC and BEL start terminal
sequences (retitle the window, write the clipboard, hide or spoof lines of a CI
log) and bidirectional overrides reorder what a reader sees.  Every reporter a
person reads passes what it prints through `visible`, which writes such
characters the way `repr` does (`\\x1b`, `\\x07`, `\\n`, `\\u202e`).
"""
from __future__ import annotations

import re

# C0, DEL and C1 controls, the bidirectional formatting characters, line/paragraph separators
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character written as its escape; other text untouched."""
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text


def visible_lines(text: str) -> str:
    """`text` with its line ends kept and everything else `visible`: for multi-line output
    (a rule page, a table, `explain`) whose lines come from the input."""
    return "\n".join(visible(line) for line in text.split("\n"))


def has_hidden(text: str) -> bool:
    """Whether `text` holds a character `visible` would escape."""
    return _HIDDEN.search(text) is not None


__all__ = ["has_hidden", "visible", "visible_lines"]
