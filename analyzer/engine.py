"""Run the checks over files: read, parse, model each kernel, call plugins.

Every failure is contained to its file (a finding or a tool error) so one bad
input never loses the other files' results.  Files are spread over worker
processes when there are enough of them to pay for the start-up.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import os
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .core_rules import ANALYSIS_LIMIT, ANALYSIS_TIMEOUT, NO_KERNEL, PARSE_ERROR, UNREADABLE
from .cuda import CudaSyntaxError, parse
from .findings import FileResult, Finding, Location, Report, Severity, ToolError
from .pluginhost import PluginHost, load_plugins
from .suppress import suppressions_in
from .witness import attach_witnesses

if TYPE_CHECKING:
    from .cache import ResultCache
    from .cuda.parser import ParsedFile
    from .model import KernelModel

from .limits import DEFAULT_MAX_BYTES, DEFAULT_MEMORY_BUDGET, DEFAULT_TIME_BUDGET, wall_backstop


@dataclass(frozen=True)
class CheckOptions:
    max_bytes: int = DEFAULT_MAX_BYTES
    jobs: int = 0
    disable: tuple[str, ...] = ()
    time_budget: float = DEFAULT_TIME_BUDGET      # CPU seconds per file (0: none)
    memory_budget: float = DEFAULT_MEMORY_BUDGET  # MB per file on top of what the process holds (0: none)
    plugin_config: tuple[tuple[str, str], ...] = ()   # (plugin, its table as JSON), for worker processes
    enabled: frozenset[str] | None = None         # the rule ids selected: only their checks run (None: all)


class _OverBudget(BaseException):
    """Raised in the analysing thread when a file's time budget runs out (a BaseException, so
    no plugin-isolation `except Exception` swallows it); `wall` when it was the wall-clock
    backstop rather than the CPU budget."""

    def __init__(self, wall: bool = False) -> None:
        super().__init__("wall-clock backstop" if wall else "CPU time budget")
        self.wall = wall


@contextlib.contextmanager
def time_budget(seconds: float, backstop: float | None = None) -> Iterator[None]:
    """Interrupt the analysis of one file after `seconds` of this process's CPU time (user and
    system: ITIMER_PROF), or after `backstop` seconds of wall-clock time (default
    `limits.wall_backstop`).  CPU time, because a verdict must not depend on how loaded the
    machine is: wall time under six CPU-bound neighbours is several times the quiet one.  The
    backstop only catches an analysis that waits without computing.  Main thread, POSIX only."""
    usable = seconds > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    wall = wall_backstop(seconds) if backstop is None else backstop

    def cpu_expired(signum: int, frame: object) -> None:
        raise _OverBudget(wall=False)

    def wall_expired(signum: int, frame: object) -> None:
        raise _OverBudget(wall=True)

    previous = signal.signal(signal.SIGPROF, cpu_expired), signal.signal(signal.SIGALRM, wall_expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    if wall > 0:
        signal.setitimer(signal.ITIMER_REAL, wall)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def _file_finding(rule, path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(rule.id, rule.severity, message, Location(path, line, column, line, column + 1),
                   plugin="pipelint", help=rule.help)


def _cannot_read(exc: OSError) -> str:
    """What went wrong, in words: a symbolic link loop is named as one (its strerror, "Too many
    levels of symbolic links", is not what a user looks for)."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (following the link leads back to it, never to a file): not read"
    return f"cannot read file: {exc.strerror or exc}"


def over_limit(path: str, size: int, max_bytes: int) -> Finding:
    """The finding for an input over `--max-file-size`: its size, and that it was not read."""
    return _file_finding(UNREADABLE, path, f"file is {size / 2**20:.1f} MB, over the "
                         f"{max_bytes / 2**20:g} MB limit (--max-file-size): not read")


def read_source(path: str, max_bytes: int) -> tuple[str | None, Finding | None]:
    """The text of `path`, or the `unreadable-file` finding that says why not.  A file over the
    limit is only stat'ed, never opened; what is read stops at `max_bytes + 1` bytes (a file
    growing between the stat and the read is still bounded)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            mode = st.st_mode
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device"
            return None, _file_finding(UNREADABLE, path, f"{kind}, not a regular file: skipped")
        if st.st_size > max_bytes:
            return None, over_limit(path, st.st_size, max_bytes)
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        return None, _file_finding(UNREADABLE, path, _cannot_read(exc))
    return decode_source(path, data, max_bytes)


def decode_source(path: str, data: bytes, max_bytes: int) -> tuple[str | None, Finding | None]:
    """Bytes read from a file or stdin (at most `max_bytes + 1` of them) as text, or the
    `unreadable-file` finding: over the limit, binary, not UTF-8."""
    if len(data) > max_bytes:
        return None, _file_finding(UNREADABLE, path, f"input is over the {max_bytes / 2**20:g} MB limit "
                                   f"(--max-file-size): not analysed")
    if b"\0" in data[:8192]:
        return None, _file_finding(UNREADABLE, path, "binary file (contains NUL bytes), not CUDA source")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return None, _file_finding(UNREADABLE, path, f"not UTF-8 text: byte 0x{data[exc.start]:02x} "
                                   f"at offset {exc.start}", line)


def check_source(path: str, source: str, host: PluginHost,
                 enabled: frozenset[str] | None = None) -> tuple[FileResult, list[Finding], list[ToolError]]:
    result, findings, errors, _ = analyze_source(path, source, host, enabled)
    return result, findings, errors


def analyze_source(path: str, source: str, host: PluginHost,
                   enabled: frozenset[str] | None = None) -> tuple[FileResult, list[Finding], list[ToolError], list]:
    """Parse, model and check one file (only the checks of `enabled` rules; None: all); also
    return the kernel models built.  Race errors carry their witness (`pipelint.witness`)."""
    from .model import KernelModel
    from .model.unit import unit_facts

    models: list = []
    try:
        parsed = parse(source)
    except CudaSyntaxError as err:
        return (FileResult(path, False, error=err.message),
                [_file_finding(PARSE_ERROR, path, err.message, err.line, err.column)], [], models)
    findings, errors = host.check_file(parsed, path, enabled)
    kernels = parsed.unit.kernels()
    if not kernels and path.endswith(".cu"):
        findings.append(_file_finding(NO_KERNEL, path, "no __global__ kernel with a body in this file"))
    unit = unit_facts(parsed.unit)       # the file's __device__ helpers and constant macros
    for func in kernels:
        try:
            model = KernelModel(func, parsed.lines, parsed.registry, unit=unit)
        except (MemoryError, RecursionError):
            raise                   # over the file's budget: analysis-limit
        except Exception as exc:  # noqa: BLE001 - a model bug must not lose other files
            errors.append(ToolError(f"cannot model kernel {func.name}: {type(exc).__name__}: {exc}",
                                    path=path, plugin="pipelint"))
            continue
        models.append(model)
        f, e = check_kernel_all_trips(model, parsed, path, host, enabled, models)
        findings.extend(f)
        errors.extend(e)
    try:        # each race error's witness, from the models' hazards: what JSON and SARIF show
        findings = attach_witnesses(findings, models, source)
    except (MemoryError, RecursionError):
        raise                       # over the file's budget: analysis-limit
    except Exception as exc:  # noqa: BLE001 - evidence about findings must not lose them
        errors.append(ToolError(f"cannot derive the race witnesses: {type(exc).__name__}: {exc}",
                                path=path, plugin="pipelint"))
    return FileResult(path, True, tuple(k.name for k in kernels)), findings, errors, models


def check_kernel_all_trips(model: KernelModel, parsed: ParsedFile, path: str, host: PluginHost,
                           enabled: frozenset[str] | None = None,
                           witnesses: list | None = None) -> tuple[list[Finding], list[ToolError]]:
    """Check a kernel for every trip count its run-time-bound loops can have.

    A kernel whose pipelined loop runs `(seq_len + 63) >> 6` times is simulated once per
    scenario trip count (`KernelModel.trip_scenarios`); counts the kernel's own bounds rule
    out (`k < blockIdx.x + 1` never runs zero times) are not simulated.  Each finding knows
    its quantifier:

    * a hazard (correctness) is reported when some feasible count shows it, and says which;
      one that only a zero-trip loop shows is a warning that names that condition;
    * a claim that something can go or could be cheaper (performance) is reported only
      when every feasible count makes the same claim.
    """
    trips = model.feasible_trips()
    if not trips:
        return _in_block_scenarios(model, parsed, path, host, enabled, *host.check_kernel(model, parsed, path, enabled))
    per_trip: dict[tuple, dict[int, Finding]] = {}
    errors: list[ToolError] = []
    sensitive = model.scenario_sensitive()     # the base model's walk took a branch its count rules out
    for trip in trips:
        scenario = model if trip == model.runtime_trip and not sensitive else model.with_trip(trip)
        found, errs = host.check_kernel(scenario, parsed, path, enabled)
        errors.extend(e for e in errs if e not in errors)
        for f in found:
            loc = f.location
            per_trip.setdefault((f.rule, loc.line, loc.column), {}).setdefault(trip, f)
    block_zero = _in_block_zero(model, parsed, path, host, enabled, witnesses) if 0 in trips else {}
    zero_only = any(sorted(by_trip) == [0] for by_trip in per_trip.values())
    where = model.zero_trip_condition() if zero_only else None
    out = [q for key, by_trip in per_trip.items()
           if (q := _quantified(host.rules.get(key[0]), by_trip, trips, block_zero.get(key), where)) is not None]
    return _in_block_scenarios(model, parsed, path, host, enabled, out, errors)


MAX_BLOCK_IFS = 2       # block-uniform `if`s around synchronisation split into scenarios (2^n runs)


def _in_block_scenarios(model: KernelModel, parsed: ParsedFile, path: str, host: PluginHost,
                        enabled: frozenset[str] | None, found: list[Finding],
                        errors: list[ToolError]) -> tuple[list[Finding], list[ToolError]]:
    """The kernel again in the blocks where each block-uniform `if` around a barrier, wait or
    arrival (`Trace.block_ifs`: `if (blockIdx.x == 0) __syncthreads();`) takes one branch: the
    walk of `found` took both in turn, so a barrier in one branch counted for every block.  A
    hazard a feasible scenario shows is added, saying in which blocks; a performance claim stays
    only if every feasible scenario makes it too."""
    if not model.trace.block_ifs:
        return found, errors
    runs = _block_runs(model, parsed, path, host, enabled, errors)

    def claim(f: Finding) -> bool:
        rule = host.rules.get(f.rule)
        return rule is not None and rule.category == "performance"

    kept = [f for f in found if not claim(f) or all(_place(f) in {_place(g) for g in got}
                                                    for forced, got in runs if not _skipped(forced, f))]
    kept += _block_hazards(model, runs, {_place(f) for f in found}, claim)
    return kept, errors


def _place(f: Finding) -> tuple:
    return (f.rule, f.location.line, f.location.column)


def _block_hazards(model: KernelModel, runs: list[tuple[tuple, list[Finding]]], seen: set[tuple],
                   claim: Any) -> list[Finding]:
    """The hazards the block scenarios show that the walk of both branches did not, each saying in
    which blocks (`seen`: the places already reported; updated)."""
    out = []
    for forced, got in runs:
        added = [f for f in got if not claim(f) and f.severity in (Severity.ERROR, Severity.WARNING)
                 and _place(f) not in seen]
        where = model.branches_condition(forced) if added else None     # an isl question: only if used
        for f in added:
            if _place(f) not in seen:
                seen.add(_place(f))
                out.append(replace(f, message=f"{f.message} (in blocks where {where})" if where else f.message))
    return out


def _skipped(forced: tuple, f: Finding) -> bool:
    """Whether a finding lies in a branch the scenario `forced` does not take: it has no say there
    (a barrier in the branch of the other blocks is neither needed nor removable in these)."""
    line = f.location.line
    for node, polarity in forced:
        other = node.other if polarity else node.then
        if other is not None and other.span.line <= line <= other.span.end_line:
            return True
    return False


def _block_runs(model: KernelModel, parsed: ParsedFile, path: str, host: PluginHost,
                enabled: frozenset[str] | None, errors: list[ToolError]) -> list[tuple[tuple, list[Finding]]]:
    """Each feasible choice of branches of the first `MAX_BLOCK_IFS` block-uniform `if`s, with
    the findings of the kernel in those blocks."""
    ifs = model.trace.block_ifs[:MAX_BLOCK_IFS]
    runs: list[tuple[tuple, list[Finding]]] = []
    for polarities in itertools.product((True, False), repeat=len(ifs)):
        forced = tuple(zip(ifs, polarities))
        if model.branches_hold(forced) is False:
            continue                # no block of any launch takes these branches
        got, errs = host.check_kernel(model.with_branches(forced), parsed, path, enabled)
        errors.extend(e for e in errs if e not in errors)
        runs.append((forced, got))
    return runs


_SET_DECIDED = frozenset({"shared-race", "shared-write-race"})   # hazards the sets decide, guards and all


def _in_block_zero(model: KernelModel, parsed: ParsedFile, path: str, host: PluginHost,
                   enabled: frozenset[str] | None, witnesses: list | None = None) -> dict[tuple, Finding]:
    """The races of the zero-trip scenario that block 0 has, where block 0 runs every run-time-bound
    loop zero times (`KernelModel.block_zero_runs_zero`): the sets, with the block pinned to 0,
    decide them for the block every launch starts, so they are not conditional on a count."""
    if not model.block_zero_runs_zero():
        return {}
    pinned = model.with_trip(0, in_block_zero=True)
    found, _ = host.check_kernel(pinned, parsed, path, enabled)
    out = {(f.rule, f.location.line, f.location.column): f for f in found
           if f.rule in _SET_DECIDED and f.severity == Severity.ERROR}
    if out and witnesses is not None:
        witnesses.append(pinned)          # its hazards are the errors' witnesses (`attach_witnesses`)
    return out


def _quantified(rule: Any, by_trip: dict[int, Finding], trips: list[int],
                block_zero: Finding | None = None, zero_where: str | None = None) -> Finding | None:
    """One finding at one place, from what each simulated trip count showed there (see
    `check_kernel_all_trips`): None when a performance claim does not hold for every count.
    `block_zero`: the same place's race in block 0, which runs the loops zero times;
    `zero_where`: the blocks and arguments where the loops run zero times, in words."""
    first = next(iter(by_trip.values()))
    if rule is not None and rule.category == "performance":
        if len(by_trip) == len(trips) and len({f.message for f in by_trip.values()}) == 1:
            return first        # holds for every count: a claim a user can act on
        return None
    if len(by_trip) == len(trips):
        return first
    counts = sorted(by_trip)
    condition = describe_counts(counts, trips)
    if counts == [0] and block_zero is not None:
        return replace(block_zero, message=f"{block_zero.message} (in block 0, whose run-time-bound loop runs zero "
                                           f"times in every launch)")
    if counts == [0] and first.severity == Severity.ERROR:
        where = f", as it does where {zero_where}" if zero_where else ""
        return replace(first, severity=Severity.WARNING,
                       message=f"{first.message} (if the run-time-bound loop can run zero times{where})")
    shown = by_trip[next(c for c in counts if c != 0)] if any(counts) else first
    return replace(shown, message=f"{shown.message} (only when the run-time-bound loop runs {condition})")


def describe_counts(counts: list[int], simulated: list[int]) -> str:
    """`exactly 1 iteration`, `0 or 2 iterations`, `3 or more iterations` (of those simulated)."""
    if len(counts) == 1:
        return f"exactly {counts[0]} iteration{'s' if counts[0] != 1 else ''}"
    tail = [n for n in simulated if n >= counts[0]]
    if counts == tail:
        return f"{counts[0]} or more iterations"
    return ", ".join(map(str, counts[:-1])) + f" or {counts[-1]} iterations"


@contextlib.contextmanager
def memory_budget(megabytes: float) -> Iterator[None]:
    """Cap the address space one file's analysis may add (Linux: RLIMIT_AS above current use);
    going over raises MemoryError in the analysis, which becomes an analysis-limit finding."""
    try:
        import resource

        with open("/proc/self/statm") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        yield
        return
    cap = current + int(megabytes * 2**20)
    if megabytes <= 0 or (hard != resource.RLIM_INFINITY and cap > hard):
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def check_file(path: str, host: PluginHost, max_bytes: int, budget: float = DEFAULT_TIME_BUDGET,
               memory: float = DEFAULT_MEMORY_BUDGET,
               enabled: frozenset[str] | None = None) -> tuple[FileResult, list[Finding], list[ToolError]]:
    source, problem = read_source(path, max_bytes)
    if problem is not None:         # never read (or not text): nothing to scan for suppressions
        return FileResult(path, False, error=problem.message, suppressions=()), [problem], []
    return check_text(path, source or "", host, budget, memory, enabled)


def check_text(path: str, source: str, host: PluginHost, budget: float = DEFAULT_TIME_BUDGET,
               memory: float = DEFAULT_MEMORY_BUDGET,
               enabled: frozenset[str] | None = None) -> tuple[FileResult, list[Finding], list[ToolError]]:
    """`check_source` within the time and memory budgets (files and stdin alike): going over
    becomes an `analysis-limit` finding, the wall-clock backstop an `analysis-timeout` one."""
    started, wall_started = time.process_time(), time.monotonic()
    try:
        with time_budget(budget), memory_budget(memory):
            result, findings, errors = check_source(path, source, host, enabled)
        return (replace(result, suppressions=suppressions_in(source),
                        digest=hashlib.sha256(source.encode("utf-8")).hexdigest()), findings, errors)
    except (_OverBudget, MemoryError, RecursionError) as exc:
        rule = ANALYSIS_TIMEOUT if isinstance(exc, _OverBudget) and exc.wall else ANALYSIS_LIMIT
        what = (f"analysis stopped after {time.monotonic() - wall_started:.0f} s of wall-clock time with "
                f"{time.process_time() - started:.1f} s of CPU time (backstop {wall_backstop(budget):g} s): "
                f"it was waiting, not computing"
                if rule is ANALYSIS_TIMEOUT else
                f"analysis stopped after {time.process_time() - started:.1f} s of CPU time "
                f"(time budget {budget:g} s)"
                if isinstance(exc, _OverBudget) else
                f"analysis went over its memory budget ({memory:g} MB)" if isinstance(exc, MemoryError) else
                "analysis recursed too deeply")
        finding = _file_finding(rule, path, f"{what}; this file's findings are incomplete")
        return FileResult(path, True, error=finding.message), [finding], []
    except Exception as exc:  # noqa: BLE001 - a defect of the analysis must not lose the other files
        error = ToolError(f"cannot analyse {path}: {type(exc).__name__}: {exc}; this file's findings are "
                          f"missing", path=path, plugin="pipelint")
        return FileResult(path, True, error=error.message), [], [error]


_WORKER_HOST: PluginHost | None = None


def _worker_init(disable: tuple[str, ...], plugin_config: tuple[tuple[str, str], ...] = ()) -> None:
    global _WORKER_HOST
    _WORKER_HOST = load_plugins(disable)
    _WORKER_HOST.configure({name: json.loads(table) for name, table in plugin_config})
    from .gcpolicy import for_analysis

    for_analysis()


def _worker(args: tuple[str, int, float, float, frozenset[str] | None]):
    assert _WORKER_HOST is not None
    return check_file(args[0], _WORKER_HOST, args[1], args[2], args[3], args[4])


def _job(path: str, options: CheckOptions) -> tuple[str, int, float, float, frozenset[str] | None]:
    return (path, options.max_bytes, options.time_budget, options.memory_budget, options.enabled)


def _isolated(path: str, options: CheckOptions):
    """Check one file in a worker of its own: if that worker dies (a plugin killing its
    process, a crash in a C extension), only this file's result is lost, and the run is an
    internal error (exit 3): a report with a file missing must not pass."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(1, initializer=_worker_init,
                                 initargs=(options.disable, options.plugin_config)) as pool:
            return pool.submit(_worker, _job(path, options)).result()
    except BrokenProcessPool:
        finding = _file_finding(ANALYSIS_LIMIT, path, "the worker analysing this file died (a plugin or "
                                "extension ended the process); this file's findings are missing")
        died = ToolError(f"the worker process analysing {path} died before it reported (a plugin or "
                         "extension ended it); the other files' results are kept", path=path)
        return FileResult(path, False, error=finding.message), [finding], [died]


def _snapshot(path: str) -> Any:
    from .cache import snapshot

    return snapshot(path)


def run_check(files: Iterable[str], host: PluginHost, options: CheckOptions,
              cache: ResultCache | None = None, progress: Any = None) -> Report:
    """Check files (each once, in path order), from the cache where unchanged; `progress`
    (a `progress.Progress`) is advanced once per file."""
    # One report whatever order the paths came in (and each file once): byte-identical output.
    files = sorted(dict.fromkeys(files))
    report = Report(rules=dict(host.rules), errors=list(host.errors))
    cached = _from_cache(files, cache, progress)
    report.cached = len(cached) if cache is not None else 0
    todo = [f for f in files if f not in cached]
    # each file's stat before it is read: the cache's stat index is written only if it still holds
    before = {f: _snapshot(f) for f in todo} if cache is not None else {}
    fresh: dict[str, tuple] = {}
    for f, result in zip(todo, _analyse(todo, host, options)):
        fresh[f] = result
        if cache is not None:           # as each file finishes: a killed run keeps what it did
            cache.put(f, result, before[f])
        if progress is not None:
            progress.advance(1, f)
    if cache is not None:
        cache.prune()
    for f in files:
        result, findings, errors = cached[f] if f in cached else fresh[f]
        report.files.append(result)
        report.findings.extend(dedupe(findings))
        report.errors.extend(errors)
    return report


def _from_cache(files: list[str], cache: ResultCache | None, progress: Any) -> dict[str, tuple]:
    """The cached results of unchanged files (the progress advanced past them)."""
    if cache is None:
        return {}
    cached = {f: hit for f in files if (hit := cache.get(f)) is not None}
    if progress is not None and cached:
        progress.advance(len(cached), "from the cache")
    return cached


def _analyse(files: list[str], host: PluginHost, options: CheckOptions) -> Iterator[tuple]:
    """Results of `check_file` for each file, in order: in this process or spread over workers."""
    cores = os.cpu_count() or 1
    jobs = min(options.jobs, cores) if options.jobs else (min(cores, 8) if len(files) >= 8 else 1)
    if jobs > 1 and len(files) > 1:
        # the pool's imports (multiprocessing, sockets) only where files are spread over workers
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        done = 0
        try:
            with ProcessPoolExecutor(jobs, initializer=_worker_init,
                                     initargs=(options.disable, options.plugin_config)) as pool:
                for result in pool.map(_worker, [_job(f, options) for f in files], chunksize=4):
                    done += 1
                    yield result
        except BrokenProcessPool:
            # a worker died: the files not yet reported run one per fresh worker, so only the
            # one that kills its worker is lost
            for f in files[done:]:
                yield _isolated(f, options)
    else:
        for f in files:
            yield check_file(f, host, options.max_bytes, options.time_budget, options.memory_budget, options.enabled)


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per rule and position: unrolled iterations repeat hazards."""
    seen: dict[tuple, Finding] = {}
    for f in findings:
        loc = f.location
        seen.setdefault((f.rule, loc.path, loc.line, loc.column), f)
    return list(seen.values())
