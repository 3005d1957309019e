"""Planted defects by class, over the project's own fixtures: found anywhere, and found at the site.

    python benchmarks/mutation_sites.py [--json OUT] [--class CLASS ...] [--fixture GLOB]

Every fixture family of tests/fixtures/kernels with num_stages 1-4 on sm_80 and sm_90 (gemm_f16,
gemm_nt_bf16, gemm_tn_f16, gemv, row_sum, flash_attn_fwd) gets each defect class planted at every
site where the class applies, one mutant per site.  Mutants are line-stable: a deleted statement
becomes an empty line, so the planted line is the same number in the fixture and in the mutant.

For each mutant pipelint runs in process (`run_check`, every plugin).  A mutant is
  found     when an error or warning of one of the class's rules is reported anywhere in the file,
  at site   when the primary location of such a finding is within 4 lines of the planted line.
Equivalent mutations (edits after which the kernel is still correct) must give no error finding.
A deleted `__syncthreads` that the clean fixture already reports as `redundant-barrier` (each
thread reads back only the bytes it copied: row_sum, gemv) is counted as an equivalent mutation,
not as a defect.

Prints a markdown table (class x arch) and every miss (file, class, planted line, what was
reported instead); `--json OUT` writes the same data.  Deterministic: same tree, same output.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
FAMILIES = ("gemm_f16", "gemm_nt_bf16", "gemm_tn_f16", "gemv", "row_sum", "flash_attn_fwd")
ARCHS = ("sm_80", "sm_90")
STAGES = (1, 2, 3, 4)
SITE_WINDOW = 4


@dataclass(frozen=True)
class Planted:
    klass: str
    fixture: str
    line: int                # 1-based, same number in fixture and mutant
    text: str
    equivalent: bool = False
    what: str = ""           # the edit, in words


@dataclass
class Outcome:
    klass: str
    fixture: str
    arch: str
    stages: int
    line: int
    what: str
    equivalent: bool
    found: bool = False
    at_site: bool = False
    errors: int = 0
    reported: list[tuple[str, str, int]] = field(default_factory=list)   # (severity, rule, line)


# ------------------------------------------------------------------ classes: expected rules
CLASSES: dict[str, tuple[str, ...]] = {
    "drop-commit": ("uncommitted-copy", "wait-too-shallow"),
    "drop-raw-barrier": ("missing-barrier",),
    "drop-war-barrier": ("missing-barrier",),
    "wait-shallower": ("wait-too-shallow",),
    "drop-consumer-arrive": ("mbarrier-release", "mbarrier-deadlock"),
    "expect-tx-to-arrive": ("mbarrier-tx-bytes",),
    "halve-expect-tx": ("mbarrier-tx-bytes",),
    "halve-init-count": ("mbarrier-arrival-count",),
    "drop-fence-barrier-init": ("mbarrier-init-fence",),
    "drop-wgmma-wait": ("mbarrier-release", "wgmma-register-race"),
    "wgmma-wait-deeper": ("wgmma-register-race", "mbarrier-release"),
}
EQUIVALENT_CLASSES = ("eq-wait-deeper", "eq-duplicate-barrier", "eq-swap-inits", "eq-duplicate-fence",
                      "eq-drop-redundant-barrier", "eq-duplicate-wgmma-wait")


def _arch(fixture: str) -> str:
    return re.search(r"_(sm_\d+)_s\d+\.cu$", fixture).group(1)


def _stages(fixture: str) -> int:
    return int(re.search(r"_s(\d+)\.cu$", fixture).group(1))


def fixtures(pattern: str = "*") -> list[str]:
    names = [f"{fam}_{arch}_s{n}.cu" for fam in FAMILIES for arch in ARCHS for n in STAGES]
    return [n for n in names if (KERNELS / n).exists() and fnmatch.fnmatch(n, pattern)]


def _blank(lines: list[str], i: int) -> str:
    out = list(lines)
    out[i] = ""
    return "\n".join(out)


def _replace(lines: list[str], i: int, old: str, new: str) -> str:
    out = list(lines)
    assert old in out[i], (old, out[i])
    out[i] = out[i].replace(old, new, 1)
    return "\n".join(out)


def _is_code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#") and not s.startswith("//")


def _next_code(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and not _is_code(lines[j]):
        j += 1
    return j


def _block_end(lines: list[str], start: int) -> int:
    """Index of the line that closes the block opened on line `start`."""
    depth = 1                      # the block opened by the last `{` of line `start`
    for j in range(start + 1, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth <= 0:
            return j
    return len(lines) - 1


def _pipelined_loops(lines: list[str]) -> list[tuple[int, int]]:
    """(for line, closing line) of the pipelined loops: `for (int k = 0;` / `for (int k_1 = 0;`."""
    return [(i, _block_end(lines, i)) for i, line in enumerate(lines)
            if re.search(r"for \(int k(_\d+)? = 0;", line)]


# ------------------------------------------------------------------ cp.async classes (sm_80)
def drop_commit(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        if "tl::cp_async_commit();" in line:
            yield Planted("drop-commit", name, i + 1, _blank(lines, i), what="deleted cp_async_commit")


def drop_raw_barrier(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        if "cp_async_wait<" in line:
            j = _next_code(lines, i)
            if j < len(lines) and lines[j].strip() == "__syncthreads();":
                yield Planted("drop-raw-barrier", name, j + 1, _blank(lines, j),
                              what=f"deleted __syncthreads after {line.strip()}")


def drop_war_barrier(name: str, lines: list[str]) -> Iterator[Planted]:
    """Each `__syncthreads` of a pipelined loop that is not right after a wait and is followed by a
    cp.async copy before any other barrier: it keeps the copy off the slot others still read."""
    for start, end in _pipelined_loops(lines):
        for i in range(start + 1, end):
            if lines[i].strip() != "__syncthreads();":
                continue
            prev = max((p for p in range(start, i) if _is_code(lines[p])), default=start)
            if "cp_async_wait<" in lines[prev]:
                continue
            for j in range(i + 1, end):
                if "__syncthreads" in lines[j]:
                    break
                if "cp_async_gs" in lines[j] or "cp_async_gs_conditional" in lines[j]:
                    yield Planted("drop-war-barrier", name, i + 1, _blank(lines, i),
                                  what="deleted loop __syncthreads before the copies")
                    break


def wait_shallower(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        m = re.search(r"cp_async_wait<(\d+)>", line)
        if m:
            n = int(m.group(1))
            yield Planted("wait-shallower", name, i + 1,
                          _replace(lines, i, f"cp_async_wait<{n}>", f"cp_async_wait<{n + 1}>"),
                          what=f"cp_async_wait<{n}> -> <{n + 1}>")


# ------------------------------------------------------------------ mbarrier classes (sm_90)
def _consumer_ranges(lines: list[str]) -> list[tuple[int, int]]:
    """The consumer role: the `else` branch of the top-level `if (threadIdx.x < N)` split."""
    out = []
    for i, line in enumerate(lines):
        if re.match(r"\s*\} else \{", line) and any(
                re.search(r"if \(\(\(int\)threadIdx\.x\) < \d+\) \{", lines[p]) for p in range(i)):
            out.append((i, _block_end(lines, i)))
    return out[:1]


def drop_consumer_arrive(name: str, lines: list[str]) -> Iterator[Planted]:
    for start, end in _consumer_ranges(lines):
        for i in range(start, end):
            if re.search(r"mbarrier\[.*\]\.arrive\(\);", lines[i]):
                yield Planted("drop-consumer-arrive", name, i + 1, _blank(lines, i),
                              what="deleted consumer mbarrier arrive (release)")


def expect_tx_to_arrive(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        m = re.search(r"arrive_and_expect_tx\((\d+)\)", line)
        if m:
            yield Planted("expect-tx-to-arrive", name, i + 1, _replace(lines, i, m.group(0), "arrive()"),
                          what=f"{m.group(0)} -> arrive()")


def halve_expect_tx(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        m = re.search(r"(arrive_and_expect_tx|expect_transaction)\((\d+)\)", line)
        if m and int(m.group(2)) >= 2:
            n = int(m.group(2))
            yield Planted("halve-expect-tx", name, i + 1,
                          _replace(lines, i, m.group(0), f"{m.group(1)}({n // 2})"),
                          what=f"{m.group(0)} -> ({n // 2})")


def halve_init_count(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        m = re.search(r"\.init\((\d+)\)", line)
        if m and int(m.group(1)) >= 2:
            n = int(m.group(1))
            yield Planted("halve-init-count", name, i + 1, _replace(lines, i, m.group(0), f".init({n // 2})"),
                          what=f"init({n}) -> init({n // 2})")


def drop_fence_barrier_init(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        if "tl::fence_barrier_init();" in line:
            yield Planted("drop-fence-barrier-init", name, i + 1, _blank(lines, i), what="deleted fence_barrier_init")


def drop_wgmma_wait(name: str, lines: list[str]) -> Iterator[Planted]:
    """A `warpgroup_wait<0>` deleted: the wgmma's group is retired by no wait before the slot's
    release (its operands still read) and before its accumulators are read."""
    for i, line in enumerate(lines):
        if "tl::warpgroup_wait<0>();" in line:
            yield Planted("drop-wgmma-wait", name, i + 1, _blank(lines, i), what="deleted warpgroup_wait<0>")


def wgmma_wait_deeper(name: str, lines: list[str]) -> Iterator[Planted]:
    """`warpgroup_wait<0>` -> `<1>`: the newest group (the one just committed) stays in flight."""
    for i, line in enumerate(lines):
        if "tl::warpgroup_wait<0>();" in line:
            yield Planted("wgmma-wait-deeper", name, i + 1,
                          _replace(lines, i, "warpgroup_wait<0>", "warpgroup_wait<1>"),
                          what="warpgroup_wait<0> -> <1>")


# ------------------------------------------------------------------ equivalent mutations
def eq_wait_deeper(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        m = re.search(r"cp_async_wait<(\d+)>", line)
        if m and int(m.group(1)) > 0:
            n = int(m.group(1))
            yield Planted("eq-wait-deeper", name, i + 1,
                          _replace(lines, i, f"cp_async_wait<{n}>", f"cp_async_wait<{n - 1}>"),
                          equivalent=True, what=f"cp_async_wait<{n}> -> <{n - 1}>")


def eq_duplicate_barrier(name: str, lines: list[str]) -> Iterator[Planted]:
    """A second `__syncthreads` right after one reached by every thread (2-space indent: kernel
    level, or 4: directly in a pipelined loop of an sm_80 kernel)."""
    sm80 = _arch(name) == "sm_80"
    for i, line in enumerate(lines):
        if line == "  __syncthreads();" or (sm80 and line == "    __syncthreads();"):
            out = list(lines)
            out[i] = line + " __syncthreads();"      # same line count
            yield Planted("eq-duplicate-barrier", name, i + 1, "\n".join(out), equivalent=True,
                          what="__syncthreads duplicated")


def eq_swap_inits(name: str, lines: list[str]) -> Iterator[Planted]:
    inits = [i for i, line in enumerate(lines) if re.search(r"mbarrier\[\d+\]\.init\(\d+\);", line)]
    if len(inits) >= 2 and inits[1] == inits[0] + 1:
        out = list(lines)
        out[inits[0]], out[inits[1]] = out[inits[1]], out[inits[0]]
        yield Planted("eq-swap-inits", name, inits[0] + 1, "\n".join(out), equivalent=True,
                      what="first two mbarrier inits swapped")


def eq_duplicate_fence(name: str, lines: list[str]) -> Iterator[Planted]:
    for i, line in enumerate(lines):
        if "tl::fence_barrier_init();" in line:
            out = list(lines)
            out[i] = line + " tl::fence_barrier_init();"
            yield Planted("eq-duplicate-fence", name, i + 1, "\n".join(out), equivalent=True,
                          what="fence_barrier_init duplicated")


def eq_duplicate_wgmma_wait(name: str, lines: list[str]) -> Iterator[Planted]:
    """A second `warpgroup_wait<0>` right after one: nothing is in flight to wait for."""
    for i, line in enumerate(lines):
        if "tl::warpgroup_wait<0>();" in line:
            out = list(lines)
            out[i] = line + " tl::warpgroup_wait<0>();"
            yield Planted("eq-duplicate-wgmma-wait", name, i + 1, "\n".join(out), equivalent=True,
                          what="warpgroup_wait<0> duplicated")


OPERATORS: dict[str, tuple[Callable[[str, list[str]], Iterator[Planted]], tuple[str, ...]]] = {
    "drop-commit": (drop_commit, ("sm_80",)),
    "drop-raw-barrier": (drop_raw_barrier, ("sm_80",)),
    "drop-war-barrier": (drop_war_barrier, ("sm_80",)),
    "wait-shallower": (wait_shallower, ("sm_80",)),
    "drop-consumer-arrive": (drop_consumer_arrive, ("sm_90",)),
    "expect-tx-to-arrive": (expect_tx_to_arrive, ("sm_90",)),
    "halve-expect-tx": (halve_expect_tx, ("sm_90",)),
    "halve-init-count": (halve_init_count, ("sm_90",)),
    "drop-fence-barrier-init": (drop_fence_barrier_init, ("sm_90",)),
    "drop-wgmma-wait": (drop_wgmma_wait, ("sm_90",)),
    "wgmma-wait-deeper": (wgmma_wait_deeper, ("sm_90",)),
    "eq-wait-deeper": (eq_wait_deeper, ("sm_80",)),
    "eq-duplicate-barrier": (eq_duplicate_barrier, ("sm_80", "sm_90")),
    "eq-swap-inits": (eq_swap_inits, ("sm_90",)),
    "eq-duplicate-fence": (eq_duplicate_fence, ("sm_90",)),
    "eq-duplicate-wgmma-wait": (eq_duplicate_wgmma_wait, ("sm_90",)),
}


def _redundant_barrier_lines(report, path: str) -> set[int]:
    return {f.location.line for f in report.findings
            if f.rule == "redundant-barrier" and f.location.path == path}


def plant(names: list[str], classes: list[str], host) -> list[Planted]:
    """Every mutant of the selected classes; a deleted barrier the clean fixture reports as
    redundant becomes the equivalent class `eq-drop-redundant-barrier`."""
    clean = run_check([str(KERNELS / n) for n in names], host, CheckOptions(jobs=1))
    out: list[Planted] = []
    for name in names:
        lines = (KERNELS / name).read_text().split("\n")
        redundant = _redundant_barrier_lines(clean, str(KERNELS / name))
        for klass, (op, archs) in OPERATORS.items():
            if klass not in classes or _arch(name) not in archs:
                continue
            for p in op(name, lines):
                if klass in ("drop-raw-barrier", "drop-war-barrier") and p.line in redundant:
                    if "eq-drop-redundant-barrier" in classes:
                        out.append(Planted("eq-drop-redundant-barrier", name, p.line, p.text, True,
                                           p.what + " (clean: redundant-barrier)"))
                    continue
                out.append(p)
    return out


def evaluate(planted: list[Planted], host) -> list[Outcome]:
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="pipelint-sites-") as tmp:
        paths = []
        for k, p in enumerate(planted):
            path = Path(tmp) / f"m{k:04d}_{p.klass}_L{p.line}_{p.fixture}"
            path.write_text(p.text)
            paths.append(str(path))
        report = run_check(paths, host, CheckOptions(jobs=1))
        by_path: dict[str, list] = defaultdict(list)
        for f in report.findings:
            by_path[f.location.path].append(f)
        for p, path in zip(planted, paths):
            findings = sorted(by_path.get(path, []), key=lambda f: (f.location.line, f.rule))
            o = Outcome(p.klass, p.fixture, _arch(p.fixture), _stages(p.fixture), p.line, p.what, p.equivalent)
            o.reported = [(f.severity.value, f.rule, f.location.line) for f in findings]
            o.errors = sum(1 for f in findings if f.severity.value == "error")
            if not p.equivalent:
                rules = CLASSES[p.klass]
                hits = [f for f in findings if f.rule in rules and f.severity.value in ("error", "warning")]
                o.found = bool(hits)
                o.at_site = any(abs(f.location.line - p.line) <= SITE_WINDOW for f in hits)
            outcomes.append(o)
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    rows = ["| class | arch | expected rule(s) | planted | found anywhere | at site (±4) |",
            "| --- | --- | --- | ---: | ---: | ---: |"]
    total = [0, 0, 0]
    for klass in CLASSES:
        for arch in ARCHS:
            sel = [o for o in outcomes if o.klass == klass and o.arch == arch]
            if not sel:
                continue
            n, f, s = len(sel), sum(o.found for o in sel), sum(o.at_site for o in sel)
            total = [total[0] + n, total[1] + f, total[2] + s]
            by_stage = " ".join(f"s{st}:{sum(o.at_site for o in sel if o.stages == st)}/"
                                f"{sum(1 for o in sel if o.stages == st)}" for st in STAGES)
            rows.append(f"| {klass} | {arch} | {', '.join(CLASSES[klass])} | {n} | {f} | {s} ({by_stage}) |")
    if total[0]:
        rows.append(f"| **all defects** | | | {total[0]} | {total[1]} ({total[1] / total[0]:.3f}) "
                    f"| {total[2]} ({total[2] / total[0]:.3f}) |")
    rows += ["", "| equivalent mutation | arch | mutants | with any error finding (must be 0) |",
             "| --- | --- | ---: | ---: |"]
    for klass in EQUIVALENT_CLASSES:
        for arch in ARCHS:
            sel = [o for o in outcomes if o.klass == klass and o.arch == arch]
            if sel:
                rows.append(f"| {klass} | {arch} | {len(sel)} | {sum(1 for o in sel if o.errors)} |")
    return "\n".join(rows)


def misses(outcomes: list[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if (not o.equivalent and not o.at_site) or (o.equivalent and o.errors)]


def _describe(o: Outcome) -> str:
    rep = ", ".join(f"{rule}@{line}" + ("" if sev == "error" else f"({sev[0]})") for sev, rule, line in o.reported
                    if not (sev == "note" and rule in ("unknown-intrinsic",)))
    return rep or "nothing"


def miss_list(outcomes: list[Outcome]) -> str:
    rows = ["| file | class | planted line | edit | found elsewhere "
            "| reported instead (rule@line; (w) warning, (n) note) |",
            "| --- | --- | ---: | --- | --- | --- |"]
    for o in misses(outcomes):
        where = "equivalent: ERROR" if o.equivalent else ("yes" if o.found else "no")
        rows.append(f"| {o.fixture} | {o.klass} | {o.line} | {o.what} | {where} | {_describe(o)} |")
    return "\n".join(rows)


def _tree() -> str:
    """The commit measured, and whether analyzer/ or plugins/ had uncommitted changes."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "analyzer", "plugins"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "tree unknown"
    return f"tree {head}" + (" + uncommitted changes in analyzer/ or plugins/" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write every outcome and the summary here")
    ap.add_argument("--class", dest="classes", action="append", choices=list(OPERATORS) + ["eq-drop-redundant-barrier"],
                    help="only these classes (repeat); default all")
    ap.add_argument("--fixture", default="*", help="only fixtures matching this glob")
    args = ap.parse_args(argv)
    classes = args.classes or list(OPERATORS) + ["eq-drop-redundant-barrier"]
    if args.classes and ("drop-raw-barrier" in classes or "drop-war-barrier" in classes):
        classes.append("eq-drop-redundant-barrier")
    host = load_plugins()
    start = time.perf_counter()
    planted = plant(fixtures(args.fixture), classes, host)
    outcomes = evaluate(planted, host)
    seconds = time.perf_counter() - start
    print(f"# Planted defects by class ({len(outcomes)} mutants, {seconds:.0f} s; {_tree()})\n")
    print(table(outcomes))
    print(f"\n## Misses ({len(misses(outcomes))})\n")
    print(miss_list(outcomes))
    if args.json:
        defects = [o for o in outcomes if not o.equivalent]
        Path(args.json).write_text(json.dumps({
            "planted": len(defects), "found": sum(o.found for o in defects),
            "at_site": sum(o.at_site for o in defects),
            "equivalent": sum(1 for o in outcomes if o.equivalent),
            "equivalent_with_error": sum(1 for o in outcomes if o.equivalent and o.errors),
            "window": SITE_WINDOW, "tree": _tree(), "outcomes": [asdict(o) for o in outcomes],
        }, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
