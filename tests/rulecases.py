"""The case folders of `tests/rules/<rule id>/`: each rule's positive and negative cases.

A case is one file in the rule's folder:

* `NAME.cu`: a kernel; `// expect: RULE` on a line says the rule is reported there;
* `NAME.mutant`: the name of an operator of `tests/mutants/mutate.py` on its first line: the
  rule at the line the mutant names (and at any `expect LINE` lines that follow);
* `NAME.ref`: the path (under `tests/`) of a kernel on its first line, then `expect LINE`
  lines (or the `// expect:` markers of that file);
* `NAME.edit`: the same, with edits applied first: `at LINE: OLD => NEW` (on that line),
  `at LINE: delete` (the line goes; later lines move up) or `all: OLD => NEW` (everywhere);
* `NAME.variants`: lowered variants of one kernel for the sweep's rules (`pipelint lower`), as
  JSON: `{"variants": [{"num_stages", "arch", "ok", "error", "facts", "model_of"}], "expect": N}`,
  `model_of` a fixture kernel whose model the variant carries; N findings of the rule.

A case where the rule is expected somewhere is positive; one with no line for the rule is
negative (the rule must not fire on it: a clean twin).  The rule's findings on a case must be
exactly the expected lines; other rules' findings are not looked at.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CASES = TESTS / "rules"
KINDS = (".cu", ".mutant", ".ref", ".edit", ".variants")
EXPECT = re.compile(r"//\s*expect:\s*([\w\-, ]+)")


@dataclass(frozen=True)
class Case:
    rule: str
    file: Path
    text: str
    name: str
    lines: frozenset[int]

    @property
    def positive(self) -> bool:
        return bool(self.lines)


def _marked(text: str, rule: str) -> frozenset[int]:
    found = set()
    for number, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if m and rule in {w.strip() for w in m.group(1).split(",")}:
            found.add(number)
    return frozenset(found)


def load(rule: str, file: Path) -> Case:
    if file.suffix == ".cu":
        text = file.read_text()
        return Case(rule, file, text, file.name, _marked(text, rule))
    if file.suffix == ".mutant":
        sys.path.insert(0, str(TESTS))
        from mutants import mutate

        lines = file.read_text().split("\n")
        m = getattr(mutate, lines[0].strip())()
        also = {int(w.split()[1]) for w in lines[1:] if w.startswith("expect ")}
        return Case(rule, file, m.text, m.name + ".cu", frozenset({m.line} | also if m.rule == rule else also))
    if file.suffix == ".variants":
        import json

        text = file.read_text()
        return Case(rule, file, text, file.name, frozenset(range(1, json.loads(text)["expect"] + 1)))
    lines = file.read_text().split("\n")
    target = TESTS / lines[0].strip()
    text = _edited(target.read_text(), lines[1:]) if file.suffix == ".edit" else target.read_text()
    listed = frozenset(int(w.split()[1]) for w in lines[1:] if w.startswith("expect "))
    return Case(rule, file, text, target.name, listed or _marked(text, rule))


def _edited(text: str, edits: list[str]) -> str:
    lines = text.split("\n")
    for edit in reversed([e for e in edits if e.startswith(("at ", "all:"))]):     # bottom up: numbers hold
        where, _, what = edit.partition(":")
        if where == "all":
            old, _, new = what.strip().partition(" => ")
            lines = "\n".join(lines).replace(old, new).split("\n")
            continue
        n = int(where.split()[1]) - 1
        if what.strip() == "delete":
            del lines[n]
        else:
            old, _, new = what.strip().partition(" => ")
            assert old in lines[n], (edit, lines[n])
            lines[n] = lines[n].replace(old, new)
    return "\n".join(lines)


def cases(rule: str, root: Path = CASES) -> list[Case]:
    folder = root / rule
    if not folder.is_dir():
        return []
    return [load(rule, f) for f in sorted(folder.iterdir()) if f.suffix in KINDS]


def variants(case: Case) -> list:
    """The `LoweredVariant`s of a `.variants` case."""
    import json

    from pipelint.cuda import parse
    from pipelint.lowering.sweep import LoweredVariant
    from pipelint.model import KernelModel

    out = []
    for v in json.loads(case.text)["variants"]:
        model = None
        if v.get("model_of"):
            parsed = parse((TESTS / "fixtures" / "kernels" / v["model_of"]).read_text())
            model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
        out.append(LoweredVariant(v.get("kernel", "k"), v.get("arch", "sm_80"), v["num_stages"], v.get("ok", True),
                                  v.get("error"), v.get("facts", {}), model=model))
    return out


def all_cases(root: Path = CASES) -> list[Case]:
    return [c for folder in sorted(root.iterdir()) if folder.is_dir() for c in cases(folder.name, root)]


def gaps(rules: list[str], root: Path = CASES) -> dict[str, str]:
    """The rules without a positive or without a negative case, and which is missing."""
    out = {}
    for rule in rules:
        found = cases(rule, root)
        missing = [kind for kind, want in (("positive", True), ("negative", False))
                   if not any(c.positive == want for c in found)]
        if missing:
            out[rule] = " and ".join(missing)
    return out
