"""Which files a run checks: walks, exclusions and `.gitignore`, as ruff and flake8 users expect.

* Folders are walked for `.cu`/`.cuh` files without entering the default-excluded
  folders (virtualenvs, VCS, builds, caches, `site-packages`, where TileLang's own
  headers live) or anything matched by `exclude`/`extend-exclude`.
* `.gitignore` files (the walked folders' and their ancestors' up to the
  repository root, and `.git/info/exclude`) are respected unless
  `respect-gitignore = false`.
* A path named on the command line is always checked, unless `--force-exclude`
  (what pre-commit hooks want: it passes every staged file explicitly).  That
  holds for folders too, as in ruff: `pipelint check lowered/` walks `lowered/`
  even when `.gitignore` ignores it or it is called `build`; the rules that
  ignored it are not applied to what lies inside it (only the rules that name
  an entry inside it, and the `.gitignore` files within it).

Patterns are gitignore-style (`ignorespec`: pathspec's semantics, matched without exponential
backtracking, so a hostile `.gitignore` cannot hang the walk), matched against the path relative to the
project root (the folder of the configuration file, else the current folder) and
against the bare name, so `exclude = ["generated"]` drops every folder so named.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .ignorespec import IgnorePatternError, IgnoreSpec

SUFFIXES = (".cu", ".cuh")

# Folders a walk never enters (ruff's defaults, plus where TileLang's own headers live).
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
                    ".pytest_cache", "__pycache__", "build", "dist", "node_modules", "site-packages",
                    ".eggs", "*.egg-info", ".pipelint-cache")


@dataclass(frozen=True)
class Discovery:
    root: Path = field(default_factory=Path.cwd)        # patterns are relative to it
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False

    def spec(self) -> IgnoreSpec:
        try:
            return IgnoreSpec.from_lines([*self.exclude, *self.extend_exclude])
        except IgnorePatternError as exc:
            raise UsageError(f"exclude: {exc}") from None


class _GitIgnores:
    """`.gitignore` rules by folder, read once each."""

    def __init__(self, stop: Path | None = None) -> None:
        self._by_dir: dict[Path, IgnoreSpec | None] = {}
        self._stop = stop          # read no .gitignore above this folder (a folder named explicitly)

    def _spec(self, folder: Path) -> IgnoreSpec | None:
        if folder not in self._by_dir:
            lines: list[str] = []
            for name in (".gitignore", os.path.join(".git", "info", "exclude")):
                try:
                    with open(folder / name, encoding="utf-8", errors="replace") as fh:
                        lines += fh.read().splitlines()
                except OSError:
                    pass
            # git skips a line it cannot parse; so does the walk (no error for someone else's file)
            self._by_dir[folder] = IgnoreSpec.from_lines(lines, skip_invalid=True) if lines else None
        return self._by_dir[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git would ignore `path` (absolute), by the .gitignore files of its ancestors
        up to the repository root (the folder holding `.git`)."""
        folder = path.parent
        while True:
            spec = self._spec(folder)
            if spec is not None:
                rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
            if folder == self._stop or (folder / ".git").exists() or folder.parent == folder:
                return False
            folder = folder.parent


def _excluded(spec: IgnoreSpec, path: Path, root: Path, is_dir: bool) -> bool:
    suffix = "/" if is_dir else ""
    if spec.match_file(path.name + suffix):
        return True
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return False
    return spec.match_file(rel + suffix)


def collect_files(paths: Sequence[str], discovery: Discovery | None = None) -> tuple[list[str], list[str]]:
    """Files to check and messages about paths that hold none."""
    d = discovery or Discovery()
    spec = d.spec()
    root = d.root.resolve()
    git = _GitIgnores() if d.respect_gitignore else None
    files: list[str] = []
    notes: list[str] = []
    for raw in paths:
        p = Path(raw)
        if _link_loop(raw):
            files.append(str(p))        # named: the engine reports it as unreadable-file
            continue
        if not p.exists():
            raise UsageError(f"path not found: {raw}")
        absolute = Path(os.path.realpath(p))
        if p.is_dir():
            found = _named_folder(p, absolute, d.force_exclude, spec, root, git)
            if found is None:
                continue
            if not found:
                notes.append(f"no .cu or .cuh files under {raw}")
            files.extend(found)
        elif not (d.force_exclude and _named_ignored(absolute, False, spec, root, git)):
            files.append(str(p))
    return files, notes


def _named_ignored(absolute: Path, is_dir: bool, spec: IgnoreSpec, root: Path, git: _GitIgnores | None) -> bool:
    """Whether a path named on the command line is excluded or ignored, itself or through a
    folder above it inside the project root (what `--force-exclude` drops)."""
    return _skipped(absolute, is_dir, spec, root, git) or _inside_skipped(absolute, spec, root, git)


def _named_folder(p: Path, absolute: Path, force_exclude: bool, spec: IgnoreSpec, root: Path,
                  git: _GitIgnores | None) -> list[str] | None:
    """The files under a folder named on the command line, or None when `--force-exclude`
    drops the folder (it is excluded or ignored)."""
    named_ignored = _named_ignored(absolute, True, spec, root, git)
    if force_exclude and named_ignored:
        return None
    if named_ignored:
        # Named explicitly: walk it as its own root, so the rule that ignores the folder
        # (`/lowered/`, `build`) does not silently drop everything inside it.
        return _walk(p, spec, absolute, _GitIgnores(stop=absolute) if git else None)
    return _walk(p, spec, root, git)


def _link_loop(raw: str) -> bool:
    """Whether `raw` is a symbolic link that never reaches a file (it points back at itself).
    Such a path named on the command line is checked, and reported as an unreadable file: a
    "path not found" would hide that it exists, `Path.resolve` raises RuntimeError on it."""
    import errno

    try:
        os.stat(raw)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _inside_skipped(path: Path, spec: IgnoreSpec, root: Path, git: _GitIgnores | None) -> bool:
    """Whether a folder above `path`, inside the project root, is excluded or ignored."""
    return any(_skipped(a, True, spec, root, git) for a in path.parents if a != root and root in a.parents)


def _skipped(path: Path, is_dir: bool, spec: IgnoreSpec, root: Path, git: _GitIgnores | None) -> bool:
    return _excluded(spec, path, root, is_dir) or (git is not None and git.ignored(path, is_dir))


def _walk(top: Path, spec: IgnoreSpec, root: Path, git: _GitIgnores | None) -> list[str]:
    from .relocate import ProjectFiles

    found = []
    # like a linked folder (os.walk does not follow it), a linked file out of the project is not taken
    inside = ProjectFiles(root, folders=[str(top)])
    for folder, dirs, names in os.walk(top):
        base = Path(folder).resolve()
        dirs[:] = sorted(n for n in dirs if not _skipped(base / n, True, spec, root, git))
        for n in names:
            full = os.path.normpath(os.path.join(folder, n))      # `./k.cu` is reported as `k.cu`
            if Path(n).suffix in SUFFIXES and os.path.isfile(full) and not _skipped(base / n, False, spec, root, git) \
                    and (not os.path.islink(full) or inside.contains(full)):
                found.append(full)
    return sorted(found)

