"""Issue 39: a kernel whose tile size lives in an imported module is lowered again in the editor
after that module changes, and two files with identical bytes do not share lowerings.

The server's lowering cache key (`lsp.lowering.cache_key`, and through it the analysis cache's,
`lsp.store.key`) covers the modules the buffer imports within the project, transitively, and the
buffer's path: the same inputs `pipelint lower`'s key has (tests/test_lower.py lowers it for real).
"""
from __future__ import annotations

from pipelint.lsp.lowering import cache_key, kernel_keys
from pipelint.lsp.settings import LowerSettings

KERNEL = '''import tilelang.language as T
from tiles import BLOCK_K


def matmul(M=256, N=256, K=256, num_stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, BLOCK_K), "float16")
            T.copy(A[0:64, 0:BLOCK_K], S)
    return main
'''


def test_an_edited_imported_module_changes_the_servers_key(tmp_path):
    (tmp_path / "tiles.py").write_text("BLOCK_K = 64\n")
    path = tmp_path / "gemm.py"
    path.write_text(KERNEL)
    settings = LowerSettings()
    before = cache_key(str(path), KERNEL, settings, "0.1.15")
    before_kernels = kernel_keys(str(path), KERNEL, settings, "0.1.15")
    assert cache_key(str(path), KERNEL, settings, "0.1.15") == before       # stable when nothing changed
    (tmp_path / "tiles.py").write_text("BLOCK_K = 32\n")
    assert cache_key(str(path), KERNEL, settings, "0.1.15") != before
    assert kernel_keys(str(path), KERNEL, settings, "0.1.15")["matmul"] != before_kernels["matmul"]


def test_a_copied_file_does_not_share_the_originals_key(tmp_path):
    (tmp_path / "tiles.py").write_text("BLOCK_K = 64\n")
    a, b = tmp_path / "gemm.py", tmp_path / "gemm_copy.py"
    a.write_text(KERNEL)
    b.write_text(KERNEL)
    settings = LowerSettings()
    assert cache_key(str(a), KERNEL, settings, "0.1.15") != cache_key(str(b), KERNEL, settings, "0.1.15")
