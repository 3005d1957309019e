"""Drive TileLang lowering (compile-only, no GPU) for num_stages x arch sweeps.

Nothing here imports TileLang in the calling process: each variant runs in
`python -m pipelint.lowering.worker`, so `pipelint check` stays light and a
crashing or hanging lowering costs one variant, not the run.
"""
