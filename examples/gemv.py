"""GEMV y = A @ x with the K dimension streamed through shared memory by a pipelined loop."""
import tilelang.language as T


def gemv(N=4096, K=4096, block_N=128, block_K=64, num_stages=2, threads=128,
         dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemv_kernel(A: T.Tensor((N, K), dtype), x: T.Tensor((K,), dtype),
                    y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bn:
            A_shared = T.alloc_shared((block_N, block_K), dtype)
            x_shared = T.alloc_shared((block_K,), dtype)
            acc = T.alloc_fragment((block_N,), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[bn * block_N, k * block_K], A_shared)
                T.copy(x[k * block_K], x_shared)
                for i, j in T.Parallel(block_N, block_K):
                    acc[i] += A_shared[i, j].astype(accum_dtype) * x_shared[j].astype(accum_dtype)
            T.copy(acc, y[bn * block_N])

    return gemv_kernel
