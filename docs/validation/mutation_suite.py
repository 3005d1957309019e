"""Validation of the mutation suite on a GPU: what each dynamic tool and pipelint catch.

    python docs/validation/mutation_suite.py OUT_DIR [--jobs 5] [--timeout 90]   # on a GPU machine

Every planted defect of `tests/mutants/mutate.py` (and its equivalent, must-not-fire mutations)
whose fixture can run on the GPU at hand is compiled exactly (TileLang's CUDA post-processing
callback), run against the clean fixture's output on the same seeded inputs with a hang timeout,
and run under compute-sanitizer racecheck and synccheck; the clean fixtures are run the same way
(false alarms).  pipelint's static verdict on the same text is joined to it
(`pipelint.plugins.verify_join`).  Writes OUT_DIR/mutation_suite.json and .md (partial results as
it goes).  `--plot FILE.json` draws docs/validation/mutation_suite.png from a recorded run.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))


def fixture_specs() -> dict[str, dict]:
    """fixture file name -> what lowers it (the example or cause kernel, factory, params, arch, stages)."""
    import generate

    specs = {}
    for example, factory, short, kwargs in generate.KERNELS:
        for arch in generate.ARCHS:
            for n in generate.STAGES:
                specs[f"{short}_{arch}_s{n}.cu"] = {"file": str(ROOT / "examples" / example), "name": factory,
                                                    "params": kwargs, "arch": arch, "num_stages": n}
    for example, factory, short, arch, n in generate.CAUSES:
        specs[f"{short}_{arch}_s{n}.cu"] = {"file": str(generate.Path(generate.__file__).parent / "causes" / example),
                                            "name": factory, "params": {}, "arch": arch, "num_stages": n}
    return specs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="validation-out")
    ap.add_argument("--jobs", type=int, default=5, help="variants at a time (each runs 3 processes)")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--runnable", default="sm_80,sm_90", help="fixture archs this GPU can run")
    ap.add_argument("--plot", default=None, metavar="RECORD.json")
    ap.add_argument("--rejoin", default=None, metavar="RECORD.json",
                    help="recompute the verdicts of a recorded run with the current join (no GPU)")
    args = ap.parse_args()
    if args.plot:
        return plot(Path(args.plot))
    if args.rejoin:
        return rejoin(Path(args.rejoin))
    from mutants import mutate

    from pipelint.engine import analyze_source
    from pipelint.pluginhost import load_plugins
    from pipelint.plugins.verify import dynamic_runs, make_row
    from pipelint.plugins.verify_join import render_table

    host = load_plugins()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mutation-suite-"))
    specs = fixture_specs()
    runnable = set(args.runnable.split(","))
    mutants = [(m, "defect") for m in mutate.all_mutants()]
    mutants += [(op(), "equivalent") for op in mutate.EQUIVALENT_OPERATORS]
    skipped = [{"variant": m.name, "reason": f"{specs[m.fixture]['arch']} kernel: cannot run on this GPU"}
               for m, _ in mutants if specs[m.fixture]["arch"] not in runnable]
    mutants = [(m, k) for m, k in mutants if specs[m.fixture]["arch"] in runnable]
    bases = sorted({m.fixture for m, _ in mutants})
    rows: list[dict] = []

    def save() -> None:
        doc = {"command": "python docs/validation/mutation_suite.py OUT_DIR", "rows": rows, "skipped": skipped}
        (out / "mutation_suite.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        (out / "mutation_suite.md").write_text(render_table(rows))

    def run(name: str, text: str, fixture: str, kind: str, rule: str) -> dict:
        cu = work / f"{name}.cu"
        cu.write_text(text)
        reference = work / f"{fixture}.pt"
        spec = {**specs[fixture], "cuda": str(cu), "out": str(work / f"{name}.pt"),
                "reference": str(reference) if kind != "clean" else None}
        dynamic = dynamic_runs(spec, ("racecheck", "synccheck"), args.timeout)
        _, findings, _, _ = analyze_source(str(cu), text, host)
        row = make_row(name, findings, dynamic, host)
        row.update(kind=kind, fixture=fixture, planted_rule=rule)
        rows.append(row)
        save()
        print(json.dumps({"variant": name, "verdict": row["join"]["verdict"],
                          "failures": row["join"]["dynamic_failures"]}), flush=True)
        return row

    with ThreadPoolExecutor(args.jobs) as pool:        # the clean fixtures first: their outputs are the references
        list(pool.map(lambda f: run(f, (mutate.KERNELS / f).read_text(), f, "clean", ""), bases))
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda mk: run(mk[0].name, mk[0].text, mk[0].fixture, mk[1], mk[0].rule), mutants))
    save()
    print(render_table(rows))
    return 0


def rejoin(record: Path) -> int:
    """Verdicts from the recorded static findings and GPU results, with the current join; rewrites
    the record and its table."""
    from pipelint.plugins.verify_join import join, render_table

    doc = json.loads(record.read_text())
    for row in doc["rows"]:
        severities = {f["rule"]: f["severity"] for f in row["findings"]}
        row["join"] = join([f["rule"] for f in row["findings"]], row["dynamic"], severities)
    record.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    record.with_suffix(".md").write_text(render_table(doc["rows"]))
    print(render_table(doc["rows"]))
    return 0


def plot(record: Path) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in json.loads(record.read_text())["rows"] if r["kind"] == "defect"]
    tools = ["racecheck", "synccheck", "output", "hang", "any dynamic", "pipelint"]
    counts = []
    for t in tools:
        if t == "pipelint":
            counts.append(sum(1 for r in rows if r["join"]["static_errors"] or r["join"]["static_other"]))
        elif t == "any dynamic":
            counts.append(sum(1 for r in rows if r["join"]["dynamic_failures"]))
        else:
            counts.append(sum(1 for r in rows if t in r["join"]["dynamic_failures"]))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(tools, counts, color=["#888"] * 5 + ["#2a6"])
    ax.set_ylabel(f"planted defects caught (of {len(rows)})")
    ax.set_title("Mutation suite on an NVIDIA H200")
    for i, c in enumerate(counts):
        ax.text(i, c + 0.2, str(c), ha="center")
    fig.tight_layout()
    fig.savefig(record.with_suffix(".png"), dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
