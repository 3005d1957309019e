"""What pipelint leaves undecided on a folder of CUDA files, by rule and by cause.

    python benchmarks/undecided_causes.py ../shared/corpus/upstream/cu [--json OUT]

Counts the report's undecided findings (`summary.undecided`: notes of correctness rules) and
sorts them by the cause their message names: the reasons in parentheses of `race-undecided`,
"a descriptor's box is not in the kernel text" of `mbarrier-tx-bytes`, the cluster of
`mbarrier-not-analyzed`.  Issue 31 asks that only causes of two kinds remain: an index or a
guard that depends on memory contents (a CUtensorMap's box is a kernel argument's contents),
and a call whose effect is not modelled.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

_REASON = re.compile(r"not decided \((.*)\): lines")


def causes(finding: dict) -> list[str]:
    """The causes one undecided finding names."""
    rule, message = finding["rule"], finding["message"]
    if rule == "race-undecided":
        m = _REASON.search(message)
        return [f"{rule}: {r.strip()}" for r in (m.group(1).split(";") if m else ["?"])]
    if rule == "mbarrier-tx-bytes":
        if "box is not in the kernel text" in message:
            return [f"{rule}: a TMA descriptor's box (a CUtensorMap kernel argument's contents)"]
        return [f"{rule}: {message.split(';')[-1].strip()[:80]}"]
    return [f"{rule}: {message[:90]}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = sorted(str(p) for p in args.folder.rglob("*.cu"))
    out = subprocess.run([sys.executable, "-m", "pipelint", "check", "--no-cache", "--format", "json",
                          "--exit-zero", *files], capture_output=True, text=True)
    doc = json.loads(out.stdout)
    undecided = [f for f in doc["findings"] if f["severity"] == "note" and f.get("category") != "performance"]
    by_cause = Counter(c for f in undecided for c in causes(f))
    kernels_with = len({f["path"] for f in undecided})
    print(f"{len(files)} files, summary.undecided = {doc['summary']['undecided']} "
          f"(files with one: {kernels_with})")
    for cause, n in by_cause.most_common():
        print(f"{n:5d}  {cause}")
    if args.json:
        args.json.write_text(json.dumps({"undecided": doc["summary"]["undecided"],
                                         "files_with_undecided": kernels_with,
                                         "by_cause": dict(by_cause.most_common())}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
