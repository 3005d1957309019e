"""Progress of long work on a terminal, on stderr, so reports on stdout stay clean.

Shown only when stderr is a terminal and `--quiet` is not given.  Uses rich's
transient progress bar when rich is installed, else one line rewritten in place.
`lower` and `bench` report each variant's outcome (lowered / cached / failed, and
its time) as a line of its own; with `log=True` (`lower`) those lines are written
in a CI log or a pipe too, as plain lines without colour or carriage returns, so a
long sweep is not a minute of silence.
"""
from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO


def wanted(quiet: bool = False, stream: TextIO | None = None) -> bool:
    stream = stream or sys.stderr
    return not quiet and hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """`with Progress("checking", n) as p: ... p.advance(1, "file.cu")`."""

    def __init__(self, what: str, total: int, quiet: bool = False, stream: TextIO | None = None,
                 log: bool = False) -> None:
        self.what = what
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = wanted(quiet, self.stream) and total > 1
        # plain lines for `note` where no progress is drawn (not a terminal), unless --quiet
        self.log = log and not quiet and not wanted(quiet, self.stream)
        self._rich: Any = None
        self._task: Any = None
        self._started = time.monotonic()

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress
        except ImportError:
            return self
        self._rich = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TextColumn("{task.fields[item]}"),
                                  console=Console(file=self.stream), transient=True)
        self._rich.__enter__()
        self._task = self._rich.add_task(self.what, total=self.total, item="")
        return self

    def advance(self, n: int = 1, item: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        from .escape import visible

        item = visible(item)            # a file name from the walk: it may hold escape sequences
        if self._rich is not None:
            self._rich.update(self._task, advance=n, item=item[-60:])
        else:
            self.stream.write(f"\r{self.what} {self.done}/{self.total} {item[-60:]:<60}")
            self.stream.flush()

    def note(self, line: str, log_line: str | None = None) -> None:
        """A line that stays (a variant's outcome); `log_line` is what a log gets instead, where
        no progress is drawn (it names what the line is about without the bar around it)."""
        from .escape import visible

        if not self.enabled:
            if self.log:
                self.stream.write(visible(log_line or line.strip()) + "\n")
                self.stream.flush()
            return

        line = visible(line)
        if self._rich is not None:
            self._rich.console.print(line, highlight=False, markup=False)
        else:
            self.stream.write(f"\r{line:<80}\n")
            self.stream.flush()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._rich is not None:
            self._rich.__exit__(exc_type, exc, tb)
        elif self.enabled:
            self.stream.write("\r" + " " * 80 + "\r")
            self.stream.flush()
