"""The built-in output formats, registered through the same hook as third-party ones.

This module is also where a dump folder's record of a failed lowering is read
(`pipelint.lowering.failures.pipelint_check_file`): it is registered with every host, like
the formats, so `check` reports a variant that did not lower whichever plugins are loaded.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import hookimpl
from ..findings import Report
from ..lowering.failures import pipelint_check_file  # noqa: F401 - a hook implementation of this plugin


def _lazy(module: str) -> Callable[..., str]:
    """Import a reporter only when its format is used (start-up stays small)."""

    def render(report: Report, **options: object) -> str:
        from importlib import import_module

        return import_module(f"pipelint.report.{module}").render(report, **options)

    render.__doc__ = f"pipelint.report.{module}.render"
    return render


@hookimpl
def pipelint_output_formats() -> dict[str, Callable[..., str]]:
    return {"text": _lazy("text"), "json": _lazy("json_report"), "sarif": _lazy("sarif"),
            "github": _lazy("github"), "concise": _lazy("concise"), "gitlab": _lazy("gitlab"),
            "junit": _lazy("junit"), "rdjson": _lazy("rdjson")}
