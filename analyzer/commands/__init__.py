"""Subcommands that sit on top of the core: `lower` (TileLang sweeps) and `diff`."""
