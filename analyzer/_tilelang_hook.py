"""Started by `pipelint-tilelang.pth` when PIPELINT_TILELANG is set: lint TileLang's kernels in
programs you cannot edit.

Nothing is imported eagerly: a finder on `sys.meta_path` waits for `tilelang` to be imported
and then calls `pipelint.tilelang.install(mode)` with the environment's mode.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from types import ModuleType


class _AfterTileLang(importlib.abc.MetaPathFinder):
    """Lets the real finders load `tilelang`, then installs pipelint's callback once."""

    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name != "tilelang":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            from pipelint.tilelang import _autoinstall_from_env

            _autoinstall_from_env()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if not any(isinstance(f, _AfterTileLang) for f in sys.meta_path) and "tilelang" not in sys.modules:
    sys.meta_path.insert(0, _AfterTileLang())
