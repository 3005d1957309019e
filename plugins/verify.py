"""`pipelint verify`: confirm static findings on a GPU (compute-sanitizer, output checks, hang timeouts).

For each variant, the exact CUDA pipelint checked is compiled in place of what TileLang
generates (TileLang's CUDA post-processing callback), run on deterministic inputs against a
reference, and run again under compute-sanitizer racecheck and synccheck, each in its own
process with a hang timeout.  The result is joined to the variant's static findings
(`verify_join`): confirmed, static only, or dynamic only (a gap in pipelint, said loudly).

    pipelint verify gemm.py:matmul --num-stages 2 3 --reference torch.matmul
    pipelint verify --cu planted.cu --kernel-source gemm.py:matmul --num-stages 3 --param block_K=32

GPU only: without one it says so in one line (exit 2).  The runner is
`python -m pipelint.plugins.verify --run SPEC.json` (also used by docs/validation/).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pipelint import hookimpl
from pipelint.errors import UsageError

SM80_ON_HOPPER = {"tl.disable_warp_specialized": True, "tl.disable_tma_lower": True}


# ---------------------------------------------------------------- the runner (a process of its own)
def run_spec(spec: dict) -> dict:
    """Compile `spec["cuda"]`'s exact text for the kernel `spec` names, run it on seeded inputs,
    save the outputs to `spec["out"]` and compare with `spec["reference"]` outputs if given."""
    import torch

    kernel, inputs = _compiled(spec)
    out = kernel(*inputs)
    torch.cuda.synchronize()
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    result: dict[str, Any] = {"ran": True}
    if spec.get("out"):
        torch.save([o.detach().cpu() for o in outs], spec["out"])
    ref = _reference_outputs(spec, inputs)
    if ref is not None:
        err = max(float((a.detach().cpu().float() - b.float()).abs().max()) for a, b in zip(outs, ref))
        finite = all(bool(torch.isfinite(a.detach().cpu().float()).all()) for a in outs)
        result.update(max_abs_error=err, correct=finite and err <= spec.get("atol", 1e-2) * 10,
                      reference_mismatches=_mismatches(outs, ref, spec.get("atol", 1e-2) * 10))
    for key, field in (("natural", "mismatches"), ("poisoned", "vs_poisoned")):
        # a forced schedule vs the natural run, and vs the poison-only run (exact: atol 0)
        if spec.get(key) and Path(spec[key]).is_file():
            result[field] = _mismatches(outs, torch.load(spec[key]), 0.0)
    return result


def _compiled(spec: dict) -> tuple[Any, list]:
    """The kernel compiled from `spec["cuda"]` through TileLang's post-processing callback (the
    text replaces what TileLang generates), and its seeded inputs."""
    import tilelang
    import torch
    from tilelang.engine.callback import register_cuda_postproc

    from pipelint.lowering import worker

    text = Path(spec["cuda"]).read_text()
    register_cuda_postproc(lambda code, target: text, override=True)
    module = worker.load_module(spec["file"])
    _, obj, kind = worker.find_kernel(module, spec["file"], spec.get("name"))
    func, _ = worker.build_prim_func(obj, kind, dict(spec.get("params", {})), spec["num_stages"])
    configs = SM80_ON_HOPPER if spec.get("arch") == "sm_80" else {}
    kernel = tilelang.compile(func, out_idx=[spec.get("out_idx", -1)], target="cuda", pass_configs=configs)
    torch.manual_seed(spec.get("seed", 0))
    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
    # run-time-bound sizes (`K` of a dynamic GEMM) get one concrete value
    symbols = {d.name for p in profiler.params for d in p.shape if type(d).__name__ == "Var"}
    inputs = profiler._get_inputs(dynamic_symbolic_constraints={s: spec.get("dynamic", 1024) for s in symbols}
                                  or None)
    return kernel, inputs


def _reference_outputs(spec: dict, inputs: list) -> list | None:
    """What the outputs must equal: `--reference EXPR` evaluated on the same inputs, or the saved
    outputs of TileLang's own CUDA; None without either."""
    import torch

    if spec.get("reference_expr"):             # `--reference torch.matmul`: on the same inputs
        from pipelint.plugins.bench import _reference

        expected = _reference(spec["reference_expr"])(*inputs)
        return [t.detach().cpu() for t in (expected if isinstance(expected, (list, tuple)) else [expected])]
    if spec.get("reference") and Path(spec["reference"]).is_file():
        return list(torch.load(spec["reference"]))    # the outputs of TileLang's own CUDA for this variant
    return None


def _mismatches(outs: list, expected: list, atol: float) -> int:
    """Elements that differ by more than `atol` (a NaN where the other has a number counts; two
    NaNs do not): the count a forced schedule's verdict reports."""
    import torch

    n = 0
    for a, b in zip(outs, expected):
        x, y = a.detach().cpu().float(), b.detach().cpu().float()
        both_nan = torch.isnan(x) & torch.isnan(y)
        n += int((((x - y).abs() > atol) | (torch.isnan(x) != torch.isnan(y))).logical_and(~both_nan).sum())
    return n


def _runner_main(path: str) -> int:
    spec = json.loads(Path(path).read_text())
    print("RESULT " + json.dumps(run_spec(spec)), flush=True)
    return 0


# ---------------------------------------------------------------- one variant, three processes
def dynamic_runs(spec: dict, tools: tuple[str, ...] = ("racecheck", "synccheck"), timeout: float = 120.0,
                 env: dict | None = None) -> dict:
    """The plain run (output check, hang timeout) and one run per sanitizer tool, in parallel."""
    env = {**os.environ, "TILELANG_DISABLE_CACHE": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    with tempfile.TemporaryDirectory(prefix="pipelint-verify-") as scratch:
        return _dynamic_runs(spec, tools, timeout, env, Path(scratch))


def _dynamic_runs(spec: dict, tools: tuple[str, ...], timeout: float, env: dict, folder: Path) -> dict:
    spec_path = folder / "spec.json"
    spec_path.write_text(json.dumps(spec))
    # Under a sanitizer only the kernel runs: a reference (cuBLAS for torch.matmul) would be checked
    # too, and its reports blamed on the kernel.
    bare = folder / "bare.json"
    bare.write_text(json.dumps({k: v for k, v in spec.items() if k not in ("reference", "reference_expr", "out")}))

    def one(tool: str) -> tuple[str, dict]:
        runner = [sys.executable, "-m", "pipelint.plugins.verify", "--run", str(spec_path if tool == "run" else bare)]
        cmd = runner if tool == "run" else ["compute-sanitizer", "--tool", tool, "--print-limit", "3", *runner]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
            text, code, timed_out = proc.stdout + proc.stderr, proc.returncode, False
        except subprocess.TimeoutExpired as exc:
            raw = exc.stdout or b""
            text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            code, timed_out = None, True
        return tool, _parse(tool, text, code, timed_out)

    with ThreadPoolExecutor(max_workers=1 + len(tools)) as pool:
        return dict(pool.map(one, ("run", *tools)))


def _parse(tool: str, text: str, code: int | None, timed_out: bool) -> dict:
    result = re.search(r"^RESULT (.*)$", text, re.M)
    if tool == "run":
        found: dict[str, Any] = json.loads(result.group(1)) if result else {}
        if timed_out:
            found["timeout"] = True
        elif not result:
            found.update(crashed=True, tail=text[-400:])
        return found
    # racecheck: "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)";
    # synccheck (like memcheck): "ERROR SUMMARY: N errors"
    summary = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?|ERROR SUMMARY: (\d+) errors?", text)
    errors = int(summary.group(1) or summary.group(2)) if summary else None
    reports = len(re.findall(r"^=+ (?:Error|Warning)", text, re.M))
    return {"errors": errors, "timeout": timed_out, "ran": bool(result), "reports": reports}


# ---------------------------------------------------------------- the command
@hookimpl
def pipelint_add_commands(subparsers: argparse._SubParsersAction) -> None:
    from pipelint.cli import add_command

    p = add_command(subparsers, "verify", "confirm static findings on a GPU (compute-sanitizer, outputs, hangs)",
                    "Compile exactly the CUDA pipelint checked, run it against a reference and under "
                    "compute-sanitizer racecheck and synccheck with a hang timeout, and join the result to the "
                    "static findings: confirmed, static only, dynamic only. Needs a GPU and the tilelang extra.",
                    ["pipelint verify gemm.py:matmul --num-stages 2 3",
                     "pipelint verify --cu planted.cu --kernel-source gemm.py:matmul --num-stages 3"])
    p.add_argument("kernel", nargs="?", metavar="FILE.py[:NAME]", help="the kernel to lower and run")
    p.add_argument("--cu", default=None, metavar="FILE.cu", help="run this CUDA (edited or planted) instead of "
                   "TileLang's, for the configuration of --kernel-source")
    p.add_argument("--kernel-source", default=None, metavar="FILE.py[:NAME]", help="the kernel --cu belongs to")
    p.add_argument("--num-stages", type=int, nargs="+", default=[2], metavar="N", help="num_stages values")
    p.add_argument("--arch", default=None, metavar="sm_XY",
                   help="the target the kernel is lowered for (default: this GPU's); sm_80 code runs on a newer "
                        "GPU with TileLang's warp specialisation and TMA lowering off, so that its launch (threads, "
                        "shared memory) is the sm_80 kernel's")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a kernel parameter")
    p.add_argument("--config", action="append", default=[], metavar="k=v,k=v",
                   help="parameters of one tile configuration; variants are configurations x num_stages (repeatable)")
    p.add_argument("--reference", default=None,
                   help="what the outputs must equal, e.g. torch.matmul or a lambda over the inputs (default: "
                        "with --cu, the outputs of TileLang's own CUDA for the configuration)")
    p.add_argument("--tools", default="racecheck,synccheck", help="compute-sanitizer tools (comma-separated)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as a hang")
    p.add_argument("--forced-schedule", action="store_true",
                   help="for each race finding, run variants that delay one side of its witness (the threads and "
                        "iteration pipelint names) and give a verdict: confirmed by forced schedule, by output, by "
                        "racecheck/synccheck, by a hang, or not reproduced")
    p.add_argument("--twin", default=None, metavar="FILE.cu",
                   help="the fixed kernel for the controls: the same delays must not change its output (default: "
                        "with --cu, TileLang's own CUDA for the configuration)")
    p.add_argument("--evidence-dir", default=None, metavar="DIR",
                   help="keep each variant's CUDA, outputs and logs here (a reproducer for a bug report)")
    p.add_argument("--jobs", type=int, default=4, help="variants run at a time on the GPU (default 4)")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format")
    p.add_argument("--output", "-o", default=None, help="write the report here")
    p.set_defaults(func=cmd_verify)


def _gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def cmd_verify(args: argparse.Namespace, host: Any) -> int:
    if not _gpu():
        print("pipelint verify: no CUDA GPU here (verify runs kernels; `pipelint check` needs none)", file=sys.stderr)
        return 2
    source = args.kernel_source if args.cu else args.kernel
    if not source:
        raise UsageError("give FILE.py[:NAME], or --cu FILE.cu with --kernel-source FILE.py[:NAME]")
    rows = _verify_all(args, host, source)
    text = render(args.format, rows, host)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if any(r["join"]["verdict"] != "clean" for r in rows) else 0


def _verify_all(args: argparse.Namespace, host: Any, source: str) -> list[dict]:
    """One row per variant: every `--config` times every `--num-stages`."""
    import torch

    from pipelint.lowering.driver import KernelRef, parse_params
    from pipelint.plugins.bench import parse_config

    ref = KernelRef.parse(source)
    params = parse_params(args.param)
    major, minor = torch.cuda.get_device_capability()
    arch = args.arch or f"sm_{major}{minor}"
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise UsageError(f"--arch {arch}: expected a target such as sm_80 or sm_90a")
    configs = [parse_config(c) for c in args.config] or [{}]
    forced = _forced_options(args)
    cuda = Path(args.cu).read_text() if args.cu else None
    tools = tuple(t for t in args.tools.split(",") if t)
    return [verify_variant(host, ref.file, ref.name, {**params, **cfg}, n, arch, cuda, tools, args.timeout,
                           args.reference, label=",".join(f"{k}={v}" for k, v in cfg.items()), forced=forced)
            for cfg in configs for n in args.num_stages]


def _forced_options(args: argparse.Namespace) -> dict | None:
    """`--forced-schedule`'s settings, checked before anything runs (a bad path: exit 2)."""
    if not args.forced_schedule:
        if args.twin or args.evidence_dir:
            raise UsageError("--twin and --evidence-dir go with --forced-schedule")
        return None
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: at least 1")
    twin = None
    if args.twin:
        try:
            twin = Path(args.twin).read_text()
        except OSError as exc:
            raise UsageError(f"--twin {args.twin}: {exc.strerror or exc}") from None
    evidence = None
    if args.evidence_dir:
        evidence = Path(args.evidence_dir)
        try:
            evidence.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--evidence-dir {args.evidence_dir}: {exc.strerror or exc}") from None
    return {"twin": twin, "evidence": evidence, "jobs": args.jobs}


def verify_variant(host: Any, file: str, name: str | None, params: dict, n: int, arch: str, cuda: str | None,
                   tools: tuple[str, ...], timeout: float, reference: str | None = None, label: str = "",
                   forced: dict | None = None) -> dict:
    """Static findings and GPU runs of one variant; the reference is TileLang's own CUDA for it.
    With `forced` (`--forced-schedule`), every race finding's delay variants too (`forced_runs`)."""
    from tilelang.tools.compile_only import compile_kernel_source

    from pipelint.engine import analyze_source
    from pipelint.lowering import worker

    module = worker.load_module(file)
    _, obj, kind = worker.find_kernel(module, file, name)
    func, _ = worker.build_prim_func(obj, kind, dict(params), n)
    generated = compile_kernel_source(func, {"kind": "cuda", "arch": arch})
    text = cuda if cuda is not None else generated
    label = f"{label + ' ' if label else ''}num_stages={n}"
    edited = cuda is not None
    base = {"file": file, "name": name, "params": params, "num_stages": n, "arch": arch}
    with tempfile.TemporaryDirectory(prefix="pipelint-verify-") as scratch:
        folder = Path(scratch)
        (folder / "variant.cu").write_text(text)
        (folder / "reference.cu").write_text(generated)
        if reference is None and edited:      # TileLang's own CUDA for this variant is the reference
            dynamic_runs({**base, "cuda": str(folder / "reference.cu"), "out": str(folder / "reference.pt")}, (),
                         timeout)
        dynamic = dynamic_runs({**base, "cuda": str(folder / "variant.cu"), "out": str(folder / "variant.pt"),
                                "reference": str(folder / "reference.pt") if edited else None,
                                "reference_expr": reference}, tools, timeout)
        _, findings, _, _ = analyze_source(f"{label}.cu", text, host)
        row = make_row(label, findings, dynamic, host)
        if forced is not None:
            twin = forced["twin"] if forced["twin"] is not None else (generated if edited else None)
            where = forced["evidence"] / _slug(label) if forced["evidence"] else folder
            row["forced"], row["forced_seconds"] = forced_runs(host, base, text, twin, dynamic, folder, where,
                                                               timeout, forced["jobs"], label)
    return row


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "variant"


def forced_runs(host: Any, base: dict, text: str, twin: str | None, dynamic: dict, scratch: Path, where: Path,
                timeout: float, jobs: int, label: str) -> tuple[list[dict], float]:
    """Witness-directed schedule forcing (issue 36) for one variant: each race finding's delay
    variants (`plugins.forced_schedule`), compiled through TileLang's callback and run in parallel
    processes; the same delays on `twin` as controls; a verdict per finding
    (`forced_schedule_verdict`).  The natural-schedule output is the one `dynamic` saved."""
    import time

    from pipelint.plugins import forced_schedule as fs

    t0 = time.monotonic()
    where.mkdir(parents=True, exist_ok=True)
    try:
        plans = fs.witnesses(text, f"{label}.cu", host)
    except fs.PlanError as exc:
        return [{"rule": "-", "line": 0, "verify": {"verdict": "not run", "why": str(exc)}}], 0.0
    for p in plans:                    # the STRESS forcing needs the raw-launch host (benchmarks/validation)
        p.delays = [d for d in p.delays if d.mode != fs.STRESS]
    delays = fs.number([d for p in plans for d in p.delays])
    if twin is not None:
        twin = fs.rename_kernel(twin, text)
    (where / "kernel.cu").write_text(text)
    runner = _ForcedRunner(base, where, timeout)
    runs, moved = runner.all(text, twin, delays, scratch / "variant.pt", jobs)
    natural = _natural(dynamic, runs, twin, scratch / "variant.pt", where / "twin.pt")
    out = _verdicts(plans, delays, runs, moved, natural, dynamic, where)
    seconds = round(time.monotonic() - t0, 1)
    (where / "forced_schedule.json").write_text(json.dumps({"findings": out, "seconds": seconds}, indent=2) + "\n")
    return out, seconds


class _ForcedRunner:
    """Runs variants of one kernel through `dynamic_runs`, each variant's CUDA, output and run
    record kept in `where` (the evidence a user attaches to a bug report)."""

    def __init__(self, base: dict, where: Path, timeout: float) -> None:
        self.base, self.where, self.timeout = base, where, timeout

    def one(self, tag: str, cuda_text: str, natural: Path | None, poisoned: Path | None = None) -> tuple[str, dict]:
        cu = self.where / f"{tag}.cu"
        cu.write_text(cuda_text)
        spec = {**self.base, "cuda": str(cu), "out": str(self.where / f"{tag}.pt"),
                "natural": str(natural) if natural else None, "poisoned": str(poisoned) if poisoned else None}
        res = dynamic_runs(spec, (), self.timeout)["run"]
        (self.where / f"{tag}.json").write_text(json.dumps(res, indent=2) + "\n")
        return tag, res

    def all(self, text: str, twin: str | None, delays: list, natural_pt: Path,
            jobs: int) -> tuple[dict[str, Any], dict[int, Any]]:
        """Every run a verdict compares: the bases (shared memory poisoned, no delay; the twin and
        its poison-only build), every delay and its control on the twin, each against the run
        `forced_schedule_verdict.comparisons` names (a STRETCH against the stretched twin, never
        the unstretched one).  A run starts once the runs it is compared with exist.  Returns the
        runs by tag and the delays moved into the twin, by number."""
        from pipelint.plugins import forced_schedule as fs

        moved: dict[int, Any] = {}
        if twin is not None:
            for d in delays:
                t = fs.relocate(d, twin)
                if t is not None:
                    moved[d.number] = t
        plan = _run_plan(text, twin, delays, moved)
        files = {"natural": natural_pt, **{tag: self.where / f"{tag}.pt" for tag in plan}}
        runs: dict[str, Any] = {}
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            while len(runs) < len(plan):
                futs = [pool.submit(self.one, tag, cuda, *(files[b] if b else None for b in bases))
                        for tag, (cuda, *bases) in _ready(plan, runs)]
                runs.update(f.result() for f in futs)
        return runs, moved


def _ready(plan: dict[str, tuple[str, str | None, str | None]], runs: dict[str, Any]) -> list:
    """The planned runs not yet run whose bases have run (`natural` exists before any)."""
    ready = [(tag, job) for tag, job in plan.items() if tag not in runs and
             all(b in runs or b == "natural" for b in job[1:] if b is not None)]
    if not ready:           # cannot happen: every base is planned with what needs it
        raise RuntimeError(f"forced-schedule runs wait on each other: {sorted(set(plan) - set(runs))}")
    return ready


def _run_tag(tag: str) -> str:
    """`comparisons`' run tag (`v0`, `t3`, `t6r`, `twin`) as the evidence folder names it
    (`delay_0`, `twin_delay_3`, `twin_delay_6_repeat`, `twin`)."""
    if tag == "twin":
        return tag
    body, repeat = (tag[:-1], "_repeat") if tag.endswith("r") else (tag, "")
    return ("delay_" if body[0] == "v" else "twin_delay_") + body[1:] + repeat


def _delay_rows(delays: list) -> list[dict[str, Any]]:
    """The delays as `comparisons` reads them (number, mode, STRETCH repeat, joint modes)."""
    return [{"number": d.number, "mode": d.mode, "repeat": d.repeat, "joint": [j.mode for j in d.joint]}
            for d in delays]


def _run_plan(text: str, twin: str | None, delays: list,
              moved: dict[int, Any]) -> dict[str, tuple[str, str | None, str | None]]:
    """Each run: its CUDA and the runs its output is compared with (natural, poisoned; `natural`
    is the unedited kernel's saved output).  A plain delay: the natural run and the poison-only
    build, its twin control against the twin's.  A STRETCH alone: the stretched twin is the
    answer (the buggy run against it) and its control a repeat of itself; a STRETCH with a refill:
    the stretch alone on each side."""
    from pipelint.plugins import forced_schedule as fs
    from pipelint.plugins.forced_schedule_verdict import comparisons

    plan: dict[str, tuple[str, str | None, str | None]] = {"delay_0": (fs.render(text, []), "natural", None)}
    if twin is not None:
        plan["twin"] = (twin, None, None)
        plan["twin_delay_0"] = (fs.render(twin, []), "twin", None)
    cmp = comparisons(_delay_rows(delays))
    for d in delays:
        c = cmp[d.number]
        base = _run_tag(c["changed"])
        plan[f"delay_{d.number}"] = (fs.render(text, [d]), *(("natural", "delay_0") if base == "delay_0"
                                                             else (base, base)))
        if twin is None or d.number not in moved:
            continue
        twin_text = fs.render(twin, [moved[d.number]])
        control, control_base = _run_tag(c["control"]), _run_tag(c["control_base"])
        own = f"twin_delay_{d.number}"
        if control_base == "twin_delay_0":
            plan[own] = (twin_text, "twin", "twin_delay_0")
        elif control == own:                       # compared with another delay's twin run
            plan[own] = (twin_text, control_base, control_base)
        else:                                      # the stretched twin, then its repeat against it
            plan[own] = (twin_text, "twin", "twin_delay_0")
            plan[control] = (twin_text, own, own)
    return plan


def _natural(dynamic: dict, runs: dict[str, Any], twin: str | None, natural_pt: Path, twin_pt: Path) -> dict:
    """The natural schedule's evidence: its run, whether it hung, how wrong it is (against the
    twin's output when there is one, else the reference), and what the poison alone changed."""
    run = dynamic.get("run") or {}
    wrong = run.get("reference_mismatches")
    if twin is not None and twin_pt.is_file() and natural_pt.is_file():     # the natural output vs the twin's
        import torch

        wrong = _mismatches(torch.load(natural_pt), torch.load(twin_pt), 0.0)
    return {"runs": [run], "timeout": bool(run.get("timeout")), "wrong": wrong,
            "poisoned": runs.get("delay_0", {}).get("mismatches"),
            "twin_poisoned": runs.get("twin_delay_0", {}).get("mismatches")}


def _verdicts(plans: list, delays: list, runs: dict[str, Any], moved: dict[int, Any], natural: dict,
              dynamic: dict, where: Path) -> list[dict]:
    """One entry per finding: its witness, its delays' runs and controls, and the verdict."""
    from pipelint.plugins.forced_schedule_verdict import comparisons, finding_verdict

    cmp = comparisons(_delay_rows(delays))
    out = []
    numbered = iter(delays)
    for p in plans:
        rows = []
        for d in (next(numbered) for _ in p.delays):
            c = cmp[d.number]
            run = runs.get(f"delay_{d.number}")
            control = runs.get(_run_tag(c["control"])) if d.number in moved else None
            rows.append({"describe": d.describe(), "number": d.number, "mode": d.mode,
                         "variant": run and {**run, "baseline": c["changed"]},
                         "control": control and {**control, "baseline": c["control_base"]}})
        verdict = finding_verdict({"delays": rows}, natural, dynamic) if p.delays else {
            "verdict": "not reproduced", "delay": None, "mismatches": None, "tried": [p.why_none],
            "harness_error": None}
        out.append({"rule": p.rule, "line": p.line, "witness": p.witness.to_json() if p.witness else None,
                    "verify": verdict, "evidence": str(where)})
    return out


def make_row(variant: str, findings: list, dynamic: dict, host: Any) -> dict:
    from pipelint.plugins.verify_join import join

    severities = {f.rule: f.severity.value for f in findings}
    return {"variant": variant, "static": sorted({f.rule for f in findings}), "dynamic": dynamic,
            "join": join([f.rule for f in findings], dynamic, severities),
            "findings": [{"rule": f.rule, "line": f.location.line, "message": f.message,
                          "severity": f.severity.value} for f in findings]}


def render(fmt: str, rows: list[dict], host: Any = None) -> str:
    if fmt == "json":
        return json.dumps({"variants": rows}, indent=2, sort_keys=True) + "\n"
    if fmt == "sarif":
        return _render_sarif(rows, host)
    return _render_text(rows)


def _render_sarif(rows: list[dict], host: Any) -> str:
    """pipelint's SARIF of the variants' findings, each result with the GPU's verdict (`gpu`) and,
    after `--forced-schedule`, `verify.verdict`, `verify.delay`, `verify.mismatches` and the
    `witness` as properties."""
    from urllib.parse import unquote

    from pipelint.findings import Finding, Location, Report, Severity
    from pipelint.plugins.forced_schedule_verdict import properties as forced_properties
    from pipelint.report.sarif import render as sarif

    report = Report(rules=dict(host.rules) if host else {})
    verdicts = {}
    for r in rows:
        for f in r["findings"]:
            report.findings.append(Finding(f["rule"], Severity(f["severity"]), f["message"],
                                           Location(r["variant"], f["line"])))
            verdicts[(f["rule"], r["variant"], f["line"])] = r["join"]
    doc = json.loads(sarif(report, host=host))
    forced = {(f["rule"], r["variant"], f["line"]): f for r in rows for f in r.get("forced", [])}
    for result in doc["runs"][0]["results"]:       # the GPU's verdict as result properties
        loc = result["locations"][0]["physicalLocation"]
        key = (result["ruleId"], unquote(loc["artifactLocation"]["uri"]), loc["region"]["startLine"])
        if key in verdicts:
            result.setdefault("properties", {})["gpu"] = verdicts[key]
        if key in forced:
            props = result.setdefault("properties", {})
            props.update(forced_properties(forced[key]["verify"]))
            props["witness"] = forced[key]["witness"]
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _render_text(rows: list[dict]) -> str:
    from pipelint.plugins.forced_schedule_verdict import render_table as forced_table
    from pipelint.plugins.verify_join import render_table

    text = render_table(rows)
    forced_rows = [{"case": r["variant"], **f} for r in rows for f in r.get("forced", [])]
    if forced_rows:
        text += "\nforced schedules:\n" + forced_table(forced_rows)
        text += "".join(f"{r['variant']}: forced schedules took {r.get('forced_seconds')} s\n" for r in rows
                        if "forced" in r)
    return text


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--run":
    sys.exit(_runner_main(sys.argv[2]))
