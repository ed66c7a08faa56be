"""Work counts of an application Program, for docs/apps.md and reports: op instances, PE
operations (kernel ``Call``/``Lookup`` nodes except ``pass``) and memory loads, in total and per
output element, and the words of all non-input buffers (the storage of a schedule that keeps
every buffer whole, i.e. the sequential baseline of paper Table VII)."""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from compiler.ir import Call, Lookup, Program


@dataclass(frozen=True)
class ProgramStats:
    ops: int                # ops in the loop nest (statements)
    instances: int          # executed op instances
    pe_ops: int             # executed kernel operations (Call and Lookup nodes)
    loads: int              # executed loads
    outputs: int            # elements of all output buffers
    buffer_words: int       # elements of all temp and output buffers (fully stored)

    @property
    def pe_ops_per_output(self) -> float:
        return self.pe_ops / self.outputs

    @property
    def loads_per_output(self) -> float:
        return self.loads / self.outputs


def program_stats(prog: Program) -> ProgramStats:
    instances = pe_ops = loads = 0
    for op in prog.ops():
        n = prod(lp.extent for lp in op.loops)
        instances += n
        # a copy (kernel ``pass``) is data movement, not computation
        nodes = [e for e in op.kernel.nodes() if isinstance(e, (Call, Lookup))
                 and not (isinstance(e, Call) and e.op == "pass")]
        pe_ops += n * len(nodes)
        loads += n * len(op.loads)
    outputs = sum(prod(b.shape) for b in prog.buffers.values() if b.kind == "output")
    words = sum(prod(b.shape) for b in prog.buffers.values() if b.kind != "input")
    return ProgramStats(len(prog.ops()), instances, pe_ops, loads, outputs, words)
