"""The registers of a wgmma in flight: its accumulators (and its A fragment, `wgmma_rs`).

PTX ISA, `wgmma.mma_async`: "Accessing the accumulator register or the input register containing
the fragments of matrix A of a wgmma.mma_async instruction without first performing a
wgmma.wait_group instruction that waits on a wgmma-group including that wgmma.mma_async
instruction is undefined behavior" -- except by another `wgmma.mma_async` with the same
accumulator (a chain of MMAs into one tile runs in issue order).  TileLang's code touches the
accumulators after `tl::warpgroup_wait<N>` has retired the group: a softmax reading `acc_s`, an
epilogue casting `C_local`.  A wait whose N leaves that group in flight (`warpgroup_wait<1>` with
one group committed), or no wait at all, lets the threads read registers the tensor cores are
still writing, and nothing in shared memory shows it.

`FragmentTracker` follows one role's walk (`model.trace`): the register arrays each wgmma names,
its commit groups and the waits that retire them, and every statement that touches a pending
array.  A use is recorded once per statement and array.  `tl::warpgroup_fence_operand`, the
wgmma calls themselves and the commit/wait calls are not uses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cuda import ast as A

_NOT_USES = ("tl::wgmma", "tl::warpgroup_", "tl::wait_wgmma")
_RS = ("tl::wgmma_rs",)          # the A operand (argument 0) is a register fragment


@dataclass(frozen=True)
class FragmentUse:
    """A statement of role `role` that touches register array `name` while the wgmma `wgmma`
    (committed at `commit`, None: not yet committed) may still access it; `wait`: the last
    `warpgroup_wait` the role passed since, which left the group in flight (None: none)."""

    node: A.Node
    name: str
    wgmma: A.Call
    commit: A.Node | None
    wait: A.Node | None
    role: int
    accumulator: bool           # False: the A fragment of a `wgmma_rs`, written here


@dataclass
class _Pending:
    wgmma: A.Call
    commit: A.Node | None
    accumulator: bool


@dataclass
class FragmentTracker:
    """One role's wgmma register arrays in flight (see the module docstring)."""

    role: int
    open: dict[str, _Pending] = field(default_factory=dict)          # issued since the last commit
    groups: list[dict[str, _Pending]] = field(default_factory=list)   # committed, not retired
    last_wait: A.Node | None = None
    uses: dict[tuple[int, str], FragmentUse] = field(default_factory=dict)
    _pending: dict[str, _Pending] = field(default_factory=dict)

    def issue(self, call: A.Call, locals_: frozenset[str]) -> None:
        """A wgmma: the register arrays it names (accumulator: argument 2; a `wgmma_rs`'s A
        fragment: argument 0), among the kernel's local arrays `locals_`."""
        args = call.args
        if len(args) > 2:
            for name in _arrays(args[2], locals_):
                self.open[name] = _Pending(call, None, True)
        if call.name.startswith(_RS) and args:
            for name in _arrays(args[0], locals_):
                self.open.setdefault(name, _Pending(call, None, False))
        self._pending.update(self.open)

    def commit(self, node: A.Node, copies: int) -> None:
        """`warpgroup_commit_batch`: what was issued since the last commit is a group, `copies`
        times in a loop walked once (each iteration's)."""
        if self.open:
            group = {n: _Pending(p.wgmma, node, p.accumulator) for n, p in self.open.items()}
            self.groups.extend([group] * copies)
            self.open = {}
            self._refresh()

    def wait(self, node: A.Node, keep: int | None) -> None:
        """`warpgroup_wait<keep>`: every group but the newest `keep` is retired (None: unknown,
        nothing is)."""
        if keep is None or keep < 0:
            return
        self.groups = self.groups[max(0, len(self.groups) - keep):]
        self.last_wait = node
        self._refresh()

    def _refresh(self) -> None:
        self._pending = {}
        for group in self.groups:
            self._pending.update(group)
        self._pending.update(self.open)

    @property
    def active(self) -> bool:
        return bool(self._pending)

    def visit(self, stmt: A.Node) -> None:
        """Record the pending arrays `stmt` touches (an accumulator read or written, an A fragment
        written), outside the wgmma's own calls; nothing while no wgmma is in flight."""
        if not self._pending:
            return
        for name, written in _touched(stmt, self._pending):
            p = self._pending[name]
            if not p.accumulator and not written:
                continue
            key = (id(stmt), name)
            if key not in self.uses:
                wait = self.last_wait if p.commit is not None else None
                self.uses[key] = FragmentUse(stmt, name, p.wgmma, p.commit, wait, self.role, p.accumulator)


def _arrays(expr: A.Expr, locals_: frozenset[str]) -> list[str]:
    return sorted({n.ident for n in expr.walk() if isinstance(n, A.Name) and n.ident in locals_})


def _touched(stmt: A.Node, pending: dict[str, _Pending]) -> list[tuple[str, bool]]:
    """(name, written) for each pending array `stmt` names outside the calls that are not uses."""
    out: dict[str, bool] = {}
    stack: list[tuple[A.Node, bool]] = [(stmt, False)]
    while stack:
        node, target = stack.pop()
        if isinstance(node, A.Call) and node.name.startswith(_NOT_USES):
            continue
        if isinstance(node, A.Name) and node.ident in pending:
            out[node.ident] = out.get(node.ident, False) or target
            continue
        if isinstance(node, A.Assign):
            stack.append((node.target, True))
            stack.append((node.value, target))
            continue
        stack.extend((child, target) for child in node.children())
    return sorted(out.items())
