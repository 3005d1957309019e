"""`pipelint explain FILE.cu`: what the pipeline in each kernel became, in words.

The facts the checks reason with, printed for a human: buffers and their
versions, the pipelined loops, what each `__syncthreads` orders (the RAW or
WAR hazard that appears when it is removed), how deep each wait may be, and
the mbarriers.  Useful to see *why* a finding fires, or why none does.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .cuda import CudaSyntaxError, parse
from .errors import UsageError
from .model import KernelModel
from .model.intrinsics import EventKind as K
from .model.unit import unit_facts

_KIND = {"raw-unsynced": "RAW (async copy -> read)", "war-unsynced": "WAR (read -> async copy)",
         "raw-plain": "RAW (store -> read)", "war-plain": "WAR (read -> store)"}


def explain_data(m: KernelModel) -> dict[str, Any]:
    """What the model knows of one kernel, as data (`explain --format json`); the text is
    rendered from it."""
    wait = m.steady_wait()
    inits = m.mbarrier_inits()
    return {
        "kernel": m.name, "threads": m.threads, "roles": [str(r) for r in m.roles],
        "buffers": _buffers(m),
        "pipelined_loops": [{"var": loop.var, "line": loop.node.span.line, "trip": loop.trip,
                             "simulated": loop.simulated, "runtime": loop.runtime} for loop in m.pipelined_loops],
        "barriers_per_iteration": m.barriers_per_iteration(),
        "steady_wait": {"wait": wait[0], "commits_per_iteration": wait[1]} if wait else None,
        "barriers": _barriers(m),
        "waits": [{"line": ev.node.span.line, "value": ev.value, "deepest_safe": best}
                  for ev, best in m.cp_async.wait_depths.values()],
        "mbarriers": [{"name": name, "count": arr.count,
                       "init": {str(i): ev.value for (n, i), ev in sorted(inits.items()) if n == name}}
                      for name, arr in m.barriers.items()],
        "mbarrier_issues": len(m.mbarrier.issues) if m.barriers else 0,
    }


def _buffers(m: KernelModel) -> list[dict[str, Any]]:
    flow = buffer_roles(m)
    return [{"name": name, "space": buf.space, "offset": buf.offset, "size": buf.size,
             **({"versions": st.versions, "stride": st.stride} if (st := m.stages.get(name)) else {}),
             **flow.get(name, {"producers": [], "consumers": []})}
            for name, buf in sorted(m.buffers.items(), key=lambda kv: (kv[1].space, kv[1].offset))]


def _barriers(m: KernelModel) -> list[dict[str, Any]]:
    """Each `__syncthreads`: its line, whether it is in the loop, the hazards it alone orders."""
    roles = m.cp_async.barrier_roles
    in_loop = {id(e.node) for e in m.trace.all_events() if e.kind == K.SYNC and e.iteration}
    return [{"line": node.span.line, "in_loop": id(node) in in_loop,
             "orders": list(dict.fromkeys(_ordered(h) for h in (roles.get(id(node)) or {}).values()))}
            for node in m.cp_async.sync_nodes]


_FILLS = {K.CP_ASYNC: "cp.async", K.TMA_LOAD: "TMA"}


def buffer_roles(m: KernelModel) -> dict[str, dict[str, list[str]]]:
    """Which warp role produces (writes: stores, cp.async, TMA loads) and which consumes (reads)
    each shared buffer: `{buffer: {"producers": ["threads 128-255 (TMA)"], "consumers": [...]}}`."""
    writers: dict[str, dict[int, set[str]]] = {}
    readers: dict[str, set[int]] = {}
    for ev in m.trace.all_events():
        if ev.buffer is None or not ev.access:
            continue
        if ev.access == "read":
            readers.setdefault(ev.buffer, set()).add(ev.role)
        else:
            how = _FILLS.get(ev.kind, "stores")
            writers.setdefault(ev.buffer, {}).setdefault(ev.role, set()).add(how)
        if ev.kind == K.TMA_STORE:      # a TMA store reads shared memory
            readers.setdefault(ev.buffer, set()).add(ev.role)

    def role(r: int) -> str:
        return str(m.roles[r]) if r < len(m.roles) else f"role {r}"

    out: dict[str, dict[str, list[str]]] = {}
    for name in sorted(set(writers) | set(readers)):
        made = sorted(writers.get(name, {}).items())
        out[name] = {"producers": [f"{role(r)} ({', '.join(sorted(how))})" for r, how in made],
                     "consumers": [role(r) for r in sorted(readers.get(name, set()))]}
    return out


def explain_kernel(m: KernelModel) -> list[str]:
    """What the model knows of one kernel, one section per concern."""
    d = explain_data(m)
    out = [f"kernel {d['kernel']}: {d['threads']} threads, roles " + ", ".join(d["roles"])]
    for section in (_buffer_lines, _loop_lines, _barrier_lines, _wait_lines, _mbarrier_lines):
        out.extend(section(d))
    return out


def _buffer_lines(d: dict[str, Any]) -> list[str]:
    out = []
    for b in d["buffers"]:
        shape = (f"{b['versions']} version(s) x {b['stride']} B" if "versions" in b
                 else f"{b['size'] if b['size'] is not None else '?'} B")
        out.append(f"  shared {b['name']}: {b['space']} @ {b['offset']}, {shape}")
        if b["producers"] or b["consumers"]:
            out.append(f"    produced by {', '.join(b['producers']) or 'no role'}; "
                       f"consumed by {', '.join(b['consumers']) or 'no role'}")
    return out


def _loop_lines(d: dict[str, Any]) -> list[str]:
    out = [f"  pipelined loop over {loop['var']} (line {loop['line']}): {loop['trip']} iterations"
           + (f", simulated {loop['simulated']}" if loop["simulated"] != loop["trip"] else "")
           + (" (trip count known at run time: one scenario of several)" if loop["runtime"] else "")
           for loop in d["pipelined_loops"]]
    if d["barriers_per_iteration"] is not None:
        out.append(f"  __syncthreads per steady-state iteration: {d['barriers_per_iteration']}")
    if d["steady_wait"]:
        w, c = d["steady_wait"]["wait"], d["steady_wait"]["commits_per_iteration"]
        out.append(f"  steady-state cp_async_wait<{w}> with {c} commit group(s) per iteration: "
                   f"{w // c} stage(s) in flight")
    return out


def _barrier_lines(d: dict[str, Any]) -> list[str]:
    out = []
    for b in d["barriers"]:
        where = "in the loop" if b["in_loop"] else "outside the loop"
        if not b["orders"]:
            out.append(f"  __syncthreads line {b['line']} ({where}): orders nothing (redundant)")
            continue
        more = f" (+{len(b['orders']) - 3} more)" if len(b["orders"]) > 3 else ""
        out.append(f"  __syncthreads line {b['line']} ({where}): orders " + "; ".join(b["orders"][:3]) + more)
    return out


def _wait_lines(d: dict[str, Any]) -> list[str]:
    return [f"  cp_async_wait<{w['value']}> line {w['line']}: "
            + ("orders nothing (can go)" if w["deepest_safe"] is None else f"deepest safe value {w['deepest_safe']}")
            for w in d["waits"]]


def _mbarrier_lines(d: dict[str, Any]) -> list[str]:
    out = []
    for mb in d["mbarriers"]:
        counts = ", ".join(f"[{i}]={v}" for i, v in mb["init"].items())
        out.append(f"  mbarrier array {mb['name']}[{mb['count']}]: init counts {counts or '?'}")
    if d["mbarriers"]:
        n = d["mbarrier_issues"]
        out.append(f"  mbarrier protocol: {'no issue' if not n else f'{n} issue(s)'} "
                   f"(roles simulated against each other)")
    return out


def _ordered(h) -> str:
    if h.first.kind == K.MBAR_INIT:
        return "mbarrier initialisation visible to every thread before first use"
    return (f"{_KIND.get(h.kind, h.kind)} on {h.buffer or h.first.buffer} slot {h.slot}: "
            f"line {h.first.node.span.line} -> line {h.second.node.span.line}")


def load_models(path: str) -> list[KernelModel]:
    """Kernel models of one .cu file, for commands that take a single file (explain, diff)."""
    from .engine import DEFAULT_MAX_BYTES, read_source

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"path not found: {path}")
    source, problem = read_source(path, DEFAULT_MAX_BYTES)      # the same bounds as `check`
    if problem is not None:
        raise UsageError(f"{path}: {problem.message}")
    try:
        parsed = parse(source or "")
    except (CudaSyntaxError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot parse: {getattr(err, 'message', err)}") from None
    unit = unit_facts(parsed.unit)
    models = [KernelModel(func, parsed.lines, parsed.registry, unit=unit) for func in parsed.unit.kernels()]
    if not models:
        raise UsageError(f"{path}: no __global__ kernel")
    return models


def explain_json(paths: list[str], models: Callable[[str], list[KernelModel]] | None = None) -> str:
    """`explain --format json`: each file's kernels as data (`models`: how a path becomes its
    kernel models, `load_models` by default)."""
    import json

    load = models or load_models
    return json.dumps([{"path": path, "kernels": [explain_data(m) for m in load(path)]} for path in paths],
                      indent=2, sort_keys=True)


def explain_text(paths: list[str], models: Callable[[str], list[KernelModel]] | None = None) -> Iterator[str]:
    """`explain`: each file's kernels in words, one block per file as it is read, escaped for a
    terminal (a file name may hold ESC, BEL, CSI)."""
    from .report.escape import visible

    load = models or load_models
    for path in paths:
        found = load(path)
        yield "\n".join([f"{visible(path)}:", *(visible(line) for m in found for line in explain_kernel(m))])
