"""Write docs/api.md: the reference of everything a plugin sees, from the docstrings.

    python docs/generate_api_docs.py          # rewrite docs/api.md
    python docs/generate_api_docs.py --check  # exit 1 if docs/api.md is stale (the test suite runs it)

The objects are listed here, in the order a plugin author meets them; their
signatures and docstrings come from the code, so the page cannot drift from it.
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "api.md"

SECTIONS: list[tuple[str, str, list[str]]] = [
    ("Plugin API", "What `import pipelint` gives a plugin, and the hooks it implements.",
     ["pipelint.hookimpl", "pipelint.findings.Rule", "pipelint.findings.Finding", "pipelint.findings.Location",
      "pipelint.findings.Severity", "pipelint.checks.Check", "pipelint.checks.KernelCheck",
      "pipelint.checks.VariantCheck", "pipelint.hookspecs.pipelint_checks", "pipelint.hookspecs.pipelint_rules",
      "pipelint.hookspecs.pipelint_configure",
      "pipelint.hookspecs.pipelint_check_file", "pipelint.hookspecs.pipelint_check_kernel",
      "pipelint.hookspecs.pipelint_check_variants", "pipelint.hookspecs.pipelint_output_formats",
      "pipelint.hookspecs.pipelint_add_commands"]),
    ("The kernel model", "What `pipelint_check_kernel(kernel, parsed, path)` receives as `kernel`.",
     ["pipelint.model.KernelModel", "pipelint.model.trace.Role", "pipelint.model.trace.Event",
      "pipelint.model.trace.LoopInfo", "pipelint.model.trace.Trace", "pipelint.model.kernel.BufferStages",
      "pipelint.model.intrinsics.EventKind"]),
    ("Analyses", "Derived facts, computed once per kernel on first use.",
     ["pipelint.model.cpasync.CpAsyncAnalysis", "pipelint.model.cpasync.Hazard",
      "pipelint.model.intrinsics.HazardKind", "pipelint.model.mbarrier.MBarrierAnalysis",
      "pipelint.model.mbarrier.ProtocolIssue", "pipelint.model.intrinsics.IssueKind"]),
    ("Building findings", "", ["pipelint.checks.make_finding", "pipelint.checks.hazards_for"]),
    ("Testing a plugin", "`pipelint.testing`: run a plugin on CUDA text in a unit test.",
     ["pipelint.testing.lint", "pipelint.testing.assert_findings", "pipelint.testing.kernel_models",
      "pipelint.testing.PluginCrashed"]),
]


def _resolve(dotted: str):
    import importlib

    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError:
        parent, _, attr = module.rpartition(".")
        return getattr(getattr(importlib.import_module(parent), attr), name)


def _doc(obj) -> str:
    return inspect.cleandoc(obj.__doc__) if obj.__doc__ else "*(undocumented)*"


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def _members(cls) -> list[str]:
    """Public methods and properties, with their docstrings."""
    out = []
    # a class's own members and those it inherits from pipelint's own classes (the analysed
    # KernelModel extends the model of facts)
    merged: dict = {}
    for base in reversed(cls.__mro__):
        if base.__module__.startswith("pipelint"):
            merged.update(vars(base))
    for name, member in sorted(merged.items()):
        if name.startswith("_"):
            continue
        target = member.fget if isinstance(member, property) else getattr(member, "func", member)
        if isinstance(member, (staticmethod, classmethod)):
            target = member.__func__
        if not callable(target) and not isinstance(member, property):
            continue
        kind = "property" if isinstance(member, property) or hasattr(member, "attrname") else "method"
        sig = "" if kind == "property" else _signature(target)
        first = inspect.getdoc(target) or ""
        out.append(f"- `{name}{sig}` ({kind})" + (f": {' '.join(first.split())}" if first else ""))
    return out


def render() -> str:
    lines = ["# pipelint API reference", "",
             "Generated from the docstrings by `docs/generate_api_docs.py`; do not edit. "
             "A guide to writing plugins is in [plugins.md](plugins.md).", ""]
    for title, intro, names in SECTIONS:
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        for dotted in names:
            obj = _resolve(dotted)
            public = dotted.replace("pipelint.findings.", "pipelint.").replace("pipelint.model.trace.", "pipelint.model.")
            lines += [f"### `{public}`", ""]
            if inspect.isclass(obj) and issubclass(obj, enum.Enum):
                lines += [_doc(obj), "", "Members: " + ", ".join(f"`{m.name}` (`{m.value}`)" for m in obj), ""]
                continue
            if inspect.isclass(obj):
                if dataclasses.is_dataclass(obj):
                    fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(obj))
                    lines += [f"Fields: {fields}", ""]
                lines += [_doc(obj), ""]
                members = _members(obj)
                if members:
                    lines += members + [""]
                continue
            if callable(obj) and not isinstance(obj, type):
                sig = _signature(obj)
                lines += [f"`{dotted.rpartition('.')[2]}{sig}`", "", _doc(obj), ""]
                continue
            lines += [_doc(type(obj)) if obj.__doc__ is None else _doc(obj), ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/api.md differs")
    args = ap.parse_args()
    text = render()
    if args.check:
        if not OUT.is_file() or OUT.read_text() != text:
            print("docs/api.md is stale: run python docs/generate_api_docs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
