"""Rules the core itself reports: input it could not analyse."""
from __future__ import annotations

from .findings import Rule, Severity

PARSE_ERROR = Rule(
    "parse-error", "ParseError", "File does not parse as CUDA",
    "pipelint's CUDA grammar could not parse the file; nothing in it was checked. A truncated "
    "dump or a construct outside the supported subset are the usual causes.",
    Severity.ERROR, "Check the file is a complete kernel dump; report the construct if it is valid CUDA.",
    ("tool",),
                   rationale="pipelint checks nothing in a file it cannot parse, so it says so instead of "
                             "passing it.")
UNREADABLE = Rule(
    "unreadable-file", "UnreadableFile", "File cannot be read as CUDA text",
    "The file is binary, not UTF-8, too large, or could not be read.",
    Severity.ERROR, "Point pipelint at generated .cu/.cuh sources.", ("tool",),
                  rationale="Binary, non-UTF-8, unreadable or oversized inputs are reported, not skipped "
                            "silently.")
NO_KERNEL = Rule(
    "no-kernel", "NoKernel", "File has no __global__ kernel",
    "The file parsed but defines no `__global__` function with a body, so no pipeline check ran.",
    Severity.NOTE, "Dump the kernel source (e.g. `kernel.get_kernel_source()`), not only the header.",
    ("tool",),
                 rationale="A dump without a `__global__` body (a header, a host stub) has no pipeline to "
                           "check.")
UNUSED_SUPPRESSION = Rule(
    "unused-suppression", "UnusedSuppression", "Suppression comment matches no finding",
    "A `// pipelint: ignore[RULE]` comment suppresses nothing on its line or the next, or names "
    "no rule.", Severity.NOTE, "Remove the comment or fix the rule id.", ("tool",),
                          rationale="A suppression that matches nothing hides nothing today and may hide a real "
                                    "finding tomorrow.")
ANALYSIS_LIMIT = Rule(
    "analysis-limit", "AnalysisLimit", "File exceeded its analysis budget",
    "Analysing the file took longer than the per-file time budget (`--time-budget`, default 20 s) "
    "or more memory than allowed; its findings are incomplete. Every other file's results are kept.",
    Severity.ERROR, "Raise the budget for this file, or report the file: the model should never need it.",
    ("tool",),
    rationale="A linter that hangs or swells on one odd file loses everyone else's results; a bounded, "
              "reported gap does not.")
CORE_RULES = (PARSE_ERROR, UNREADABLE, NO_KERNEL, UNUSED_SUPPRESSION, ANALYSIS_LIMIT)
