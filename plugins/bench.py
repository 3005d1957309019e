"""`pipelint bench`: measure what each num_stages costs and buys, next to the static facts.

Stateful like pytest's stepwise plugin: the hook only adds the subcommand;
torch and TileLang are imported when the command runs, never by `check`.
For each config x num_stages the kernel is compiled with `tilelang.compile`
(in parallel processes first, so the slow nvcc part uses every core and
TileLang's kernel cache serves the timing process), timed with TileLang's
profiler (CUDA events, L2 flushed, warm-up) until repeated medians agree,
checked against the reference, and put next to what `pipelint lower` finds
statically for the same variant: the shared-memory estimate (which must match
the compiled kernel), the steady-state wait, barriers per iteration, findings.
"""
from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pipelint import hookimpl
from pipelint.pluginhost import PluginHost
from pipelint.plugins.bench_analysis import DEFAULT_TOLERANCE, annotate, config_label, plot, render_table

SMEM_WORDS = ("shared memory", "shared data", "smem", "cudaFuncSetAttribute", "too many resources")


@hookimpl
def pipelint_add_commands(subparsers: argparse._SubParsersAction) -> None:
    from pipelint.cli import add_command

    p = add_command(subparsers, "bench", "time num_stages variants on a GPU, beside pipelint's static facts",
                    "Compile and time each num_stages x config variant with TileLang's profiler (needs a GPU "
                    "and the bench extra), check it against a reference, and print the timings next to "
                    "the static facts (stages in flight, barriers per iteration, shared memory).",
                    ["pipelint bench gemm.py:matmul --param M=8192 --param N=8192 --param K=8192 "
                     "--reference torch.matmul",
                     "pipelint bench --from-json docs/bench/gemm_8192.json --plot gemm.png"])
    p.add_argument("kernel", metavar="FILE.py[:NAME]", nargs="?", help="the kernel factory to time")
    p.add_argument("--num-stages", type=int, nargs="+", default=[1, 2, 3, 4, 6], metavar="N",
                   help="num_stages values (default 1 2 3 4 6)")
    p.add_argument("--config", action="append", default=[], metavar="k=v,k=v",
                   help="factory parameters of one tile config (repeatable)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a factory parameter shared by every variant (repeatable)")
    p.add_argument("--reference", default=None, help="e.g. torch.matmul, or a lambda over the kernel inputs")
    p.add_argument("--flops", default=None, help="FLOP count expression over the parameters (GEMM: derived)")
    p.add_argument("--bytes", default=None, help="byte count expression over the parameters (reports GB/s)")
    p.add_argument("--arch", default=None, help="arch for the static side (default: the GPU's)")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, help="knee tolerance (default 5%%)")
    p.add_argument("--repeats", type=int, default=5, help="most timing repeats per variant")
    p.add_argument("--warmup", type=float, default=25.0, help="warm-up, ms")
    p.add_argument("--rep", type=float, default=100.0, help="timing window per repeat, ms")
    p.add_argument("--out-idx", type=int, default=-1, help="index of the output parameter")
    p.add_argument("--jobs", "-j", type=int, default=0, help="parallel compile workers (0: auto)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="table or JSON record")
    p.add_argument("--output", "-o", default=None, help="write the JSON record here")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="plot time per variant (matplotlib)")
    p.add_argument("--from-json", default=None, metavar="FILE", help="re-render a recorded run (no GPU needed)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace, host: PluginHost) -> int:
    from pipelint.errors import UsageError

    if args.from_json:
        try:
            doc = json.loads(Path(args.from_json).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read {args.from_json}: {exc}") from None
    else:
        if not args.kernel:
            raise UsageError("bench needs FILE.py[:NAME] (or --from-json FILE)")
        gpu = _gpu()
        if gpu is not None:
            print(f"pipelint bench: {gpu}", file=sys.stderr)
            return 2
        doc = measure(args, host)
    annotate(doc, args.tolerance)
    if args.output:
        Path(args.output).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    if args.plot:
        plot(doc, args.plot)
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n" if args.format == "json" else render_table(doc))
    return 0


def _gpu() -> str | None:
    """None when a CUDA GPU is usable, else the one-line reason."""
    try:
        import torch
    except ImportError:
        return "needs torch with CUDA and a GPU (pip install 'pipelint[bench]' on a GPU machine)"
    if not torch.cuda.is_available():
        return (f"no CUDA GPU visible to torch {torch.__version__} (torch.cuda.is_available() is False); "
                "bench needs a GPU")
    return None


def parse_config(text: str) -> dict[str, Any]:
    from pipelint.lowering.driver import parse_params

    return parse_params([item for item in text.split(",") if item]) if text else {}


def _compile_one(job: tuple) -> str | None:
    """Worker process: compile one variant so TileLang's kernel cache holds it."""
    file, name, kwargs, stages, out_idx = job
    try:
        _compile(file, name, kwargs, stages, out_idx)
        return None
    except BaseException as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"


def compiled_dyn_smem(kernel: Any, recompile: Callable[[], Any]) -> tuple[int | None, str]:
    """Dynamic shared memory the compiled kernel launches with, and where it was read.

    A kernel served from TileLang's cache may come without its device IRModule;
    then the variant is compiled once more with the cache off to read it.
    """
    from pipelint.lowering.worker import dyn_shared_bytes

    for where, holder in (("artifact", getattr(kernel, "artifact", None)),
                          ("adapter", getattr(kernel, "adapter", None))):
        value = dyn_shared_bytes(holder) if holder is not None else None
        if value is not None:
            return value, where
    from tilelang.env import env as tl_env

    was = tl_env.is_cache_enabled()
    tl_env.disable_cache()
    try:
        fresh = recompile()
    finally:
        if was:
            tl_env.enable_cache()
    value = dyn_shared_bytes(getattr(fresh, "artifact", None))
    return value, "uncached compile"


def _compile(file: str, name: str | None, kwargs: dict, stages: int, out_idx: int):
    import tilelang

    from pipelint.lowering import worker

    module = worker.load_module(file)
    _, obj, kind = worker.find_kernel(module, file, name)
    func, _ = worker.build_prim_func(obj, kind, kwargs, stages)
    return tilelang.compile(func, out_idx=[out_idx], target="cuda")


def _reference(text: str | None):
    if not text:
        return None
    if text.lstrip().startswith("lambda"):
        import torch

        return eval(text, {"torch": torch})  # noqa: S307 - the user's own expression
    module, _, attr = text.rpartition(".")
    import importlib

    return getattr(importlib.import_module(module), attr)


def _evaluate(expr: str | None, params: dict) -> float | None:
    if not expr:
        return None
    return float(eval(expr, {"__builtins__": {}}, dict(params)))  # noqa: S307 - the user's own expression


def _static_side(args, host, ref, arch: str, params: dict, stages: list[int]) -> dict[int, dict]:
    """`pipelint lower` for the same variants: facts, estimate, findings (CPU, cached)."""
    import tempfile

    from pipelint.commands.lower import analyze_variants
    from pipelint.findings import Report
    from pipelint.lowering.driver import lower_variants

    info, variants = lower_variants(ref, [arch], stages, params, jobs=args.jobs)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="pipelint-bench-") as scratch:
        lowered = analyze_variants(info.get("name") or "kernel", variants, host, Path(scratch), report)
    out = {}
    for lv in lowered:
        wait = lv.steady_wait()
        out[lv.num_stages] = {
            "ok": lv.ok, "error": lv.error, "smem_dynamic": lv.dynamic_shared_bytes,
            "steady_wait": wait[0] if wait else None, "in_flight": lv.in_flight,
            "barriers_per_iteration": lv.barriers_per_iteration, "versions": lv.max_versions,
            "rules": sorted({f.rule for f in lv.findings if f.severity.value != "note"}),
        }
    return out


def _time(profiler, func=None, args=None) -> tuple[float, float, list[float]]:
    samples: list[float] = []
    for _ in range(max(3, args.repeats)):
        samples.append(float(profiler.do_bench(func=func, warmup=args.warmup, rep=args.rep, return_mode="median")))
        if len(samples) >= 3:
            med = statistics.median(samples)
            if (max(samples) - min(samples)) / med < 0.03:
                break
    med = statistics.median(samples)
    return med, (max(samples) - min(samples)) / med, samples


def measure(args: argparse.Namespace, host: PluginHost) -> dict:
    """Compile every (config, num_stages) in parallel, then time each on the GPU, config by config."""
    import torch

    from pipelint.lowering.driver import KernelRef, parse_params, tilelang_version
    ref = KernelRef.parse(args.kernel)
    base = parse_params(args.param)
    configs = [parse_config(c) for c in args.config] or [{}]
    major, minor = torch.cuda.get_device_capability()
    arch = args.arch or f"sm_{major}{minor}"
    reference = _reference(args.reference)
    doc: dict[str, Any] = {
        "kernel": {"file": ref.file, "name": ref.name}, "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "tilelang": tilelang_version(), "arch": arch,
        "reference": args.reference, "num_stages": args.num_stages, "tolerance": args.tolerance,
        "throughput_unit": "GB/s" if args.bytes else "TFLOP/s", "configs": [],
        "command": portable_command(sys.argv[2:]) if len(sys.argv) > 2 else None,
    }
    started = time.perf_counter()
    compile_errors = _compile_all(args, ref, base, configs)
    doc["compile_seconds"] = round(time.perf_counter() - started, 1)
    from pipelint.progress import Progress

    with Progress("timing", len(configs) * len(args.num_stages)) as progress:
        for cfg in configs:
            doc["configs"].append(_measure_config(args, host, ref, arch, {**base, **cfg}, cfg, compile_errors,
                                                  reference, progress))
            print(f"pipelint bench: {config_label(cfg)} done", file=sys.stderr)
    doc["total_seconds"] = round(time.perf_counter() - started, 1)
    return doc


def _compile_all(args, ref, base: dict, configs: list[dict]) -> dict:
    """Compile errors by (repr(params), num_stages); spawn, not fork: this process holds CUDA."""
    jobs = [(ref.file, ref.name, {**base, **cfg}, n, args.out_idx) for cfg in configs for n in args.num_stages]
    with ProcessPoolExecutor(max_workers=args.jobs or min(len(jobs), os.cpu_count() or 1),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        return dict(zip([(repr(j[2]), j[3]) for j in jobs], pool.map(_compile_one, jobs)))


def _measure_config(args, host, ref, arch: str, params: dict, cfg: dict, compile_errors: dict,
                    reference, progress: Any = None) -> dict:
    import torch

    static = _static_side(args, host, ref, arch, params, args.num_stages)
    entry: dict[str, Any] = {"config": cfg, "params": params, "variants": []}
    flops = _evaluate(args.flops, params)
    if flops is None and not args.bytes and {"M", "N", "K"} <= set(params):
        flops = 2.0 * params["M"] * params["N"] * params["K"]
    work = (flops, 1e12) if flops else (_evaluate(args.bytes, params), 1e9)
    ref_profiler = None
    for n in args.num_stages:
        v, profiler = _measure_variant(args, ref, params, n, static.get(n, {}),
                                       compile_errors.get((repr(params), n)), reference, work)
        ref_profiler = ref_profiler or profiler
        entry["variants"].append(v)
        torch.cuda.synchronize()
        if progress is not None:
            timing = f"{v['latency_ms']:.3f} ms" if v.get("latency_ms") is not None else v.get("error", "")
            progress.note(f"  {config_label(cfg)} num_stages={n}: {v.get('status')} {timing}")
            progress.advance(1, f"{config_label(cfg)} s{n}")
    if reference is not None and ref_profiler is not None:
        entry["reference_ms"], entry["reference_spread"], _ = _time(ref_profiler, func=reference, args=args)
    return entry


def _measure_variant(args, ref, params: dict, n: int, static: dict, error: str | None, reference,
                     work: tuple) -> tuple[dict, Any]:
    """One variant's row, and its profiler when it ran (the reference is timed with the first)."""
    v: dict[str, Any] = {"num_stages": n, "static": static, "smem_bytes_static": static.get("smem_dynamic")}
    kernel, error = _compiled(args, ref, params, n, error)
    if kernel is None:
        v["status"] = "smem-exceeded" if any(w in (error or "") for w in SMEM_WORDS) else "compile-failed"
        v["error"] = error
        return v, None
    try:
        v["smem_bytes_compiled"], v["smem_source"] = compiled_dyn_smem(
            kernel, functools.partial(_compile, ref.file, ref.name, params, n, args.out_idx))
    except BaseException as exc:  # noqa: BLE001
        v["smem_bytes_compiled"], v["smem_source"] = None, f"unavailable: {exc}"
    try:
        return _timed(v, kernel, reference, args, work)
    except BaseException as exc:  # noqa: BLE001 - a launch failure is this variant's result
        text = f"{type(exc).__name__}: {exc}"
        v["status"] = "smem-exceeded" if any(w in text for w in SMEM_WORDS) else "launch-failed"
        v["error"] = text[:300]
        return v, None


def _compiled(args, ref, params: dict, n: int, error: str | None) -> tuple[Any, str | None]:
    """(kernel, None) compiled in this process, or (None, why): the error the parallel compile
    already hit, or this compile's last line."""
    if error is not None:
        return None, error
    try:
        return _compile(ref.file, ref.name, params, n, args.out_idx), None
    except BaseException as exc:  # noqa: BLE001
        return None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"


def _timed(v: dict[str, Any], kernel, reference, args, work: tuple) -> tuple[dict, Any]:
    """Check the kernel against the reference (when there is one), time it and fill `v`'s
    status, latency and throughput; an exception here is the variant's launch failure, and
    what `v` holds by then stays (`_measure_variant`)."""
    profiler = kernel.get_profiler()
    if reference is not None:
        try:
            profiler.assert_allclose(reference, atol=1e-2, rtol=1e-2)
            v["correct"] = True
        except AssertionError as exc:
            v["correct"] = False
            v["error"] = str(exc).splitlines()[0][:200]
    med, spread, samples = _time(profiler, args=args)
    v.update(status="ok" if v.get("correct", True) else "incorrect", latency_ms=med, spread=spread,
             samples=samples)
    amount, unit = work
    if amount:
        v["throughput"] = amount / (med * 1e-3) / unit
    return v, profiler


def portable_command(argv: list[str]) -> str:
    """The command line as recorded in the JSON: no machine paths (an absolute path becomes
    relative to the current folder when inside it, else its file name)."""
    out = []
    for arg in argv:
        if os.path.isabs(arg):
            rel = os.path.relpath(arg)
            arg = rel if not rel.startswith("..") else os.path.basename(arg)
        out.append(arg)
    return "pipelint bench " + " ".join(out)
