"""`pipelint diff A.cu B.cu`: the pipeline facts of two generated kernels side by side."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..lowering.sweep import LoweredVariant
from ..options import add_command
from ..options import fmt_fact as _fmt

if TYPE_CHECKING:
    from ..pluginhost import PluginHost


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = add_command(sub, "diff", "compare the pipeline facts of two generated kernels",
                    "Side by side: buffer versions, waits, barriers per iteration, mbarriers, TMA loads and "
                    "shared memory of two kernels (e.g. num_stages=2 against 3); changed facts are marked.",
                    ["pipelint diff lowered/gemm_sm_80_s2.cu lowered/gemm_sm_80_s3.cu",
                     "pipelint diff a.cu b.cu --format json"])
    d.add_argument("a", metavar="A.cu", help="the first kernel")
    d.add_argument("b", metavar="B.cu", help="the second kernel")
    d.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: a table, changed facts marked *; json: [{fact, a, b, changed}]")
    d.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace, host: PluginHost) -> int:
    from ..session import Session

    session = Session.bare(host)
    models = [session.models(path)[0] for path in (args.a, args.b)]
    a, b = (LoweredVariant(m.name, "", 0, True, None, {}, model=m) for m in models)
    rows = [("fact", args.a, args.b)]
    rows.append(("kernel", a.kernel, b.kernel))
    rows.append(("threads / roles", f"{a.model.threads} / {len(a.model.roles)}",
                 f"{b.model.threads} / {len(b.model.roles)}"))
    for name in sorted(set(a.model.buffers) | set(b.model.buffers)):
        rows.append((f"{name} (offset, versions x stride)", _buf(a, name), _buf(b, name)))
    wa, wb = a.steady_wait(), b.steady_wait()
    rows.append(("steady cp_async_wait / commits per iteration",
                 f"{wa[0]} / {wa[1]}" if wa else "-", f"{wb[0]} / {wb[1]}" if wb else "-"))
    rows.append(("stages in flight", _fmt(a.in_flight), _fmt(b.in_flight)))
    rows.append(("__syncthreads per steady iteration", _fmt(a.barriers_per_iteration), _fmt(b.barriers_per_iteration)))
    rows.append(("__syncthreads statements", str(len(a.model.cp_async.sync_nodes)),
                 str(len(b.model.cp_async.sync_nodes))))
    rows.append(("mbarriers (init counts)", _mbar(a.model), _mbar(b.model)))
    rows.append(("TMA loads per steady iteration", _tma(a.model), _tma(b.model)))
    rows.append(("shared memory bytes", _fmt(a.shared_bytes), _fmt(b.shared_bytes)))
    if getattr(args, "format", "text") == "json":
        import json

        print(json.dumps({"a": args.a, "b": args.b,
                          "facts": [{"fact": f, "a": x, "b": y, "changed": x != y} for f, x, y in rows[1:]]},
                         indent=2))
        return 0
    from ..report.table import columns

    marks = ["  " if i == 0 or r[1] == r[2] else "* " for i, r in enumerate(rows)]
    print("\n".join(mark + line for mark, line in zip(marks, columns(rows))))
    return 0


def _buf(v: LoweredVariant, name: str) -> str:
    buf = v.model.buffers.get(name)
    if buf is None:
        return "-"
    st = v.model.stages.get(name)
    return f"{buf.offset}, {st.versions} x {st.stride}" if st else f"{buf.offset}, 1 x {_fmt(buf.size)}"


def _mbar(model) -> str:
    inits = model.mbarrier_inits()
    if not inits:
        return "-"
    return f"{len(inits)} ({', '.join(str(ev.value) for _, ev in sorted(inits.items()))})"


def _tma(model) -> str:
    events = [e for t in model.trace.events for e in t if e.kind == "tma_load"]
    its = sorted({e.iteration for e in events if e.iteration}, key=lambda it: it[0][1])
    if not its:
        return str(len(events)) if events else "-"
    mid = its[len(its) // 2]
    return str(sum(1 for e in events if e.iteration == mid))

