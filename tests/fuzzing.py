"""Seeded mutations of real TileLang kernels, for the fuzz test and benchmarks/fuzz.py.

Each mutant is a committed fixture with a few random edits of the kinds that broke pipelint
before: deleted or duplicated lines, numbers replaced by huge, negative, zero or malformed
literals (`028`, `1e8`), truncation, swapped characters.  Same seed, same mutants.

`hostile_mutants` also renames the files behind `#line` to what an attacker would
write: terminal escape sequences (OSC title and clipboard, CSI cursor moves, C1
controls, BEL, CR), bidirectional overrides, paths out of the project, GitHub
workflow-command text.  No output format may carry a control character of them.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "fixtures" / "kernels"
_NUMBER = re.compile(r"\b\d+\b")
NUMBERS = ("0", "-1", "028", "0x", "100000000", "1e8", "4294967296", "-2147483648", "99999999999999999999")
# what a terminal or a log viewer acts on: C0 but LF, DEL, C1, bidirectional controls, line separators
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_LINE_NAME = re.compile(r'(#\s*line\s+\d+\s+")((?:[^"\\]|\\.)*)(")')
HOSTILE_NAMES = (
    "evil\x1b]0;PWNED\x07\x1b[31mred.py",          # OSC 0 (window title), then CSI colour
    "\x1b]52;c;cHduZWQ=\x07clip.py",                # OSC 52: write the clipboard
    "\x1b[2K\x1b[1A\x1b[2Khide.py",                 # erase the line, cursor up, erase: hides log lines
    "\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\.py",   # OSC 8 hyperlink
    "bell\x07\x08\x08\x08\x08.py",                   # BEL and backspaces
    "\x9b31mc1\x9d0;t\x9c.py",                      # C1 CSI/OSC/ST (8-bit terminals)
    "rtl\u202egnp.py\u2066\u2069",                  # bidirectional override (Trojan Source)
    "cr\rok: no findings.py",                      # carriage return: overwrite the line
    "line\u2028sep\x0bvt\x0cff.py",
    "del\x7f\x01soh.py",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "%0A::error file=x.cu,line=1::pwned%0A.py",    # a GitHub workflow command in the data
    "::warning::pwned.py",
)


def _edit(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    op = rng.randrange(6)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif op == 2:
        matches = list(_NUMBER.finditer(lines[i]))
        if matches:
            m = rng.choice(matches)
            lines[i] = lines[i][:m.start()] + rng.choice(NUMBERS) + lines[i][m.end():]
    elif op == 3 and len(lines[i]) > 2:
        j = rng.randrange(len(lines[i]) - 1)
        s = lines[i]
        lines[i] = s[:j] + s[j + 1] + s[j] + s[j + 2:]
    elif op == 4:
        del lines[i:]
    else:
        lines[i] = lines[i].replace("(", "", 1)


def mutants(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """n (name, text) pairs from the fixture corpus."""
    rng = random.Random(seed)
    sources = sorted(KERNELS.glob("*.cu"))
    texts = {p: p.read_text().split("\n") for p in sources}
    out = []
    for k in range(n):
        path = rng.choice(sources)
        lines = list(texts[path])
        for _ in range(rng.randint(1, 3)):
            if lines:
                _edit(lines, rng)
        out.append((f"fuzz_{seed}_{k:05d}_{path.stem}.cu", "\n".join(lines)))
    return out


def hostile_name(rng: random.Random) -> str:
    """One of HOSTILE_NAMES, sometimes joined to another or to a real-looking path."""
    name = rng.choice(HOSTILE_NAMES)
    roll = rng.randrange(4)
    if roll == 0:
        return name + rng.choice(HOSTILE_NAMES)
    if roll == 1:
        return "examples/" + name
    return name


def hostilize(text: str, rng: random.Random) -> str:
    """`text` with some of its `#line` file names replaced by hostile ones (quotes and
    backslashes escaped as a C string literal would hold them)."""
    def rename(m: re.Match[str]) -> str:
        if rng.random() < 0.5:
            return m.group(0)
        name = hostile_name(rng).replace("\\", "\\\\").replace('"', '\\"')
        return m.group(1) + name + m.group(3)

    return _LINE_NAME.sub(rename, text)


def hostile_mutants(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`mutants(n, seed)` with hostile `#line` names: every other one, and always the names
    only (a separate random stream, so the structural edits are those of `mutants`)."""
    rng = random.Random(seed ^ 0x25)
    return [(name, hostilize(text, rng) if k % 2 == 0 else text)
            for k, (name, text) in enumerate(mutants(n, seed))]
