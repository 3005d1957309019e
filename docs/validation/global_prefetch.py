"""GPU check of the global-race pipelint reports in TileLang 0.1.15's num_stages=2 output of
tests/fixtures/causes/global_prefetch.py (issue 31, item 8): a cp.async prefetch of row r + 1 in
flight while the same threads add into row r + 1 atomically.

    python docs/validation/global_prefetch.py OUT.json          # on the GPU machine

Each variant's exact fixture text is compiled in place of TileLang's own (TileLang's CUDA
post-processing callback) and run RUNS times on seeded inputs; the output is compared with the
program's meaning, computed in order on the host (`X[r + 1] += X[r]` for r = 0 .. M - 2).
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 200
VARIANTS = {0: ROOT / "tests/fixtures/kernels/global_prefetch_sm_80_s0.cu",
            2: ROOT / "tests/fixtures/handwritten/global_prefetch_sm_80_s2.cu"}


def main(out: str) -> int:
    import tilelang
    import torch
    from tilelang.engine.callback import register_cuda_postproc

    spec = importlib.util.spec_from_file_location("gp", ROOT / "tests/fixtures/causes/global_prefetch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = {}
    for stages, cu in VARIANTS.items():
        text = cu.read_text()
        register_cuda_postproc(lambda code, target, text=text: text, override=True)
        kernel = tilelang.compile(module.global_prefetch(num_stages=stages), out_idx=[], target="cuda",
                                  pass_configs={"tl.disable_warp_specialized": True, "tl.disable_tma_lower": True})
        wrong = 0
        worst = 0.0
        for seed in range(RUNS):
            torch.manual_seed(seed)
            x = torch.randn(8, 128, device="cuda")
            want = x.clone()
            for r in range(7):
                want[r + 1] += want[r]
            kernel(x)
            torch.cuda.synchronize()
            err = (x - want).abs().max().item()
            worst = max(worst, err)
            wrong += err > 1e-4
        results[f"num_stages={stages}"] = {"fixture": str(cu.relative_to(ROOT)), "runs": RUNS,
                                           "wrong_outputs": int(wrong), "max_abs_error": worst}
        print(stages, results[f"num_stages={stages}"], flush=True)
    Path(out).write_text(json.dumps({"device": torch.cuda.get_device_name(), "tilelang": tilelang.__version__,
                                     "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
