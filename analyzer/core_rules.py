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
    "The file is binary, not UTF-8, too large (over `--max-file-size`: it is not read at all), a "
    "symbolic link loop, or could not be read.",
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
    "Analysing the file took more CPU time than the per-file time budget (`--time-budget`, default "
    "20 s of the analysing process's CPU time, so a loaded machine gives the same verdict as a quiet "
    "one) or more memory than allowed; its findings are incomplete. Every other file's results are kept.",
    Severity.ERROR, "Raise the budget for this file, or report the file: the model should never need it.",
    ("tool",),
    rationale="A linter that hangs or swells on one odd file loses everyone else's results; a bounded, "
              "reported gap does not.")
ANALYSIS_TIMEOUT = Rule(
    "analysis-timeout", "AnalysisTimeout", "File's analysis stopped by the wall-clock backstop",
    "The analysis of the file ran for ten times its CPU time budget in wall-clock time (at least "
    "120 s) without using up that budget: it was waiting, not computing (a hang). Its findings are "
    "incomplete; every other file's results are kept.",
    Severity.ERROR, "Report the file: the analysis should never wait. A machine so overloaded that "
    "pipelint gets a tenth of a core also shows this; rerun it there with a larger `--time-budget`.",
    ("tool",),
    rationale="A budget in CPU time does not run out while a process waits; the backstop makes sure a "
              "hang still ends, and says it was one.")
CORE_RULES = (PARSE_ERROR, UNREADABLE, NO_KERNEL, UNUSED_SUPPRESSION, ANALYSIS_LIMIT, ANALYSIS_TIMEOUT)
