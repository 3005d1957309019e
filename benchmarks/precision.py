"""Precision on a folder of CUDA files: parse rate and findings by rule and severity.

    python benchmarks/precision.py ../shared/corpus/upstream/cu [--fail-on-error] [--json OUT]
                                   [--known benchmarks/known_hazards.json]

Prints how many files parse, the findings per rule and severity, and lists every error finding.
With --fail-on-error the exit status is 1 when there is any error finding or a file that does
not parse (what .ci/run uses on both shared corpora).  `--known` names real hazards (with the
evidence that they are real): those are listed apart and do not fail the run, but one that is
no longer found does (it was real: losing it is a recall regression).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from pipelint.discovery import collect_files
from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--fail-on-error", action="store_true")
    parser.add_argument("--json", help="write the summary as JSON here")
    parser.add_argument("-j", "--jobs", type=int, default=0)
    parser.add_argument("--known", help="JSON of real hazards: {hazards: [{file, line, rule, evidence}]}")
    args = parser.parse_args(argv)
    known = _known(args.known)
    files, _ = collect_files([args.folder])
    start = time.perf_counter()
    report = run_check(files, load_plugins(), CheckOptions(jobs=args.jobs))
    seconds = time.perf_counter() - start
    parsed = sum(1 for f in report.files if f.parsed)
    by_rule = collections.Counter((f.severity.value, f.rule) for f in report.findings)
    all_errors = sorted((f for f in report.findings if f.severity.value == "error"),
                        key=lambda f: (f.location.path, f.location.line))
    names = {Path(f).name for f in files}
    real = [f for f in all_errors if (Path(f.location.path).name, f.location.line, f.rule) in known]
    errors = [f for f in all_errors if f not in real]
    lost = sorted(k for k in known if k[0] in names and k not in
                  {(Path(f.location.path).name, f.location.line, f.rule) for f in real})
    print(f"files: {len(report.files)}   parsed: {parsed} ({100 * parsed / max(1, len(report.files)):.1f}%)"
          f"   tool errors: {len(report.errors)}   {seconds:.1f} s")
    print(f"{'severity':9} {'rule':28} findings")
    for (severity, rule), count in sorted(by_rule.items()):
        print(f"{severity:9} {rule:28} {count}")
    print(f"error findings: {len(errors)}" + (f" (and {len(real)} known real hazards)" if known else ""))
    for f in errors:
        print(f"  {Path(f.location.path).name}:{f.location.line}: [{f.rule}] {f.message}")
    for f in real:
        print(f"  real: {Path(f.location.path).name}:{f.location.line}: [{f.rule}] {known[(Path(f.location.path).name, f.location.line, f.rule)]}")
    for name, line, rule in lost:
        print(f"  LOST: {name}:{line}: [{rule}] a known real hazard is no longer reported")
    for e in report.errors:
        print(f"  tool error: {e.path}: {e.message}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "files": len(report.files), "parsed": parsed, "tool_errors": len(report.errors),
            "findings": {f"{s}:{r}": n for (s, r), n in sorted(by_rule.items())},
            "errors": [{"file": Path(f.location.path).name, "line": f.location.line, "rule": f.rule,
                        "message": f.message} for f in errors]}, indent=1) + "\n")
    bad = errors or lost or parsed < len(report.files) or report.errors
    return 1 if args.fail_on_error and bad else 0


def _known(path: str | None) -> dict[tuple[str, int, str], str]:
    if not path:
        return {}
    doc = json.loads(Path(path).read_text())
    return {(h["file"], h["line"], h["rule"]): h["evidence"][:60] for h in doc["hazards"]}


if __name__ == "__main__":
    sys.exit(main())
