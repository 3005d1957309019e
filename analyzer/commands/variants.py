"""Lowered variants checked the same way by `lower` and `lower --configs`: one module both use,
so the two command modules do not import each other."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import Report
from ..lowering.sweep import LoweredVariant

if TYPE_CHECKING:
    from ..pluginhost import PluginHost


def analyze_variants(kernel: str, variants: list, host: PluginHost, dump: Path, report: Report,
                     keep_paths: bool = True, enabled: frozenset[str] | None = None) -> list[LoweredVariant]:
    """Write each variant's CUDA and facts, check it, then run the sweep checks (only the
    checks of `enabled` rules; None: all)."""
    from ..engine import analyze_source
    from ..lowering.driver import variant_filename

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
            result, findings, errors, models = analyze_source(str(path), v.result["cuda"], host, enabled)
            lv.model = models[0] if models else None
            lv.findings = [_rename(f, lv.path) for f in findings]
            report.files.append(result)
            report.errors.extend(errors)
        lowered.append(lv)
    sweep_findings, errors = host.check_variants(lowered, enabled)
    report.errors.extend(errors)
    for f in sweep_findings:
        owner = next((lv for lv in lowered if f.location.path in (lv.path, lv.filename)), None)
        (owner.findings if owner else report.findings).append(f)
    for lv in lowered:
        report.findings.extend(lv.findings)
    return lowered


def _rename(f, path):
    from dataclasses import replace

    return replace(f, location=replace(f.location, path=path)) if f.location.path != path else f


