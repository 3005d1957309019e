"""Imported once by the forkserver of the server's analysis processes (`cudajob`): the plugins
loaded and the CUDA grammar built there, so that each forked job starts with both ready instead
of spending most of a small buffer's second on them."""
from __future__ import annotations

from ..cuda import parse
from ..pluginhost import PluginHost, load_plugins

HOST: PluginHost = load_plugins()
parse("__global__ void warm_up() {}\n")
