"""`pipelint check --show-settings`: the settings a run resolves, after flags over configuration
over defaults (ruff's `--show-settings`), as `key = value` lines a person can read and diff."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def show_settings(args: argparse.Namespace, config: Any, host: Any, found: Any, root: Path) -> str:
    from . import cachedir
    from .config import fail_level, fail_on_performance, selection

    chosen = selection(config, args, host)
    enabled = sorted(r for r in host.rules if chosen.enabled(r))
    rows: list[tuple[str, Any]] = [
        ("configuration", config.path or "(none: defaults)"),
        ("project-root", str(root)),
        ("select", sorted(chosen.select) if chosen.select is not None else "(all rules)"),
        ("extend-select", sorted(chosen.extend)),
        ("ignore", sorted(chosen.ignore)),
        ("enabled-rules", enabled),
        ("per-file-ignores", {k: sorted(v) for k, v in sorted(config.per_file_ignores.items())}),
        ("per-kernel-ignores", {k: sorted(v) for k, v in sorted(config.per_kernel_ignores.items())}),
        ("severity", {k: v.value for k, v in sorted(config.severity.items())}),
        ("fail-on", fail_level(config, args).value),
        ("fail-on-performance", fail_on_performance(config, args)),
        ("exclude", list(found.exclude)),
        ("extend-exclude", list(found.extend_exclude)),
        ("respect-gitignore", found.respect_gitignore),
        ("force-exclude", found.force_exclude),
        ("cache", not args.no_cache and config.cache is not False),
        ("cache-dir", str(cachedir.choose(args.cache_dir, config.cache_dir, config.path).path)),
        ("primary-location", args.primary_location or config.primary_location or "cuda"),
        ("path-map", [*config.path_map, *(args.path_map or [])]),
        ("plugins", {name: config.plugins.get(name, {}) for name in host.plugin_names()}),
    ]
    return "\n".join(f"{key} = {json.dumps(value, sort_keys=True)}" for key, value in rows)
