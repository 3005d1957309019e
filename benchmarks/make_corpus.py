"""Lower a larger corpus for the speed benchmark (more tile shapes than the test fixtures).

    python benchmarks/make_corpus.py [--jobs N]

Writes benchmarks/corpus/*.cu (compile-only TileLang 0.1.15, `#line` paths
made relative like the fixtures).  Together with tests/fixtures/kernels this
is well over 2 MB of real generated CUDA.
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "corpus"
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import generate  # noqa: E402

CONFIGS = (
    ("gemm.py", "matmul", "gemm64", dict(block_M=64, block_N=64, block_K=32)),
    ("gemm.py", "matmul", "gemm256", dict(block_M=128, block_N=256, block_K=32, threads=256)),
    ("gemm.py", "matmul", "gemmk64", dict(block_M=128, block_N=128, block_K=64)),
    ("gemm_variants.py", "matmul_nt", "gemm_nt128", dict(block_M=128, block_N=256, block_K=32, threads=256)),
    ("flash_attention.py", "flash_attention", "fa128", dict(block_M=128, block_N=64, dim=128, threads=256)),
    ("flash_attention.py", "flash_attention", "fa_d128", dict(dim=128)),
    ("flash_attention.py", "flash_attention", "fa_n128", dict(block_N=128)),
    ("flash_attention.py", "flash_attention", "fa_m128_d128", dict(block_M=128, dim=128, threads=256)),
    ("gemm.py", "matmul", "gemm_bf16", dict(block_K=64, dtype="bfloat16")),
)


def lower_one(job):
    try:
        return generate.lower_one(job, OUT)
    except Exception as exc:  # noqa: BLE001 - some shapes do not lower for some archs
        name, arch, stages = job[2], job[4], job[5]
        return f"skip {name} {arch} s{stages}: {str(exc).splitlines()[-1][:100]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    jobs = [(e, f, n, kw, a, s) for e, f, n, kw in CONFIGS for a in ("sm_80", "sm_90", "sm_100")
            for s in (1, 2, 3, 4)]
    with ProcessPoolExecutor(args.jobs) as pool:
        for line in pool.map(lower_one, jobs):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
