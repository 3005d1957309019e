"""Errors that end a command with a message instead of a report."""
from __future__ import annotations


class UsageError(Exception):
    """A problem with how pipelint was called or configured (exit code 2, one line)."""
