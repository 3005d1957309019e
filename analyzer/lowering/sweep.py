"""What one lowered variant contributes to the sweep: IR facts plus CUDA facts.

The CUDA side is read off the kernel model (versions per buffer, the
steady-state cp.async wait and commit groups, block barriers per iteration,
shared-memory bytes), so the IR/CUDA comparison and the variant table use one
definition of each number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


def variant_filename(kernel: str, arch: str, num_stages: int) -> str:
    """The one name of a variant's CUDA file: `<kernel>_<arch>_s<N>.cu`."""
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', kernel)}_{arch}_s{num_stages}.cu"


@dataclass
class LoweredVariant:
    kernel: str
    arch: str
    num_stages: int
    ok: bool
    error: str | None
    facts: dict[str, Any]
    path: str | None = None          # .cu findings point at (a bare name when not dumped)
    dumped: bool = False                # whether `path` is a file the user asked for
    error_kind: str | None = None    # timeout | crash | lower | ...
    cached: bool = False
    seconds: float = 0.0                # wall time of the worker (0 when cached)
    model: Any = None                   # KernelModel of the generated CUDA
    findings: list = field(default_factory=list)
    as_written: bool = False            # no num_stages parameter: lowered with the stages it is written with
    tma: dict | None = None             # the TMA pipeline of a Hopper variant (`lowering.hopper.tma_facts`)

    @property
    def filename(self) -> str:
        return variant_filename(self.kernel, self.arch, self.num_stages)

    @property
    def location_path(self) -> str:
        """Where this variant's findings point: the dumped file, else its file name."""
        return self.path or self.filename

    @property
    def pipelined_loops(self) -> list[dict]:
        return self.facts.get("pipelined_loops", []) if self.ok else []

    @property
    def versions(self) -> dict[str, int]:
        if self.model is None:
            return {}
        return {name: st.versions for name, st in self.model.stages.items()}

    @property
    def max_versions(self) -> int:
        return max(self.versions.values(), default=1 if self.model is not None else 0)

    def steady_wait(self) -> tuple[int, int] | None:
        """(N of the first cp_async_wait<N> in a steady iteration, commits per iteration)."""
        return self.model.steady_wait() if self.model is not None else None

    @property
    def in_flight(self) -> int | None:
        """Stages in flight at the steady-state wait: N // commit groups per stage."""
        w = self.steady_wait()
        return w[0] // w[1] if w else None

    @property
    def barriers_per_iteration(self) -> int | None:
        return self.model.barriers_per_iteration() if self.model is not None else None

    def ir_buffer_bytes(self) -> dict[str, int]:
        """Exact bytes of the shared buffers whose shapes the IR gave (all versions)."""
        shapes = self.facts.get("shared_shapes", {})
        sizes = {name: _ir_bytes(shapes, name) for name in shapes if "@" not in name}
        return {name: size for name, size in sizes.items() if size is not None}

    @property
    def dynamic_shared_bytes(self) -> int | None:
        """The extern (dynamic) shared buffer's size: what the launch must request."""
        return self.model.dynamic_shared_bytes(self.ir_buffer_bytes()) if self.model is not None else None

    @property
    def shared_bytes(self) -> int | None:
        """Shared memory per block: CUDA offsets, sizes from the IR's buffer shapes where known."""
        return self.model.shared_bytes(self.ir_buffer_bytes()) if self.model is not None else None


def _ir_bytes(shapes: dict, name: str) -> int | None:
    shape, elem = shapes.get(name), shapes.get(name + "@bytes")
    if not shape or not elem or any(d < 0 for d in shape):
        return None
    total = elem[0]
    for d in shape:
        total *= d
    return total
