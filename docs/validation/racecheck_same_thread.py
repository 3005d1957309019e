"""GPU check of the thread-exact hazard model (issue: thread-exact hazards).

Equivalent mutations — deleting `__syncthreads` that order only a thread's accesses to its own
bytes (split-K GEMV: each thread reads back exactly the 16 bytes it copied) — must be no race.
This runs each variant on the GPU under compute-sanitizer racecheck and against a torch reference,
next to pipelint's static verdict:

    python docs/validation/racecheck_same_thread.py OUT_DIR      # on a machine with a GPU

Variants: the clean fixture, the three equivalent mutants (must-not-fire), and the
cross-thread mutant (each thread reads its neighbour's bytes, barrier deleted: must fire).
Each variant's exact CUDA text is compiled in place of what TileLang generates, through
TileLang's CUDA post-processing callback.  Writes OUT_DIR/racecheck.json and racecheck.md.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "causes"))

FIXTURE = "splitk_gemv_sm_80_s2.cu"


def variants() -> dict[str, tuple[str, bool]]:
    """name -> (CUDA text, whether a cross-thread race is planted)."""
    from mutants import mutate

    out = {"clean": ((mutate.KERNELS / FIXTURE).read_text(), False)}
    for op in mutate.EQUIVALENT_OPERATORS:
        m = op()
        out[m.name] = (m.text, False)
    m = mutate.splitk_cross_thread_read()
    out[m.name] = (m.text, True)
    return out


def run_one(name: str) -> dict:
    """Compile `name`'s exact text, run it, compare with torch (this process may run under
    compute-sanitizer)."""
    import tilelang
    import torch
    from splitk_gemv import splitk_gemv
    from tilelang.engine.callback import register_cuda_postproc

    text, _ = variants()[name]
    register_cuda_postproc(lambda code, target: text, override=True)
    # The fixture is TileLang's sm_80 lowering (cp.async, 128 threads); on Hopper the same program
    # lowers to TMA + warp specialization unless told not to, and the launch must match the text.
    kernel = tilelang.compile(splitk_gemv(num_stages=2), out_idx=[2], target="cuda",
                              pass_configs={"tl.disable_warp_specialized": True, "tl.disable_tma_lower": True})
    n, k, block = 1024, 8192, 1024
    torch.manual_seed(0)
    a = torch.randn(k, dtype=torch.float16, device="cuda")
    b = torch.randn(n, k, dtype=torch.float16, device="cuda")
    c = kernel(a, b)
    torch.cuda.synchronize()
    ref = (a.float().view(k // block, block) * b.float().view(n, k // block, block)).sum(1)
    # the cross-thread variant computes with its neighbour's bytes on purpose: compare with that
    if name == "splitk-cross-thread-read":
        swapped = a.view(k // 8, 8)[torch.arange(k // 8, device="cuda") ^ 1].reshape(k)
        ref = (swapped.float().view(k // block, block) * b.float().view(n, k // block, block)).sum(1)
    err = (c - ref).abs().max().item()
    return {"max_abs_error": err, "correct": err < 1e-1}


def static_verdict(text: str) -> dict | None:
    """pipelint's verdict on the variant (None where pipelint is not installed: the GPU machine;
    `--static FILE` fills it in afterwards)."""
    try:
        from pipelint.engine import analyze_source
        from pipelint.pluginhost import load_plugins
    except ImportError:
        return None

    _, findings, errors, _ = analyze_source("variant.cu", text, load_plugins())
    return {"errors": sorted({f.rule for f in findings if f.severity.value == "error"}),
            "redundant_barriers": sorted(f.location.line for f in findings if f.rule == "redundant-barrier"),
            "tool_errors": len(errors)}


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print("RESULT " + json.dumps(run_one(sys.argv[2])), flush=True)
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--static":
        path = Path(sys.argv[2])
        doc = json.loads(path.read_text())
        texts = variants()
        for row in doc["variants"]:
            row["pipelint"] = static_verdict(texts[row["variant"]][0])
        path.write_text(json.dumps(doc, indent=2) + "\n")
        path.with_suffix(".md").write_text(_table(doc["variants"]))
        print(_table(doc["variants"]))
        return 0
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "validation-out")
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TILELANG_DISABLE_CACHE": "1", "PYTHONUNBUFFERED": "1"}
    rows = []
    for name, (text, planted) in variants().items():
        row = {"variant": name, "planted_race": planted, "pipelint": static_verdict(text)}
        plain = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True,
                               env=env, timeout=600)
        result = re.search(r"^RESULT (.*)$", plain.stdout, re.M)
        row["run"] = json.loads(result.group(1)) if result else {"error": plain.stderr[-300:]}
        started = time.time()
        try:         # a racy kernel makes racecheck slow: a few hazards shown are enough to count it
            sanitized = subprocess.run(["compute-sanitizer", "--tool", "racecheck", "--racecheck-report", "hazard",
                                        "--print-limit", "5", sys.executable, __file__, "--one", name],
                                       capture_output=True, text=True, env=env, timeout=240)
        except subprocess.TimeoutExpired as exc:
            partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
            sanitized = subprocess.CompletedProcess(exc.cmd, -1, partial, "timeout after 240 s")
        summary = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)",
                            sanitized.stdout + sanitized.stderr)
        ran = re.search(r"^RESULT (.*)$", sanitized.stdout, re.M)
        row["racecheck"] = ({"hazards": int(summary.group(1)), "errors": int(summary.group(2)),
                             "warnings": int(summary.group(3)), "kernel_ran": ran is not None} if summary else
                            {"raw": (sanitized.stdout + sanitized.stderr)[-1500:], "kernel_ran": ran is not None})
        row["racecheck"]["seconds"] = round(time.time() - started, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
        (out / "racecheck.json").write_text(json.dumps({"variants": rows}, indent=2) + "\n")   # partial
    doc = {"command": "python docs/validation/racecheck_same_thread.py OUT_DIR", "fixture": FIXTURE,
           "device": _device(), "variants": rows}
    (out / "racecheck.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "racecheck.md").write_text(_table(rows))
    print(_table(rows))
    return 0


def _table(rows: list[dict]) -> str:
    lines = ["| variant | planted race | pipelint errors | racecheck hazards | output vs reference |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        rc = r["racecheck"]
        static = r["pipelint"]
        verdict = "?" if static is None else (", ".join(static["errors"]) or "none")
        hazards = (f"{rc['hazards']} ({rc['errors']} errors)" if "hazards" in rc
                   else "hazard reports printed; stopped at 240 s before the summary")
        run = r["run"]
        output = ("matches" if run.get("correct") else
                  f"wrong (max error {run['max_abs_error']:.3g})" if "max_abs_error" in run else "did not run")
        lines.append(f"| {r['variant']} | {'yes' if r['planted_race'] else 'no'} | {verdict} | {hazards} | {output} |")
    return "\n".join(lines) + "\n"


def _device() -> str:
    try:
        import torch

        return torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
