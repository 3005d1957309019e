"""Lark grammars shipped with pipelint (`cuda.lark`)."""
