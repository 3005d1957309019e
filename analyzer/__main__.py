"""`python -m pipelint`: the same entry point as the `pipelint` command.

`python -m` puts the current folder first on `sys.path`; the package's `__init__` has
already dropped it (see `_safepath.py`), and this does it again before `cli` and its
dependencies are imported, should anything have put it back.
"""
from ._safepath import drop_unsafe_path

drop_unsafe_path()

from .cli import main  # noqa: E402 - after the path is made safe

if __name__ == "__main__":
    raise SystemExit(main())
