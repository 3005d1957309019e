"""pytest fixtures: an in-process CLI runner (paths and helpers live in tests/helpers.py)."""
from __future__ import annotations

import json
import os

import pytest

from pipelint.cli import main


@pytest.fixture(autouse=True, scope="session")
def _private_result_cache(tmp_path_factory):
    """Every CLI run of the suite (in process or a subprocess) caches under a temporary folder,
    never in the user's cache."""
    mp = pytest.MonkeyPatch()
    if os.environ.get("PYTEST_XDIST_WORKER"):       # pytest -n: one cache for the run's workers
        shared = tmp_path_factory.getbasetemp().parent / "pipelint-cache"
        shared.mkdir(mode=0o700, exist_ok=True)
        mp.setenv("PIPELINT_CACHE_DIR", str(shared))
    else:
        mp.setenv("PIPELINT_CACHE_DIR", str(tmp_path_factory.mktemp("pipelint-cache")))
    yield
    mp.undo()


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def json(self):
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys):
    def run(*args: str) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run

