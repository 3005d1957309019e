"""One lowering in its own process: JSON spec on stdin, JSON result on stdout.

Modes:
* ``discover``: import the file, find the kernel (NAME or the single one) and
  say what it is (prim_func, jit, factory) and which stage parameter it takes;
* ``lower``: build the PrimFunc for one (arch, num_stages), lower it with
  ``enable_device_compile=False`` under the target, capture the planner's
  facts with TileLang's pass instrumentation, return the CUDA and the facts.

Errors are returned as ``{"ok": false, "kind": ..., "error": ...}``; only a
crash of the interpreter itself escapes (the driver reports its exit status).
"""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import traceback
import types
from typing import Any

STAGE_PARAMS = ("num_stages", "stages")
TMA_DTYPE_BYTES = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4]  # CUtensorMapDataType


class WorkerError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def load_module(path: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("pipelint_kernel_module", path)
    if spec is None or spec.loader is None:
        raise WorkerError("load", f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except SystemExit as exc:
        raise WorkerError("import", f"{path} exits on import (SystemExit {exc.code})") from None
    except BaseException as exc:  # noqa: BLE001 - user code
        raise WorkerError("import", f"{path} raises on import: {type(exc).__name__}: {exc}") from None
    return module


def _classify(obj: Any) -> str | None:
    from tilelang.jit import JITImpl
    from tilelang.language.eager import PrimFunc

    if isinstance(obj, JITImpl):
        return "jit"
    if type(obj).__name__ == "AutoTuneImpl" and isinstance(getattr(obj, "jit_impl", None), JITImpl):
        return "autotune"
    if isinstance(obj, PrimFunc) or type(obj).__name__ == "PrimFunc":
        return "prim_func"
    if inspect.isfunction(obj):
        return "factory"
    return None


def find_kernel(module: types.ModuleType, path: str, name: str | None) -> tuple[str, Any, str]:
    """(name, object, kind) of the kernel to lower: the one named, else the file's single
    kernel (prim_func, jit, autotune), else its single kernel factory."""
    if name:
        return _named_kernel(module, path, name)
    kernels = _candidates(module)
    found = [(n, o, k) for n, o, k in kernels if k in ("jit", "prim_func", "autotune")]
    if not found:
        factories = _factories(kernels)
        if len(factories) == 1:
            return factories[0]
        found = factories
    if not found:
        raise WorkerError("nokernel", f"no @T.prim_func, @tilelang.jit kernel or kernel factory in {path}")
    if len(found) > 1:
        names = ", ".join(n for n, _, _ in found)
        raise WorkerError("ambiguous", f"{path} holds several kernels ({names}); pick one with {path}:NAME")
    return found[0]


def _named_kernel(module: types.ModuleType, path: str, name: str) -> tuple[str, Any, str]:
    """`FILE.py:NAME`: that object, which must be a kernel or a factory."""
    if not hasattr(module, name):
        raise WorkerError("name", f"{name!r} not found in {path}")
    obj = getattr(module, name)
    kind = _classify(obj)
    if kind is None:
        raise WorkerError("name", f"{name!r} in {path} is not a kernel, @tilelang.jit or factory")
    return name, obj, kind


def _candidates(module: types.ModuleType) -> list[tuple[str, Any, str | None]]:
    """(name, object, kind) of the module's globals that may be its kernel: its own functions,
    and kernels wherever they come from (a function imported from elsewhere is no factory of it)."""
    return [(n, o, _classify(o)) for n, o in vars(module).items()
            if getattr(o, "__module__", module.__name__) == module.__name__ or _classify(o) != "factory"]


def _factories(kernels: list[tuple[str, Any, str | None]]) -> list[tuple[str, Any, str]]:
    """The public factories that take a stage parameter; failing those, a factory of any
    signature (issue 39): a public function of the file whose body defines a `@T.prim_func`
    or a `@tilelang.jit` kernel, lowered as written."""
    public = [(n, o, "factory") for n, o, k in kernels if k == "factory" and not n.startswith("_")]
    return [c for c in public if _stage_param(c[1])] or [c for c in public if makes_kernel(c[1])]


_KERNEL_MARKS = ("T.prim_func", "tilelang.jit", "T.Kernel(", "tl.jit", "prim_func")


def makes_kernel(obj: Any) -> bool:
    """Whether a function's own source defines or builds a TileLang kernel (a factory)."""
    try:
        source = inspect.getsource(obj)
    except (OSError, TypeError):
        return False
    return any(mark in source for mark in _KERNEL_MARKS)


def autotune_configs(obj: Any) -> list[dict]:
    """The configurations an `@autotune` kernel would try (a list, or what its generator gives)."""
    configs = getattr(obj, "configs", None)
    if callable(configs):
        try:
            configs = configs()
        except TypeError:       # needs the call's arguments: unknown until run
            return []
    return [dict(c) for c in configs or () if isinstance(c, dict)]


def _stage_param(obj: Any) -> str | None:
    if type(obj).__name__ == "AutoTuneImpl":
        obj = obj.jit_impl
    func = getattr(obj, "func", obj)
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return None
    return next((p for p in STAGE_PARAMS if p in params), None)


def build_prim_func(obj: Any, kind: str, params: dict, num_stages: int,
                    as_written: bool = False) -> tuple[Any, bool]:
    """The PrimFunc of one variant and whether `num_stages` reached it as a parameter; with
    `as_written` (a kernel with no num_stages parameter) the loops keep the stages they were
    written with."""
    if kind == "autotune":
        # the configuration given with --param, else the first the autotuner would try
        configs = autotune_configs(obj)
        chosen = next((c for c in configs if all(params.get(k, v) == v for k, v in c.items())),
                      configs[0] if configs else {})
        params = {**chosen, **params}
        obj, kind = obj.jit_impl, "jit"
    stage_param = _stage_param(obj) if kind in ("factory", "jit") else None
    kwargs = dict(params)
    if stage_param:
        kwargs[stage_param] = num_stages
    if kind == "factory":
        func = obj(**kwargs)
        if _classify(func) == "jit":
            func = func.get_tir()
    elif kind == "jit":
        func = obj.get_tir(**kwargs)
    else:
        func = obj
    if not stage_param and not as_written:
        func = set_num_stages(func, num_stages)
    return func, bool(stage_param)


def set_num_stages(func: Any, num_stages: int) -> Any:
    """Rewrite every T.Pipelined loop's `num_stages` annotation (0 removes it, as TileLang does)."""
    import tvm.tirx as tir
    from tvm.tirx import stmt_functor

    def post(op: Any) -> Any:
        if isinstance(op, tir.For) and "num_stages" in op.annotations:
            annos = {k: v for k, v in op.annotations.items() if k != "num_stages"}
            if num_stages > 0:
                annos["num_stages"] = tir.IntImm("int32", num_stages)
            return tir.For(op.loop_var, op.min, op.extent, op.kind, op.body, op.thread_binding, annos)
        return None

    return func.with_body(stmt_functor.ir_transform(func.body, None, post, ["tirx.For"]))


class _Facts:
    """Pass observer: pipeline annotations after planning, buffer shapes after injection."""

    def __init__(self) -> None:
        self.planned: list[dict] = []
        self.shapes: dict[str, list[int]] = {}
        self.passes: list[str] = []
        self.errors: list[str] = []

    def observer(self) -> Any:
        from tilelang.instrumentation import PassEventObserver

        facts = self

        class Observer(PassEventObserver):
            def pass_finished(self, mod: Any, event: Any, state: Any) -> None:
                facts.passes.append(event.name)
                try:  # an observer must never break the lowering it watches
                    if event.name.endswith("PipelinePlanning"):
                        facts.planned = _pipeline_loops(mod)
                    elif event.name.endswith(("InjectSoftwarePipeline", "ProducerConsumerWarpSpecialized",
                                              "AutoWarpSpecialization")):
                        facts.shapes.update(_shared_shapes(mod))
                except Exception as exc:  # noqa: BLE001
                    facts.errors.append(f"{event.name}: {type(exc).__name__}: {exc}")

        return Observer()


def _int_list(value) -> list[int] | None:
    try:
        return [int(v) for v in value]
    except TypeError:
        return None


def _pipeline_loops(mod) -> list[dict]:
    import tvm.tirx as tir

    loops: list[dict] = []

    def visit(node: Any) -> None:
        if isinstance(node, tir.For) and "software_pipeline_stage" in node.annotations:
            a = node.annotations
            loops.append({
                "loop_var": str(node.loop_var),
                "extent": int(node.extent) if hasattr(node.extent, "value") else None,
                "software_pipeline_stage": _int_list(a["software_pipeline_stage"]),
                "software_pipeline_order": _int_list(a.get("software_pipeline_order", [])),
                "tl_pipelined_num_stages": (int(a["tl_pipelined_num_stages"])
                                            if "tl_pipelined_num_stages" in a else None),
                "software_pipeline_async_producers": _int_list(a.get("software_pipeline_async_producers", [])),
                "software_pipeline_async_stages": _int_list(a.get("software_pipeline_async_stages", [])),
            })

    for _, func in mod.functions.items():
        if hasattr(func, "body"):
            tir.stmt_functor.post_order_visit(func.body, visit)
    return loops


def _shared_shapes(mod) -> dict[str, list[int]]:
    import tvm.tirx as tir

    shapes: dict[str, list[int]] = {}
    block_type = getattr(tir, "SBlock", None) or tir.Block

    def visit(node: Any) -> None:
        if isinstance(node, block_type):
            for buf in node.alloc_buffers:
                if str(buf.scope()).startswith("shared"):
                    shapes[buf.name] = [int(s) if hasattr(s, "value") else -1 for s in buf.shape]
                    shapes[buf.name + "@bytes"] = [max(1, buf.dtype.bits * buf.dtype.lanes // 8)]

    for _, func in mod.functions.items():
        if hasattr(func, "body"):
            tir.stmt_functor.post_order_visit(func.body, visit)
    return shapes


def _tma_boxes(artifact) -> dict[str, int]:
    """Box bytes of each TMA descriptor, from the host function's `tma_descriptor_args`."""
    boxes: dict[str, int] = {}
    host = getattr(artifact, "host_mod", None)
    if host is None:
        return boxes
    for _, func in host.functions.items():
        attrs = getattr(func, "attrs", None)
        if attrs is None or "tma_descriptor_args" not in attrs:
            continue
        for desc, args in attrs["tma_descriptor_args"].items():
            vals = list(args)
            if str(vals[0]).strip('"') != "__tvm_tensormap_create_tiled":
                continue
            dtype, rank = int(vals[2]), int(vals[3])
            box_start = 5 + 2 * rank  # name, desc, dtype, rank, ptr, dims[rank], strides[rank]
            box = [int(v) for v in vals[box_start:box_start + rank]]
            size = TMA_DTYPE_BYTES[dtype] if dtype < len(TMA_DTYPE_BYTES) else 1
            total = size
            for b in box:
                total *= b
            boxes[str(desc)] = total
    return boxes


def dyn_shared_bytes(artifact: Any) -> int | None:
    """`dyn_shared_memory_buf` of the device kernels: what the launch requests."""
    device = getattr(artifact, "device_mod", None)
    if device is None:
        return None
    total = None
    for _, func in device.functions.items():
        attrs = getattr(func, "attrs", None)
        if attrs is not None and "dyn_shared_memory_buf" in attrs:
            total = max(total or 0, int(attrs["dyn_shared_memory_buf"]))
    return total


def lower(spec: dict) -> dict:
    import tilelang
    from tilelang.instrumentation import (
        PassInstrumentationTool,
        StackedPassInstrument,
        register_pass_instrumentation_tool,
    )
    from tilelang.tools.compile_only import _pass_context_config, cuda_codegen_available
    from tvm.target import Target

    if not cuda_codegen_available():
        raise WorkerError("tilelang", "this TileLang wheel has no CUDA codegen")
    module = load_module(spec["file"])
    name, obj, kind = find_kernel(module, spec["file"], spec.get("name"))
    facts = _Facts()

    class Tool(PassInstrumentationTool):
        def create_pass_instrument(self) -> Any:
            return StackedPassInstrument(facts.observer(), capture_nested=True)

    register_pass_instrumentation_tool("pipelint-facts", Tool)
    as_written = bool(spec.get("as_written"))
    func, via_param = build_prim_func(obj, kind, spec.get("params", {}), spec["num_stages"], as_written)
    target = Target({"kind": "cuda", "arch": spec["arch"]})
    with tilelang.transform.PassContext(opt_level=3, config=_pass_context_config()), target:
        artifact = tilelang.lower(func, target=target, enable_device_compile=False)
    return {"ok": True, "name": name, "kind": kind,
            "stages_via": "parameter" if via_param else "as written" if as_written else "annotation",
            "as_written": as_written,
            "cuda": str(artifact.kernel_source), "pipelined_loops": facts.planned,
            "shared_shapes": facts.shapes, "tma_box_bytes": _tma_boxes(artifact),
            "dyn_shared_memory_bytes": dyn_shared_bytes(artifact),
            "fact_errors": facts.errors}


def discover(spec: dict) -> dict:
    module = load_module(spec["file"])
    name, obj, kind = find_kernel(module, spec["file"], spec.get("name"))
    found = {"ok": True, "name": name, "kind": kind, "stage_param": _stage_param(obj),
             "line": _def_line(obj)}
    if kind == "autotune":
        found["configs"] = autotune_configs(obj)
    return found


def _def_line(obj: Any) -> int | None:
    """The line of the kernel's `def` (a decorator's line when it has one) in its file."""
    target = getattr(obj, "jit_impl", obj)
    target = getattr(target, "func", target)
    try:
        return inspect.getsourcelines(target)[1]
    except (OSError, TypeError):
        return None


_SOURCE_CONTEXT = re.compile(r"^\s*(?:[|^~\s]+|\d+\s*\|.*|-->.*|File \".*|\^+.*)$")


def diagnostic_line(message: str) -> str:
    """The line of a TileLang/TVM diagnostic that says what failed.

    Diagnostics end with source context (`  |`, a caret line `^^^`, `--> file:line`); the
    last line that is not context is the message (`InternalError: Check failed: ...`).
    """
    lines = [line.rstrip() for line in message.strip().splitlines() if line.strip()]
    meaningful = [line for line in lines if not _SOURCE_CONTEXT.match(line)]
    pick = meaningful or lines
    if not pick:
        return message.strip()
    errors = [line for line in pick if "Error" in line or "error:" in line or "Check failed" in line]
    return (errors or pick)[-1].strip()


def main() -> int:
    spec = json.loads(sys.stdin.read())
    try:
        try:
            import tilelang  # noqa: F401
        except ImportError as exc:
            raise WorkerError("tilelang", f"TileLang is not installed ({exc}); "
                              "install the extra: pip install 'pipelint[tilelang]'") from None
        result = discover(spec) if spec.get("mode") == "discover" else lower(spec)
    except WorkerError as exc:
        result = {"ok": False, "kind": exc.kind, "error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - TileLang's own errors become findings
        result = {"ok": False, "kind": "lower", "error": f"{type(exc).__name__}: {diagnostic_line(str(exc))}",
                  "detail": traceback.format_exc()[-4000:]}
    sys.stdout.write("\n@@PIPELINT@@" + json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
