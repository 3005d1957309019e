"""Kernel model: shared buffers, pipelined loops, async ops, barriers, roles."""
from .kernel import BufferStages, KernelModel
from .shared import MBarrierArray, SharedBuffer
from .trace import Event, Role

__all__ = ["BufferStages", "Event", "KernelModel", "MBarrierArray", "Role", "SharedBuffer"]
