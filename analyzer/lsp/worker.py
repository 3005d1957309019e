"""Lower every kernel of one editor buffer, in one process: JSON spec on stdin, JSON on stdout.

    {"path": "/abs/gemm.py", "text": "...", "variants": [["sm_80", null]], "params": {}}

The buffer's text is executed as the module at `path` (unsaved edits included): the module's
code and `linecache` carry `path`, so TileLang's parser reads the buffer and the `#line`
directives of the CUDA name the user's file.  TileLang is imported once for all kernels and
variants of the file (its import is most of a cold lowering).  A num_stages of null lowers
each kernel with the num_stages it is written with.

Every kernel is lowered for every (arch, num_stages); one failing never stops the others.
The variants are lowered in the order of the spec, every kernel of one variant before the next
variant, and each finished (kernel, variant) is written at once as one `MARKER`-led JSON line
(`{"event": "variant", ...}`), so that the server can publish the first variant's findings
while the others are still being lowered; the whole result follows last (`"event": "done"`).

Kernels: `@T.prim_func`, `@tilelang.jit`, `@autotune` objects, public factories with a
num_stages parameter, and public factories without one whose body builds a kernel (a
`T.prim_func`, a `T.Kernel`): those are lowered as written (`"stage_param": null`).

Budgets (issue 38, `"budgets": {"time": s, "memory": MB}`): the lowering of one variant may
use `time` seconds of CPU and `memory` MB of address space beyond what the worker holds once
TileLang is imported; going over fails that variant (`"kind": "budget"`), and RLIMIT_CPU ends
a worker stuck in TileLang's C++ past every variant's share.
"""
from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import linecache
import os
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
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


def trace(what: str) -> None:
    """`PIPELINT_LSP_TRACE=FILE`: this process's steps, marked as the worker's (`lsp.trace`)."""
    from .trace import trace as write

    write(what, "worker")


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


def kernels_of(module: types.ModuleType, text: str = "") -> list[tuple[str, Any, str]]:
    """(name, object, kind) of every kernel the file defines: `@T.prim_func`, `@tilelang.jit`,
    `@autotune` objects, public factories that take a num_stages parameter, and public
    factories without one whose body builds a kernel (`builders_in(text)`)."""
    builders = builders_in(text)
    found = []
    for name, obj in vars(module).items():
        if name.startswith("__"):
            continue
        kind = _classify(obj)
        if kind is None:
            continue
        own = getattr(obj, "__module__", module.__name__) == module.__name__
        if kind == "factory" and not (own and not name.startswith("_") and (_stage_param(obj) or name in builders)):
            continue
        found.append((name, obj, kind))
    return found


_BUILDS = ("prim_func", "Kernel", "jit")


def builders_in(text: str) -> set[str]:
    """Top-level functions whose body defines a `@T.prim_func`/`@tilelang.jit` or opens a
    `T.Kernel`: kernel factories, whatever their parameters (other functions are helpers)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found = set()
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            names = [d.func if isinstance(d, ast.Call) else d
                     for d in getattr(inner, "decorator_list", []) if inner is not node]
            if isinstance(inner, ast.Call):
                names.append(inner.func)
            if any((isinstance(n, ast.Attribute) and n.attr in _BUILDS) or (isinstance(n, ast.Name) and n.id in _BUILDS)
                   for n in names):
                found.add(node.name)
                break
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
    """What `pipelint.lowering.worker.lower` returns, for an object already imported, and the
    facts the editor shows beside the pipeline's: buffers (shape, dtype, scope, layout) and the
    launch (grid, threads, dynamic shared memory)."""
    import tilelang
    from tilelang.instrumentation import (
        PassInstrumentationTool,
        StackedPassInstrument,
        register_pass_instrumentation_tool,
    )
    from tilelang.tools.compile_only import _pass_context_config
    from tvm.target import Target

    facts = _Facts()
    layout = _LayoutFacts()

    class Tool(PassInstrumentationTool):
        def create_pass_instrument(self) -> Any:
            return StackedPassInstrument(facts.observer(), capture_nested=True)

    class LayoutTool(PassInstrumentationTool):
        def create_pass_instrument(self) -> Any:
            return StackedPassInstrument(layout.observer(), capture_nested=True)

    register_pass_instrumentation_tool("pipelint-facts", Tool)
    register_pass_instrumentation_tool("pipelint-layouts", LayoutTool)
    func = _build(obj, kind, params, num_stages)
    target = Target({"kind": "cuda", "arch": arch})
    with tilelang.transform.PassContext(opt_level=3, config=_pass_context_config()), target:
        artifact = tilelang.lower(func, target=target, enable_device_compile=False)
    return {"ok": True, "kind": kind, "cuda": str(artifact.kernel_source), "pipelined_loops": facts.planned,
            "shared_shapes": facts.shapes, "tma_box_bytes": _tma_boxes(artifact),
            "dyn_shared_memory_bytes": dyn_shared_bytes(artifact), "fact_errors": facts.errors + layout.errors,
            "buffers": layout.buffers, "launch": launch_of(artifact)}


class _LayoutFacts:
    """Pass observer: every allocated buffer (shape, dtype, scope) and the layout TileLang
    inferred for it, as the last `LayoutInference` leaves them."""

    def __init__(self) -> None:
        self.buffers: dict[str, dict] = {}
        self.errors: list[str] = []

    def observer(self) -> Any:
        from tilelang.instrumentation import PassEventObserver

        facts = self

        class Observer(PassEventObserver):
            def pass_finished(self, mod: Any, event: Any, state: Any) -> None:
                if not event.name.endswith("LayoutInference"):
                    return
                try:  # an observer must never break the lowering it watches
                    found = _buffers(mod)
                    if found:
                        facts.buffers = found
                except Exception as exc:  # noqa: BLE001
                    facts.errors.append(f"{event.name}: {type(exc).__name__}: {exc}")

        return Observer()


def _layout_words(layout: Any) -> str:
    """`Layout((3, 128, 32) -> (3, 1, 16, 256), transform: ...)` -> its head, `(3, 128, 32) ->
    (3, 1, 16, 256)`; a Fragment also says its thread count and replication."""
    text = str(layout)
    kind = type(layout).__name__
    inner = text[text.find("(") + 1:] if "(" in text else text
    head = inner.split(", transform:")[0].split(", replicate:")[0]
    extra = []
    for key in ("thread", "replicate"):
        marker = f"{key}: "
        if marker in inner:
            value = inner.split(marker, 1)[1].split(",")[0].strip()
            extra.append(f"{value} thread{'s' if value != '1' else ''}" if key == "thread" else f"replicate {value}")
    return " ".join([kind, head, *(f"· {e}" for e in extra)])[:160]


def _buffers(mod: Any) -> dict[str, dict]:
    import tvm.tirx as tir

    block_type = getattr(tir, "SBlock", None) or tir.Block
    found: dict[str, dict] = {}
    layouts: dict[str, str] = {}

    def visit(node: Any) -> None:
        if not isinstance(node, block_type):
            return
        for buf in node.alloc_buffers:
            found[buf.name] = {"shape": [int(s) if hasattr(s, "value") else str(s) for s in buf.shape],
                               "dtype": str(buf.dtype), "scope": str(buf.scope())}
        if "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                layouts.setdefault(buf.name, _layout_words(layout))

    for _, func in mod.functions.items():
        if hasattr(func, "body"):
            tir.stmt_functor.post_order_visit(func.body, visit)
    for name, words in layouts.items():
        if name in found:
            found[name]["layout"] = words
    return found


def launch_of(artifact: Any) -> dict | None:
    """The device kernel's launch: grid (blockIdx x, y, z), block (threadIdx x, y, z) and the
    dynamic shared memory it requests."""
    device = getattr(artifact, "device_mod", None)
    if device is None:
        return None
    for _, func in device.functions.items():
        attrs = getattr(func, "attrs", None)
        if attrs is None or "thread_extent" not in attrs:
            continue
        extents = {str(k): int(v) for k, v in attrs["thread_extent"].items()}
        return {"grid": [extents.get(f"blockIdx.{a}", 1) for a in "xyz"],
                "threads": [extents.get(f"threadIdx.{a}", 1) for a in "xyz"],
                "dyn_shared_memory_bytes": int(attrs["dyn_shared_memory_buf"])
                if "dyn_shared_memory_buf" in attrs else None}
    return None


Emit = Callable[[dict], None]


def lower_file(spec: dict, emit: Emit | None = None) -> dict:
    """Lower every kernel of the buffer for every variant of the spec; `emit` gets each
    (kernel, variant) as it is done (`{"event": "variant", "kernel": ..., "variant": ...}`)."""
    unusable = _tilelang_unusable()
    if unusable is not None:
        return {"ok": False, "kind": "tilelang", "line": 1, "error": unusable}
    try:
        module = load_buffer(spec["path"], spec["text"])
    except _ImportFailed as exc:
        return {"ok": False, "kind": "import", "line": exc.line, "error": str(exc)}
    trace("buffer loaded")
    found = []
    for name, obj, kind in kernels_of(module, spec["text"]):
        params = _accepted(obj, spec.get("params", {}))
        found.append((name, obj, kind, params, written_stages(obj, kind, params)))
    kernels: list[dict[str, Any]] = [{"name": name, "kind": kind, "stage_param": _stage_param(obj), "variants": []}
                                     for name, obj, kind, _, _ in found]
    if emit is not None:
        emit({"event": "kernels", "kernels": [{**k, "variants": []} for k in kernels]})
    budgets = spec.get("budgets") or {}
    _cpu_backstop(budgets, len(found) * len(spec["variants"]))
    skip = set(spec.get("skip") or ())     # kernels whose code is unchanged: the server has their variants
    for arch, stages in _asked(spec["variants"], found, kernels, skip):
        for (name, obj, kind, params, written), record, n in stages:
            started = time.process_time(), time.perf_counter()
            variant = _variant(obj, kind, params, arch, n, written, budgets)
            variant["seconds"] = round(time.perf_counter() - started[1], 3)
            variant["cpu_seconds"] = round(time.process_time() - started[0], 3)
            record["variants"].append(variant)
            trace(f"lowered {name} {arch}")
            if emit is not None:
                emit({"event": "variant", "kernel": name, "variant": variant})
    return {"ok": True, "kernels": kernels}


def _tilelang_unusable() -> str | None:
    """Why this worker cannot lower (TileLang missing, or a wheel without CUDA codegen); None if it can."""
    try:
        import tilelang  # noqa: F401
        from tilelang.tools.compile_only import cuda_codegen_available
    except ImportError as exc:
        return (f"TileLang is not installed ({exc}): from pipelint's clone, pip install -c constraints.txt "
                "-e '.[tilelang]' (CPU-only: pip install torch==2.13.0 first)")
    if not cuda_codegen_available():
        return "this TileLang wheel has no CUDA codegen"
    return None


Asked = tuple[str, list[tuple[tuple, dict, int | None]]]     # arch, [(kernel, record, num_stages)]


def _asked(variants: list, found: list, kernels: list[dict], skip: set[str]) -> Iterator[Asked]:
    """(arch, [(kernel, its record, num_stages to lower with)]) in the spec's order, every kernel
    of one variant before the next variant.  A kernel with no num_stages parameter (issue 39) is
    lowered as written (None), once per target, as `pipelint lower` does; the server's note
    says only that stage count was checked.  Kernels in `skip` are not lowered."""
    done: set[tuple[str, str]] = set()
    for arch, n in variants:
        stages: list[tuple[tuple, dict, int | None]] = []
        for entry, record in zip(found, kernels):
            name, kind = entry[0], entry[2]
            if name in skip:
                continue
            if kind != "prim_func" and record["stage_param"] is None:
                if (name, arch) in done:
                    continue
                done.add((name, arch))
                stages.append((entry, record, None))
            else:
                stages.append((entry, record, n))
        yield arch, stages


def _variant(obj: Any, kind: str, params: dict, arch: str, n: int | None, written: int | None,
             budgets: dict | None = None) -> dict:
    head = {"arch": arch, "num_stages": n if n is not None else written, "as_written": n is None}
    state = _BudgetState()
    try:
        with _budgets(budgets or {}, state):
            lowered = lower_one(obj, kind, params, arch, n)
        if state.expired:       # raised inside a callback TVM swallowed: the lowering went on past it
            return {**head, "ok": False, "kind": "budget", "error": state.expired}
        return {**head, **lowered}
    except WorkerError as exc:
        return {**head, "ok": False, "kind": exc.kind, "error": str(exc)}
    except _OverBudget as exc:
        return {**head, "ok": False, "kind": "budget", "error": str(exc)}
    except MemoryError:
        return {**head, "ok": False, "kind": "budget",
                "error": f"lowering went over the memory budget ({(budgets or {}).get('memory'):g} MB, "
                         "memory-budget)"}
    except BaseException as exc:  # noqa: BLE001 - TileLang's own errors become diagnostics
        if state.expired:       # raised inside a pass TVM called: it comes back as its own error
            return {**head, "ok": False, "kind": "budget", "error": state.expired}
        return {**head, "ok": False, "kind": "lower",
                "error": f"{type(exc).__name__}: {diagnostic_line(str(exc))}"}


class _BudgetState:
    expired: str | None = None


class _OverBudget(BaseException):      # not caught by TileLang's own `except Exception`
    pass


@contextlib.contextmanager
def _budgets(budgets: dict, state: _BudgetState | None = None) -> Any:
    """`check`'s CPU and memory budgets around one variant's lowering (0 or missing: none).
    CPU: ITIMER_PROF raises in the interpreter, which TileLang's C++ passes return to between
    passes.  Memory: RLIMIT_AS above what the worker holds now (`engine.memory_budget`)."""
    import signal

    from ..engine import memory_budget

    seconds = float(budgets.get("time") or 0)
    megabytes = float(budgets.get("memory") or 0)

    def expired(signum: int, frame: object) -> None:
        message = f"lowering stopped after {seconds:g} s of CPU time (time-budget)"
        if state is not None:
            state.expired = message
        raise _OverBudget(message)

    timer = seconds > 0 and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGPROF, expired) if timer else None
    if timer:
        signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        if megabytes > 0:
            with memory_budget(megabytes):
                yield
        else:
            yield
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)


def _cpu_backstop(budgets: dict, variants: int) -> None:
    """RLIMIT_CPU for the whole worker: every variant's CPU budget, plus what it has used, plus
    a margin: a lowering stuck inside C++ (where the interval timer cannot interrupt it) ends
    with SIGXCPU, which the server reports as a crash of the worker."""
    seconds = float(budgets.get("time") or 0)
    if seconds <= 0:
        return
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        used = time.process_time()
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        cap = int(used + seconds * max(1, variants) + 30)
        if hard == resource.RLIM_INFINITY or cap <= hard:
            resource.setrlimit(resource.RLIMIT_CPU, (cap, hard))


def main() -> int:
    # Subreaper first: whatever the kernel file starts, even in a session of its own, stays this
    # worker's descendant, killed with it (lowering._kill) or when it is done (below).
    from .procs import become_subreaper, kill_descendants

    become_subreaper()
    try:
        return _serve()
    finally:
        kill_descendants(os.getpid())       # a kernel file's daemon does not outlive its lowering


_WARM_UP = """
import tilelang.language as T


@T.prim_func
def warm_up(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        for k in T.Pipelined(2, num_stages=2):
            T.copy(A[0, 0], S)
        T.copy(S, B[0, 0])
"""
_WARM_PATH = "<pipelint-warm-up>"


WARM_ARCHS = ("sm_90", "sm_80")     # sm_90 first: the server lowers it first (cheapest)


def warm_up(arrived: Callable[[], bool] = lambda: False) -> None:
    """Lower a small pipelined copy for sm_90, then sm_80 (about 0.4 s): what TileLang does the
    first time it lowers anything (lazy imports, pass registries) is then done before the
    buffer arrives, and the buffer's first variant takes 0.4 s instead of 0.9 s.  It gives way
    to a spec: `arrived()` is asked before each target, so a buffer sent during the sm_90
    warm-up does not also wait for sm_80's (the costlier one: 1-2 s on the loaded machine).
    A lowering under way is not interrupted: a Python exception raised from a signal inside
    TileLang's pass callbacks did not reliably stop the first lowering of a process."""
    linecache.cache[_WARM_PATH] = (len(_WARM_UP), None, _WARM_UP.splitlines(keepends=True), _WARM_PATH)
    try:
        scope: dict = {"__name__": "pipelint_warm_up"}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(_WARM_UP, _WARM_PATH, "exec", dont_inherit=True), scope)
            for arch in WARM_ARCHS:
                if arrived():
                    break
                lower_one(scope["warm_up"], "prim_func", {}, arch, None)
    except Exception:  # noqa: BLE001 - a warm-up that fails costs nothing but its time
        pass
    finally:
        linecache.cache.pop(_WARM_PATH, None)


def _readable(stream: Any) -> bool:
    """Whether `stream` has data (or end of file) waiting: a spec already sent."""
    import select

    try:
        return bool(select.select([stream], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _serve() -> int:
    # TileLang first, the spec after: a worker started ahead of need (the server keeps one)
    # has done its slowest part by the time a buffer arrives.
    started = time.perf_counter()
    with contextlib.suppress(ImportError), contextlib.redirect_stdout(io.StringIO()):
        import tilelang  # noqa: F401
    imported = time.perf_counter() - started
    trace("imported")
    if not _readable(sys.stdin):    # a standby worker: nothing to lower yet, so warm TileLang up
        warm_up(lambda: _readable(sys.stdin))
        trace("warmed up")
    raw = sys.stdin.read()
    if not raw.strip():         # the server went away before it needed this worker
        return 0
    spec = json.loads(raw)
    trace("spec read")
    out = sys.stdout

    def emit(event: dict) -> None:
        out.write(MARKER + json.dumps(event) + "\n")
        out.flush()

    result = lower_file(spec, emit)
    emit({**result, "event": "done", "import_s": round(imported, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
