"""Lint every kernel TileLang generates, at the moment it is generated, at the user's Python line.

    import pipelint.tilelang
    pipelint.tilelang.install(mode="warn")      # or "error"; uninstall() puts things back

or, for code you cannot edit, `PIPELINT_TILELANG=warn|error` in the environment (the
`pipelint-tilelang.pth` hook installs it when TileLang is imported).

pipelint registers itself as TileLang's CUDA post-processing callback, the hook every
generated kernel passes through before nvcc — `tilelang.compile`, `@tilelang.jit`, the
autotuner and `tilelang.tools.compile_only` alike.  A callback that was registered before
is kept and runs first; pipelint only reads the source and returns it unchanged.

* `warn`: each finding is a `PipelineWarning` (a `UserWarning`) issued with
  `warnings.warn_explicit` at the kernel statement in the user's TileLang file (`#line`),
  so `-W error`, `filterwarnings` and pytest's warning capture apply as usual.
* `error`: findings at error severity raise `PipelineError` listing them (warnings are
  still warnings).

The project's `[tool.pipelint]` (select, ignore, severity, per-kernel-ignores) applies, found
from the current folder; `# pipelint: ignore[RULE]` on the TileLang line suppresses.
Importing this module does not import TileLang; `install` does.
"""
from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .findings import Finding, Severity

__all__ = ["PipelineError", "PipelineWarning", "checked", "install", "installed", "lint_cuda", "prune", "stats",
           "uninstall"]

CALLBACK = "tilelang_callback_cuda_postproc"
ENV = "PIPELINT_TILELANG"
MODES = ("warn", "error", "off")


class PipelineWarning(UserWarning):
    """A pipelint finding on a kernel TileLang just generated, at the TileLang source line."""


class PipelineError(RuntimeError):
    """Error-severity pipelint findings on a kernel TileLang just generated (`mode="error"`)."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        lines = [f"{_where(f)}: {f.rule}: {f.message}" for f in findings]
        super().__init__(f"pipelint found {len(findings)} error(s) in a generated kernel:\n" + "\n".join(lines))


@dataclass
class _State:
    mode: str = "off"
    previous: Any = None            # the callback that was registered before ours (or None)
    installed: bool = False
    seconds: list[float] = field(default_factory=list)    # pipelint's time per kernel
    kernels: list[dict[str, Any]] = field(default_factory=list)   # what each checked kernel is (`checked`)
    host: Any = None
    config: Any = None


_STATE = _State()


def installed() -> bool:
    return _STATE.installed


def stats() -> dict[str, float]:
    """Kernels checked since `install` and pipelint's time on them (for measuring its cost)."""
    s = _STATE.seconds
    return {"kernels": len(s), "total_s": sum(s), "mean_s": sum(s) / len(s) if s else 0.0}


def checked() -> list[dict[str, Any]]:
    """The kernels checked since `install`, oldest first: each one's name, its shared memory per
    block as pipelint measures it from the accesses (`shared_bytes`; None where an extent is
    symbolic), its finding count by severity and pipelint's seconds on it.  What a user reads to
    see which configuration TileLang just generated (a tile size from an imported module)."""
    return [dict(k) for k in _STATE.kernels]


def install(mode: str = "warn", config: str | None = None) -> None:
    """Register pipelint as TileLang's CUDA post-processing callback (`mode`: warn, error or
    off); `config` is a pyproject.toml to read `[tool.pipelint]` from (default: found from the
    current folder)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off":
        uninstall()
        return
    import tvm_ffi

    from .config import load_config
    from .pluginhost import load_plugins

    _STATE.host = load_plugins()
    _STATE.config = load_config([os.getcwd()], config, _STATE.host)
    _STATE.host.configure(_STATE.config.plugins)
    if not _STATE.installed:
        _STATE.previous = tvm_ffi.get_global_func(CALLBACK, allow_missing=True)
    _STATE.mode = mode
    _STATE.installed = True
    tvm_ffi.register_global_func(CALLBACK, f=_callback, override=True)


def uninstall() -> None:
    """Put back the callback that was registered before `install` (or none)."""
    if not _STATE.installed:
        return
    import tvm_ffi

    if _STATE.previous is not None:
        tvm_ffi.register_global_func(CALLBACK, f=_STATE.previous, override=True)
    else:
        tvm_ffi.remove_global_func(CALLBACK)
    _STATE.installed, _STATE.previous, _STATE.mode = False, None, "off"


def _callback(code: str, target: Any) -> str:
    if _STATE.previous is not None:
        code = str(_STATE.previous(code, target))
    started = time.perf_counter()
    findings, models = _lint(code)
    _STATE.seconds.append(time.perf_counter() - started)
    counts = {sev.value: sum(1 for f in findings if f.severity == sev) for sev in Severity}
    _STATE.kernels.extend({"kernel": m.name, "shared_bytes": m.shared_bytes(), "findings": counts,
                           "seconds": _STATE.seconds[-1]} for m in models)
    errors = [f for f in findings if f.severity == Severity.ERROR] if _STATE.mode == "error" else []
    for f in findings:
        if f not in errors:
            _warn(f)
    if errors:
        raise PipelineError(errors)
    return code


def lint_cuda(code: str, host: Any = None, config: Any = None) -> list[Finding]:
    """Check one generated CUDA source with the project's configuration applied; findings
    carry the TileLang Python line as their primary location."""
    return _lint(code, host, config)[0]


def _lint(code: str, host: Any = None, config: Any = None) -> tuple[list[Finding], list]:
    """`lint_cuda`'s findings and the kernel models they were found on."""
    from .config import Config
    from .pluginhost import load_plugins
    from .relocate import python_first
    from .report.present import shown_findings
    from .session import Session

    host = host or _STATE.host or load_plugins()
    config = config or _STATE.config or Config()
    report, models = Session.open(host, config=config).lint_text_models("<tilelang kernel>.cu", code)
    python_first(report)
    # in the user's terms: Python lines and statements in the messages, one finding per defect
    return shown_findings(report), models


def _where(f: Finding) -> str:
    return f"{f.location.path}:{f.location.line}"


def _warn(f: Finding) -> None:
    loc = f.location
    text = f"[{f.rule}] {f.message}" + (f" (help: {f.help})" if f.help else "")
    warnings.warn_explicit(text, PipelineWarning, filename=loc.path, lineno=loc.line or 1,
                           module="pipelint.tilelang", registry=None)


# ---------------------------------------------------------------- the autotuner
def prune(configs: Iterable[dict], verdicts: dict | list | str | os.PathLike[str]) -> list[dict]:
    """The configurations worth timing, in the autotuner's order.

    `verdicts` is what `pipelint lower KERNEL --configs all --format json` wrote (the document,
    its `configs` list, or the path of the file as a `str` or `pathlib.Path`): a configuration
    it ruled out (does not lower, over the shared-memory budget, error findings) is dropped;
    one it never saw is kept.
    """
    import json
    from pathlib import Path

    doc: Any = json.loads(Path(verdicts).read_text(encoding="utf-8")) \
        if isinstance(verdicts, (str, os.PathLike)) else verdicts
    rows: list[dict] = doc.get("configs", []) if isinstance(doc, dict) else list(doc)
    out = {json.dumps(r["config"], sort_keys=True) for r in rows if r.get("ruled_out")}
    return [c for c in configs if json.dumps(c, sort_keys=True) not in out]


def _autoinstall_from_env() -> None:
    """Called by the `.pth` hook once TileLang is imported, when PIPELINT_TILELANG is set."""
    mode = os.environ.get(ENV, "off").strip().lower() or "off"
    if mode == "off":
        return
    try:
        install(mode)
    except Exception as exc:  # noqa: BLE001 - never break the user's program at import
        print(f"pipelint: {ENV}={mode}: could not install: {exc}", file=sys.stderr)
