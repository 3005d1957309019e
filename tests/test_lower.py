"""`pipelint lower`: real TileLang lowering, planner facts, cache, cross-variant checks, bad input."""
from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
from helpers import ROOT

pytestmark = [pytest.mark.tilelang, pytest.mark.skipif(importlib.util.find_spec("tilelang") is None,
                                                      reason="needs the tilelang extra")]
GEMM = ROOT / "examples" / "gemm.py"
PY = ROOT / "tests" / "fixtures" / "pyfiles"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("lower-cache")


@pytest.fixture
def lower(run_cli, cache_dir, monkeypatch):
    monkeypatch.setenv("PIPELINT_CACHE_DIR", str(cache_dir))

    def run(*args):
        return run_cli("lower", *args)

    return run


def test_seed_gemm_sweep_reproduces_the_planner_facts(lower, tmp_path):
    res = lower(GEMM, "--num-stages", "0", "1", "3", "--arch", "sm_80", "sm_90", "--dump-dir", tmp_path)
    assert res.code == 0, res.out
    assert ("software_pipeline_stage = [0, 0, 2]\nsoftware_pipeline_order = [0, 1, 2]\n"
            "tl_pipelined_num_stages = 3") in res.out
    assert "software_pipeline_stage = [0, 0, 1]" in res.out  # depth 1 is not depth 0
    for name in ("matmul_sm_80_s0.cu", "matmul_sm_80_s3.cu", "matmul_sm_90_s3.cu", "matmul_sm_80_s3.json"):
        assert (tmp_path / name).is_file()
    facts = json.loads((tmp_path / "matmul_sm_80_s3.json").read_text())
    assert facts["pipelined_loops"][0]["software_pipeline_stage"] == [0, 0, 2]
    doc = lower(GEMM, "--num-stages", "3", "--arch", "sm_80", "--dump-dir", tmp_path, "--format", "json").json
    assert doc["variants"][0]["cuda"] == str(tmp_path / "matmul_sm_80_s3.cu")
    # issue 34: the Hopper rows say what the TMA pipeline became (slots, barriers, bytes, roles, parity)
    tma = res.out.split("TMA pipeline", 1)[1].split("\n\n", 1)[0]
    (row,) = [line.split() for line in tma.splitlines() if line.startswith("sm_90  3")]
    assert row[:9] == ["sm_90", "3", "3", "3", "x", "1", "3", "x", "128"], tma
    assert "16384 (A_desc 8192 + B_desc 2 x 4096)" in tma and "(k_1 % 6) / 3" in tma
    assert "threads 0-127" in tma and "threads 128-255" in tma
    # one progress line per variant although stderr is not a terminal (a CI log)
    assert sum(line.startswith("pipelint lower: ") for line in res.err.splitlines()) == 6, res.err


def test_json_variants_and_second_run_is_cached(lower, tmp_path):
    args = (GEMM, "--num-stages", "0", "2", "3", "--arch", "sm_80", "--format", "json")
    first = lower(*args)
    second = lower(*args)
    def strip(doc):
        for v in doc["variants"]:
            v.pop("cached"), v.pop("lowering_seconds")
        return doc

    # the second run reads the cache: every variant says so (no timing here: a loaded CI machine
    # made "warm * 5 < cold" fail; speed is benchmarks/' job)
    assert all(v["cached"] for v in second.json["variants"])
    assert strip(first.json) == strip(second.json)
    doc = second.json
    by_n = {v["num_stages"]: v for v in doc["variants"]}
    assert by_n[0]["pipelined_loops"] == []
    loop = by_n[3]["pipelined_loops"][0]
    assert loop["software_pipeline_stage"] == [0, 0, 2] and loop["tl_pipelined_num_stages"] == 3
    assert by_n[3]["versions"] == {"A_shared": 3, "B_shared": 3}
    assert by_n[3]["shared_shapes"]["A_shared"] == [3, 128, 32]
    assert by_n[2]["in_flight"] == 1 and by_n[3]["in_flight"] == 2
    assert by_n[3]["shared_bytes"] == 49152 and by_n[3]["cuda"] is None  # not dumped
    assert all(v["findings"] == [] for v in doc["variants"])


def test_prim_func_gets_num_stages_set_by_pipelint(lower):
    doc = lower(f"{PY / 'prim_func_kernel.py'}:plain_gemm", "--num-stages", "0", "3", "--arch", "sm_80",
                "--format", "json").json
    by_n = {v["num_stages"]: v for v in doc["variants"]}
    assert by_n[0]["pipelined_loops"] == []
    assert by_n[3]["pipelined_loops"][0]["tl_pipelined_num_stages"] == 3
    assert by_n[3]["versions"]["A_shared"] == 3


def test_tma_box_bytes_come_from_the_host_code(lower):
    doc = lower(GEMM, "--num-stages", "3", "--arch", "sm_90", "--format", "json").json
    (v,) = doc["variants"]
    assert v["tma_box_bytes"] == {"A_desc": 128 * 32 * 2, "B_desc": 32 * 64 * 2}


def test_a_factory_without_num_stages_is_lowered_as_written(lower):
    """Issue 39: `lower FILE.py` said "no ... kernel factory" (exit 2) for a factory without a
    num_stages parameter; it is lowered as written, once per arch, and says so."""
    res = lower(PY / "no_stage_param.py", "--num-stages", "0", "1", "3", "--arch", "sm_80", "--format", "json")
    assert res.code == 0, res.err
    (v,) = res.json["variants"]
    assert v["ok"] and v["as_written"] and v["num_stages"] == 2
    assert v["pipelined_loops"][0]["python_line"] == 14
    assert "takes no num_stages parameter: lowered as written" in res.err
    assert "only the stage count it is written with (num_stages=2) was checked" in res.err


@pytest.mark.parametrize("target,message", [
    (str(PY / "missing.py"), "kernel file not found"),
    (str(PY / "nokernel.py"), "no @T.prim_func"),
    (f"{GEMM}:no_such_kernel", "'no_such_kernel' not found"),
    (str(PY / "raises.py"), "raises on import: RuntimeError"),
])
def test_bad_kernel_input_is_one_line_exit_two(lower, target, message):
    res = lower(target, "--num-stages", "2", "--arch", "sm_80")
    assert res.code == 2
    assert message in res.err and res.err.strip().count("\n") == 0


@pytest.mark.parametrize("args,message", [
    (("--arch", "sm_42"), "unknown arch 'sm_42'"),
    (("--num-stages", "-1"), "argument --num-stages: expected an integer >= 0"),
])
def test_bad_sweep_options_exit_two(lower, args, message):
    res = lower(GEMM, *args)
    assert res.code == 2 and message in res.err


def test_tilelang_missing_names_the_extra(lower, monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    res = lower(GEMM, "--num-stages", "2")
    assert res.code == 2 and "pipelint[tilelang]" in res.err


def test_crash_error_and_hang_each_cost_one_variant(lower):
    res = lower(PY / "flaky.py", "--num-stages", "0", "1", "2", "3", "4", "--arch", "sm_80",
                "--timeout", "20", "--format", "json", "--no-cache")
    assert res.code == 1
    by_n = {v["num_stages"]: v for v in res.json["variants"]}
    assert by_n[0]["ok"] and by_n[2]["ok"]
    assert "crashed" in by_n[1]["error"]
    assert "num_stages=3 is not supported" in by_n[3]["error"]
    assert "did not finish" in by_n[4]["error"]
    failed = [f for f in res.json["findings"] if f["rule"] == "lowering-failed"]
    assert len(failed) == 3


def test_diff_compares_facts_not_text(run_cli):
    from helpers import fixture

    res = run_cli("diff", fixture("gemm_f16_sm_80_s2.cu"), fixture("gemm_f16_sm_80_s3.cu"))
    assert res.code == 0
    rows = {line[2:].split("  ")[0]: line for line in res.out.splitlines()}
    assert rows["A_shared (offset, versions x stride)"].startswith("* ")
    assert "2 x 8192" in rows["A_shared (offset, versions x stride)"]
    assert "3 x 8192" in rows["A_shared (offset, versions x stride)"]
    wait = rows["steady cp_async_wait / commits per iteration"]
    assert "1 / 1" in wait and "2 / 1" in wait
    assert not rows["__syncthreads per steady iteration"].startswith("* ")  # flat: 2 and 2
    assert run_cli("diff", fixture("gemm_f16_sm_80_s2.cu"), "missing.cu").code == 2


def test_trace_passes_tilelang_lower_trace_through(lower, tmp_path):
    res = lower(GEMM, "--num-stages", "2", "--arch", "sm_80", "--trace", "html", "--dump-dir", tmp_path)
    assert res.code == 0
    traced = list((tmp_path / "trace").rglob("*"))
    assert any(p.suffix == ".html" for p in traced), traced[:5]


def test_terminal_trace_is_printed(lower):
    res = lower(GEMM, "--num-stages", "2", "--arch", "sm_80", "--trace", "terminal", "--no-cache")
    assert res.code == 0
    assert "InjectSoftwarePipeline" in res.err  # TileLang's own per-pass report, passed through


def test_autotuned_kernel_lowers_its_first_configuration_or_the_one_given(lower):
    res = lower(PY / "autotuned.py", "--num-stages", "2", "--arch", "sm_80", "--format", "json")
    assert res.code == 0, res.out + res.err
    assert "@autotune'd over 2 configurations; lowered configuration 1 (block_K=32" in res.err
    first = res.json
    res = lower(PY / "autotuned.py", "--num-stages", "2", "--arch", "sm_80", "--param", "block_K=64",
                "--format", "json")
    assert res.code == 0 and "lowered configuration 2 (block_K=64" in res.err
    smem = [v["shared_bytes"] for v in (first["variants"][0], res.json["variants"][0])]
    assert smem[1] == 2 * smem[0]                       # block_K 64 tiles are twice the bytes


def test_user_warp_specialized_pipeline_matches_the_planner(lower):
    res = lower(PY / "ws_pipelined.py", "--num-stages", "2", "3", "--arch", "sm_90", "--format", "json")
    assert res.code == 0, res.out
    plans = [v["pipelined_loops"][0]["software_pipeline_stage"] for v in res.json["variants"]]
    assert plans == [[0, 1], [0, 2]]                    # producer block first, consumer at N-1
    assert not [f for f in res.json["findings"] if f["rule"] == "planner-stages"]


def test_diagnostic_line_skips_the_source_caret():
    from pipelint.lowering.worker import diagnostic_line

    message = ("Traceback (most recent call last):\n  File \"x.py\", line 3\n"
               "InternalError: Check failed: (extent) is false: loop extent must be constant\n"
               "  --> examples/k.py:12:5\n   |\n12 |     for k in T.Pipelined(n):\n   |     ^^^^^^^^\n")
    assert diagnostic_line(message) == "InternalError: Check failed: (extent) is false: loop extent must be constant"
    assert diagnostic_line("ValueError: plain") == "ValueError: plain"


def test_configs_all_lowers_every_autotune_configuration_and_prunes(lower, tmp_path):
    out = tmp_path / "configs.json"
    res = lower(PY / "autotuned.py", "--configs", "all", "--arch", "sm_90", "--format", "json", "-o", str(out))
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    assert [r["config"] for r in doc["configs"]] == [{"block_K": 32, "num_stages": 2},
                                                      {"block_K": 64, "num_stages": 3}]
    assert all(r["variants"] and r["variants"][0]["num_stages"] == r["config"]["num_stages"] for r in doc["configs"])
    assert doc["summary"]["configs"] == 2 and doc["summary"]["ruled_out"] == 0
    from pipelint.tilelang import prune

    ruled = {"configs": [{"config": {"block_K": 64, "num_stages": 3}, "ruled_out": "over the shared-memory budget"}]}
    assert prune([{"block_K": 32, "num_stages": 2}, {"block_K": 64, "num_stages": 3}], ruled) == [
        {"block_K": 32, "num_stages": 2}]
    assert prune([{"block_K": 32, "num_stages": 2}], str(out)) == [{"block_K": 32, "num_stages": 2}]
    plain = lower(PY / "autotuned.py", "--configs", "x", "--arch", "sm_90")
    assert plain.code == 2


SOFTMAX = ROOT / "tests" / "fixtures" / "causes" / "two_loop_softmax.py"


def test_two_loop_softmax_loops_failures_and_counts(lower, run_cli, tmp_path, monkeypatch):
    """Issues 34 and 39 on a user's two-loop online softmax: its two loops over `k` are named by
    their Python lines; sm_90 does not lower in TileLang 0.1.15 (an InternalError), which is
    reported at the factory's `def` line with what it means, recorded in the dump folder, and
    `check` on that folder fails with the same counts as `lower`; `concise --primary-location
    python` prints each defect once, naming its variants."""
    monkeypatch.chdir(ROOT)
    dump = tmp_path / "lowered"
    res = lower(SOFTMAX.relative_to(ROOT), "--num-stages", "2", "3", "--arch", "sm_80", "sm_90", "--dump-dir", dump)
    assert res.code == 1, res.out + res.err
    assert "sm_80 num_stages=2 (loop over k at two_loop_softmax.py:26):" in res.out
    assert "sm_80 num_stages=2 (loop over k at two_loop_softmax.py:38):" in res.out
    failed = [line for line in res.out.splitlines() if "error[lowering-failed]" in line]
    assert len(failed) == 2 and all(line.startswith(f"{SOFTMAX.relative_to(ROOT)}:11:1: ") for line in failed)
    assert all("TileLang pass failed" in line for line in failed)
    assert (dump / "online_softmax_sm_90_s2.cu").read_text().startswith("// pipelint: TileLang could not lower")
    summary = res.out.strip().splitlines()[-2]
    counts = summary.split(": ", 1)[1]
    checked = run_cli("check", dump, "--no-cache")
    assert checked.code == 1
    assert checked.out.strip().splitlines()[-1].split(": ", 1)[1].startswith(counts), (summary, checked.out)
    concise = run_cli("check", dump, "--no-cache", "--primary-location", "python", "--format", "concise").out
    lines = concise.splitlines()
    assert len(lines) == len(set(lines)) and len(lines) < len(run_cli("check", dump, "--no-cache",
                                                                         "--format", "concise").out.splitlines())
    assert any(line.endswith("[sm_80 s2, s3]") for line in lines)
    assert sum("lowering-failed" in line for line in lines) == 1
    assert run_cli("check", dump, "--no-cache", "--ignore", "lowering-failed").code == 0


def test_cache_follows_an_imported_tile_size_and_a_copied_file(lower, tmp_path):
    """Issue 39: the lowering cache covers the modules a kernel imports (the tile size in
    tiles.py) and the file's path (issue 34: a copy's CUDA names the copy, not the original)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "tiles.py").write_text("BLOCK_K = 64\n")
    source = GEMM.read_text().replace("import tilelang.language as T\n",
                                      "import tilelang.language as T\nfrom tiles import BLOCK_K\n")
    (project / "k.py").write_text(source.replace("block_K=32", "block_K=BLOCK_K"))
    args = ("--num-stages", "2", "--arch", "sm_80", "--format", "json")

    def smem(path):
        res = lower(path, *args)
        assert res.code == 0, res.err
        return res.json["variants"][0]

    assert smem(project / "k.py")["shared_bytes"] == 65536
    (project / "tiles.py").write_text("BLOCK_K = 32\n")
    edited = smem(project / "k.py")
    assert edited["shared_bytes"] == 32768 and not edited["cached"]
    clone = tmp_path / "clone"
    shutil.copytree(project, clone)
    copied = lower(clone / "k.py", *args, "--primary-location", "python", "--dump-dir", tmp_path / "dump")
    assert not copied.json["variants"][0]["cached"]
    cuda = (tmp_path / "dump" / "matmul_sm_80_s2.cu").read_text()
    assert str(clone / "k.py") in cuda and str(project / "k.py") not in cuda
    # a run in the second checkout names only the second checkout, in every location it reports
    assert str(project) not in copied.out
    assert all(str(project) not in r["path"] for f in copied.json["findings"] for r in [f, *f["related"]])
