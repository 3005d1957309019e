"""Line ends as the C preprocessor takes them, and the UTF-8 byte-order mark skipped.

nvcc (like every C compiler) ends a line at LF, CRLF and a lone CR, and accepts a
leading BOM.  The lexer counts only LF, `str.splitlines` also splits at form feeds,
vertical tabs and Unicode separators: read naively, a CR-only file is one line (no
kernel is found) and a file with a form feed shifts every later line number.  Every
reader of kernel text goes through `normalize` once, so lines and columns agree
between the parser, suppression comments and the source excerpts of the reports.
"""
from __future__ import annotations

BOM = "\ufeff"


def normalize(text: str) -> str:
    """`text` without a leading BOM and with CRLF and lone CR written as LF (line numbers and
    columns unchanged: each line end stays one line end and CR is never part of a column)."""
    if text.startswith(BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split_lines(text: str) -> list[str]:
    """The lines of `text` as the preprocessor counts them (line N is element N - 1)."""
    lines = normalize(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()                 # a final line end ends the last line, it starts none
    return lines


__all__ = ["BOM", "normalize", "split_lines"]
