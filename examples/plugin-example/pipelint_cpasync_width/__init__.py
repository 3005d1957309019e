"""Example third-party pipelint plugin: cp.async copies narrower than 16 bytes.

`cp.async.cg` (the L2-only, 16-byte form) is what keeps a pipelined load
cheap; when TileLang cannot prove 16-byte alignment or contiguity it falls back
to `tl::cp_async_gs<8>` or `<4>`, which issue 2-4x more instructions for the
same tile and go through L1.  This check reads the kernel model's cp.async
events (inside pipelined loops only) and reports each narrow copy once.

Configuration (its own table, handed over by the `pipelint_configure` hook):

    [tool.pipelint.plugins.cpasync-width]
    min-bytes = 16      # copies narrower than this are reported (4, 8 or 16)
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import make_finding
from pipelint.findings import Rule, Severity

NARROW = Rule(
    "narrow-cp-async", "NarrowCpAsync", "cp.async copy narrower than 16 bytes in a pipelined loop",
    "A `tl::cp_async_gs<N>` with N < 16 moves the tile in 4- or 8-byte pieces: more instructions per "
    "stage and no L1 bypass, so the copy competes with compute instead of hiding behind it.",
    Severity.WARNING, "Make the innermost copied dimension contiguous and a multiple of 16 bytes "
    "(e.g. block_K * sizeof(dtype) % 16 == 0), or pad the shared buffer.",
    ("performance", "cp.async"),
    help_uri="https://github.com/pipelint/pipelint/tree/main/examples/plugin-example#narrow-cp-async")

MIN_BYTES = 16          # set from the project's configuration by pipelint_configure


@hookimpl
def pipelint_configure(config):
    """Read `[tool.pipelint.plugins.cpasync-width]`; a bad value stops pipelint with exit 2."""
    global MIN_BYTES
    unknown = set(config) - {"min-bytes"}
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(sorted(unknown))}")
    value = config.get("min-bytes", 16)
    if value not in (4, 8, 16):
        raise ValueError(f"min-bytes must be 4, 8 or 16, got {value!r}")
    MIN_BYTES = value


@hookimpl
def pipelint_rules():
    return [NARROW]


@hookimpl
def pipelint_check_kernel(kernel, parsed, path):
    seen = set()
    findings = []
    for ev in kernel.trace.all_events():
        if ev.kind != "cp_async" or not ev.iteration or id(ev.node) in seen:
            continue
        seen.add(id(ev.node))
        width = ev.node.template_args[0] if ev.node.template_args else ""
        if width.isdigit() and int(width) < MIN_BYTES:
            findings.append(make_finding(
                NARROW, path, kernel, ev.node,
                f"cp.async into {ev.buffer} copies {width} bytes per instruction; 16-byte copies "
                f"need {16 // int(width)}x fewer instructions per stage"))
    return findings


# ---------------------------------------------------------------- a third-party output format
@hookimpl
def pipelint_output_formats():
    """`--format csv`: one line per finding, for spreadsheets and quick `sort | uniq -c` triage."""
    return {"csv": render_csv}


def render_csv(report, **_):
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["path", "line", "column", "severity", "rule", "message"])
    for f in report.sorted_findings():
        loc = f.location
        writer.writerow([loc.path, loc.line, loc.column, f.severity.value, f.rule, f.message])
    return out.getvalue()
