"""Exact finding sets: the full sorted list of (rule, severity, primary line) of a file, not membership.

Issue 23, "Make the suite able to fail": breakages planted in pipelint itself survived every test,
because the mutant tests check `(rule, line) in hits` and so let extra or wrong findings pass.  Here
every file's findings are compared whole.  The inputs are the project's own TileLang 0.1.15
fixtures (tests/fixtures/kernels), the mutants of tests/mutants/mutate.py, and hand edits of the
fixtures made the way mutate.py makes them (one line changed, inserted or deleted by pattern).

Each expectation says why it is right.  Where pipelint's answer today is wrong (a false finding, a
wrong line, a wrong fix), the test asserts the right answer and is `xfail(strict=True)` with the
reason, and a second, non-xfail test pins what is right about today's answer (rule and severity),
so the breakage it guards against is still caught.

`python benchmarks/self_mutation.py` measures how many plausible breakages of the model these and
the other analysis tests kill (docs/validation/self_mutation.md).
"""
from __future__ import annotations

import re

import pytest
from helpers import KERNELS
from mutants import mutate
from mutants.mutate import SM80, SM90, _find, _lines, _loop_start

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
S4 = "gemm_f16_sm_80_s4.cu"
SCALED90 = "scaled_gemm_sm_90_s2.cu"


def _check(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.cu"
    path.write_text(text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return report.findings


def exact(findings) -> list[tuple[str, str, int]]:
    return sorted((f.rule, f.severity.value, f.location.line) for f in findings)


def kinds(findings) -> list[tuple[str, str]]:
    return sorted((f.rule, f.severity.value) for f in findings)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


# ---------------------------------------------------------------- the mutants of mutate.py, whole
# Where a mutant's set holds notes the clean fixture also has, the note is named as such.
MUTANTS = {
    "drop-barrier-after-wait": [("missing-barrier", "error", 79)],
    "drop-loop-head-barrier": [("missing-barrier", "error", 64)],
    # wait<0> in the loop: the wait is the only finding; the epilogue barriers stay needed once
    # the wait is raised to 2 (claims are checked together with the wait advice)
    "steady-state-wait-0": [("wait-too-deep", "warning", 78)],
    # of the two duplicates exactly one (the later) can go
    "duplicate-barrier": [("redundant-barrier", "warning", 63)],
    # threads 0-31 take the loop-head barrier, 32-127 do not: a hang (error), the WAR it ordered,
    # and, with the barriers paired as sm_70 pairs them, the RAWs of the ldmatrix reads
    "barrier-under-threadidx-branch": [
        ("divergent-barrier", "error", 62), ("missing-barrier", "error", 62),
        ("shared-race", "error", 89), ("shared-race", "error", 95),
        ("shared-race", "error", 152), ("shared-race", "error", 158)],
    # init(64) for 128 arrivals: the count, and the producer (47) and consumer (69) that then hang
    "halve-mbarrier-init": [("mbarrier-arrival-count", "error", 38), ("mbarrier-deadlock", "error", 47),
                            ("mbarrier-deadlock", "error", 69)],
    "halve-expect-tx": [("mbarrier-tx-bytes", "error", 49)],
    "drop-producer-parity-xor": [("mbarrier-deadlock", "error", 47), ("mbarrier-deadlock", "error", 69)],
    "drop-fence-barrier-init": [("mbarrier-init-fence", "error", 42)],
    # reported where the release goes (100), and the consumer's wait that hangs behind it (69)
    "drop-consumer-release": [("mbarrier-deadlock", "error", 69), ("mbarrier-deadlock", "error", 100)],
    # every load into slot 0: each iteration's loads also go in while the last iteration's may still
    # land (the producer never observed their phase: tma-load-unwaited, the loads' lines)
    "tma-every-iteration-slot-0": [("mbarrier-release", "error", 50), ("mbarrier-release", "error", 54),
                                   ("tma-load-unwaited", "error", 50), ("tma-load-unwaited", "error", 54),
                                   ("tma-read-before-wait", "error", 92)],
    # the two notes are the clean fixture's (flash_attn_fwd_sm_90_s2.cu: 61, 65)
    "drop-tma-store-fence": [("mbarrier-tx-bytes", "note", 61), ("redundant-barrier", "note", 65),
                             ("tma-store-fence", "error", 295)],
    # no wait retires the wgmma groups: reported where the wait goes, after the commit; and the
    # epilogue reads C_local (109) while the last group may still write it
    "drop-wgmma-wait": [("mbarrier-release", "error", 99), ("wgmma-register-race", "error", 109)],
    # flash attention's first wait raised to 1: acc_s read in flight (reported at the wait, 133), and
    # the K slot released (137) while the wgmma still reads it
    "wgmma-wait-too-deep": [("mbarrier-release", "error", 137), ("mbarrier-tx-bytes", "note", 61),
                            ("redundant-barrier", "note", 65), ("wgmma-register-race", "error", 133)],
    "runtime-trip-parity": [("mbarrier-deadlock", "error", 47), ("mbarrier-deadlock", "error", 69)],
    # the note is the clean fixture's (causal_attn_sm_90_s2.cu: 59)
    "runtime-trip-drop-release": [("mbarrier-deadlock", "error", 112), ("mbarrier-deadlock", "error", 137),
                                  ("mbarrier-tx-bytes", "note", 59)],
    # wait<3> at 141 (redundant in the clean kernel) now leaves the S_shared group in flight as well;
    # no barrier is claimed removable in a kernel that is already wrong
    "guarded-copy-wait-shallow": [("wait-too-shallow", "error", 100), ("wait-too-shallow", "error", 141)],
    "double-read-early-release": [("mbarrier-release", "error", 173)],
    "tcgen05-drop-commit": [("mbarrier-deadlock", "error", 61), ("mbarrier-deadlock", "error", 96)],
    # a kernel with a race gets no redundancy claim (the clean fixture's note at 73 is withheld)
    "splitk-cross-thread-read": [("missing-barrier", "error", 43)],
    # equivalent mutations: what the clean split-K kernel already reports, no error
    "drop-same-thread-barrier-after-wait": [("redundant-barrier", "note", 72), ("redundant-barrier", "warning", 36)],
    "drop-same-thread-loop-head-barrier": [("redundant-barrier", "note", 72), ("redundant-barrier", "warning", 42)],
    "drop-every-same-thread-barrier": [],
}
# kernels with a hazard get no redundancy claim: what a barrier orders changes once the hazard
# is fixed (wait<3> where 2 is right; the loop's commit deleted)
MUTANTS["wait-one-group-too-shallow"] = [("wait-too-shallow", "error", 78)]
MUTANTS["drop-commit"] = [("uncommitted-copy", "error", 77), ("wait-too-shallow", "error", 77)]
# halving the expect_tx of num_stages=1: the boxes are not in the kernel text, but the wgmma then
# read 16384 bytes of what the loads fill (their descriptors' operands), more than the 12288 announced
MUTANTS["halve-expect-tx-single-stage"] = [("mbarrier-tx-bytes", "error", 45)]
WRONG_TODAY: dict[str, tuple[list[tuple[str, str, int]], str]] = {}
_OPERATORS = {op().name: op for op in (*mutate.OPERATORS, *mutate.EQUIVALENT_OPERATORS)}


def test_every_mutant_has_an_exact_expectation():
    assert set(_OPERATORS) == set(MUTANTS) | set(WRONG_TODAY) and not set(MUTANTS) & set(WRONG_TODAY)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_findings_are_exactly(name, tmp_path):
    m = _OPERATORS[name]()
    got = exact(_check(tmp_path, m.name, m.text))
    assert got == MUTANTS[name]
    if m.rule:
        assert (m.rule, m.line) in {(r, line) for r, _, line in got}


@pytest.mark.parametrize("name", sorted(WRONG_TODAY))
def test_mutant_findings_are_exactly_wrong_today(name, tmp_path, request):
    expected, reason = WRONG_TODAY[name]
    request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    m = _OPERATORS[name]()
    assert exact(_check(tmp_path, m.name, m.text)) == expected


@pytest.mark.parametrize("name", ["wait-one-group-too-shallow", "drop-commit"])
def test_broken_kernels_errors_are_exactly(name, tmp_path):
    """What is right about the two kernels above today: their errors, whole."""
    m = _OPERATORS[name]()
    got = [f for f in exact(_check(tmp_path, m.name, m.text)) if f[1] == "error"]
    assert got == MUTANTS[name]


# ---------------------------------------------------------------- clean kernels
GEMMS = sorted(p.name for p in KERNELS.glob("gemm_*_sm_[89]0_s[0-4].cu"))


@pytest.mark.parametrize("name", GEMMS)
def test_clean_gemm_findings_are_exactly(name, tmp_path):
    """TileLang's GEMMs are correct and every barrier and wait they have is needed: nothing to
    report but, at num_stages=1 on sm_90, that the TMA boxes' bytes could not be checked."""
    got = exact(_check(tmp_path, name[:-3], (KERNELS / name).read_text()))
    expected = [("mbarrier-tx-bytes", "note", 45)] if name.endswith("sm_90_s1.cu") else []
    assert got == expected


# ---------------------------------------------------------------- duplicated barriers: one goes
def _without(text: str, lines: set[int]) -> str:
    return "\n".join(line for i, line in enumerate(text.split("\n"), 1) if i not in lines)


@pytest.mark.parametrize("where", ["loop-head", "after-wait"])
def test_duplicated_barrier_exactly_one_redundant_and_the_claim_holds(where, tmp_path):
    lines = _lines(SM80)
    start = _loop_start(lines)
    if where == "after-wait":
        start = _find(lines, r"cp_async_wait<2>", start)
    sync = _find(lines, r"__syncthreads\(\);", start)
    lines.insert(sync + 1, lines[sync])
    text = "\n".join(lines)
    found = _check(tmp_path, "dup", text)
    assert exact(found) == [("redundant-barrier", "warning", sync + 2)]
    # the claimed barriers removed together: the clean fixture, which has nothing to report
    claimed = {f.location.line for f in found if f.rule == "redundant-barrier"}
    removed = _without(text, claimed)
    assert removed == (KERNELS / SM80).read_text()
    assert exact(_check(tmp_path, "dup-claimed-removed", removed)) == []
    # both of the pair removed: a race, so calling both removable would be wrong
    both = exact(_check(tmp_path, "dup-both-removed", _without(text, {sync + 1, sync + 2})))
    assert [(r, s) for r, s, _ in both] == [("missing-barrier", "error")]


# ---------------------------------------------------------------- a __syncthreads under a thread guard
@pytest.mark.parametrize("guard, expected", [
    # a guard that is not a warp-role split (every other thread): only the hang
    ("(((int)threadIdx.x) & 1) == 0", [("divergent-barrier", "error", 62)]),
], ids=["every-other-thread"])
def test_guarded_loop_head_barrier_is_divergent(guard, expected, tmp_path):
    lines = _lines(SM80)
    sync = _find(lines, r"__syncthreads\(\);", _loop_start(lines))
    lines[sync] = f"{_indent(lines[sync])}if ({guard}) {{ __syncthreads(); }}"
    found = _check(tmp_path, "guarded", "\n".join(lines))
    assert exact(found) == expected
    [div] = [f for f in found if f.rule == "divergent-barrier"]
    assert "the block hangs" in div.message


def test_guarded_barrier_after_wait_is_divergent_and_leaves_the_raw(tmp_path):
    """Threads 0-63 take the barrier after the wait: the hang, the RAW it ordered (reported where
    the barrier goes), and the reads of the threads that skipped it."""
    lines = _lines(SM80)
    wait = _find(lines, r"cp_async_wait<2>", _loop_start(lines))
    sync = _find(lines, r"__syncthreads\(\);", wait)
    lines[sync] = f"{_indent(lines[sync])}if (((int)threadIdx.x) < 64) {{ __syncthreads(); }}"
    found = _check(tmp_path, "guarded-after-wait", "\n".join(lines))
    assert exact(found) == [("divergent-barrier", "error", 79), ("missing-barrier", "error", 79),
                            ("shared-race", "error", 89), ("shared-race", "error", 95),
                            ("shared-race", "error", 152), ("shared-race", "error", 158)]
    [div] = [f for f in found if f.rule == "divergent-barrier"]
    assert "threads 0-63 of 128" in div.message


# ---------------------------------------------------------------- wait depth: too deep, by how much
@pytest.mark.parametrize("fixture, old, new, best", [
    (SM80, 2, 1, 2),     # one extra group drained: wait-too-deep all the same
    (SM80, 2, 0, 2),     # two deeper
    (S4, 3, 2, 3),
    (S4, 3, 1, 3),
    (S4, 3, 0, 3),       # three deeper
])
def test_wait_too_deep_names_the_right_depth(fixture, old, new, best, tmp_path):
    lines = _lines(fixture)
    wait = _find(lines, rf"cp_async_wait<{old}>", _loop_start(lines))
    lines[wait] = lines[wait].replace(f"cp_async_wait<{old}>", f"cp_async_wait<{new}>")
    found = _check(tmp_path, f"wait{new}", "\n".join(lines))
    assert exact(found) == [("wait-too-deep", "warning", wait + 1)]
    [f] = found
    assert f.help == f"change cp_async_wait<{new}> to cp_async_wait<{best}> at line {wait + 1}"
    assert f"lets {best - new} more group(s) overlap" in f.message


# ---------------------------------------------------------------- the mbarrier init fence needs its sync
def _no_init_sync() -> list[str]:
    lines = _lines(SM90)
    fence = _find(lines, r"fence_barrier_init")
    del lines[_find(lines, r"__syncthreads\(\);", fence)]
    return lines


def _sync_before_fence() -> list[str]:
    lines = _lines(SM90)
    fence = _find(lines, r"fence_barrier_init")
    sync = _find(lines, r"__syncthreads\(\);", fence)
    lines[fence], lines[sync] = lines[sync], lines[fence]
    return lines


@pytest.mark.parametrize("edit", [_no_init_sync, _sync_before_fence], ids=lambda e: e.__name__)
def test_init_fence_without_its_following_sync_is_reported(edit, tmp_path):
    found = _check(tmp_path, edit.__name__, "\n".join(edit()))
    assert kinds(found) == [("mbarrier-init-fence", "error")]
    assert "before __syncthreads() makes the mbarrier initialisation visible" in found[0].message


def test_init_fence_without_its_sync_is_reported_where_the_sync_goes(tmp_path):
    lines = _no_init_sync()
    fence = _find(lines, r"fence_barrier_init")
    found = _check(tmp_path, "no-init-sync", "\n".join(lines))
    assert exact(found) == [("mbarrier-init-fence", "error", fence + 2)]
    assert found[0].help.startswith(f"insert __syncthreads(); before line {fence + 2}")


# ---------------------------------------------------------------- expect_tx over-announced
def test_over_announced_expect_tx_is_the_byte_count_not_a_hang(tmp_path):
    lines = _lines(SM90)
    at = _find(lines, r"arrive_and_expect_tx\(8192\)")
    lines[at] = lines[at].replace("arrive_and_expect_tx(8192)", "arrive_and_expect_tx(16384)")
    found = _check(tmp_path, "tx-double", "\n".join(lines))
    first_expect = _find(lines, r"expect_transaction\(|arrive_and_expect_tx\(")
    assert exact(found) == [("mbarrier-tx-bytes", "error", first_expect + 1)]
    assert "announces 24576 bytes (8192 + 16384) per phase" in found[0].message and "write 16384 bytes" in found[0].message


# ---------------------------------------------------------------- a role's reads: released by its own arrive
def _one_group_releases_a(condition: str) -> list[str]:
    """scaled_gemm_sm_90_s2: two consumer roles (threads 128-191 and 192-255) read A_shared and
    both arrive on its empty barriers (init 128).  Edit: the empty barriers of A count 64, and
    only the threads that satisfy `condition` arrive on them; the other role's reads of A are
    released by nobody (its own arrivals go to B's and D's barriers)."""
    lines = _lines(SCALED90)
    for b in (6, 7):
        i = _find(lines, rf"mbarrier\[{b}\]\.init\(128\)")
        lines[i] = lines[i].replace("init(128)", "init(64)")
    at = _find(lines, r"mbarrier\[\(\(k_1 & 1\) \+ 6\)\]\.arrive\(\);")
    lines[at] = f"{_indent(lines[at])}if ({condition}) {{ {lines[at].strip()} }}"
    return lines


def _last_read_release_line(lines: list[str]) -> int:
    """Where the reader's release of A belongs: after the completion wait of its last GEMM on A."""
    arrive = _find(lines, r"mbarrier\[\(\(k_1 & 1\) \+ 6\)\]\.arrive\(\);")
    wait = max(i for i in range(arrive) if "warpgroup_wait" in lines[i])
    return mutate._statement_at(lines, wait + 1) + 1


def test_another_roles_arrive_does_not_release_a_roles_reads(tmp_path):
    """Threads 128-191 arrive on A's empty barrier, threads 192-255 do not: the producer may
    overwrite A while 192-255 still read it, although an arrival (the other role's) follows
    their reads on the very barrier the producer waits on."""
    found = _check(tmp_path, "release-other-role", "\n".join(_one_group_releases_a("((int)threadIdx.x) < 192")))
    assert kinds(found) == [("mbarrier-release", "error")]
    assert "overwrites A_shared slot 0" in found[0].message
    assert found[0].help.startswith("release A_shared slot 0 only after threads 192-255's last read of it")


@pytest.mark.xfail(strict=True, reason="the release spot comes from the first unreleased read of A (line 120, "
                                       "release at 127), not from the role's last read of it (line 165, its "
                                       "wgmma completed at 170: release at 172)")
def test_another_roles_arrive_release_is_placed_after_the_last_read(tmp_path):
    lines = _one_group_releases_a("((int)threadIdx.x) < 192")
    found = _check(tmp_path, "release-other-role", "\n".join(lines))
    assert exact(found) == [("mbarrier-release", "error", _last_read_release_line(lines))]


@pytest.mark.xfail(strict=True, reason="the round-robin interleaving runs threads 192-255 first, so the producer "
                                       "refills A before threads 128-191 read it: reported as two "
                                       "tma-read-before-wait at the reads (120, 165), not as the missing release")
def test_the_other_role_missing_its_release_is_the_release_finding(tmp_path):
    lines = _one_group_releases_a("((int)threadIdx.x) >= 192")
    found = _check(tmp_path, "release-other-role-hi", "\n".join(lines))
    assert exact(found) == [("mbarrier-release", "error", _last_read_release_line(lines))]


# ---------------------------------------------------------------- stores many threads run
def _write_write(store: str) -> tuple[list[str], int]:
    lines = _lines("write_write_synced_sm_80_s0.cu")
    at = _find(lines, re.escape("S[(((int)threadIdx.x) + 10)] = "))
    lines[at] = f"{_indent(lines[at])}{store}"
    return lines, at + 1


def test_one_slot_stored_by_every_thread_with_its_own_value_races(tmp_path):
    lines, line = _write_write("S[0] = ((int)threadIdx.x);")
    found = _check(tmp_path, "ww-tid", "\n".join(lines))
    assert exact(found) == [("shared-write-race", "error", line)]
    assert "write different values to the same bytes" in found[0].message


def test_one_slot_stored_by_every_thread_with_one_value_is_clean(tmp_path):
    lines, _ = _write_write("S[0] = A[(((int)blockIdx.x) * 128)];")
    assert exact(_check(tmp_path, "ww-same", "\n".join(lines))) == []


# ---------------------------------------------------------------- writers a condition on data picks
def test_writers_picked_by_data_then_read_without_barrier_race(tmp_path):
    """cond_writers_sm_80_s0 with its guard made a condition on data (`0 < A[..]`, which threads
    store is unknown) and the barrier before the read deleted: whoever stored, a different thread
    reads it ((tx + 1) & 31), so it is a race."""
    lines = _lines("cond_writers_sm_80_s0.cu")
    guard = _find(lines, re.escape("if (((int)threadIdx.x) < 32)"))
    lines[guard] = lines[guard].replace(
        "((int)threadIdx.x) < 32", "0x0p+0f/*0.000000e+00*/ < A[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))]")
    del lines[_find(lines, r"__syncthreads\(\);", guard)]
    found = _check(tmp_path, "data-writers", "\n".join(lines))
    read = _find(lines, re.escape("= S[((((int)threadIdx.x) + 1) & 31)]"))
    assert exact(found) == [("shared-race", "error", read + 1)]


# ---------------------------------------------------------------- loops written with <=
def test_inclusive_loop_bound_is_the_same_kernel(tmp_path):
    """`k <= 29` runs the 30 iterations of `k < 30`: the GEMM stays clean (the epilogue's reads
    depend on the loop running all of them)."""
    lines = _lines(SM80)
    loop = _loop_start(lines)
    lines[loop] = lines[loop].replace("k < 30", "k <= 29")
    assert exact(_check(tmp_path, "inclusive", "\n".join(lines))) == []
