"""pipelint in the editor: `pipelint server` (a Language Server over stdio) and `check --watch`.

Layout: `settings` (what to lower: `[tool.pipelint.lower]`), `pysource` (what the TileLang
Python says, read with `ast`: kernels, `T.Pipelined` loops, `T.alloc_shared` buffers,
`# pipelint: ignore` comments), `worker` (one process that lowers every kernel of one
buffer), `lowering` (those processes: cached, timed out, cancelled when stale),
`analysis` (findings at Python lines, hovers and inlay hints, free of any LSP type),
`facts` (the lowering's buffer and launch facts, the static ones from the source alone, notes,
TileLang's errors explained), `store` (the analysis cache), `cudajob` (every analysis in a
budgeted process of its own), `procs` (killing a worker with all it started), `server`
(pygls) and `watch` (watchfiles).  Only `server` and `watch` import the `lsp`
extra; nothing here imports TileLang (the worker does, in its own process).
"""
