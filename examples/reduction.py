"""Row sum of a matrix, streaming column tiles through shared memory with a pipelined loop."""
import tilelang.language as T


def row_sum(M=1024, N=4096, block_M=64, block_N=128, num_stages=2, threads=128,
            dtype="float32"):
    @T.prim_func
    def row_sum_kernel(A: T.Tensor((M, N), dtype), Out: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            A_local = T.alloc_fragment((block_M, block_N), dtype)
            partial = T.alloc_fragment((block_M,), dtype)
            acc = T.alloc_fragment((block_M,), dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                T.copy(A[bx * block_M, k * block_N], A_shared)
                T.copy(A_shared, A_local)
                T.reduce_sum(A_local, partial, dim=1)
                for i in T.Parallel(block_M):
                    acc[i] += partial[i]
            T.copy(acc, Out[bx * block_M])

    return row_sum_kernel
