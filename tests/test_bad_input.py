"""Bad input is a finding or a clear message, never a traceback, never lost results."""
from __future__ import annotations

from helpers import fixture

CLEAN = fixture("gemm_f16_sm_80_s3.cu")


def _by_path(doc):
    return {f["path"]: f for f in doc["findings"]}


def test_each_bad_file_gets_a_finding_and_good_files_still_report(run_cli, tmp_path):
    empty = tmp_path / "empty.cu"
    empty.write_text("")
    binary = tmp_path / "binary.cu"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    latin = tmp_path / "latin1.cu"
    latin.write_bytes("// caf\xe9\n__global__ void k() {}\n".encode("latin-1"))
    truncated = tmp_path / "truncated.cu"
    text = CLEAN.read_text()
    truncated.write_text(text[: len(text) // 2])
    good = tmp_path / "good.cu"
    good.write_text(fixture("gemv_sm_80_s3.cu").read_text())
    res = run_cli("check", empty, binary, latin, truncated, good, "--format", "json")
    assert res.code == 1
    doc = res.json
    found = _by_path(doc)
    assert found[str(empty)]["rule"] == "no-kernel"
    assert found[str(binary)]["rule"] == "unreadable-file" and "binary" in found[str(binary)]["message"]
    assert found[str(latin)]["rule"] == "unreadable-file" and "UTF-8" in found[str(latin)]["message"]
    trunc = found[str(truncated)]
    assert trunc["rule"] == "parse-error" and "end of file" in trunc["message"]
    assert trunc["line"] == text[: len(text) // 2].rstrip().count("\n") + 1
    assert found[str(good)]["rule"] == "redundant-barrier"  # the good file was still checked
    parsed = {f["path"]: f["parsed"] for f in doc["files"]}
    assert parsed[str(good)] and not parsed[str(binary)] and not parsed[str(truncated)]
    assert "Traceback" not in res.err


def test_syntax_error_points_at_first_bad_token(run_cli, tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k() {\n  int x = 3 +* ;\n}\n")
    res = run_cli("check", bad, "--format", "json")
    (f,) = res.json["findings"]
    assert (f["rule"], f["line"], f["column"]) == ("parse-error", 2, 16)  # the `;` after a dangling unary `*`
    assert "expected" in f["message"]


def test_huge_file_is_refused_with_a_finding(run_cli, tmp_path):
    big = tmp_path / "big.cu"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    res = run_cli("check", big, CLEAN, "--format", "json")
    found = _by_path(res.json)
    assert found[str(big)]["rule"] == "unreadable-file" and "50.0 MB" in found[str(big)]["message"]
    assert res.code == 1


def test_unreadable_path_is_a_finding(run_cli, tmp_path):
    d = tmp_path / "dir.cu"
    d.mkdir()
    (d / "inner.cu").write_text(CLEAN.read_text())
    res = run_cli("check", d, "--format", "json")
    assert res.code == 0 and len(res.json["files"]) == 1


def test_missing_path_is_a_one_line_usage_error(run_cli, tmp_path):
    res = run_cli("check", tmp_path / "nope.cu", CLEAN)
    assert res.code == 2
    assert res.err.strip().count("\n") == 0 and "path not found" in res.err
