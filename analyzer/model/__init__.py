"""Kernel model: shared buffers, pipelined loops, async ops, barriers, roles."""
from .analysed import KernelModel
from .intrinsics import EventKind
from .kernel import BufferStages
from .shared import MBarrierArray, SharedBuffer
from .trace import Event, Role

__all__ = ["BufferStages", "Event", "EventKind", "KernelModel", "MBarrierArray", "Role", "SharedBuffer"]
