"""The built-in output formats, registered through the same hook as third-party ones."""
from __future__ import annotations

from collections.abc import Callable

from .. import hookimpl
from ..findings import Report


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
