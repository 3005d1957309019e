"""Lark's three LALR back ends on the same files, in one run (issue 32: "measure lark-cython and
Lark's standalone parser"): each with pipelint's own lexer (`cuda.lexer.FastLexer`) and AST
builder, so only the parser differs.

    python benchmarks/bench_parsers.py [FOLDER ...]

* lark, pure Python (`_Parser(fast=False)`, the grammar from Lark's cache);
* lark-cython (`_Parser(fast=True)`, what `pipelint[fast]` installs);
* Lark's standalone parser: `python -m lark.tools.standalone` writes the grammar's tables into a
  module (in a temporary folder), whose lexer is replaced by FastLexer the way Lark plugs a custom
  lexer in (`_wrap_lexer`).

Prints each one's load time (import or cache load) and parse throughput (MB/s), and checks that
all three build the same AST.  Default folder: ../shared/corpus/upstream/cu, else the fixtures.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _standalone(folder: Path) -> Callable[[], object]:
    """The standalone module's loader (generated into `folder`)."""
    grammar = ROOT / "grammars" / "cuda.lark"
    out = folder / "cuda_standalone.py"
    subprocess.run([sys.executable, "-m", "lark.tools.standalone", "-l", "basic", str(grammar), "-o", str(out)],
                   check=True)
    spec = importlib.util.spec_from_file_location("cuda_standalone", out)
    assert spec is not None and spec.loader is not None

    def load() -> object:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)                     # type: ignore[union-attr]
        return module
    return load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ROOT.parent / "shared" / "corpus" / "upstream" / "cu"
    ap.add_argument("folders", nargs="*", type=Path,
                    default=[default if default.is_dir() else ROOT / "tests" / "fixtures" / "kernels"])
    args = ap.parse_args()
    from pipelint.cuda import parser as P
    from pipelint.cuda.build import AstBuilder
    from pipelint.cuda.lexer import FastLexer
    from pipelint.cuda.newlines import normalize
    from pipelint.cuda.typenames import TypeNames

    files = sorted(p for folder in args.folders for p in folder.glob("*.cu"))
    if not files:
        print("no .cu files in", ", ".join(map(str, args.folders)), file=sys.stderr)
        return 2
    texts = [normalize(p.read_text()) for p in files]
    mb = sum(len(t.encode()) for t in texts) / 2**20
    backends: list[tuple[str, float, Callable[[str], object], AstBuilder]] = []
    start = time.perf_counter()
    pure = P._Parser(fast=False)
    backends.append(("lark, pure Python", time.perf_counter() - start, pure.lark.parse, pure.builder))
    start = time.perf_counter()
    fast = P._Parser(fast=True)
    if fast.fast:
        backends.append(("lark-cython", time.perf_counter() - start, fast.lark.parse, fast.builder))
    with tempfile.TemporaryDirectory() as tmp:
        load = _standalone(Path(tmp))
        builder = AstBuilder()
        start = time.perf_counter()
        module: object = load()
        alone = module.Lark_StandAlone(transformer=builder)             # type: ignore[attr-defined]
        alone.parser.lexer = module._wrap_lexer(FastLexer)(alone.lexer_conf)   # type: ignore[attr-defined]
        backends.append(("Lark standalone", time.perf_counter() - start, alone.parse, builder))
        print(f"{len(files)} files, {mb:.2f} MB")
        print(f"{'parser':<20}{'load s':>8}{'parse s':>9}{'MB/s':>7}")
        trees: list[list[object]] = []
        for name, loaded, parse, made_by in backends:
            out = []
            start = time.perf_counter()
            for text in texts:
                FastLexer.directives = []
                FastLexer.types = TypeNames(text)
                made_by.new_registry()
                out.append(parse(text))
            sec = time.perf_counter() - start
            trees.append(out)
            print(f"{name:<20}{loaded:>8.3f}{sec:>9.2f}{mb / sec:>7.2f}")
    same = all(t == trees[0] for t in trees[1:])
    print("same AST from every parser:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
