"""`pipelint lower KERNEL --configs all`: rule out autotuner configurations before timing them.

An `@autotune` kernel lists the configurations the autotuner will compile and time on a GPU.
Many can be ruled out statically, without a GPU: the variant does not lower, needs more shared
memory than a block may have, or pipelint finds an error in it.  Each configuration is lowered
(compile-only worker processes, in parallel, cached like every `lower`) and checked; the table
and the JSON say which are worth timing, and `pipelint.tilelang.prune(configs, verdicts)` keeps
those in a tuning script.
"""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..findings import Report, Severity
from ..report.table import columns


def lower_configs(args: Any, host: Any, scratch: Path) -> int:
    from ..lowering.driver import KernelRef, discover, lower_variants, parse_params
    from ..progress import Progress
    from .variants import analyze_variants

    ref = KernelRef.parse(args.kernel)
    base = parse_params(args.param)
    found = discover(ref, args.timeout)
    configs = found.get("configs") or []
    if found.get("kind") != "autotune" or not configs:
        raise UsageError(f"--configs needs an @autotune kernel whose configurations are listed; "
                         f"{args.kernel} is a {found.get('kind')} with none")
    if args.configs != "all":
        try:
            configs = configs[:int(args.configs)]
        except ValueError:
            raise UsageError(f"--configs: expected all or a number, got {args.configs!r}") from None
    stage_key = found.get("stage_param") or "num_stages"
    cache = scratch / "cache" if args.no_cache else None
    started = time.perf_counter()

    def lower_one(cfg: dict) -> tuple[dict, list, float]:
        params = {**base, **{k: v for k, v in cfg.items() if k != stage_key}}
        stages = [cfg[stage_key]] if stage_key in cfg else args.num_stages
        t0 = time.perf_counter()
        _, variants = lower_variants(ref, args.arch, stages, params, jobs=1, timeout=args.timeout,
                                     cache_dir=cache, known=found)
        return cfg, variants, time.perf_counter() - t0

    rows = []
    with Progress("lowering configurations", len(configs), quiet=args.quiet) as progress, \
            ThreadPoolExecutor(max_workers=args.jobs or 2) as pool:
        for cfg, variants, seconds in pool.map(lower_one, configs):
            report = Report(rules=dict(host.rules))
            lowered = analyze_variants(str(found.get("name") or ref.name), variants, host, scratch / "cuda", report,
                                       keep_paths=False)
            rows.append(_verdict(cfg, lowered, report, seconds))
            progress.advance(1, _label(cfg))
    elapsed = time.perf_counter() - started
    out = _render(args.format, ref, found, rows, elapsed)
    if args.output:
        Path(args.output).write_text(out)
    else:
        sys.stdout.write(out)
    return 0


def _verdict(cfg: dict, lowered: list, report: Report, seconds: float) -> dict:
    reason = _ruled_out(lowered, report)
    smem = [lv.shared_bytes for lv in lowered if lv.ok and lv.shared_bytes is not None]
    return {"config": cfg, "ruled_out": reason, "seconds": round(seconds, 2),
            "shared_bytes": max(smem) if smem else None,
            "findings": {s.value: sum(1 for f in report.findings if f.severity == s) for s in Severity},
            "variants": [{"arch": lv.arch, "num_stages": lv.num_stages, "ok": lv.ok, "cached": lv.cached}
                         for lv in lowered]}


def _ruled_out(lowered: list, report: Report) -> str | None:
    """Why a configuration is not worth timing: it does not lower, needs more resources than a
    block may have (an error of a rule tagged `resources`: shared memory), or has error
    findings; None when it is."""
    failed = [lv for lv in lowered if not lv.ok]
    errors = sorted({f.rule for f in report.findings if f.severity == Severity.ERROR})
    if failed:
        return f"lowering failed ({failed[0].error_kind or 'error'})"
    if any("resources" in getattr(report.rules.get(r), "tags", ()) for r in errors):
        return "over the shared-memory budget"
    return "error findings: " + ", ".join(errors) if errors else None


def _label(cfg: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in cfg.items())


def _render(fmt: str, ref: Any, found: dict, rows: list[dict], elapsed: float) -> str:
    out_of = sum(1 for r in rows if r["ruled_out"])
    summary = {"configs": len(rows), "ruled_out": out_of, "worth_timing": len(rows) - out_of,
               "seconds": round(elapsed, 1), "seconds_per_config": round(elapsed / len(rows), 2) if rows else 0}
    if fmt == "json":
        doc = {"kernel": {"file": ref.file, "name": found.get("name")}, "configs": rows,
               "worth_timing": [r["config"] for r in rows if not r["ruled_out"]], "summary": summary}
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    table = [("configuration", "smem bytes", "findings (e/w/n)", "verdict", "s")]
    for r in rows:
        f = r["findings"]
        table.append((_label(r["config"]), str(r["shared_bytes"] or "-"), f"{f['error']}/{f['warning']}/{f['note']}",
                      f"ruled out: {r['ruled_out']}" if r["ruled_out"] else "worth timing", f"{r['seconds']:.1f}"))
    lines = columns(table)          # escapes its cells
    lines.append(f"{summary['configs']} configuration(s): {out_of} ruled out, {summary['worth_timing']} worth timing "
                 f"({summary['seconds']} s, {summary['seconds_per_config']} s per configuration)")
    return "\n".join(lines) + "\n"
