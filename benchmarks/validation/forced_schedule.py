"""Forced-schedule validation (issue 36): every race finding gets delay variants, run on a GPU.

Three steps, so that everything static happens on the CPU and the GPU only builds and runs:

    python benchmarks/validation/forced_schedule.py plan MANIFEST.json PLAN_DIR [--mutants N [--mutant-filter S]]
    benchmarks/validation/forced_schedule.sh run PLAN_DIR OUT_DIR --jobs 16 --timeout 90       # GPU
    python benchmarks/validation/forced_schedule.py report RECORD.json [RECORD2.json] [--json ROWS.json]  # CPU

`plan` runs pipelint on each case's buggy CUDA, takes each race finding's witness and writes the
delay variants (`plugins/forced_schedule.py`): PLAN_DIR/<case>/buggy.cu (unedited), buggy_fs.cu
(every delay, selected at run time by `pl_fs_select`), twin.cu and twin_fs.cu (the fixed twin and
the same delays on it: the control) and variants/<n>.cu (each variant alone: the reproducer to
attach to a bug report).  `--mutants N` adds N planted defects of the mutation suites
(tests/mutants/mutate.py, benchmarks/mutation_sites.py) whose fixture is the twin.

`run` builds each case with the raw-launch harness (raw_launch.py: the exact text, seeded inputs,
one launch, every buffer dumped; the selector set from $PL_FS_SELECT) or, for `"backend":
"tilelang"` cases, through TileLang's CUDA post-processing callback (`pipelint verify`'s runner),
runs the unedited kernel twice (natural schedule), every delay variant, the twin with and without
the delays, and racecheck/synccheck on the unedited kernel, each run in its own process with a
timeout, many at a time on the one GPU.  `report` turns that into verdicts per finding
(`plugins/forced_schedule_verdict.py`) and the Markdown tables.

Manifest: {"cases": [{"id", "cu", "twin", "class", "grid", "params", "fast_math", "reference":
{"got", "want"}, "backend": "raw"|"tilelang", "spec": {file, name, params, arch, num_stages}}]}.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

NATURAL_RUNS = 3                   # runs of the unedited kernel: is its natural output always wrong?
HOST_HOOK = "  auto t0 = std::chrono::steady_clock::now();"
HOST_SELECT = ('  { const char* pl_s = std::getenv("PL_FS_SELECT"); int pl_v = pl_s ? std::atoi(pl_s) : 0;\n'
               '    CK(cudaMemcpyToSymbol(pl_fs_select, &pl_v, sizeof(int))); }\n')
# The STRESS forcing (`forced_schedule.STRESS`, `PL_FS_STRESS=1`): before the launch, a memory-
# bandwidth hog on a non-blocking stream (one 512-thread block per SM, read-modify-write of float4s
# over 2 GiB, far beyond the L2, for 50 ms), started and seen running before the kernel is
# launched; after the kernel, whether the hog was still running (`overlapped=1`: the kernel ran
# beside it).  The kernel's text is unchanged: only its copies' flight time is stretched.  The hog
# asks for the most shared memory in its SMs' carveout: it uses none, and under the carveout the
# driver would otherwise give it, a kernel with shared memory cannot share its SMs (round 9: no
# stress run overlapped, 0 of 46 cases).

HOST_STRESS_KERNEL = r"""
__global__ void __launch_bounds__(512) pl_stress_kernel(float4* buf, size_t n4, unsigned long long ns, int* flag) {
  unsigned long long t0, now; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  if (blockIdx.x == 0 && threadIdx.x == 0) { *(volatile int*)flag = 1; __threadfence_system(); }
  size_t stride = (size_t)gridDim.x * blockDim.x, i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  do {
    for (int u = 0; u < 16; ++u) {
      size_t j0 = i % n4, j1 = (i + stride) % n4, j2 = (i + 2 * stride) % n4, j3 = (i + 3 * stride) % n4;
      float4 a = __ldcg(buf + j0), b = __ldcg(buf + j1), c = __ldcg(buf + j2), d = __ldcg(buf + j3);
      a.x += 1.f; b.y += 1.f; c.z += 1.f; d.w += 1.f;
      __stcg(buf + j0, a); __stcg(buf + j1, b); __stcg(buf + j2, c); __stcg(buf + j3, d);
      i = (i + 4 * stride) % n4;
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - t0 < ns);
}

"""
HOST_STRESS_START = (
    '  const char* pl_st = std::getenv("PL_FS_STRESS"); bool pl_stress = pl_st && std::atoi(pl_st) > 0;\n'
    '  cudaStream_t pl_ss = nullptr;\n'
    '  if (pl_stress) {\n'
    '    int pl_sms = 0; CK(cudaDeviceGetAttribute(&pl_sms, cudaDevAttrMultiProcessorCount, dev));\n'
    '    size_t pl_bytes = 2ull << 30; float4* pl_sb = nullptr; int* pl_sf = nullptr; int* pl_sfd = nullptr;\n'
    '    CK(cudaMalloc((void**)&pl_sb, pl_bytes)); CK(cudaMemset(pl_sb, 0, pl_bytes));\n'
    '    CK(cudaHostAlloc((void**)&pl_sf, sizeof(int), cudaHostAllocMapped)); *(volatile int*)pl_sf = 0;\n'
    '    CK(cudaHostGetDevicePointer((void**)&pl_sfd, (void*)pl_sf, 0));\n'
    '    CK(cudaFuncSetAttribute(pl_stress_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,\n'
    '                            cudaSharedmemCarveoutMaxShared));\n'
    '    CK(cudaStreamCreateWithFlags(&pl_ss, cudaStreamNonBlocking)); CK(cudaDeviceSynchronize());\n'
    '    pl_stress_kernel<<<pl_sms, 512, 0, pl_ss>>>(pl_sb, pl_bytes / 16, 50000000ull, pl_sfd);\n'
    '    CK(cudaGetLastError());\n'
    '    while (*(volatile int*)pl_sf == 0) {}\n'
    '  }\n')
HOST_AFTER = "  CK(cudaGetLastError());\n  CK(cudaDeviceSynchronize());\n  double ms"
HOST_STRESS_END = (
    "  CK(cudaGetLastError());\n"
    "  if (pl_stress) { cudaEvent_t pl_e; CK(cudaEventCreateWithFlags(&pl_e, cudaEventDisableTiming));\n"
    "    CK(cudaEventRecord(pl_e, 0)); while (cudaEventQuery(pl_e) == cudaErrorNotReady) {}\n"
    "    std::printf(\"RAW_LAUNCH stress overlapped=%d\\n\", cudaStreamQuery(pl_ss) == cudaErrorNotReady ? 1 : 0); }\n"
    "  CK(cudaDeviceSynchronize());\n  double ms")


# ------------------------------------------------------------------ plan (CPU)
def _mutant_cases(n: int) -> list[dict[str, Any]]:
    """Up to `n` planted defects whose class forced scheduling addresses, spread over classes and
    fixtures: mutate.py's sm_80 race mutants, then mutation_sites.py's per-site mutants (sm_80:
    the raw harness launches them; sm_90 mutants of mutate.py go through TileLang)."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import mutation_sites
    from mutants import mutate

    out: list[dict[str, Any]] = []
    race = {"missing-barrier", "wait-too-shallow", "uncommitted-copy", "mbarrier-release"}
    for m in mutate.all_mutants():
        if m.rule in race and "_sm_80_" in m.fixture:
            out.append({"id": f"m-{m.name}", "class": m.rule, "text": m.text, "twin": str(mutate.KERNELS / m.fixture),
                        "planted_rule": m.rule, "suite": "mutate.py"})
    by_class: dict[str, list] = {}
    for fixture in mutation_sites.fixtures("*_sm_80_*"):
        lines = (mutation_sites.KERNELS / fixture).read_text().split("\n")
        for gen in (mutation_sites.drop_raw_barrier, mutation_sites.drop_war_barrier, mutation_sites.wait_shallower,
                    mutation_sites.drop_commit):
            for p in gen(fixture, lines):
                by_class.setdefault(p.klass, []).append(p)
    rounds = max((len(v) for v in by_class.values()), default=0)
    spread = [v[(i * 7) % len(v)] for i in range(rounds) for v in by_class.values() if i < len(v)]
    seen = set()
    for p in spread:
        if len(out) >= n:
            break
        key = (p.klass, p.fixture, p.line)
        if key in seen:
            continue
        seen.add(key)
        out.append({"id": f"s-{p.klass}-{p.fixture[:-3]}-l{p.line}", "class": p.klass, "text": p.text,
                    "twin": str(mutation_sites.KERNELS / p.fixture), "planted_rule": "/".join(
                        mutation_sites.CLASSES[p.klass]), "suite": "mutation_sites.py", "what": p.what})
    return out[:n]


def plan(manifest: Path, out: Path, mutants: int, max_findings: int = 0, only: set[str] | None = None,
         mutant_filter: str | None = None) -> int:
    from pipelint.plugins import forced_schedule as fs

    cases = [c for c in json.loads(manifest.read_text())["cases"] if only is None or c["id"] in only]
    chosen = _mutant_cases(mutants) if mutants else []
    if mutant_filter:                  # of those N, the ones whose id holds the text (a rerun of a few)
        chosen = [c for c in chosen if mutant_filter in c["id"]]
    cases = [*cases, *chosen]
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"manifest": str(manifest), "cases": []}
    for case in cases:
        folder = out / case["id"]
        (folder / "variants").mkdir(parents=True, exist_ok=True)
        if case.get("mutant"):             # a planted defect of tests/mutants/mutate.py, by name
            sys.path.insert(0, str(ROOT / "tests"))
            from mutants import mutate

            m = next(x for x in mutate.all_mutants() if x.name == case["mutant"])
            case = {"text": m.text, "twin": str(mutate.KERNELS / m.fixture), "planted_rule": m.rule, **case}
        text = case.get("text") or _resolve(case["cu"], manifest).read_text()
        entry = {k: v for k, v in case.items() if k != "text"}
        try:
            plans, findings = fs.analyze(text, case.get("cu") or f"{case['id']}.cu")
            entry["static_errors"] = sorted({f.rule for f in findings if f.severity.value == "error"})
            if max_findings and len(plans) > max_findings:   # a time budget: the rest are said, not tried
                entry["not_tried"] = [{"rule": p.rule, "line": p.line} for p in plans[max_findings:]]
                plans = plans[:max_findings]
            if case.get("backend") == "tilelang":      # TileLang's runner has no stress host: no STRESS there
                for p in plans:
                    p.delays = [d for d in p.delays if d.mode != fs.STRESS]
            delays = fs.number([d for p in plans for d in p.delays])
            # a STRESS run changes no text: every finding's stress is one and the same run (one number)
            shared = next((d.number for d in delays if d.mode == fs.STRESS), None)
            delays = [replace(d, number=shared) if d.mode == fs.STRESS and shared else d for d in delays]
            (folder / "buggy.cu").write_text(text)
            (folder / "buggy_fs.cu").write_text(fs.render(text, delays, select=True))
            (folder / "variants" / "0.cu").write_text(fs.render(text, []))      # poison only: the base
            for d in delays:
                (folder / "variants" / f"{d.number}.cu").write_text(fs.render(text, [d]))
            twin_delays: list = []
            if case.get("twin"):
                twin = _resolve(case["twin"], manifest).read_text()
                twin_delays = [fs.relocate(d, twin) for d in delays]
                (folder / "twin.cu").write_text(twin)
                (folder / "twin_fs.cu").write_text(fs.render(twin, [d for d in twin_delays if d], select=True))
                (folder / "variants" / "twin_0.cu").write_text(fs.render(twin, []))
                for d in twin_delays:
                    if d:
                        (folder / "variants" / f"twin_{d.number}.cu").write_text(fs.render(twin, [d]))
        except fs.PlanError as exc:
            entry["plan_error"] = str(exc)
            doc["cases"].append(entry)
            print(f"{case['id']}: {exc}", file=sys.stderr)
            continue
        entry["findings"] = []
        k = 0
        for p in plans:
            rows = []
            for _ in p.delays:
                d, t = delays[k], (twin_delays[k] if twin_delays else None)
                k += 1
                rows.append({"number": d.number, "side": d.side, "describe": d.describe(), "separable": d.separable,
                             "twin_line": t.line if t else None, "mode": d.mode, "repeat": d.repeat,
                             "joint": [j.mode for j in d.joint],
                             "stress": fs.STRESS in (d.mode, *(j.mode for j in d.joint))})
            entry["findings"].append({"rule": p.rule, "line": p.line, "message": p.message,
                                      "witness": p.witness.to_json() if p.witness else None,
                                      "why_none": p.why_none, "delays": rows})
        doc["cases"].append(entry)
        print(f"{case['id']}: {len(plans)} finding(s), {len(delays)} delay(s)", flush=True)
    (out / "plan.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


def _resolve(path: str, manifest: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() or p.exists() else manifest.parent / p


# ------------------------------------------------------------------ run (GPU)
def _run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                start_new_session=True, env={**os.environ, **(env or {})})
    except OSError as exc:             # no compute-sanitizer here: recorded, the other runs go on
        return {"rc": None, "timeout": False, "seconds": 0.0, "output": f"cannot run {cmd[0]}: {exc}"}
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        timed_out = True
    return {"rc": None if timed_out else proc.returncode, "timeout": timed_out,
            "seconds": round(time.monotonic() - t0, 2), "output": out or ""}


_BUILT: dict[str, Any] = {}
_BUILT_LOCK = threading.Lock()


def _build_raw(case: dict, cu: Path, build: Path, arch: str, select: bool) -> dict[str, Any]:
    """One raw-launch program; the same text and launch built once (a twin shared by mutants)."""
    key = hashlib.sha256(json.dumps([cu.read_text(), select, arch, case.get("grid"), case.get("params"),
                                     case.get("fast_math"), case.get("kernel"), case.get("seed")],
                                    sort_keys=True).encode()).hexdigest()
    with _BUILT_LOCK:
        first = key not in _BUILT
        if first:
            _BUILT[key] = threading.Event()
    if not first:
        _BUILT[key].wait()
        res = dict(_BUILT[key + ":result"])
        if res.get("ok") and res["dir"] != str(build):
            build.parent.mkdir(parents=True, exist_ok=True)
            if not build.exists():
                build.symlink_to(res["dir"])
        return {**res, "shared_with": res["dir"]}
    try:
        res = {**_build_raw_once(case, cu, build, arch, select), "dir": str(build)}
    except Exception as exc:  # noqa: BLE001 - recorded; the waiting builds must not hang
        res = {"ok": False, "refused": f"{type(exc).__name__}: {exc}", "dir": str(build)}
    _BUILT[key + ":result"] = res
    _BUILT[key].set()
    return res


def _build_raw_once(case: dict, cu: Path, build: Path, arch: str, select: bool) -> dict[str, Any]:
    import raw_launch

    try:
        raw_launch.generate(cu, build, grid=raw_launch._parse_triple(str(case.get("grid", "1,1,1"))),
                            scalars={k: str(v) for k, v in case.get("params", {}).items()}, seed=case.get("seed", 0),
                            arch=arch, fast_math=bool(case.get("fast_math")), kernel_name=case.get("kernel"),
                            smem=case.get("smem", _smem(cu, case.get("kernel"))))
    except raw_launch.Refused as exc:
        return {"ok": False, "refused": str(exc)}
    if select:
        host = hook_host((build / "host.cu").read_text())
        if host is None:
            return {"ok": False, "refused": "raw_launch's host program changed: no launch line to hook"}
        (build / "host.cu").write_text(host)
    res = raw_launch.build_binary(build, arch, bool(case.get("fast_math")))
    return {"ok": res["ok"], "seconds": res["seconds"], **({} if res["ok"] else {"log": res["log"][-2000:]})}


def hook_host(host: str) -> str | None:
    """raw_launch's host program with the selector (`$PL_FS_SELECT` into `pl_fs_select`) and the
    STRESS hog (`$PL_FS_STRESS`: started and seen running before the launch, `RAW_LAUNCH stress
    overlapped=` after it) put in; None when the lines to hook are not there."""
    if HOST_HOOK not in host or HOST_AFTER not in host or "int main(" not in host:
        return None
    host = host.replace(HOST_HOOK, HOST_SELECT + HOST_STRESS_START + HOST_HOOK, 1)
    return host.replace(HOST_AFTER, HOST_STRESS_END, 1).replace("int main(", HOST_STRESS_KERNEL + "int main(", 1)


def _smem(cu: Path, kernel: str | None) -> int | str | None:
    """The dynamic shared memory to launch with: raw_launch's estimate (the highest alias offset
    plus a margin) where the kernel slices its dynamic array at offsets, else the most the device
    allows (`max`).  A kernel that indexes the array itself (row_sum's `A_shared[]`, 96-128 KiB
    over its stages) names no offset, and the estimate's 64 KiB margin made every one of its
    launches fault (round 2: cudaErrorIllegalAddress on the buggy kernel and the twin alike)."""
    import raw_launch

    k = raw_launch.find_kernel(cu.read_text(), kernel)
    return "max" if k.dynamic_smem_name and not k.smem_offsets else None


def _sanitizer_summary(text: str) -> dict[str, Any]:
    race = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    err = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    lines = Counter(re.findall(r"kernel\.cu:(\d+)", text))
    if race:
        return {"errors": int(race.group(2)), "warnings": int(race.group(3)), "cited_lines": dict(lines.most_common(8))}
    if err:
        return {"errors": int(err.group(1)), "cited_lines": dict(lines.most_common(8))}
    reports = len(re.findall(r"^=+ (?:Error|Warning)", text, re.M))
    return {"errors": reports or None, "incomplete": True, "cited_lines": dict(lines.most_common(8))}


def _raw_case(entry: dict, plan_dir: Path, builds: Path, out: Path, arch: str, timeout: float,
              pool: ThreadPoolExecutor) -> None:
    """Build the four programs of one case, then every run, then the comparisons."""
    import numpy as np
    import raw_launch

    cid = entry["id"]
    folder = plan_dir / cid
    names = ["buggy", "buggy_fs"] + (["twin", "twin_fs"] if (folder / "twin.cu").is_file() else [])
    futs = {n: pool.submit(_build_raw, entry, folder / f"{n}.cu", builds / cid / n, arch, n.endswith("_fs"))
            for n in names}
    entry["builds"] = {n: f.result() for n, f in futs.items()}
    numbers = list(dict.fromkeys(d["number"] for f in entry.get("findings", []) for d in f["delays"]))
    jobs: dict[str, Any] = {}

    def exe(n: str) -> str:
        return str(builds / cid / n / "raw_launch")

    def dump(tag: str) -> str:
        return str(builds / cid / f"{tag}.bin")

    if entry["builds"]["buggy"]["ok"]:
        for i in range(1, NATURAL_RUNS + 1):
            jobs[f"natural{i}"] = pool.submit(_run, [exe("buggy"), dump(f"natural{i}")], timeout)
        for tool in ("racecheck", "synccheck"):
            jobs[tool] = pool.submit(_run, ["compute-sanitizer", "--tool", tool, "--print-limit", "20",
                                            exe("buggy"), dump(tool)], timeout)
    stressed = {d["number"] for f in entry.get("findings", []) for d in f["delays"] if d.get("stress")}

    def env(k: int) -> dict[str, str]:
        return {"PL_FS_SELECT": str(k), **({"PL_FS_STRESS": "1"} if k in stressed else {})}

    if entry["builds"].get("buggy_fs", {}).get("ok"):
        for k in [0, *numbers]:
            jobs[f"v{k}"] = pool.submit(_run, [exe("buggy_fs"), dump(f"v{k}")], timeout, env(k))
        for k in numbers:                  # each delay twice: a forced failure must reproduce
            jobs[f"v{k}r"] = pool.submit(_run, [exe("buggy_fs"), dump(f"v{k}r")], timeout, env(k))
    if entry["builds"].get("twin", {}).get("ok"):
        jobs["twin"] = pool.submit(_run, [exe("twin"), dump("twin")], timeout)
    cmp = _comparisons(entry)
    if entry["builds"].get("twin_fs", {}).get("ok"):
        for k in [0, *numbers]:
            jobs[f"t{k}"] = pool.submit(_run, [exe("twin_fs"), dump(f"t{k}")], timeout, env(k))
        for k in numbers:              # a stretched twin is its own baseline: run it twice
            if cmp[k]["twin_repeat"]:
                jobs[f"t{k}r"] = pool.submit(_run, [exe("twin_fs"), dump(f"t{k}r")], timeout, env(k))
    results = {k: f.result() for k, f in jobs.items()}
    meta_path = builds / cid / "buggy" / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else None

    def diff(a: str, b: str) -> int | None:
        pa, pb = Path(dump(a)), Path(dump(b))
        if meta is None or not pa.is_file() or not pb.is_file():
            return None
        c = raw_launch.compare(meta, pa, pb)
        # elements that differ (a NaN where a number was counts; bytes that differ only in a NaN's
        # payload count as one)
        return 0 if c["identical"] else sum(max(1, int(x.get("differing_elements", 0)))
                                            for x in c["buffers"].values() if not x["identical"])

    def first_difference(a: str, b: str) -> dict[str, Any] | None:
        """The first element that differs, with both values (to tell a harness problem from a race)."""
        if meta is None or not Path(dump(a)).is_file() or not Path(dump(b)).is_file():
            return None
        xa, xb = raw_launch.buffers_of(meta, Path(dump(a))), raw_launch.buffers_of(meta, Path(dump(b)))
        for name in xa:
            bad = (xa[name] != xb[name]) & ~(np.isnan(xa[name]) & np.isnan(xb[name]))
            if bad.any():
                i = int(np.argmax(bad))
                return {"buffer": name, "index": i, a: float(xa[name][i]), b: float(xb[name][i])}
        return None

    def summary(tag: str, base: str, poisoned: str | None = None) -> dict[str, Any]:
        r = results.get(tag)
        if r is None:
            return {"not_run": True}
        ok = "RAW_LAUNCH ok" in r["output"]
        rec: dict[str, Any] = {"timeout": r["timeout"], "crashed": not r["timeout"] and not ok,
                               "seconds": r["seconds"]}
        if ok:
            rec["mismatches"] = diff(base, tag)
            if rec["mismatches"]:
                rec["first_difference"] = first_difference(base, tag)
            if poisoned and poisoned in results and poisoned != tag:
                rec["vs_poisoned"] = diff(poisoned, tag)     # what the delay changed beyond the poison
        else:
            rec["tail"] = r["output"][-600:]
        over = re.search(r"RAW_LAUNCH stress overlapped=(\d)", r["output"])
        if over:
            rec["stress_overlapped"] = over.group(1) == "1"
        return rec

    natural: dict[str, Any] = {"runs": [summary(f"natural{i}", "natural1") for i in range(1, NATURAL_RUNS + 1)]}
    if "twin" in results and "RAW_LAUNCH ok" not in results["twin"]["output"]:
        natural["twin_failed"] = results["twin"]["output"][-300:] or "no output"
    natural["timeout"] = any(r.get("timeout") for r in natural["runs"])
    natural["deterministic"] = all(r.get("mismatches") == 0 for r in natural["runs"][1:])
    twin_ran = "twin" in results and "RAW_LAUNCH ok" in results["twin"]["output"]
    if twin_ran:
        natural["wrong"] = diff("twin", "natural1")
        natural["wrong_runs"] = [diff("twin", f"natural{i}") for i in range(1, NATURAL_RUNS + 1)]
    if entry.get("reference") and meta is not None and Path(dump("natural1")).is_file():
        try:
            ref = raw_launch.check_reference(meta, Path(dump("natural1")), entry["reference"])
        except Exception as exc:  # noqa: BLE001 - a bad expression is recorded
            ref = {"error": str(exc)}
        natural["reference"] = ref
        if ref.get("matches") is False:
            natural["wrong"] = (natural.get("wrong") or 0) or ref["mismatched"]
    entry["natural"] = natural
    entry["poisoned"] = summary("v0", "natural1")
    entry["twin_poisoned"] = summary("t0", "twin") if "t0" in results else None
    entry["sanitizers"] = {t: {**_sanitizer_summary(results[t]["output"]), "timeout": results[t]["timeout"],
                               "seconds": results[t]["seconds"]} for t in ("racecheck", "synccheck") if t in results}
    natural["poisoned"] = entry["poisoned"].get("mismatches")
    natural["twin_poisoned"] = (entry["twin_poisoned"] or {}).get("mismatches")
    for f in entry.get("findings", []):
        for d in f["delays"]:
            k, c = d["number"], cmp[d["number"]]
            d["variant"] = _variant_summary(summary, f"v{k}", c)
            if twin_ran and not d["variant"].get("crashed") and not d["variant"].get("timeout"):
                d["variant"]["wrong"] = diff(c["wrong"], f"v{k}")
                rep = results.get(f"v{k}r")
                if rep and "RAW_LAUNCH ok" in rep["output"]:
                    d["variant"]["wrong_repeat"] = diff(c["wrong"], f"v{k}r")
            d["control"] = (_control_summary(summary, c) if d.get("twin_line") and "twin" in results else None)
    _write_logs(out, cid, results)


def _comparisons(entry: dict) -> dict[int, dict[str, Any]]:
    """Each delay's baselines (`forced_schedule_verdict.comparisons`: a STRETCH is compared with the
    stretched twin, not with the unstretched one)."""
    from pipelint.plugins.forced_schedule_verdict import comparisons

    return comparisons([d for f in entry.get("findings", []) for d in f["delays"]])


def _variant_summary(summary: Any, tag: str, c: dict[str, Any]) -> dict[str, Any]:
    """A delay's run on the buggy kernel: against the natural run and the poison-only build, or
    (a STRETCH) against its own baseline alone."""
    rec = summary(tag, "natural1", "v0") if c["changed"] == "v0" else summary(tag, c["changed"], c["changed"])
    if rec.get("mismatches") is not None and "vs_poisoned" not in rec and c["changed"] != "v0":
        rec["vs_poisoned"] = rec["mismatches"]
    return {**rec, "baseline": c["changed"]}


def _control_summary(summary: Any, c: dict[str, Any]) -> dict[str, Any]:
    """The same delay on the twin, against the twin run it must equal (`control_base`)."""
    if c["control_base"] == "t0":
        rec = summary(c["control"], "twin", "t0")
    else:
        rec = summary(c["control"], c["control_base"], c["control_base"])
        if rec.get("mismatches") is not None and "vs_poisoned" not in rec:
            rec["vs_poisoned"] = rec["mismatches"]
    return {**rec, "baseline": c["control_base"]}


def _write_logs(out: Path, cid: str, results: dict[str, Any]) -> None:
    """The first 60 lines of every run's output, under OUT/logs/CASE.log."""
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    with open(logs / f"{cid}.log", "w") as fh:
        for tag, r in sorted(results.items()):
            fh.write(f"##### {cid} {tag} rc={r['rc']} timeout={r['timeout']} {r['seconds']} s\n")
            fh.write("\n".join(r["output"].splitlines()[:60]) + "\n")


def _tilelang_case(entry: dict, plan_dir: Path, work: Path, timeout: float, pool: ThreadPoolExecutor,
                   out: Path | None = None) -> None:
    """The same runs through TileLang's callback: one compile per variant (`verify --run`)."""
    import torch

    cid = entry["id"]
    folder = plan_dir / cid
    base = dict(entry["spec"])
    (work / cid).mkdir(parents=True, exist_ok=True)

    def spec_run(tag: str, cu: Path, tool: str | None = None) -> Any:
        spec = {**base, "cuda": str(cu), "out": None if tool else str(work / cid / f"{tag}.pt")}
        path = work / cid / f"{tag}.json"
        path.write_text(json.dumps(spec))
        cmd = [sys.executable, "-m", "pipelint.plugins.verify", "--run", str(path)]
        if tool:
            cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20", *cmd]
        return pool.submit(_run, cmd, timeout, {"TILELANG_DISABLE_CACHE": "1", "PYTHONUNBUFFERED": "1"})

    numbers = [d["number"] for f in entry.get("findings", []) for d in f["delays"]]
    jobs = {"natural1": spec_run("natural1", folder / "buggy.cu"),
            "natural2": spec_run("natural2", folder / "buggy.cu"),
            "racecheck": spec_run("racecheck", folder / "buggy.cu", "racecheck"),
            "synccheck": spec_run("synccheck", folder / "buggy.cu", "synccheck")}
    jobs["v0"] = spec_run("v0", folder / "variants" / "0.cu")
    for k in numbers:
        jobs[f"v{k}"] = spec_run(f"v{k}", folder / "variants" / f"{k}.cu")
        jobs[f"v{k}r"] = spec_run(f"v{k}r", folder / "variants" / f"{k}.cu")
    cmp = _comparisons(entry)
    if (folder / "twin.cu").is_file():
        jobs["twin"] = spec_run("twin", folder / "twin.cu")
        jobs["t0"] = spec_run("t0", folder / "variants" / "twin_0.cu")
        for k in numbers:
            if (folder / "variants" / f"twin_{k}.cu").is_file():
                jobs[f"t{k}"] = spec_run(f"t{k}", folder / "variants" / f"twin_{k}.cu")
                if cmp[k]["twin_repeat"]:     # a stretched twin is its own baseline: run it twice
                    jobs[f"t{k}r"] = spec_run(f"t{k}r", folder / "variants" / f"twin_{k}.cu")
    results = {k: f.result() for k, f in jobs.items()}
    if out is not None:
        _write_logs(out, cid, results)

    def diff(a: str, b: str) -> int | None:
        pa, pb = work / cid / f"{a}.pt", work / cid / f"{b}.pt"
        if not pa.is_file() or not pb.is_file():
            return None
        n = 0
        for x, y in zip(torch.load(pa), torch.load(pb)):
            x, y = x.float(), y.float()
            n += int(((x != y) & ~(torch.isnan(x) & torch.isnan(y))).sum())
        return n

    def summary(tag: str, ref: str, poisoned: str | None = None) -> dict[str, Any]:
        r = results.get(tag)
        if r is None:
            return {"not_run": True}
        ok = "RESULT " in r["output"]
        rec: dict[str, Any] = {"timeout": r["timeout"], "crashed": not r["timeout"] and not ok, "seconds": r["seconds"]}
        if ok:
            rec["mismatches"] = diff(ref, tag)
            if poisoned and poisoned in results and poisoned != tag:
                rec["vs_poisoned"] = diff(poisoned, tag)
        else:
            rec["tail"] = r["output"][-600:]
        return rec

    natural = {"runs": [summary("natural1", "natural1"), summary("natural2", "natural1")]}
    natural["timeout"] = any(r.get("timeout") for r in natural["runs"])
    natural["deterministic"] = natural["runs"][1].get("mismatches") == 0
    if "twin" in results and "RESULT " not in results["twin"]["output"]:
        natural["twin_failed"] = results["twin"]["output"][-300:] or "no output"
    if "twin" in results and "RESULT " in results["twin"]["output"]:
        natural["wrong"] = diff("twin", "natural1")
        natural["wrong_runs"] = [diff("twin", "natural1"), diff("twin", "natural2")]
    entry["natural"] = natural
    entry["sanitizers"] = {t: {**_sanitizer_summary(results[t]["output"]), "timeout": results[t]["timeout"]}
                           for t in ("racecheck", "synccheck")}
    entry["poisoned"] = summary("v0", "natural1")
    entry["twin_poisoned"] = summary("t0", "twin") if "t0" in results else None
    natural["poisoned"] = entry["poisoned"].get("mismatches")
    natural["twin_poisoned"] = (entry["twin_poisoned"] or {}).get("mismatches")
    for f in entry.get("findings", []):
        for d in f["delays"]:
            k, c = d["number"], cmp[d["number"]]
            d["variant"] = _variant_summary(summary, f"v{k}", c)
            if natural.get("wrong_runs") is not None and not d["variant"].get("crashed"):
                d["variant"]["wrong"] = diff(c["wrong"], f"v{k}")
                d["variant"]["wrong_repeat"] = diff(c["wrong"], f"v{k}r")
            d["control"] = _control_summary(summary, c) if f"t{k}" in results else None


def run(plan_dir: Path, out: Path, jobs: int, timeout: float, arch: str, only: set[str] | None) -> int:
    doc = json.loads((plan_dir / "plan.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    builds = Path("/tmp/forced_schedule_builds")
    t0 = time.monotonic()
    cases = [c for c in doc["cases"] if not c.get("plan_error") and (only is None or c["id"] in only)]
    with ThreadPoolExecutor(jobs) as pool, ThreadPoolExecutor(max(1, len(cases))) as outer:
        futs = []
        for c in cases:
            if c.get("backend") == "tilelang":
                futs.append(outer.submit(_tilelang_case, c, plan_dir, builds / "tilelang", timeout, pool, out))
            else:
                futs.append(outer.submit(_raw_case, c, plan_dir, builds, out, arch, timeout, pool))
        owner = dict(zip(futs, cases))
        for f in as_completed(futs):
            c = owner[f]
            try:
                f.result()
            except Exception as exc:  # noqa: BLE001 - one case's failure is recorded, the run goes on
                c["run_error"] = f"{type(exc).__name__}: {exc}"
            print(f"{c['id']}: done at {time.monotonic() - t0:.0f} s", flush=True)
            doc["seconds"] = round(time.monotonic() - t0, 1)          # partial results as cases finish
            with contextlib.suppress(RuntimeError):   # a case still being filled in: the next save has it
                (out / "forced_schedule.json").write_text(json.dumps(doc, indent=2) + "\n")
    doc["seconds"] = round(time.monotonic() - t0, 1)
    doc["date"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    doc["jobs"], doc["timeout_s"] = jobs, timeout
    (out / "forced_schedule.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out / 'forced_schedule.json'} ({doc['seconds']} s)", flush=True)
    return 0


# ------------------------------------------------------------------ report (CPU)
def verdicts(doc: dict) -> list[dict[str, Any]]:
    """One row per finding with its verdict (`forced_schedule_verdict.finding_verdict`)."""
    from pipelint.plugins.forced_schedule_verdict import finding_verdict

    rows = []
    for c in doc["cases"]:
        for f in c.get("findings", []):
            natural = dict(c.get("natural") or {})
            if "natural" not in c:
                v = {"verdict": "not run", "delay": None, "mismatches": None, "tried": [],
                     "harness_error": None}
            else:
                v = finding_verdict(f, natural, c.get("sanitizers", {}))
            rows.append({"case": c["id"], "class": c.get("class", ""), "rule": f["rule"], "line": f["line"],
                         "suite": c.get("suite", ""), "verify": v})
    return rows


def merged(results: list[Path]) -> dict:
    """Several runs' records as one: a case of a later record replaces the same case of an earlier."""
    doc: dict = {"cases": [], "runs": []}
    where: dict[str, int] = {}
    for path in results:
        d = json.loads(path.read_text())
        doc["runs"].append({"record": path.name, "seconds": d.get("seconds"), "date": d.get("date"),
                            "jobs": d.get("jobs"), "timeout_s": d.get("timeout_s")})
        for c in d["cases"]:
            c["record"] = path.name
            if c["id"] in where:
                doc["cases"][where[c["id"]]] = c
            else:
                where[c["id"]] = len(doc["cases"])
                doc["cases"].append(c)
    return doc


ORDER = ("confirmed by forced schedule", "confirmed by output", "confirmed by racecheck", "confirmed by synccheck",
         "confirmed by a hang", "not reproduced", "not run")


def mutant_table(doc: dict, rows: list[dict[str, Any]]) -> str:
    """Planted defects by class: pipelint's static finding vs the strongest forced-schedule verdict
    of the mutant's findings, and what racecheck alone confirms."""
    by_case: dict[str, list[str]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r["verify"]["verdict"])
    table: dict[str, Counter] = {}
    for c in doc["cases"]:
        if not c.get("suite"):
            continue
        t = table.setdefault(c.get("class", "?"), Counter())
        t["mutants"] += 1
        planted = set(str(c.get("planted_rule", "")).split("/"))
        t["static"] += bool(planted & set(c.get("static_errors", [])))
        verdicts = by_case.get(c["id"], [])
        best = min(verdicts, key=ORDER.index) if verdicts else "no race finding to force"
        t[best] += 1
        t["racecheck alone"] += bool(((c.get("sanitizers") or {}).get("racecheck") or {}).get("errors"))
    head = ["class", "mutants", "pipelint finds the planted class", "forced schedule", "output", "racecheck",
            "hang", "not reproduced", "not run (harness)", "no race finding", "racecheck alone"]
    keys = ["mutants", "static", ORDER[0], ORDER[1], ORDER[2], ORDER[4], ORDER[5], ORDER[6],
            "no race finding to force", "racecheck alone"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total: Counter = Counter()
    for klass, t in sorted(table.items()):
        total.update(t)
        lines.append(f"| {klass} | " + " | ".join(str(t[k]) for k in keys) + " |")
    lines.append("| **all** | " + " | ".join(f"**{total[k]}**" for k in keys) + " |")
    return "\n".join(lines) + "\n"


def report(results: list[Path], out_json: Path | None) -> int:
    from pipelint.plugins.forced_schedule_verdict import control_changes, render_table

    doc = merged(results)
    rows = verdicts(doc)
    changed, compared = control_changes(doc["cases"])
    text = render_table(rows)
    text += f"\ncontrols: {changed} of {compared} twin runs under a delay changed the twin's output\n"
    if any(c.get("suite") for c in doc["cases"]):
        text += "\n" + mutant_table(doc, rows)
    for r in doc["runs"]:
        text += (f"run {r['record']}: {r['seconds']} s, {r['jobs']} processes at a time, timeout {r['timeout_s']} s"
                 f" ({r['date']})\n")
    print(text)
    if out_json:
        out_json.write_text(json.dumps({"rows": rows, "controls_changed": changed, "controls_compared": compared,
                                        "runs": doc["runs"]}, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan")
    p.add_argument("manifest")
    p.add_argument("out")
    p.add_argument("--mutants", type=int, default=0)
    p.add_argument("--max-findings", type=int, default=0, help="findings tried per case (0: all)")
    p.add_argument("--only", default=None, help="manifest case ids (comma-separated; default all)")
    p.add_argument("--mutant-filter", default=None, help="of the --mutants N, only ids holding this text")
    r = sub.add_parser("run")
    r.add_argument("plan")
    r.add_argument("out")
    r.add_argument("--jobs", type=int, default=16)
    r.add_argument("--timeout", type=float, default=90.0)
    r.add_argument("--arch", default="sm_90a")
    r.add_argument("--only", default=None)
    q = sub.add_parser("report")
    q.add_argument("results", nargs="+", help="records of `run` (a later one's cases replace an earlier's)")
    q.add_argument("--json", default=None, help="write the verdict rows here")
    a = ap.parse_args(argv)
    try:
        return _step(a)
    except (OSError, ValueError, KeyError) as exc:     # a missing or malformed manifest/record: one line
        if isinstance(exc, OSError) and exc.filename:
            why = f"{exc.filename}: {exc.strerror or exc}"
        elif isinstance(exc, KeyError):
            why = f"a case or record lacks the field {exc}"
        else:
            why = str(exc)
        print(f"forced_schedule.py {a.step}: {why}", file=sys.stderr)
        return 2


def _step(a: argparse.Namespace) -> int:
    if a.step == "plan":
        return plan(Path(a.manifest), Path(a.out), a.mutants, a.max_findings,
                    set(a.only.split(",")) if a.only else None, a.mutant_filter)
    if a.step == "run":
        return run(Path(a.plan), Path(a.out), a.jobs, a.timeout, a.arch, set(a.only.split(",")) if a.only else None)
    return report([Path(r) for r in a.results], Path(a.json) if a.json else None)


if __name__ == "__main__":
    sys.exit(main())
