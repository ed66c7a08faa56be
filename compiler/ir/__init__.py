"""Typed, printable, JSON-serializable IRs of the compiler pipeline (docs/design.md §3)."""
from .types import IntType, u16, s16, u1
from .expr import (Expr, Arg, Const, Call, Lookup, LoopPhase, select, minimum, maximum, absd,
                   Kernel)
from .index import Index, IndexError_, var, parse_index
from .program import Program, Loop, Op, Access, BufferDecl, ProgramError, ProgramWarning

__all__ = ["IntType", "u16", "s16", "u1", "Expr", "Arg", "Const", "Call", "Lookup", "LoopPhase",
           "select", "minimum", "maximum", "absd", "Kernel", "Index", "IndexError_", "var",
           "parse_index", "Program", "Loop", "Op", "Access", "BufferDecl", "ProgramError",
           "ProgramWarning"]
