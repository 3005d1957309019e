"""Hostile cache entries (issue 35): does any entry a cache can hold make pipelint crash, hang,
report something else than a run without the cache, or stay broken?

    python benchmarks/fuzz.py 1000 --cache-entry [--seed S]
    python benchmarks/fuzz_cache_entry.py 1000 [--seed S]

Each case is a sandbox with one kernel file (a fixture, a planted-defect mutant from
`tests/mutants/mutate.py` or a fuzz mutant from `tests/fuzzing.py`) and a victim file next to the
cache.  `check --cache-dir cache` fills the cache (one entry under `v2/data`, one under `v2/stat`);
then the data entry, the stat entry or both are replaced by something hostile:

* text that is not an entry: 200,000 nested `[` (or `{"a":`), the real entry truncated at a random
  byte, binary garbage, an empty file, a JSON string, number or list;
* the real entry with one value somewhere in it replaced by a value of another type, a huge
  number (10**400, 1e400), NaN or Infinity, a 100,000-character string; with one field deleted
  (a finding, its location, the file); with a `format` of another version;
* a stat entry whose key is a list, a number, 64 characters that are not hex, or 64 characters
  that name the victim file (`<shard>////.../victim`);
* not a file: a folder (empty or not), a FIFO (opening it would block), a link to /dev/zero, a
  link to the victim.

Then `check` runs again with the cache (it must give the `--no-cache` findings, within the
timeout, with no traceback) and once more (with `--verbose`: its file must be served from the
cache, i.e. the entry was healed).  Figures: wrong findings, tracebacks or exit 3, runs past the
timeout, files missing from a report, victim files deleted or changed, and runs after the heal not
served from the cache, each by kind of corruption.  A data entry that is not a regular file (a
folder, a FIFO, a link) is never replaced: the cache deletes and overwrites only regular files
(`cachedir.write_file`, issue 37), so such a file is analysed afresh on every run; those kinds are
counted apart ("not healed: by design").
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_replace import Checker, _sources, warm_up
from fuzzing import mutants

TIMEOUT = 30.0
NOT_FILES = ("folder", "folder-with-file", "fifo", "link-dev-zero", "link-victim")
TEXT_KINDS = ("nested-list", "nested-dict", "truncated", "binary", "empty", "json-scalar")
SHAPE_KINDS = ("wrong-type", "huge-number", "nan", "long-string", "missing-field", "other-format")
STAT_KINDS = ("stat-key-list", "stat-key-number", "stat-key-not-hex", "stat-key-outside")
VICTIM_TEXT = b"the user's file next to the cache: never to be touched\n"


def _values(rng: random.Random) -> list:
    """Replacement values of every JSON type, hostile ones among them."""
    return ["", "x", "\x1b]0;t\x07", 0, -1, 3.5, True, None, [], ["a"], {}, {"a": 1}, [[[[[]]]]],
            {"rule": 1, "severity": [], "location": "x"}, rng.getrandbits(64)]


def _kind(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _paths(node: object, here: tuple = ()) -> list[tuple]:
    """Every (path to a value) in a decoded JSON document, the root excluded."""
    found = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in items:
        found.append((*here, key))
        found.extend(_paths(child, (*here, key)))
    return found


def _set(doc: object, path: tuple, value: object) -> None:
    for key in path[:-1]:
        doc = doc[key]  # type: ignore[index]
    doc[path[-1]] = value  # type: ignore[index]


def _get(doc: object, path: tuple) -> object:
    for key in path:
        doc = doc[key]  # type: ignore[index]
    return doc


def hostile_bytes(kind: str, real: bytes, rng: random.Random, victim: Path, shard: str) -> tuple[bytes, str, bool]:
    """The bytes of a hostile entry of `kind` made from the real one; (bytes, what was done,
    whether the value put in has the type of the one it replaced: a forgery no decoder can see)."""
    if kind == "nested-list":
        return b"[" * 200_000, "200,000 [", False
    if kind == "nested-dict":
        return b'{"a":' * 100_000, '100,000 {"a":', False
    if kind == "truncated":
        cut = rng.randrange(len(real))
        return real[:cut], f"cut at {cut} of {len(real)}", False
    if kind == "binary":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 4096))), "random bytes", False
    if kind == "empty":
        return b"", "empty", False
    if kind == "json-scalar":
        value = rng.choice(['"a string"', "12345", "[]", "null", "true", "[1, 2, 3]", '"' + "x" * 1000 + '"'])
        return value.encode(), value[:20], False
    if kind.startswith("stat-key-"):
        key: object
        if kind == "stat-key-list":
            key = [shard, "a" * 62]
        elif kind == "stat-key-number":
            key = rng.choice([10**400, -1, 0, 1e308])
        elif kind == "stat-key-not-hex":
            key = shard + rng.choice(["z", "Z", "-", ".", " ", "\u00e9"]) * 62
        else:                                       # 64 characters whose tail is the victim's path
            name = str(victim)
            key = shard + "/" * (62 - len(name)) + name if len(name) <= 62 else shard + "/" * 62
        return json.dumps({"key": key}).encode(), f"key {str(key)[:24]!r}", False
    doc = json.loads(real)
    paths = _paths(doc)
    if kind == "other-format":
        doc["format"] = rng.choice([1, 3, 0, -2, "2", None, 2**70])
        return json.dumps(doc).encode(), f"format {doc['format']!r}", False
    if kind == "missing-field":
        keyed = [p for p in paths if isinstance(p[-1], str)]
        path = rng.choice(keyed)
        parent = _get(doc, path[:-1])
        del parent[path[-1]]  # type: ignore[attr-defined]
        return json.dumps(doc).encode(), f"deleted {'/'.join(map(str, path))}", False
    path = rng.choice(paths)
    old = _get(doc, path)
    if kind == "huge-number":
        _set(doc, path, "\0HUGE\0")
        token = rng.choice(["1" + "0" * 400, "1e400", "-1e400", "9" * 5000])
        where = "/".join(map(str, path))
        same = "e" not in token and isinstance(old, int) and not isinstance(old, bool)
        return json.dumps(doc).replace('"\\u0000HUGE\\u0000"', token).encode(), f"{where} = {token[:8]}", same
    if kind == "nan":
        value = rng.choice([math.nan, math.inf, -math.inf])
        _set(doc, path, value)
        return json.dumps(doc, allow_nan=True).encode(), f"{'/'.join(map(str, path))} = {value}", False
    if kind == "long-string":
        _set(doc, path, "x" * 100_000)
        return json.dumps(doc).encode(), f"{'/'.join(map(str, path))} = 100,000 x", isinstance(old, str)
    choices = [v for v in _values(rng) if _kind(v) != _kind(old)]      # wrong-type: another JSON type
    value = rng.choice(choices)
    _set(doc, path, value)
    where = "/".join(map(str, path))
    # null for a value or a value for null may be an optional field's other type: counted as a forgery
    return json.dumps(doc).encode(), f"{where}: {_kind(old)} -> {json.dumps(value)[:20]}", None in (old, value)


def _plant(entry: Path, kind: str, rng: random.Random, victim: Path) -> str:
    """Replace the entry file by something that is not a file of the cache's; what was done."""
    entry.unlink()
    if kind == "folder":
        entry.mkdir()
    elif kind == "folder-with-file":
        entry.mkdir()
        (entry / "x").write_bytes(b"[]")
    elif kind == "fifo":
        os.mkfifo(entry)
    elif kind == "link-dev-zero":
        os.symlink("/dev/zero", entry)
    else:
        os.symlink(victim, entry)
    return kind


def _entries(cache: Path, kind: str) -> list[Path]:
    top = cache / "v2" / kind
    return sorted(p for p in top.glob("*/*") if re.fullmatch(r"[0-9a-f]{62}", p.name)) if top.is_dir() else []


def _served(err: str) -> int:
    m = re.search(r"(\d+) file\(s\) from the cache", err)
    return int(m.group(1)) if m else 0


def run_case(i: int, seed: int, base: Path, pool: list[str], memo: dict[str, list], totals: dict) -> None:
    rng = random.Random(seed * 1_000_003 + i)
    sandbox = base / f"c{i}"
    sandbox.mkdir()
    (sandbox / "k.cu").write_text(rng.choice(pool))
    victim = sandbox / "victim.txt"
    victim.write_bytes(VICTIM_TEXT)
    figures = totals["figures"]
    checker = Checker(figures, f"case {i}")
    key = hashlib.sha256((sandbox / "k.cu").read_bytes()).hexdigest()
    if key not in memo:
        reference, _, _ = checker.check(sandbox, "reference", "--no-cache", timeout=TIMEOUT)
        if reference is None:
            shutil.rmtree(sandbox, ignore_errors=True)
            return
        memo[key] = reference["findings"]
    checker.check(sandbox, "fill", "--cache-dir", "cache", timeout=TIMEOUT)
    data, stat = _entries(sandbox / "cache", "data"), _entries(sandbox / "cache", "stat")
    if len(data) != 1 or len(stat) != 1:          # a result cut by a budget is not stored: nothing to corrupt
        figures["not_filled"] += 1
        shutil.rmtree(sandbox, ignore_errors=True)
        return
    targets = rng.choice([["data"], ["stat"], ["data", "stat"]])
    done = []
    kinds = []
    forged = False
    for target in targets:
        entry = data[0] if target == "data" else stat[0]
        real = entry.read_bytes()
        pool_kinds = TEXT_KINDS + SHAPE_KINDS + NOT_FILES if target == "data" else \
            TEXT_KINDS + STAT_KINDS + NOT_FILES + ("wrong-type", "huge-number", "nan", "missing-field")
        kind = rng.choice(pool_kinds)
        if kind in NOT_FILES:
            what = _plant(entry, kind, rng, victim)
        else:
            payload, what, same = hostile_bytes(kind, real, rng, victim, data[0].parent.name)
            forged = forged or (same and target == "data")     # a stat entry decides no finding
            entry.write_bytes(payload)
        kinds.append(f"{target}:{kind}")
        done.append(f"{target} {what}")
    label = f"case {i} ({'; '.join(done)})"
    checker.label = label
    by_kind = totals["by_kind"]
    for k in kinds:
        by_kind.setdefault(k, dict.fromkeys(("cases", "wrong", "crashed", "unhealed"), 0))
        by_kind[k]["cases"] += 1
    crashed_before = figures["tracebacks"] + figures["timeouts"] + figures["missing"]
    hostile, _, _ = checker.check(sandbox, "hostile", "--cache-dir", "cache", timeout=TIMEOUT)
    healed, err, _ = checker.check(sandbox, "healed", "--cache-dir", "cache", "--verbose", timeout=TIMEOUT)
    crashed = figures["tracebacks"] + figures["timeouts"] + figures["missing"] > crashed_before
    wrong = any(r is not None and r["findings"] != memo[key] for r in (hostile, healed))
    if wrong and forged:
        figures["forged"] += 1
        wrong = False
        print(f"{label}: findings differ from --no-cache's (a value of the right type: a forgery)", file=sys.stderr)
    elif wrong:
        figures["wrong"] += 1
        print(f"{label}: findings differ from --no-cache's", file=sys.stderr)
    unhealed = healed is not None and _served(err) != 1
    by_design = unhealed and any(k.startswith("data:") and k.split(":")[1] in NOT_FILES for k in kinds)
    if unhealed and not by_design:
        figures["unhealed"] += 1
        print(f"{label}: the run after the heal was not served from the cache", file=sys.stderr)
    figures["unhealed_by_design"] += by_design
    if not victim.is_file() or victim.is_symlink() or victim.read_bytes() != VICTIM_TEXT:
        figures["victim"] += 1
        print(f"{label}: the victim file next to the cache was deleted or changed", file=sys.stderr)
    for k in kinds:
        by_kind[k]["wrong"] += wrong
        by_kind[k]["crashed"] += crashed
        by_kind[k]["unhealed"] += unhealed and not by_design
    figures["cases"] += 1
    shutil.rmtree(sandbox, ignore_errors=True)


def cache_entry_fuzz(n: int, seed: int = 0) -> int:
    warm_up()
    fixtures, planted = _sources()
    pool = [*fixtures.values(), *(t for texts in planted.values() for t in texts),
            *(text for _, text in mutants(200, seed))]
    figures = dict.fromkeys(("cases", "wrong", "tracebacks", "timeouts", "missing", "victim", "unhealed",
                             "unhealed_by_design", "not_filled", "forged", "commands"), 0)
    totals: dict = {"figures": figures, "by_kind": {}}
    memo: dict[str, list] = {}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pipelint-entryfuzz-") as tmp:
        for i in range(n):
            run_case(i, seed, Path(tmp), pool, memo, totals)
    seconds = time.monotonic() - start
    print(f"hostile cache entries: {figures['cases']} cases  seed: {seed}  {seconds:.0f} s  "
          f"{figures['commands']} pipelint processes  (not filled, budget-cut: {figures['not_filled']})")
    print(f"wrong findings: {figures['wrong']}  tracebacks/exit 3: {figures['tracebacks']}  "
          f"past the {TIMEOUT:g} s timeout: {figures['timeouts']}  files missing from a report: {figures['missing']}  "
          f"victim files deleted or changed: {figures['victim']}")
    print(f"right-typed forgeries served (a 100,000-character string for a string, 10**400 for an int, "
          f"null for an optional value; not counted as wrong): {figures['forged']}")
    print(f"not served from the cache after the heal: {figures['unhealed']}  "
          f"(not healed by design, a data entry that is no regular file: {figures['unhealed_by_design']})")
    bad_kinds = {k: v for k, v in sorted(totals["by_kind"].items()) if v["wrong"] or v["crashed"] or v["unhealed"]}
    print("by kind (cases/wrong/crashed/unhealed): " + "  ".join(
        f"{k} {v['cases']}/{v['wrong']}/{v['crashed']}/{v['unhealed']}" for k, v in sorted(totals["by_kind"].items())))
    if bad_kinds:
        print(f"kinds with failures: {', '.join(bad_kinds)}")
    bad = sum(figures[k] for k in ("wrong", "tracebacks", "timeouts", "missing", "victim", "unhealed"))
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return cache_entry_fuzz(args.n, args.seed)


if __name__ == "__main__":
    sys.exit(main())
