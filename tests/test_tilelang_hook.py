"""pipelint inside TileLang: every generated kernel is checked before nvcc, findings are Python
warnings at the user's TileLang line (or a PipelineError), and uninstall() restores TileLang."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import warnings

import pytest
from helpers import ROOT

pytestmark = [pytest.mark.tilelang, pytest.mark.skipif(importlib.util.find_spec("tilelang") is None,
                                                      reason="needs the tilelang extra")]
CAUSES = ROOT / "tests" / "fixtures" / "causes"
SPLITK = CAUSES / "splitk_gemv.py"


def _splitk():
    spec = importlib.util.spec_from_file_location("splitk_gemv_cause", SPLITK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.splitk_gemv(num_stages=2)


def _lower(func, arch="sm_80") -> str:
    from tilelang.tools.compile_only import compile_kernel_source

    return compile_kernel_source(func, {"kind": "cuda", "arch": arch})


@pytest.fixture
def hook():
    import pipelint.tilelang as hook

    yield hook
    hook.uninstall()


def test_warnings_at_the_users_tilelang_line(hook, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    hook.install("warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = _lower(_splitk())
    ours = [w for w in caught if issubclass(w.category, hook.PipelineWarning)]
    assert ours, [str(w.message) for w in caught]
    assert all(w.filename.endswith("tests/fixtures/causes/splitk_gemv.py") for w in ours)
    # the same-thread barriers are redundant: reported at the statement TileLang's `#line` names
    # before them, the T.Pipelined loop of the cause kernel (issue 34: a #line block is its statement)
    loop_line = next(n for n, line in enumerate(SPLITK.read_text().splitlines(), 1) if "T.Pipelined(" in line)
    assert loop_line in {w.lineno for w in ours}
    assert any("[redundant-barrier]" in str(w.message) and "help:" in str(w.message) for w in ours)
    assert "__syncthreads" in source                      # TileLang's text is returned unchanged
    assert hook.stats()["kernels"] >= 1


def test_warnings_obey_filterwarnings_and_the_projects_config(hook, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\nignore = ["redundant-barrier"]\n')
    hook.install("warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _lower(_splitk())
    assert not [w for w in caught if issubclass(w.category, hook.PipelineWarning)]
    (tmp_path / "pyproject.toml").write_text("[tool.pipelint]\n")
    hook.install("warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error", hook.PipelineWarning)         # -W error::PipelineWarning
        with pytest.raises(Exception, match="redundant-barrier"):
            _lower(_splitk())


def test_error_mode_raises_on_errors_and_a_previous_callback_still_runs(hook, monkeypatch, tmp_path):
    import tvm_ffi

    monkeypatch.chdir(tmp_path)

    def plant_race(code, target):       # the user's own post-processing: deletes the barrier after the wait
        return code.replace("tl::cp_async_wait<1>();\n    __syncthreads();", "tl::cp_async_wait<1>();", 1) \
            .replace("((int)threadIdx.x) * 8)))", "(((int)threadIdx.x) ^ 1) * 8)))", 1)

    tvm_ffi.register_global_func(hook.CALLBACK, f=plant_race, override=True)
    try:
        hook.install("error")
        with pytest.raises(Exception, match="missing-barrier") as info, warnings.catch_warnings():
            warnings.simplefilter("ignore", hook.PipelineWarning)     # the redundant barriers are warnings
            _lower(_splitk())
        assert "splitk_gemv.py" in str(info.value)
        hook.uninstall()
        restored = tvm_ffi.get_global_func(hook.CALLBACK, allow_missing=True)
        assert restored is not None and restored("a", None) == "a"      # the user's callback is back
    finally:
        tvm_ffi.remove_global_func(hook.CALLBACK)


def test_environment_variable_installs_it_without_an_import(tmp_path):
    code = ("import warnings, sys; sys.path.insert(0, %r); warnings.simplefilter('always');\n"
            "import importlib.util as u\n"
            "s = u.spec_from_file_location('m', %r); m = u.module_from_spec(s); s.loader.exec_module(m)\n"
            "from tilelang.tools.compile_only import compile_kernel_source\n"
            "with warnings.catch_warnings(record=True) as c:\n"
            "    warnings.simplefilter('always')\n"
            "    compile_kernel_source(m.splitk_gemv(num_stages=2), {'kind': 'cuda', 'arch': 'sm_80'})\n"
            "print(sorted({w.category.__name__ for w in c}))\n") % (str(ROOT / "tests"), str(SPLITK))
    import pipelint._tilelang_hook  # noqa: F401 - what the .pth line imports
    env = {**os.environ, "PIPELINT_TILELANG": "warn"}
    # the .pth line of the wheel, spelled out (an editable install has no .pth)
    launcher = ('import os; os.environ.get("PIPELINT_TILELANG", "off").strip().lower() in ("", "off") '
                'or __import__("pipelint._tilelang_hook")\n' + code)
    out = subprocess.run([sys.executable, "-c", launcher], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "PipelineWarning" in out.stdout
    off = subprocess.run([sys.executable, "-c", launcher], capture_output=True, text=True,
                         env={**env, "PIPELINT_TILELANG": "off"}, cwd=tmp_path, timeout=300)
    assert "PipelineWarning" not in off.stdout


def test_an_imported_tile_size_reaches_the_hooks_kernel(tmp_path):
    """Issue 39's done-when in the JIT hook: a kernel whose tile size lives two imports away
    (`k.py` imports `config`, which imports `tiles`) is checked as TileLang generates it after
    `tiles.py` changes, and `checked()` reports the new shared memory per block.  A fresh
    interpreter each time, as a user's next run is (sys.modules would keep the old `tiles`)."""
    gemm = (ROOT / "examples" / "gemm.py").read_text()
    (tmp_path / "k.py").write_text(gemm.replace("import tilelang.language as T\n",
                                                "import tilelang.language as T\nfrom config import TILE_K\n", 1)
                                   .replace("block_K=32", "block_K=TILE_K", 1))
    (tmp_path / "config.py").write_text("from tiles import BLOCK_K\n\nTILE_K = BLOCK_K\n")
    script = ("import json, sys; sys.path.insert(0, sys.argv[1])\n"
              "import pipelint.tilelang as hook\nhook.install('warn')\nimport k\n"
              "from tilelang.tools.compile_only import compile_kernel_source\n"
              "compile_kernel_source(k.matmul(num_stages=2), {'kind': 'cuda', 'arch': 'sm_80'})\n"
              "print(json.dumps([(c['kernel'], c['shared_bytes']) for c in hook.checked()]))\n")

    def checked(block_k):
        (tmp_path / "tiles.py").write_text(f"BLOCK_K = {block_k}\n")
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300, env={**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "tlc")})
        assert out.returncode == 0, out.stderr[-2000:]
        return [tuple(c) for c in json.loads(out.stdout.strip().splitlines()[-1])]

    [(name, before)] = checked(64)
    assert before == (128 * 64 + 64 * 128) * 2 * 2           # A and B tiles, float16, two stages
    assert checked(32) == [(name, (128 * 32 + 32 * 128) * 2 * 2)]
