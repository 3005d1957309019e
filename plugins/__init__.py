"""Built-in pipelint checks (one module per check) and the GPU bench plugin."""
