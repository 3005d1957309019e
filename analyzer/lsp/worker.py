"""Lower every kernel of one editor buffer, in one process: JSON spec on stdin, JSON on stdout.

    {"path": "/abs/gemm.py", "text": "...", "variants": [["sm_80", null]], "params": {}}

The buffer's text is executed as the module at `path` (unsaved edits included): the module's
code and `linecache` carry `path`, so TileLang's parser reads the buffer and the `#line`
directives of the CUDA name the user's file.  TileLang is imported once for all kernels and
variants of the file (its import is most of a cold lowering).  A num_stages of null lowers
each kernel with the num_stages it is written with.

Every kernel is lowered for every (arch, num_stages); one failing never stops the others.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import json
import linecache
import os
import sys
import traceback
import types
from typing import Any

from ..lowering.driver import MARKER
from ..lowering.worker import (
    WorkerError,
    _classify,
    _Facts,
    _stage_param,
    _tma_boxes,
    autotune_configs,
    build_prim_func,
    diagnostic_line,
    dyn_shared_bytes,
)


def load_buffer(path: str, text: str) -> types.ModuleType:
    """Execute `text` as the module of file `path`; errors carry the line they happened at."""
    lines = text.splitlines(keepends=True)
    linecache.cache[path] = (len(text), None, lines, path)     # mtime None: never re-read from disk
    module = types.ModuleType("pipelint_editor_module")
    module.__file__ = path
    sys.modules[module.__name__] = module
    sys.path.insert(0, os.path.dirname(path))
    try:
        code = compile(text, path, "exec", dont_inherit=True)     # not this module's __future__ flags
    except SyntaxError as exc:
        raise _ImportFailed(f"SyntaxError: {exc.msg}", exc.lineno or 1) from None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, module.__dict__)      # the user's own kernel file, as `pipelint lower` runs it
    except SystemExit as exc:
        raise _ImportFailed(f"the file exits on import (SystemExit {exc.code})", 1) from None
    except BaseException as exc:  # noqa: BLE001 - user code
        raise _ImportFailed(f"raises on import: {type(exc).__name__}: {diagnostic_line(str(exc))}",
                            _line_in(exc, path)) from None
    return module


class _ImportFailed(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _line_in(exc: BaseException, path: str) -> int:
    """The deepest line of `path` in the exception's traceback (1 when it is not there)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return frames[-1].lineno or 1 if frames else 1


def kernels_of(module: types.ModuleType) -> list[tuple[str, Any, str]]:
    """(name, object, kind) of every kernel the file defines: `@T.prim_func`, `@tilelang.jit`,
    `@autotune` objects, and public factories that take a num_stages parameter."""
    found = []
    for name, obj in vars(module).items():
        if name.startswith("__"):
            continue
        kind = _classify(obj)
        if kind is None:
            continue
        own = getattr(obj, "__module__", module.__name__) == module.__name__
        if kind == "factory" and not (own and not name.startswith("_") and _stage_param(obj)):
            continue
        found.append((name, obj, kind))
    return found


def _accepted(obj: Any, params: dict) -> dict:
    """The parameters a kernel takes (one `params` table serves every kernel of a file)."""
    target = obj.jit_impl if type(obj).__name__ == "AutoTuneImpl" else obj
    func = getattr(target, "func", target)
    try:
        sig = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return dict(params)
    if any(p.kind == p.VAR_KEYWORD for p in sig.values()):
        return dict(params)
    return {k: v for k, v in params.items() if k in sig}


def written_stages(obj: Any, kind: str, params: dict) -> int | None:
    """The num_stages a kernel is written with: its parameter's value or default."""
    stage = _stage_param(obj)
    if stage is None:
        return None
    if stage in params:
        return params[stage]
    if kind == "autotune":
        configs = autotune_configs(obj)
        if configs and stage in configs[0]:
            return configs[0][stage]
        obj = obj.jit_impl
    func = getattr(obj, "func", obj)
    default = inspect.signature(func).parameters[stage].default
    return default if isinstance(default, int) else None


def _build(obj: Any, kind: str, params: dict, num_stages: int | None) -> Any:
    if num_stages is not None:
        return build_prim_func(obj, kind, params, num_stages)[0]
    if kind == "autotune":
        configs = autotune_configs(obj)
        chosen = next((c for c in configs if all(params.get(k, v) == v for k, v in c.items())),
                      configs[0] if configs else {})
        obj, kind, params = obj.jit_impl, "jit", {**chosen, **params}
    if kind == "factory":
        func = obj(**params)
        return func.get_tir() if _classify(func) == "jit" else func
    if kind == "jit":
        return obj.get_tir(**params)
    return obj


def lower_one(obj: Any, kind: str, params: dict, arch: str, num_stages: int | None) -> dict:
    """What `pipelint.lowering.worker.lower` returns, for an object already imported."""
    import tilelang
    from tilelang.instrumentation import (
        PassInstrumentationTool,
        StackedPassInstrument,
        register_pass_instrumentation_tool,
    )
    from tilelang.tools.compile_only import _pass_context_config
    from tvm.target import Target

    facts = _Facts()

    class Tool(PassInstrumentationTool):
        def create_pass_instrument(self) -> Any:
            return StackedPassInstrument(facts.observer(), capture_nested=True)

    register_pass_instrumentation_tool("pipelint-facts", Tool)
    func = _build(obj, kind, params, num_stages)
    target = Target({"kind": "cuda", "arch": arch})
    with tilelang.transform.PassContext(opt_level=3, config=_pass_context_config()), target:
        artifact = tilelang.lower(func, target=target, enable_device_compile=False)
    return {"ok": True, "kind": kind, "cuda": str(artifact.kernel_source), "pipelined_loops": facts.planned,
            "shared_shapes": facts.shapes, "tma_box_bytes": _tma_boxes(artifact),
            "dyn_shared_memory_bytes": dyn_shared_bytes(artifact), "fact_errors": facts.errors}


def lower_file(spec: dict) -> dict:
    try:
        import tilelang  # noqa: F401
        from tilelang.tools.compile_only import cuda_codegen_available
    except ImportError as exc:
        return {"ok": False, "kind": "tilelang", "line": 1,
                "error": f"TileLang is not installed ({exc}): pip install 'pipelint[tilelang]'"}
    if not cuda_codegen_available():
        return {"ok": False, "kind": "tilelang", "line": 1, "error": "this TileLang wheel has no CUDA codegen"}
    try:
        module = load_buffer(spec["path"], spec["text"])
    except _ImportFailed as exc:
        return {"ok": False, "kind": "import", "line": exc.line, "error": str(exc)}
    kernels = []
    for name, obj, kind in kernels_of(module):
        params = _accepted(obj, spec.get("params", {}))
        written = written_stages(obj, kind, params)
        variants = [_variant(obj, kind, params, arch, n, written) for arch, n in spec["variants"]]
        kernels.append({"name": name, "kind": kind, "variants": variants})
    return {"ok": True, "kernels": kernels}


def _variant(obj: Any, kind: str, params: dict, arch: str, n: int | None, written: int | None) -> dict:
    head = {"arch": arch, "num_stages": n if n is not None else written, "as_written": n is None}
    try:
        return {**head, **lower_one(obj, kind, params, arch, n)}
    except WorkerError as exc:
        return {**head, "ok": False, "kind": exc.kind, "error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - TileLang's own errors become diagnostics
        return {**head, "ok": False, "kind": "lower",
                "error": f"{type(exc).__name__}: {diagnostic_line(str(exc))}"}


def main() -> int:
    # Subreaper first: whatever the kernel file starts, even in a session of its own, stays this
    # worker's descendant, killed with it (lowering._kill) or when it is done (below).
    from .procs import become_subreaper, kill_descendants

    become_subreaper()
    try:
        return _serve()
    finally:
        kill_descendants(os.getpid())       # a kernel file's daemon does not outlive its lowering


def _serve() -> int:
    # TileLang first, the spec after: a worker started ahead of need (the server keeps one)
    # has done its slowest part by the time a buffer arrives.
    with contextlib.suppress(ImportError), contextlib.redirect_stdout(io.StringIO()):
        import tilelang  # noqa: F401
    raw = sys.stdin.read()
    if not raw.strip():         # the server went away before it needed this worker
        return 0
    result = lower_file(json.loads(raw))
    sys.stdout.write(MARKER + json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
