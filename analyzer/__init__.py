"""pipelint: a static analyzer for the software pipelines in TileLang's CUDA."""
import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("pipelint")

__all__ = ["__version__", "hookimpl"]
