"""Hostile result-cache entries that benchmarks/fuzz_cache_entry.py found mishandled (issue 35).

Each was a bug of analyzer/cache.py at 26947ed (found by benchmarks/fuzz_cache_entry.py, issue 35), fixed by the
strict decoding of entries (only what `put` writes is served; a stat entry's key is 64 hex digits).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ROOT

MUTATE = ROOT / "tests" / "mutants"


def _kernel(tmp_path: Path) -> Path:
    """A kernel with findings that have related locations (a planted missing barrier)."""
    import sys

    sys.path.insert(0, str(MUTATE))
    from mutate import drop_barrier_after_wait

    path = tmp_path / "k.cu"
    path.write_text(drop_barrier_after_wait().text)
    return path


def _filled(run_cli, tmp_path: Path, monkeypatch) -> tuple[list, Path, Path]:
    monkeypatch.chdir(tmp_path)
    _kernel(tmp_path)
    reference = json.loads(run_cli("check", "k.cu", "--no-cache", "--format", "json").out)["findings"]
    run_cli("check", "k.cu", "--cache-dir", "cache", "--format", "json")
    (data,) = (tmp_path / "cache" / "v2" / "data").glob("*/*")
    (stat,) = (tmp_path / "cache" / "v2" / "stat").glob("*/*")
    assert reference and any(f["related"] for f in reference)
    return reference, data, stat


def test_a_stat_entry_cannot_name_a_file_outside_the_cache(run_cli, tmp_path, monkeypatch):
    _, data, stat = _filled(run_cli, tmp_path, monkeypatch)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    # <cache>/v2/data/<shard>/ + ../../../../victim.txt, padded with slashes to 62 characters
    tail = "../../../victim.txt"
    stat.write_text(json.dumps({"key": data.parent.name + ".." + "/" * (60 - len(tail)) + tail}))
    run_cli("check", "k.cu", "--cache-dir", "cache", "--format", "json")
    assert victim.read_text() == "the user's file\n"


def test_a_data_entry_with_a_wrongly_typed_path_heals(run_cli, tmp_path, monkeypatch):
    reference, data, _ = _filled(run_cli, tmp_path, monkeypatch)
    entry = json.loads(data.read_text())
    entry["file"]["path"] = True
    data.write_text(json.dumps(entry))
    for _ in range(2):
        out = run_cli("check", "k.cu", "--cache-dir", "cache", "--format", "json")
        assert out.code != 3, out.err
        assert json.loads(out.out)["findings"] == reference


@pytest.mark.parametrize("edit", [
    pytest.param(lambda e: e["findings"][0]["related"][0].update(line=float("nan")), id="related-line-nan"),
    pytest.param(lambda e: e["findings"][0]["related"][0].update(message=["a"]), id="message-a-list"),
    pytest.param(lambda e: e["findings"][0]["location"].update(end_column="x" * 1000), id="end-column-a-string"),
    pytest.param(lambda e: e["findings"][0]["related"][0].pop("message"), id="related-message-missing"),
])
def test_a_data_entry_of_wrong_types_or_missing_fields_is_recomputed(run_cli, tmp_path, monkeypatch, edit):
    reference, data, _ = _filled(run_cli, tmp_path, monkeypatch)
    entry = json.loads(data.read_text())
    edit(entry)
    data.write_text(json.dumps(entry, allow_nan=True))
    out = run_cli("check", "k.cu", "--cache-dir", "cache", "--format", "json")
    assert out.code != 3, out.err
    assert json.loads(out.out)["findings"] == reference
