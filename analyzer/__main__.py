"""`python -m pipelint`: the same entry point as the `pipelint` command."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
