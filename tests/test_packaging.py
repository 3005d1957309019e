"""The wheel maps the repository's folders into one `pipelint` namespace (see setup.py)."""
from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_args() -> dict:
    captured: dict = {}
    import setuptools

    real = setuptools.setup
    setuptools.setup = lambda **kw: captured.update(kw)
    try:
        runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    finally:
        setuptools.setup = real
    return captured


def test_every_source_package_is_in_the_wheel():
    args = _setup_args()
    packages = set(args["packages"])
    for prefix, folder in args["package_dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            assert ".".join((prefix, *rel)) in packages, init
    assert not {p for p in packages if not p.startswith("pipelint")}


def test_plugin_api_and_module_entry_point():
    import pipelint

    for name in ("hookimpl", "Rule", "Finding", "Severity", "__version__"):
        assert hasattr(pipelint, name), name
    out = subprocess.run([sys.executable, "-m", "pipelint", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("pipelint ")


def test_rule_pages_are_found():
    from pipelint.docs import DOCS_DIR

    assert (DOCS_DIR / "wait-too-shallow.md").is_file()
