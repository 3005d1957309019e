"""CUDA front end: Lark grammar, light AST, `#line` map."""
from .parser import CudaSyntaxError, ParsedFile, parse, parse_file

__all__ = ["CudaSyntaxError", "ParsedFile", "parse", "parse_file"]
