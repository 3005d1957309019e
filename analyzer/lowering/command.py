"""`pipelint lower` and `pipelint diff`: the seed's experiment as commands."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ..findings import Report, Severity
from .sweep import LoweredVariant


def add_parsers(sub, add_output_options) -> None:
    p = sub.add_parser("lower", help="lower a TileLang kernel for num_stages x arch and check every variant")
    p.add_argument("kernel", metavar="FILE.py[:NAME]")
    p.add_argument("--num-stages", type=int, nargs="+", default=[0, 1, 2, 3, 4], metavar="N")
    p.add_argument("--arch", nargs="+", default=["sm_80", "sm_90"])
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--dump-dir", default=None, metavar="DIR")
    p.add_argument("--jobs", "-j", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per variant")
    p.add_argument("--trace", choices=("terminal", "html", "both"), default=None,
                   help="pass TileLang's TL_LOWER_TRACE through (written next to the dump)")
    p.add_argument("--no-cache", action="store_true")
    add_output_options(p)
    p.set_defaults(func=cmd_lower)
    d = sub.add_parser("diff", help="compare the pipeline facts of two generated kernels")
    d.add_argument("a", metavar="A.cu")
    d.add_argument("b", metavar="B.cu")
    d.set_defaults(func=cmd_diff)


def cmd_lower(args, host) -> int:
    with tempfile.TemporaryDirectory(prefix="pipelint-lower-") as scratch:
        return _lower(args, host, Path(scratch))


def _lower(args, host, scratch: Path) -> int:
    from .driver import KernelRef, lower_variants, parse_params

    ref = KernelRef.parse(args.kernel)
    params = parse_params(args.param)
    dump = Path(args.dump_dir) if args.dump_dir else scratch / "cuda"
    cache = scratch / "cache" if args.no_cache else None
    info, variants = lower_variants(ref, args.arch, args.num_stages, params, jobs=args.jobs,
                                    timeout=args.timeout, cache_dir=cache, trace=args.trace,
                                    trace_dir=dump / "trace")
    kernel = info.get("name") or Path(ref.file).stem
    _autotune_note(info, params)
    report = Report(rules=dict(host.rules), errors=list(host.errors))
    lowered = analyze_variants(kernel, variants, host, dump, report, keep_paths=bool(args.dump_dir))
    from ..config import apply_config, load_config

    fail_on = apply_config(report, load_config([ref.file], args.config, host), args, host)
    text = render_lower(args.format, kernel, ref, info, lowered, report, host, args)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if args.sarif_output:
        from ..report import get_reporter

        Path(args.sarif_output).write_text(get_reporter("sarif", host)(report, host=host, category=args.sarif_category))
    return report.exit_code(fail_on)


def _autotune_note(info: dict, params: dict) -> None:
    """Say which of an `@autotune` kernel's configurations was lowered."""
    configs = info.get("configs")
    if info.get("kind") != "autotune" or not configs:
        return
    index = next((i for i, c in enumerate(configs) if all(params.get(k, v) == v for k, v in c.items())), 0)
    shown = ", ".join(f"{k}={v}" for k, v in configs[index].items())
    sys.stderr.write(f"pipelint: {info.get('name')} is @autotune'd over {len(configs)} configurations; "
                     f"lowered configuration {index + 1} ({shown}); pick another with --param NAME=VALUE\n")


def analyze_variants(kernel: str, variants, host, dump: Path, report: Report,
                     keep_paths: bool = True) -> list[LoweredVariant]:
    """Write each variant's CUDA and facts, check it, then run the sweep checks."""
    from ..engine import analyze_source
    from .driver import variant_filename

    lowered: list[LoweredVariant] = []
    dump.mkdir(parents=True, exist_ok=True)
    for v in variants:
        lv = LoweredVariant(kernel, v.arch, v.num_stages, v.ok, v.error, v.result,
                            error_kind=v.error_kind, cached=v.cached, seconds=round(v.seconds, 2))
        if v.ok:
            path = dump / variant_filename(kernel, v)
            path.write_text(v.result["cuda"])
            facts = {k: val for k, val in v.result.items() if k != "cuda"}
            path.with_suffix(".json").write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
            lv.path = str(path) if keep_paths else path.name
            lv.dumped = keep_paths
            result, findings, errors, models = analyze_source(str(path), v.result["cuda"], host)
            lv.model = models[0] if models else None
            lv.findings = [_rename(f, lv.path) for f in findings]
            report.files.append(result)
            report.errors.extend(errors)
        lowered.append(lv)
    sweep_findings, errors = host.check_variants(lowered)
    report.errors.extend(errors)
    for f in sweep_findings:
        owner = next((lv for lv in lowered if lv.path == f.location.path or
                      f.location.path == f"{kernel}_{lv.arch}_s{lv.num_stages}.cu"), None)
        (owner.findings if owner else report.findings).append(f)
    for lv in lowered:
        report.findings.extend(lv.findings)
    return lowered


def _rename(f, path):
    from dataclasses import replace

    return replace(f, location=replace(f.location, path=path)) if f.location.path != path else f


def _fmt(x) -> str:
    return "-" if x is None or x == [] else str(x)


def render_lower(fmt, kernel, ref, info, lowered, report, host, args) -> str:
    from ..report import get_reporter
    from ..report.json_report import finding_dict
    from ..report.text import format_finding

    if fmt == "json":
        doc = {
            "tool": {"name": "pipelint", "version": __import__("pipelint").__version__},
            "kernel": {"file": ref.file, "name": kernel, "tilelang": info.get("tilelang")},
            "variants": [_variant_dict(lv, finding_dict) for lv in lowered],
            "findings": [finding_dict(f) for f in report.sorted_findings()],
            "errors": [{"message": e.message, "plugin": e.plugin} for e in report.errors],
        }
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if fmt != "text":       # every other registered format renders the sweep's report
        return get_reporter(fmt, host)(report, host=host, category=args.sarif_category, colour=False,
                                       statistics=getattr(args, "statistics", False))
    colour = False
    lines = [f"kernel {kernel} ({ref.file}), TileLang {info.get('tilelang')}", ""]
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
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for lv in lowered:
        for loop in lv.pipelined_loops:
            lines += ["", f"{lv.arch} num_stages={lv.num_stages} (loop over {loop['loop_var']}):",
                      f"software_pipeline_stage = {loop['software_pipeline_stage']}",
                      f"software_pipeline_order = {loop['software_pipeline_order']}",
                      f"tl_pipelined_num_stages = {loop['tl_pipelined_num_stages']}"]
    lines.append("")
    for f in report.sorted_findings():
        lines.extend(format_finding(f, colour, source=bool(args.dump_dir)))
    for e in report.errors:
        lines.append(f"tool error: {e.message}")
    ok = sum(1 for lv in lowered if lv.ok)
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in Severity}
    lines.append(f"{len(lowered)} variant(s), {ok} lowered: {counts[Severity.ERROR]} error(s), "
                 f"{counts[Severity.WARNING]} warning(s), {counts[Severity.NOTE]} note(s)")
    if args.dump_dir:
        lines.append(f"CUDA and IR facts written to {args.dump_dir}/")
    return "\n".join(lines) + "\n"


def _variant_dict(lv: LoweredVariant, finding_dict) -> dict:
    wait = lv.steady_wait()
    return {
        "arch": lv.arch, "num_stages": lv.num_stages, "ok": lv.ok, "error": lv.error,
        "error_kind": lv.error_kind, "cached": lv.cached, "lowering_seconds": lv.seconds,
        "pipelined_loops": [{k: loop.get(k) for k in ("loop_var", "software_pipeline_stage",
                                                      "software_pipeline_order", "tl_pipelined_num_stages",
                                                      "software_pipeline_async_producers")}
                            for loop in lv.pipelined_loops],
        "shared_shapes": {k: v for k, v in lv.facts.get("shared_shapes", {}).items() if "@" not in k}
        if lv.ok else None,
        "tma_box_bytes": lv.facts.get("tma_box_bytes") if lv.ok else None,
        "versions": lv.versions, "steady_wait": wait[0] if wait else None,
        "commit_groups_per_iteration": wait[1] if wait else None, "in_flight": lv.in_flight,
        "barriers_per_iteration": lv.barriers_per_iteration, "shared_bytes": lv.shared_bytes,
        "cuda": lv.path if lv.ok and lv.dumped else None,
        "findings": [finding_dict(f) for f in sorted(lv.findings, key=lambda f: f.sort_key)],
    }


def cmd_diff(args, host) -> int:
    from ..explain import load_models

    models = [load_models(path)[0] for path in (args.a, args.b)]
    a, b = (LoweredVariant(m.name, "", 0, True, None, {}, model=m) for m in models)
    rows = [("fact", args.a, args.b)]
    rows.append(("kernel", a.kernel, b.kernel))
    rows.append(("threads / roles", f"{a.model.threads} / {len(a.model.roles)}",
                 f"{b.model.threads} / {len(b.model.roles)}"))
    for name in sorted(set(a.model.buffers) | set(b.model.buffers)):
        rows.append((f"{name} (offset, versions x stride)", _buf(a, name), _buf(b, name)))
    wa, wb = a.steady_wait(), b.steady_wait()
    rows.append(("steady cp_async_wait / commits per iteration",
                 f"{wa[0]} / {wa[1]}" if wa else "-", f"{wb[0]} / {wb[1]}" if wb else "-"))
    rows.append(("stages in flight", _fmt(a.in_flight), _fmt(b.in_flight)))
    rows.append(("__syncthreads per steady iteration", _fmt(a.barriers_per_iteration), _fmt(b.barriers_per_iteration)))
    rows.append(("__syncthreads statements", str(len(a.model.cp_async.sync_nodes)),
                 str(len(b.model.cp_async.sync_nodes))))
    rows.append(("mbarriers (init counts)", _mbar(a.model), _mbar(b.model)))
    rows.append(("TMA loads per steady iteration", _tma(a.model), _tma(b.model)))
    rows.append(("shared memory bytes", _fmt(a.shared_bytes), _fmt(b.shared_bytes)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    out = []
    for i, r in enumerate(rows):
        mark = "  " if i == 0 or r[1] == r[2] else "* "
        out.append(mark + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print("\n".join(out))
    return 0


def _buf(v: LoweredVariant, name: str) -> str:
    buf = v.model.buffers.get(name)
    if buf is None:
        return "-"
    st = v.model.stages.get(name)
    return f"{buf.offset}, {st.versions} x {st.stride}" if st else f"{buf.offset}, 1 x {_fmt(buf.size)}"


def _mbar(model) -> str:
    inits = model.mbarrier_inits()
    if not inits:
        return "-"
    return f"{len(inits)} ({', '.join(str(ev.value) for _, ev in sorted(inits.items()))})"


def _tma(model) -> str:
    events = [e for t in model.trace.events for e in t if e.kind == "tma_load"]
    its = sorted({e.iteration for e in events if e.iteration}, key=lambda it: it[0][1])
    if not its:
        return str(len(events)) if events else "-"
    mid = its[len(its) // 2]
    return str(sum(1 for e in events if e.iteration == mid))

