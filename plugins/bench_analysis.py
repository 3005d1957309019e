"""The GPU-free half of `pipelint bench`: knee detection, agreement, explanations, table, plot.

Everything here works on the recorded measurement document (the JSON that
`pipelint bench` writes), so it is tested on CPU with data from a real run
and `pipelint bench --from-json` re-renders a run without a GPU.
"""
from __future__ import annotations

from typing import Any

from pipelint.report.table import columns

DEFAULT_TOLERANCE = 0.05


def config_label(config: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items()) or "default"


def ok_variants(cfg: dict) -> list[dict]:
    return [v for v in cfg["variants"] if v.get("status") == "ok" and v.get("latency_ms")]


def knee(cfg: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict | None:
    """The smallest num_stages whose latency is within `tolerance` of the best."""
    ok = ok_variants(cfg)
    if not ok:
        return None
    best = min(v["latency_ms"] for v in ok)
    for v in sorted(ok, key=lambda v: v["num_stages"]):
        if v["latency_ms"] <= best * (1 + tolerance):
            return {"num_stages": v["num_stages"], "latency_ms": v["latency_ms"], "best_ms": best,
                    "shared_bytes": v.get("smem_bytes_compiled"), "tolerance": tolerance}
    return None


def agreement(v: dict) -> str | None:
    """A message when pipelint's static shared-memory estimate differs from the compiled kernel's."""
    real, static = v.get("smem_bytes_compiled"), v.get("smem_bytes_static")
    if real is None or static is None or real == static:
        return None
    return f"static estimate {static} B != compiled kernel {real} B"


def explain(v: dict, best_ms: float | None, min_barriers: int | None,
            tolerance: float = DEFAULT_TOLERANCE) -> list[str]:
    """Why a variant is slow or failed, in terms of pipelint's static facts.  A variant more than
    `tolerance` slower than the best says by how much, explained or not."""
    status = v.get("status")
    reasons = _status_reasons(v, status) + _static_reasons(v.get("static", {}), status, min_barriers)
    if best_ms and v.get("latency_ms") and v["latency_ms"] > best_ms * (1 + tolerance):
        slower = f"{100 * (v['latency_ms'] / best_ms - 1):.0f}% slower than the best"
        reasons.insert(0, slower if reasons else f"{slower}, with no static explanation")
    return reasons


def _status_reasons(v: dict, status: str | None) -> list[str]:
    """A variant that did not run: why, and whether pipelint's shared-memory budget said so beforehand."""
    if status == "smem-exceeded":
        predicted = "shared-memory-budget" in v.get("static", {}).get("rules", [])
        return ["does not fit in shared memory" + (" (predicted: shared-memory-budget)" if predicted else "")]
    if status not in ("ok", None):
        return [status]
    return []


def _static_reasons(static: dict, status: str | None, min_barriers: int | None) -> list[str]:
    """What the static facts of the variant say costs time: no overlap, deep waits, extra barriers."""
    reasons = []
    rules = set(static.get("rules", []))
    if static.get("versions") == 1 and status == "ok":
        reasons.append("single-buffered (1 version): each load waits for the previous compute")
    if static.get("in_flight") == 0:
        reasons.append("no copy/compute overlap: cp_async_wait<0> in the loop")
    if "wait-too-deep" in rules:
        reasons.append("wait deeper than needed (wait-too-deep)")
    bpi = static.get("barriers_per_iteration")
    if bpi is not None and min_barriers is not None and bpi > min_barriers:
        reasons.append(f"{bpi} barriers per iteration (best variant: {min_barriers})")
    if "redundant-barrier" in rules:
        reasons.append("barrier on the critical path (redundant-barrier)")
    return reasons


def annotate(doc: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    """Add knees, fractions of the reference, agreement and explanations to a recorded run."""
    for cfg in doc["configs"]:
        k = knee(cfg, tolerance)
        cfg["knee"] = k
        ok = ok_variants(cfg)
        best = min((v["latency_ms"] for v in ok), default=None)
        bars = [v.get("static", {}).get("barriers_per_iteration") for v in ok]
        min_bars = min((b for b in bars if b is not None), default=None)
        ref = cfg.get("reference_ms")
        for v in cfg["variants"]:
            if v.get("latency_ms") and ref:
                v["fraction_of_reference"] = ref / v["latency_ms"]
            v["agreement"] = agreement(v)
            v["explanation"] = explain(v, best, min_bars, tolerance)
    return doc


def render_table(doc: dict) -> str:
    lines = [f"kernel {doc['kernel']['name']} ({doc['kernel']['file']}) on {doc.get('device', '?')}",
             f"reference: {doc.get('reference') or '-'}"]
    unit = doc.get("throughput_unit", "TFLOP/s")
    for cfg in doc["configs"]:
        lines += ["", f"config {config_label(cfg['config'])}"
                  + (f"  (reference {cfg['reference_ms']:.3f} ms)" if cfg.get("reference_ms") else "")]
        header = ("N", "status", "latency ms", "spread", unit, "of ref", "smem B", "static B", "wait", "bar/it",
                  "why")
        lines += columns([header, *(_table_row(v) for v in sorted(cfg["variants"], key=lambda v: v["num_stages"]))])
        k = cfg.get("knee")
        if k:
            lines.append(f"knee: num_stages={k['num_stages']} ({k['latency_ms']:.3f} ms, within "
                         f"{100 * k['tolerance']:.0f}% of the best {k['best_ms']:.3f} ms), shared memory "
                         f"{k['shared_bytes']} B")
    return "\n".join(lines) + "\n"


def _table_row(v: dict) -> tuple[str, ...]:
    """One variant's cells; `-` for what it does not have (a failed variant has no latency)."""
    s = v.get("static", {})
    return (str(v["num_stages"]), v.get("status", "?"),
            f"{v['latency_ms']:.3f}" if v.get("latency_ms") else "-",
            f"{100 * v['spread']:.1f}%" if v.get("spread") is not None else "-",
            f"{v['throughput']:.1f}" if v.get("throughput") else "-",
            f"{100 * v['fraction_of_reference']:.0f}%" if v.get("fraction_of_reference") else "-",
            str(v.get("smem_bytes_compiled") or "-"), str(v.get("smem_bytes_static") or "-"),
            str(s.get("steady_wait", "-")) if s.get("steady_wait") is not None else "-",
            "-" if s.get("barriers_per_iteration") is None else str(s["barriers_per_iteration"]),
            "; ".join(v.get("explanation") or []) + (f"; {v['agreement']}" if v.get("agreement") else ""))


def plot(doc: dict, path: str) -> None:
    """Latency and shared memory against num_stages, one line per config."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_lat, ax_mem) = plt.subplots(1, 2, figsize=(11, 4.2))
    for cfg in doc["configs"]:
        _plot_config(cfg, ax_lat, ax_mem)
    ax_lat.set(xlabel="num_stages", ylabel="latency (ms, median)",
               title=f"{doc['kernel']['name']}: latency (dotted: {doc.get('reference') or 'reference'})")
    ax_mem.set(xlabel="num_stages", ylabel="shared memory per block (KiB)", title="shared memory")
    for ax in (ax_lat, ax_mem):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_config(cfg: dict, ax_lat: Any, ax_mem: Any) -> None:
    """One config's lines: latency of the variants that ran (its knee circled, its reference
    dotted in the same colour), and shared memory of every variant that has a figure for it."""
    ok = sorted(ok_variants(cfg), key=lambda v: v["num_stages"])
    label = config_label(cfg["config"])
    if ok:
        ax_lat.plot([v["num_stages"] for v in ok], [v["latency_ms"] for v in ok], marker="o", label=label)
        k = cfg.get("knee")
        if k:
            ax_lat.scatter([k["num_stages"]], [k["latency_ms"]], s=140, facecolors="none", edgecolors="black")
    mem = sorted((v for v in cfg["variants"] if v.get("smem_bytes_static") or v.get("smem_bytes_compiled")),
                 key=lambda v: v["num_stages"])
    ax_mem.plot([v["num_stages"] for v in mem],
                [(v.get("smem_bytes_compiled") or v.get("smem_bytes_static")) / 1024 for v in mem],
                marker="s", label=label)
    if cfg.get("reference_ms"):
        ax_lat.axhline(cfg["reference_ms"], linestyle=":", linewidth=1, color=ax_lat.lines[-1].get_color()
                       if ax_lat.lines else "gray")
