"""Seeded mutations of real TileLang kernels, for the fuzz test and benchmarks/fuzz.py.

Each mutant is a committed fixture with a few random edits of the kinds that broke pipelint
before: deleted or duplicated lines, numbers replaced by huge, negative, zero or malformed
literals (`028`, `1e8`), truncation, swapped characters.  Same seed, same mutants.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "fixtures" / "kernels"
_NUMBER = re.compile(r"\b\d+\b")
NUMBERS = ("0", "-1", "028", "0x", "100000000", "1e8", "4294967296", "-2147483648", "99999999999999999999")


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
