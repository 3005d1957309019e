"""CPU seconds per file on one core, heaviest first: issue 31's "the heaviest file of both shared
corpora takes <= 2 s of CPU" (and issue 32's <= 1 s), measured in process so that the figure is
the analysis's own (parse + model + every check; imports and one warm-up file excluded).

    python benchmarks/heaviest.py [FOLDER ...] [--top 10]

Default folders: ../shared/corpus/upstream/cu and ../shared/corpus/realworld/cu.  CPU time
(`time.process_time`), so a loaded machine changes it less than wall time; the peer figure printed
with it is the same file's parse alone, measured in the same run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEFAULT = ("../shared/corpus/upstream/cu", "../shared/corpus/realworld/cu")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", default=list(DEFAULT))
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    from pipelint.cuda import parse
    from pipelint.engine import CheckOptions, run_check
    from pipelint.pluginhost import load_plugins

    host = load_plugins()
    files = sorted(str(p) for folder in args.folders for p in Path(folder).glob("*.cu"))
    if not files:
        print("no .cu files in", ", ".join(args.folders), file=sys.stderr)
        return 2
    run_check([files[0]], host, CheckOptions(jobs=1))          # warm-up: imports, grammar
    rows = []
    for f in files:
        text = Path(f).read_text()
        t0 = time.process_time()
        parse(text)
        t1 = time.process_time()
        run_check([f], host, CheckOptions(jobs=1))
        t2 = time.process_time()
        rows.append((t2 - t1, t1 - t0, f))
    rows.sort(reverse=True)
    print(f"{len(files)} files, {sum(r[0] for r in rows):.1f} s CPU in all (check, one core)")
    print("check s  parse s  ratio  file")
    for check, parsed, f in rows[:args.top]:
        print(f"{check:7.2f}  {parsed:7.2f}  {check / max(parsed, 1e-9):5.1f}  {Path(f).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
