"""A GEMM autotuned over 54 configurations (tile sizes x num_stages x threads), as TileLang's
examples do.  `pipelint lower examples/autotune_gemm.py --configs all --arch sm_90` lowers every
configuration without a GPU and says which are not worth timing."""
import itertools

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune

CONFIGS = [{"block_M": m, "block_N": n, "block_K": k, "num_stages": s}
           for m, n, k, s in itertools.product((64, 128, 256), (64, 128, 256), (32, 64), (2, 4, 6))
           ][:54]


@autotune(configs=CONFIGS, warmup=3, rep=20)
@tilelang.jit(out_idx=[-1])
def matmul(M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm
