"""Build the GPU manifest that checks pipelint's redundancy claims on corpus kernels.

    python benchmarks/validation/make_redundancy_manifest.py OUT.json [--max 12] [--containing REGEX]

For every corpus kernel that can be launched raw (no CUtensorMap parameter), `pipelint check`
gives its `redundant-barrier` / `redundant-wait` findings (warnings and notes: every claim that
something can go) and its `wait-too-deep` findings (a wait that can keep more groups in flight).
One edit per kernel applies them all *together*: the barriers and waits deleted, the deeper waits
rewritten.  run_raw.sh then compares the edited kernel with its unedited control under
racecheck, synccheck and byte-for-byte output (docs/validation/raw_launch.md).  Kernels are taken
one per source file, across repositories, up to --max; the corpus files are copied into the
git-ignored .carry/inputs/.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from pipelint.discovery import collect_files
from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

ROOT = Path(__file__).resolve().parents[2]
CORPORA = [ROOT.parent / "shared" / "corpus" / "upstream" / "cu", ROOT.parent / "shared" / "corpus" / "realworld" / "cu"]
CLAIMS = ("redundant-barrier", "redundant-wait", "wait-too-deep")
_DEEPER = re.compile(r"cp_async_wait<(\d+)> keeps every read safe")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--max", type=int, default=12)
    parser.add_argument("--containing", default=None, metavar="REGEX",
                        help="only kernels whose text matches (issue 31: templates and atomics, e.g. "
                             "'tl::AllReduce<[^>]*>[^(]*::run\\([^;]*,|Atomic')")
    args = parser.parse_args()
    manifest_rw = None
    params_of: dict[str, dict] = {}   # kernel scalars take the harness default (128): one block, small sizes
    del manifest_rw
    files = [str(p) for corpus in CORPORA if corpus.is_dir() for p in sorted(corpus.glob("*.cu"))
             if "CUtensorMap" not in p.read_text()
             and (args.containing is None or re.search(args.containing, p.read_text()))]
    report = run_check(files, load_plugins(), CheckOptions(jobs=2))
    claims: dict[str, list] = {}
    for f in report.findings:
        if f.rule in CLAIMS:
            claims.setdefault(f.location.path, []).append(f)
    cases, stems = [], set()
    for path in sorted(claims, key=lambda p: (-len(claims[p]), p)):
        name = Path(path).name
        stem = name.split("__")[0] + "__" + name.split("__")[1] if "__" in name else name
        if stem in stems:
            continue
        stems.add(stem)
        lines = Path(path).read_text().splitlines()
        deletes = sorted({f.location.line for f in claims[path] if f.rule != "wait-too-deep"})
        replaces = {}
        for f in claims[path]:
            m = _DEEPER.search(f.message)
            if f.rule == "wait-too-deep" and m:
                line = f.location.line
                replaces[str(line)] = re.sub(r"cp_async_wait<\d+>", f"cp_async_wait<{m.group(1)}>", lines[line - 1])
        dest = ROOT / ".carry" / "inputs" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        params = {k: v for k, v in params_of.get(name, {}).items() if isinstance(v, (int, float))}
        edit = {"id": "all-claims-together", "delete_lines": deletes, "expect": "clean",
                "claims": [f"{f.rule}@{f.location.line}" for f in claims[path]]}
        expected = sorted({("__syncthreads" if "barrier" in f.rule else "cp_async_wait") for f in claims[path]
                           if f.rule != "wait-too-deep"})
        if expected:
            edit["expect_deleted"] = expected
        if replaces:
            edit["replace_lines"] = replaces
        cases.append({"id": name[:-3], "cu": f".carry/inputs/{name}", "source": path, "grid": "1,1,1",
                      "params": params, "expect": "clean", "edits": [edit]})
        if len(cases) >= args.max:
            break
    Path(args.out).write_text(json.dumps({"description": __doc__.split("\n\n")[0], "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} kernels, {sum(len(c['edits'][0]['claims']) for c in cases)} claims -> {args.out}")


if __name__ == "__main__":
    main()
