"""`pipelint lower`: the seed's experiment as a command (sweep, check every variant, render)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import Report, Severity
from ..lowering.failures import def_line
from ..lowering.sweep import LoweredVariant
from ..options import add_command, add_output_options, project_root
from ..options import fmt_fact as _fmt
from ..report.escape import visible
from .flags import flag_type
from .variants import analyze_variants

if TYPE_CHECKING:
    from ..lowering.driver import KernelRef
    from ..pluginhost import PluginHost


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "lower", "lower a TileLang kernel for num_stages x arch and check every variant",
                    "Compile-only lowering with TileLang (no GPU; needs the tilelang extra), one worker "
                    "process per variant, cached; each variant's CUDA and IR facts are checked and compared.",
                    ["pipelint lower gemm.py:matmul --num-stages 1 2 3 --arch sm_80 sm_90",
                     "pipelint lower gemm.py --param block_K=64 --dump-dir lowered",
                     "pipelint lower gemm.py --trace terminal"])
    p.add_argument("kernel", metavar="FILE.py[:NAME]",
                   help="a Python file and the kernel factory or @jit/@autotune function in it")
    p.add_argument("--num-stages", type=flag_type("lower.num-stages", integer=True), nargs="+",
                   default=[0, 1, 2, 3, 4], metavar="N",
                   help="num_stages values to lower (default 0 1 2 3 4)")
    p.add_argument("--arch", nargs="+", default=["sm_80", "sm_90"], help="targets (default sm_80 sm_90)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a factory parameter (repeatable)")
    p.add_argument("--dump-dir", default=None, metavar="DIR", help="write each variant's CUDA here")
    p.add_argument("--jobs", "-j", type=flag_type("lower.jobs", integer=True), default=0,
                   help="parallel lowering workers (0: auto)")
    p.add_argument("--timeout", type=flag_type("lower.timeout"), default=300.0, help="seconds per variant")
    p.add_argument("--trace", choices=("terminal", "html", "both"), default=None,
                   help="pass TileLang's TL_LOWER_TRACE through (written next to the dump)")
    p.add_argument("--no-cache", action="store_true", help="lower every variant again (ignore the lowering cache)")
    p.add_argument("--configs", default=None, metavar="all|N",
                   help="for an @autotune kernel: lower and check every configuration the autotuner would try "
                        "(or the first N) and say which are ruled out before timing")
    add_output_options(p)
    p.set_defaults(func=cmd_lower)


def cmd_lower(args: argparse.Namespace, host: PluginHost) -> int:
    with tempfile.TemporaryDirectory(prefix="pipelint-lower-") as scratch:
        return _lower(args, host, Path(scratch))


def _lower(args, host, scratch: Path) -> int:
    from ..lowering.driver import KernelRef, lower_variants, parse_params

    if args.configs:
        from .configs import lower_configs

        return lower_configs(args, host, scratch)

    ref = KernelRef.parse(args.kernel)
    params = parse_params(args.param)
    dump = Path(args.dump_dir) if args.dump_dir else scratch / "cuda"
    cache = scratch / "cache" if args.no_cache else None
    from ..progress import Progress

    total = len(args.arch) * len(args.num_stages)
    # one line per variant on stderr: rewritten in place on a terminal, a plain line in a CI log
    with Progress("lowering", total, quiet=args.quiet, log=True) as progress:
        def done(v) -> None:
            state = "cached" if v.cached else f"lowered in {v.seconds:.1f} s" if v.ok else \
                f"failed ({v.error_kind or 'error'}) after {v.seconds:.1f} s"
            stages = "as written" if v.as_written else f"num_stages={v.num_stages}"
            progress.note(f"  {v.arch} {stages}: {state}", f"pipelint lower: {ref.file} {v.arch} {stages}: {state}")
            progress.advance(1, f"{v.arch} s{v.num_stages}")

        info, variants = lower_variants(ref, args.arch, args.num_stages, params, jobs=args.jobs,
                                        timeout=args.timeout, cache_dir=cache, trace=args.trace,
                                        trace_dir=dump / "trace", on_done=done,
                                        colour=_colour(args, sys.stderr))
    kernel = info.get("name") or Path(ref.file).stem
    _autotune_note(info, params)
    _as_written_note(info, kernel, variants, args.quiet)
    report = Report(rules=dict(host.rules), errors=list(host.errors))
    failed_at = def_line(ref.file, kernel) if any(not v.ok for v in variants) else 1
    if args.dump_dir:
        from ..lowering.driver import variant_filename

        rel = Path(os.path.relpath(Path(ref.file).resolve(), dump.resolve())).as_posix()
        claim_dump_names(dump, [variant_filename(kernel, v) for v in variants], f"{rel}:{kernel}")
        _record_failures(dump, kernel, variants, rel, ref.file, failed_at)
    lowered = analyze_variants(kernel, variants, host, dump, report, keep_paths=bool(args.dump_dir))
    _user_lines(report, lowered, variants, ref, kernel)
    from ..lowering.hopper import tma_facts

    for lv, v in zip(lowered, variants):
        lv.as_written = v.as_written
        if lv.ok and lv.model is not None:
            lv.tma = tma_facts(lv.model, lv.facts, v.result.get("cuda", ""))
    from ..config import apply_config, fail_on_performance, load_config

    config = load_config([ref.file], args.config, host)
    fail_on = apply_config(report, config, args, host)
    text = render_lower(args.format, kernel, ref, info, lowered, report, host, args,
                        root=str(project_root(args, config)))
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if args.sarif_output:
        from ..report import get_reporter

        Path(args.sarif_output).write_text(get_reporter("sarif", host)(
            report, host=host, category=args.sarif_category, root=str(project_root(args, config))))
    return 0 if args.exit_zero else report.exit_code(fail_on, fail_on_performance(config, args))


def _colour(args: argparse.Namespace, stream) -> bool:
    """Whether colour may reach `stream`: `--color always|never`, then NO_COLOR, FORCE_COLOR, a terminal."""
    choice = getattr(args, "color", "auto")
    if choice in ("always", "never"):
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _as_written_note(info: dict, kernel: str, variants: list, quiet: bool) -> None:
    """Say that a kernel without a num_stages parameter was checked only as written (issue 39)."""
    if not info.get("as_written") or quiet:
        return
    written = sorted({v.num_stages for v in variants if v.ok})
    said = f"num_stages={', '.join(map(str, written))}" if written else "its written stages"
    sys.stderr.write(visible(f"pipelint: {kernel} takes no num_stages parameter: lowered as written, so only "
                             f"the stage count it is written with ({said}) was checked; give the factory a "
                             f"`num_stages` parameter to sweep it") + "\n")


def _record_failures(dump: Path, kernel: str, variants: list, rel: str, py: str, line: int) -> None:
    """Leave a record of each variant that did not lower where its CUDA would be (issue 39), so
    that `check` on the dump folder reports it; a variant that lowered replaces the record."""
    from ..lowering.driver import variant_filename
    from ..lowering.failures import named_line, record_text

    for v in variants:
        if v.ok:
            continue
        at = named_line(py, v.error, v.result.get("detail")) or line
        path = dump / variant_filename(kernel, v)
        dump.mkdir(parents=True, exist_ok=True)
        path.write_text(record_text(rel, kernel, v.arch, v.num_stages, v.error, v.error_kind, at))
        path.with_suffix(".json").write_text(json.dumps(
            {"ok": False, "error": v.error, "kind": v.error_kind, "arch": v.arch, "num_stages": v.num_stages},
            indent=2, sort_keys=True) + "\n")


def _user_lines(report: Report, lowered: list, variants: list, ref: KernelRef, kernel: str) -> None:
    """`lowering-failed` at the kernel's Python line, explained (issue 34/39), in place of the
    first line of a CUDA file that was never made."""
    from ..lowering.failures import RULE, failure_finding

    by_path = {lv.location_path: (lv, v) for lv, v in zip(lowered, variants)}
    out = []
    for f in report.findings:
        hit = by_path.get(f.location.path) if f.rule == RULE else None
        if hit is None or hit[0].ok:
            out.append(f)
            continue
        lv, v = hit
        out.append(failure_finding(ref.file, kernel, v.arch, v.num_stages, v.error, v.error_kind,
                                   v.result.get("detail")))
    report.findings = out
    for lv in lowered:
        lv.findings = [next((g for g in out if g.rule == RULE and g.kernel == kernel and
                             f"{lv.arch} num_stages={lv.num_stages}:" in g.message), f)
                       if f.rule == RULE else f for f in lv.findings]


MANIFEST = ".pipelint-dumps.json"


def claim_dump_names(dump: Path, names: list[str], owner: str) -> None:
    """Record which module (relative to the folder) and kernel each dumped file comes from
    (`<dump>/.pipelint-dumps.json`);
    a name another module's kernel already holds is a usage error, before anything is written:
    two modules with a factory called `make` must not overwrite each other's CUDA silently."""
    from ..errors import UsageError

    path = dump / MANIFEST
    try:
        owners: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        owners = {}
    taken = sorted(n for n in names if owners.get(n, owner) != owner)
    if taken:
        raise UsageError(f"--dump-dir {dump}: {taken[0]} was dumped from {owners[taken[0]]}; lowering {owner} "
                         f"would overwrite it ({len(taken)} file(s) collide). Give each module its own folder "
                         f"(`--dump-dir {dump}/<module>`) or remove {path} to start afresh")
    owners.update(dict.fromkeys(names, owner))
    dump.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(owners, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _autotune_note(info: dict, params: dict) -> None:
    """Say which of an `@autotune` kernel's configurations was lowered."""
    configs = info.get("configs")
    if info.get("kind") != "autotune" or not configs:
        return
    index = next((i for i, c in enumerate(configs) if all(params.get(k, v) == v for k, v in c.items())), 0)
    shown = ", ".join(f"{k}={v}" for k, v in configs[index].items())
    sys.stderr.write(visible(f"pipelint: {info.get('name')} is @autotune'd over {len(configs)} configurations; "
                             f"lowered configuration {index + 1} ({shown}); pick another with --param NAME=VALUE")
                     + "\n")


def render_lower(fmt: str, kernel: str, ref: KernelRef, info: dict, lowered: list[LoweredVariant], report: Report,
                 host: PluginHost, args: argparse.Namespace, root: str | None = None) -> str:
    from ..report import get_reporter
    from ..report.present import shown

    items = shown(report)           # what every format shows and counts: one finding per defect
    loops = python_loops(ref.file, kernel)

    if fmt == "json":
        return _lower_json(kernel, ref, info, lowered, report, items, loops)
    if fmt != "text":       # every other registered format renders the sweep's report
        return get_reporter(fmt, host)(report, host=host, category=args.sarif_category, colour=False,
                                       statistics=getattr(args, "statistics", False), root=root,
                                       quiet=getattr(args, "quiet", False))
    lines = [f"kernel {kernel} ({ref.file}), TileLang {info.get('tilelang')}", ""]
    lines += _variant_table(lowered)
    lines += _tma_table(lowered)
    if info.get("as_written"):
        lines += ["", f"{kernel} takes no num_stages parameter: lowered as written; only its written stage "
                      f"count was checked"]
    lines += _planner_facts(lowered, loops, ref.file)
    lines.append("")
    lines += _finding_lines(items, report, dumped=bool(args.dump_dir))
    lines.append(_sweep_summary(lowered, items))
    if args.dump_dir:
        lines.append(f"CUDA and IR facts written to {args.dump_dir}/")
    return "\n".join(visible(line) for line in lines) + "\n"       # kernel, file and loop names are input


def _lower_json(kernel: str, ref: KernelRef, info: dict, lowered: list[LoweredVariant], report: Report,
                items: list, loops: list[tuple[str, int]]) -> str:
    """`--format json`: the kernel, every variant with its facts and findings, the shown findings."""
    from ..report.json_report import finding_dict, shown_dict

    doc = {
        "tool": {"name": "pipelint", "version": __import__("pipelint").__version__},
        "kernel": {"file": ref.file, "name": kernel, "tilelang": info.get("tilelang")},
        "variants": [_variant_dict(lv, finding_dict, loops) for lv in lowered],
        "findings": [shown_dict(s) for s in items],
        "errors": [{"message": e.message, "plugin": e.plugin} for e in report.errors],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _variant_table(lowered: list[LoweredVariant]) -> list[str]:
    """One row per variant: the planner's stage and order, versions, the steady cp.async wait,
    barriers, shared memory and how many findings (notes aside) it has."""
    from ..report.table import columns

    header = ("arch", "N", "stage", "order", "versions", "wait/groups", "in flight", "barriers/iter",
              "smem bytes", "findings")
    rows = [header]
    for lv in lowered:
        loop = lv.pipelined_loops[0] if lv.pipelined_loops else {}
        wait = lv.steady_wait()
        rows.append((lv.arch, str(lv.num_stages), _fmt(loop.get("software_pipeline_stage")),
                     _fmt(loop.get("software_pipeline_order")),
                     _fmt(lv.max_versions if lv.ok else None), f"{wait[0]}/{wait[1]}" if wait else "-",
                     _fmt(lv.in_flight), _fmt(lv.barriers_per_iteration), _fmt(lv.shared_bytes),
                     "FAILED" if not lv.ok else str(sum(1 for f in lv.findings if f.severity != Severity.NOTE))))
    return columns(rows)


def _tma_table(lowered: list[LoweredVariant]) -> list[str]:
    """The Hopper variants' TMA pipeline table under a blank line and its title; nothing without one."""
    from ..lowering.hopper import table_rows
    from ..report.table import columns

    tma = table_rows(lowered)
    if not tma:
        return []
    return ["", "TMA pipeline (Hopper: stage slots with full/empty mbarriers instead of cp.async groups):",
            *columns(tma)]


def _planner_facts(lowered: list[LoweredVariant], loops: list[tuple[str, int]], path: str) -> list[str]:
    """The planner's three facts of each pipelined loop of each variant, as the seed document writes them."""
    lines: list[str] = []
    for lv in lowered:
        named = loop_names(lv.pipelined_loops, loops, path)
        for loop, name in zip(lv.pipelined_loops, named):
            lines += ["", f"{lv.arch} num_stages={lv.num_stages} ({name}):",
                      f"software_pipeline_stage = {loop['software_pipeline_stage']}",
                      f"software_pipeline_order = {loop['software_pipeline_order']}",
                      f"tl_pipelined_num_stages = {loop['tl_pipelined_num_stages']}"]
    return lines


def _finding_lines(items: list, report: Report, dumped: bool) -> list[str]:
    """Each shown finding as `check` prints it, with its source line where there is a file to
    show it from (a dump, or the user's Python), then the tool errors."""
    from ..report.text import format_finding

    lines: list[str] = []
    for s in items:
        at_python = s.finding.location.path.endswith(".py")
        lines.extend(format_finding(s.finding, False, source=dumped or at_python))
    for e in report.errors:
        lines.append(f"tool error: {e.message}")
    return lines


def _sweep_summary(lowered: list[LoweredVariant], items: list) -> str:
    """Variants lowered, and the findings by severity: the same count as `check` on the dump
    folder (the findings shown, each defect once)."""
    ok = sum(1 for lv in lowered if lv.ok)
    counts = {s: sum(1 for item in items if item.finding.severity == s) for s in Severity}
    return (f"{len(lowered)} variant(s), {ok} lowered: {counts[Severity.ERROR]} error(s), "
            f"{counts[Severity.WARNING]} warning(s), {counts[Severity.NOTE]} note(s)")


def python_loops(path: str, kernel: str | None) -> list[tuple[str, int]]:
    """(loop variable, line) of each `for ... in T.Pipelined(...)` of the kernel's function (the
    whole file when it is not found), in source order."""
    import ast

    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    scope: ast.AST = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and n.name == kernel), tree)
    found = []
    for node in ast.walk(scope):
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call):
            func = node.iter.func
            if isinstance(func, ast.Attribute) and func.attr == "Pipelined":
                target = node.target
                names = [t.id for t in (target.elts if isinstance(target, ast.Tuple) else [target])
                         if isinstance(t, ast.Name)]
                found.append((",".join(names), node.lineno))
    return sorted(found, key=lambda t: t[1])


def loop_lines(planned: list[dict], loops: list[tuple[str, int]]) -> list[int | None]:
    """The Python line of each planned loop: matched to the kernel's `T.Pipelined` loops in
    order, by variable (TVM renames a second `k` to `k_1`); None when no loop of the source is
    left for it."""
    import re

    free = list(loops)
    out: list[int | None] = []
    for lp in planned:
        var = str(lp.get("loop_var"))
        base = re.sub(r"_\d+$", "", var)
        hit = next((loop for loop in free if loop[0] in (var, base)), None)
        if hit is not None:
            free.remove(hit)
        out.append(hit[1] if hit else None)
    return out


def loop_names(planned: list[dict], loops: list[tuple[str, int]], path: str) -> list[str]:
    """`loop over k at gemm.py:24` for each planned loop (two loops over `k` are told apart)."""
    name = Path(path).name
    return [f"loop over {lp.get('loop_var')}" + (f" at {name}:{line}" if line else "")
            for lp, line in zip(planned, loop_lines(planned, loops))]


def _variant_dict(lv: LoweredVariant, finding_dict, loops: list[tuple[str, int]] | None = None) -> dict:
    wait = lv.steady_wait()
    lines = loop_lines(lv.pipelined_loops, loops or [])
    return {
        "arch": lv.arch, "num_stages": lv.num_stages, "ok": lv.ok, "error": lv.error,
        "error_kind": lv.error_kind, "cached": lv.cached, "lowering_seconds": lv.seconds,
        "as_written": lv.as_written, "tma": lv.tma,
        "pipelined_loops": [{**{k: loop.get(k) for k in ("loop_var", "software_pipeline_stage",
                                                         "software_pipeline_order", "tl_pipelined_num_stages",
                                                         "software_pipeline_async_producers")},
                             "python_line": line}
                            for loop, line in zip(lv.pipelined_loops, lines)],
        "shared_shapes": {k: v for k, v in lv.facts.get("shared_shapes", {}).items() if "@" not in k}
        if lv.ok else None,
        "tma_box_bytes": lv.facts.get("tma_box_bytes") if lv.ok else None,
        "versions": lv.versions, "steady_wait": wait[0] if wait else None,
        "commit_groups_per_iteration": wait[1] if wait else None, "in_flight": lv.in_flight,
        "barriers_per_iteration": lv.barriers_per_iteration, "shared_bytes": lv.shared_bytes,
        "cuda": lv.path if lv.ok and lv.dumped else None,
        "findings": [finding_dict(f) for f in sorted(lv.findings, key=lambda f: f.sort_key)],
    }
