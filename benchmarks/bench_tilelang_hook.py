"""What linting at compile time costs: pipelint's time per kernel against TileLang's own lowering.

    python benchmarks/bench_tilelang_hook.py [--arch sm_90] [--stages 1 2 3]

Lowers the example kernels (compile-only, no GPU) with `pipelint.tilelang.install("warn")`,
measuring TileLang's whole `compile_kernel_source` and, inside it, the time pipelint's callback
took (`pipelint.tilelang.stats()`), in one process: both are timed in the same run.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = (("gemm.py", "matmul"), ("flash_attention.py", "flash_attention"), ("gemv.py", "gemv"),
           ("reduction.py", "row_sum"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", nargs="+", default=["sm_80", "sm_90"])
    ap.add_argument("--stages", type=int, nargs="+", default=[2, 3])
    args = ap.parse_args()
    from tilelang.tools.compile_only import compile_kernel_source

    import pipelint.tilelang as hook

    hook.install("warn")
    rows = []
    for example, factory in KERNELS:
        spec = importlib.util.spec_from_file_location(f"ex_{factory}", ROOT / "examples" / example)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for arch in args.arch:
            for n in args.stages:
                before = hook.stats()["total_s"]
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    compile_kernel_source(getattr(module, factory)(num_stages=n), {"kind": "cuda", "arch": arch})
                total = time.perf_counter() - start
                lint = hook.stats()["total_s"] - before
                rows.append((f"{factory} {arch} s{n}", total - lint, lint))
    hook.uninstall()
    print(f"{'kernel':<28}{'TileLang s':>12}{'pipelint s':>12}{'added':>9}")
    for name, lower, lint in rows:
        print(f"{name:<28}{lower:>12.2f}{lint:>12.3f}{lint / lower:>8.1%}")
    lower = sum(r[1] for r in rows)
    lint = sum(r[2] for r in rows)
    print(f"{'total (' + str(len(rows)) + ' kernels)':<28}{lower:>12.2f}{lint:>12.3f}{lint / lower:>8.1%}")
    print(f"median added per kernel: {statistics.median(r[2] / r[1] for r in rows):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
