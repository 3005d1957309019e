"""Where pipelint's caches live, and the only code that writes or deletes in them.

A checked repository is hostile input, and a cache folder is somewhere pipelint *deletes*
files (pruning, `pipelint clean`).  So every cache — the result cache, the lowering caches of
`lower` and the editor — goes through this module, which holds four rules:

1. **Never follow a link, never leave the root.**  Every folder from the cache root down is
   checked with `lstat`: it must be a real folder (not a symbolic link) owned by the user.
   Files are opened with `O_NOFOLLOW`; listings use `follow_symlinks=False`.
2. **A root is ours only if it carries our tag.**  pipelint writes a `CACHEDIR.TAG` (the Cache
   Directory Tagging spec that cargo, pip and borg follow) into a root it creates or finds
   empty.  A folder that exists, holds other things and has no tag is not a cache: pipelint
   warns and runs without it, and `clean` leaves it alone.  (Roots made by pipelint before the
   tag existed hold only pipelint's folders; they are adopted.)
3. **Deletion is by format.**  Eviction and `clean` remove only regular files whose relative
   path matches one of the cache's own entry formats (`ENTRY_FORMATS`), then the folders they
   leave empty.  Anything else found in a cache is left where it is.
4. **The checked repository does not choose where pipelint writes.**  A `cache-dir` from a
   configuration file is honoured only inside that file's folder, reached without links
   (`confined`); the command line and `$PIPELINT_CACHE_DIR` choose freely (they are the user's),
   under the same link and ownership checks.
"""
from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENV_DIR = "PIPELINT_CACHE_DIR"
TAG_NAME = "CACHEDIR.TAG"
TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
TAG_TEXT = (TAG_SIGNATURE + b"\n# This file is a cache directory tag created by pipelint.\n"
            b"# For information about cache directory tags see https://bford.info/cachedir/\n")
MAX_ENTRY_BYTES = 64 * 2**20         # a cache entry larger than this is not read (it is not ours)

# What pipelint stores, by top-level folder of the root: the relative paths of its entries.
# `clean` and eviction delete nothing else.
_HEX = "[0-9a-f]"
ENTRY_FORMATS: dict[str, re.Pattern[str]] = {
    "result": re.compile(rf"v\d+/(data|stat)/{_HEX}{{2}}/({_HEX}{{62}}|\.tmp-[A-Za-z0-9_]+)"),
    "lower": re.compile(rf"lower/({_HEX}{{40}}\.json|{_HEX}{{40}}\.[0-9]+\.tmp|\.tmp-[A-Za-z0-9_]+)"),
    "lsp": re.compile(rf"lsp/({_HEX}{{40}}\.json|{_HEX}{{40}}\.[0-9]+\.tmp|\.tmp-[A-Za-z0-9_]+)"),
    "lsp-cuda": re.compile(rf"lsp/cuda/[^/]+-{_HEX}{{10}}/([^/]+\.(cu|json)|\.tmp-[A-Za-z0-9_]+)"),
    "grammar": re.compile(rf"grammar(-\d+)?/cuda-{_HEX}{{20}}\.lark(\.tmp)?"),
}
_TOPS = {"result": re.compile(r"v\d+"), "lower": re.compile("lower"), "lsp": re.compile("lsp"),
         "lsp-cuda": re.compile("lsp"), "grammar": re.compile(r"grammar(-\d+)?")}


class CacheRefused(Exception):
    """A cache folder pipelint will not use; the message says why (shown as a warning)."""


@dataclass(frozen=True)
class Choice:
    """The cache root a run uses, and where the choice came from (for messages)."""

    path: Path
    source: str                      # "command line", "environment", "configuration", "default"
    warning: str | None = None       # a configured folder that was refused in favour of this one


def default_dir() -> Path:
    """`$PIPELINT_CACHE_DIR`, else the platform's user cache folder (platformdirs)."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    try:
        import platformdirs
    except ImportError:      # pragma: no cover - a core dependency; keep working without it
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pipelint"
    return Path(platformdirs.user_cache_dir("pipelint", appauthor=False))


def confined(folder: Path, anchor: Path) -> str | None:
    """Why `folder` (from a configuration file in `anchor`) may not be a cache root, or None.

    It must lie inside `anchor` after normalising `..`, and no existing component between the
    two may be a symbolic link (a committed link would carry writes anywhere)."""
    anchor = Path(os.path.abspath(anchor))
    target = Path(os.path.normpath(os.path.join(anchor, folder)))
    try:
        rel = target.relative_to(anchor)
    except ValueError:
        return f"{target} is outside the configuration's folder {anchor}"
    if not rel.parts:
        return "it is the configuration's own folder"
    here = anchor
    for part in rel.parts:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return f"{here} is a symbolic link"
        except FileNotFoundError:
            break
        except OSError as exc:
            return f"{here}: {exc.strerror or exc}"
    return None


def choose(cli_dir: str | os.PathLike[str] | None, config_dir: str | None = None,
           config_file: str | None = None) -> Choice:
    """The cache root: `--cache-dir`, else a configuration's `cache-dir` (`config_dir`, already
    joined to the folder of `config_file`) when `confined` to that folder, else
    `$PIPELINT_CACHE_DIR`, else the user's cache folder."""
    if cli_dir:
        return Choice(Path(os.path.abspath(cli_dir)), "command line")
    warning = None
    if config_dir:
        anchor = Path(os.path.abspath(os.path.dirname(config_file) if config_file else os.curdir))
        why = confined(Path(config_dir), anchor)
        if why is None:
            return Choice(Path(os.path.normpath(os.path.join(anchor, config_dir))), "configuration")
        warning = (f"cache-dir of {config_file or 'the configuration'} is not used ({why}): a project's "
                   f"configuration may only place the cache inside its own folder")
    source = "environment" if os.environ.get(ENV_DIR) else "default"
    return Choice(default_dir(), source, warning)


# ----------------------------------------------------------------------------- the root
def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid else None


def _check_folder(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise CacheRefused(f"{path} is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise CacheRefused(f"{path} is not a folder")
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        raise CacheRefused(f"{path} is owned by another user (uid {st.st_uid})")


def has_tag(root: Path) -> bool:
    """Whether `root` carries pipelint's (or any spec-conforming) `CACHEDIR.TAG`, a regular file."""
    data = read_file(root / TAG_NAME, len(TAG_SIGNATURE), whole=False)
    return data is not None and data.startswith(TAG_SIGNATURE)


def _adoptable(root: Path) -> bool:
    """A root from before the tag: it holds nothing but pipelint's own top-level folders."""
    try:
        names = os.listdir(root)
    except OSError:
        return False
    return all(any(top.fullmatch(n) for top in _TOPS.values()) or n.startswith(".") and n.endswith(".tmp")
               for n in names)


def open_root(path: Path, create: bool = True) -> Path:
    """`path` as a cache root pipelint may write and prune in; raises `CacheRefused`.

    Missing: created (mode 0700, its parents as usual) and tagged when `create`.  Present: it
    must be a real folder of the user's carrying the tag, or be empty or hold only pipelint's
    folders (then it is tagged)."""
    path = Path(os.path.abspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise CacheRefused(f"{path} does not exist") from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise CacheRefused(f"cannot create {path}: {exc.strerror or exc}") from None
        st = os.lstat(path)
    except OSError as exc:
        raise CacheRefused(f"{path}: {exc.strerror or exc}") from None
    _check_folder(path, st)
    if has_tag(path):
        return path
    if not _adoptable(path):
        raise CacheRefused(f"{path} holds files pipelint did not make and no {TAG_NAME}")
    if create and not write_file(path, TAG_NAME, TAG_TEXT):
        raise CacheRefused(f"cannot write {path / TAG_NAME}")
    return path


def folder(root: Path, *parts: str, create: bool = True) -> Path | None:
    """`root/parts...` when every component is a real folder of the user's (created 0700 when
    missing and `create`); None when one is a link, a file or someone else's."""
    here = root
    for part in parts:
        if part in ("", ".", "..") or "/" in part or os.sep in part:
            return None
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(here, 0o700)
                st = os.lstat(here)
            except OSError:
                return None
        except OSError:
            return None
        try:
            _check_folder(here, st)
        except CacheRefused:
            return None
    return here


def prepared(path: Path, depth: int, create: bool = True) -> Path | None:
    """`path`, a folder `depth` levels below a cache root (the editor's `<root>/lsp` is 1), with
    the root opened and every folder on the way checked (created 0700 when missing and
    `create`); None when any of it is refused."""
    path = Path(os.path.abspath(path))
    root = path.parents[depth - 1]
    try:
        open_root(root, create=create)
    except CacheRefused:
        return None
    return folder(root, *path.parts[-depth:], create=create)


# ----------------------------------------------------------------------------- files
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_file(path: Path, limit: int = MAX_ENTRY_BYTES, whole: bool = True) -> bytes | None:
    """The bytes of a regular file (never through a link, never a FIFO); None when it is missing
    or not a regular file, or (`whole`) larger than `limit`.  `whole=False`: its first `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (whole and st.st_size > limit):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_file(where: Path, name: str, data: bytes) -> bool:
    """Write `where/name` atomically (a temporary file renamed into place); `where` is a folder
    from `folder`/`open_root`.  False when it cannot (a read-only or full cache never fails a run)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        target = where / name
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(target).st_mode
            if stat.S_ISLNK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                os.unlink(target)       # a planted link or FIFO: the name goes, its target is untouched
            elif not stat.S_ISREG(mode):
                raise OSError(f"{target} is not a regular file")      # a folder: left alone
        os.replace(tmp, target)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def remove_entry(path: Path) -> None:
    """Delete one cache entry: only a regular file (a link is left alone, its target untouched)."""
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)


@dataclass(frozen=True)
class Entry:
    """A regular file of the cache that matches one of its entry formats."""

    path: Path
    relative: str
    size: int
    mtime: float


def entries(root: Path, kind: str | None = None) -> Iterator[Entry]:
    """The cache's own entries under `root` (one format or all), walked without following links:
    a linked folder is not entered and a linked file is not an entry."""
    formats = [ENTRY_FORMATS[kind]] if kind else list(ENTRY_FORMATS.values())
    uid = _uid()
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            listing = list(os.scandir(here))
        except OSError:
            continue
        for e in listing:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if here == root and kind and not _TOPS[kind].fullmatch(e.name):
                    continue                              # another cache's folder
                if uid is None or st.st_uid == uid:       # another user's folder is not ours
                    stack.append(Path(e.path))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            rel = os.path.relpath(e.path, root).replace(os.sep, "/")
            if any(f.fullmatch(rel) for f in formats):
                yield Entry(Path(e.path), rel, st.st_size, st.st_mtime)


def evict(root: Path, kind: str, max_bytes: int | None = None, keep: int | None = None) -> int:
    """Delete the oldest entries of one format under `root` until they total at most `max_bytes`
    and number at most `keep`; returns how many were deleted."""
    found = sorted(entries(root, kind), key=lambda e: e.mtime)
    total = sum(e.size for e in found)
    count = len(found)
    removed = 0
    for e in found:
        if (max_bytes is None or total <= max_bytes) and (keep is None or count <= keep):
            break
        remove_entry(e.path)
        total -= e.size
        count -= 1
        removed += 1
    return removed


def clean(root: Path, dry_run: bool = False) -> tuple[list[Entry], str | None]:
    """`pipelint clean`: every entry of every format under a tagged root, deleted (or only listed
    with `dry_run`), then the folders left empty; the tag goes last when nothing else is left.
    Returns the entries and, when nothing may be removed, why."""
    root = Path(os.path.abspath(root))
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return [], f"no cache in {root}"
    except OSError as exc:
        return [], f"{root}: {exc.strerror or exc}"
    try:
        _check_folder(root, st)
    except CacheRefused as exc:
        return [], f"not cleaned: {exc}"
    if not has_tag(root) and not _adoptable(root):
        return [], f"not cleaned: {root} has no {TAG_NAME}, so pipelint did not make it"
    found = sorted(entries(root), key=lambda e: e.relative)
    if dry_run:
        return found, None
    for e in found:
        remove_entry(e.path)
    _remove_empty_folders(root)
    with contextlib.suppress(OSError):
        if os.listdir(root) in ([TAG_NAME], []):
            remove_entry(root / TAG_NAME)
            os.rmdir(root)
    return found, None


def _remove_empty_folders(root: Path) -> None:
    """rmdir, bottom-up, the real folders under `root` that are empty (never a link)."""
    for here, dirs, _ in os.walk(root, topdown=False, followlinks=False):
        for d in dirs:
            path = os.path.join(here, d)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    os.rmdir(path)


def usable(choice: Choice, *sub: str, create: bool = True) -> Path | None:
    """The folder `sub` of the chosen root, ready to use; None (and a warning on stderr) when
    the root or a folder on the way is refused.  A refused configured folder is reported
    once here, with the folder used instead."""
    warn_fallback(choice)
    try:
        root = open_root(choice.path, create=create)
    except CacheRefused as exc:
        warn(str(exc))
        return None
    where = folder(root, *sub, create=create) if sub else root
    if where is None and create:
        warn(f"{os.path.join(root, *sub)} is a link, not a folder, or not the user's")
    return where


def warn_fallback(choice: Choice) -> None:
    """Say that a configured cache folder was refused, and which one is used instead."""
    if choice.warning:
        _say(f"{choice.warning}; using {choice.path}")


def warn(message: str) -> None:
    """A cache that cannot be used is a warning on stderr, never a failed run."""
    _say(f"{message}; running without that cache")


def _say(message: str) -> None:
    from .escape import visible

    print(f"pipelint: warning: {visible(message)}", file=sys.stderr)
