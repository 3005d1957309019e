"""`pipelint explain FILE.cu`: what the pipeline in each kernel became, in words.

The facts the checks reason with, printed for a human: buffers and their
versions, the pipelined loops, what each `__syncthreads` orders (the RAW or
WAR hazard that appears when it is removed), how deep each wait may be, and
the mbarriers.  Useful to see *why* a finding fires, or why none does.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .cuda import CudaSyntaxError, parse
from .errors import UsageError
from .model import KernelModel
from .model.intrinsics import EventKind as K

_KIND = {"raw-unsynced": "RAW (async copy -> read)", "war-unsynced": "WAR (read -> async copy)",
         "raw-plain": "RAW (store -> read)", "war-plain": "WAR (read -> store)"}


def explain_kernel(m: KernelModel) -> list[str]:
    """What the model knows of one kernel, one section per concern."""
    return ([f"kernel {m.name}: {m.threads} threads, roles " + ", ".join(str(r) for r in m.roles)]
            + _layout(m) + _pipeline(m) + _barriers(m) + _waits(m) + _mbarriers(m))


def _layout(m: KernelModel) -> list[str]:
    out = []
    for name, buf in sorted(m.buffers.items(), key=lambda kv: (kv[1].space, kv[1].offset)):
        st = m.stages.get(name)
        shape = f"{st.versions} version(s) x {st.stride} B" if st else f"{buf.size if buf.size is not None else '?'} B"
        out.append(f"  shared {name}: {buf.space} @ {buf.offset}, {shape}")
    return out


def _pipeline(m: KernelModel) -> list[str]:
    out = [f"  pipelined loop over {loop.var} (line {loop.node.span.line}): {loop.trip} iterations"
           + (f", simulated {loop.simulated}" if loop.simulated != loop.trip else "")
           + (" (trip count known at run time: one scenario of several)" if loop.runtime else "")
           for loop in m.pipelined_loops]
    bpi = m.barriers_per_iteration()
    if bpi is not None:
        out.append(f"  __syncthreads per steady-state iteration: {bpi}")
    wait = m.steady_wait()
    if wait:
        out.append(f"  steady-state cp_async_wait<{wait[0]}> with {wait[1]} commit group(s) per iteration: "
                   f"{wait[0] // wait[1]} stage(s) in flight")
    return out


def _barriers(m: KernelModel) -> list[str]:
    """What each `__syncthreads` orders (the hazards removing it would create)."""
    out = []
    roles = m.cp_async.barrier_roles
    in_loop = {id(e.node) for e in m.trace.all_events() if e.kind == K.SYNC and e.iteration}
    for node in m.cp_async.sync_nodes:
        where = "in the loop" if id(node) in in_loop else "outside the loop"
        hazards = roles.get(id(node))
        if not hazards:
            out.append(f"  __syncthreads line {node.span.line} ({where}): orders nothing (redundant)")
            continue
        seen = list(dict.fromkeys(_ordered(h) for h in hazards.values()))
        more = f" (+{len(seen) - 3} more)" if len(seen) > 3 else ""
        out.append(f"  __syncthreads line {node.span.line} ({where}): orders " + "; ".join(seen[:3]) + more)
    return out


def _ordered(h) -> str:
    if h.first.kind == K.MBAR_INIT:
        return "mbarrier initialisation visible to every thread before first use"
    return (f"{_KIND.get(h.kind, h.kind)} on {h.buffer or h.first.buffer} slot {h.slot}: "
            f"line {h.first.node.span.line} -> line {h.second.node.span.line}")


def _waits(m: KernelModel) -> list[str]:
    return [f"  cp_async_wait<{ev.value}> line {ev.node.span.line}: "
            + ("orders nothing (can go)" if best is None else f"deepest safe value {best}")
            for ev, best in m.cp_async.wait_depths.values()]


def _mbarriers(m: KernelModel) -> list[str]:
    if not m.barriers:
        return []
    inits = m.mbarrier_inits()
    out = []
    for name, arr in m.barriers.items():
        counts = ", ".join(f"[{i}]={ev.value}" for (n, i), ev in sorted(inits.items()) if n == name)
        out.append(f"  mbarrier array {name}[{arr.count}]: init counts {counts or '?'}")
    issues = m.mbarrier.issues
    out.append(f"  mbarrier protocol: {'no issue' if not issues else f'{len(issues)} issue(s)'} "
               f"(roles simulated against each other)")
    return out


def load_models(path: str) -> list[KernelModel]:
    """Kernel models of one .cu file, for commands that take a single file (explain, diff)."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"path not found: {path}")
    try:
        parsed = parse(p.read_text(encoding="utf-8"))
    except (CudaSyntaxError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot parse: {getattr(err, 'message', err)}") from None
    models = [KernelModel(func, parsed.lines, parsed.registry) for func in parsed.unit.kernels()]
    if not models:
        raise UsageError(f"{path}: no __global__ kernel")
    return models


def cmd_explain(args: argparse.Namespace, host: object) -> int:
    for path in args.paths:
        models = load_models(path)
        print(f"{path}:")
        for model in models:
            print("\n".join(explain_kernel(model)))
    return 0
