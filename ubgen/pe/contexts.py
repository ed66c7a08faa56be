"""PE input contexts (docs/pe.md "Input contexts for shared compute"), as data: Amaranth-free,
read by the tile spec, the RTL, the routing graph and the compiler alike (docs/design.md §2).

Compute sharing (thesis §4.3.3, §7.3.1) runs several ops of one loop nest on one set of PEs at
disjoint cycles. The PEs compute the same kernel for each op; only where the operands come from
changes. A PE tile with ``K`` input contexts (``[array] pe_contexts = K``, default 1: none) has,
for every routed core input ``p`` and every context ``k = 1 .. K-1``, a second connection-box
select register ``cb_<p>_c<k>_sel``, and ``K - 1`` routed 1-bit inputs ``ctx1 .. ctx<K-1>``
(each with its own connection box). In every cycle the connection box of ``p`` uses

* the select of the lowest ``k`` whose ``ctx<k>`` is 1 and whose ``cb_<p>_c<k>_sel`` is not 0,
* else its own ``cb_<p>_sel`` (context 0),

so a context without a source of its own for ``p`` reads what context 0 reads. The compiler
drives ``ctx<k>`` from a schedule generator that is 1 exactly at the cycles op ``k`` of the unit
samples its operands (thesis Table 7.7's bank-selection controllers). For routing and
configuration a context source is an input port of its own, ``<p>_c<k>`` (:func:`context_port`):
it has a routing-graph sink, a connection-box select register and netlist edges, so place and
route, the bitstream assembler and the bitstream checker treat it like any other input; only
the tile's RTL folds it into ``p``'s connection box. The core (ALU, constants, output register)
is unchanged.
"""
from __future__ import annotations

import re
from typing import Sequence

__all__ = ["MAX_CONTEXTS", "context_port", "ctx_port", "context_ports", "split_port",
           "effective_context", "effective_select"]

MAX_CONTEXTS = 8
_CONTEXT = re.compile(r"^(?P<port>\w+?)_c(?P<k>[1-9]\d*)$")


def context_port(port: str, k: int) -> str:
    """The routed source of core input ``port`` in context ``k`` (``port`` itself for 0)."""
    return port if k == 0 else f"{port}_c{k}"


def ctx_port(k: int) -> str:
    """The 1-bit input that selects context ``k >= 1``."""
    return f"ctx{k}"


def context_ports(core_ports: dict, contexts: int) -> dict:
    """The extra routed inputs of a PE tile with ``contexts`` input contexts, in register-map
    order: ``<p>_c<k>`` for ``k = 1 .. contexts-1`` and every core input ``p``, then
    ``ctx1 .. ctx<contexts-1>``. ``{}`` for one context."""
    if not 1 <= contexts <= MAX_CONTEXTS:
        raise ValueError(f"pe_contexts must be between 1 and {MAX_CONTEXTS}, got {contexts}")
    inputs = [(p, w) for p, (d, w) in core_ports.items() if d == "in"]
    out = {context_port(p, k): ("in", w) for k in range(1, contexts) for p, w in inputs}
    out.update({ctx_port(k): ("in", 1) for k in range(1, contexts)})
    return out


def split_port(name: str) -> tuple[str, int]:
    """``(core input, context)`` of a routed input name: ``data0_c2`` -> ``("data0", 2)``,
    ``data0`` -> ``("data0", 0)``."""
    m = _CONTEXT.match(name)
    return (m["port"], int(m["k"])) if m else (name, 0)


def effective_context(ctx_bits: Sequence[int], has_source: Sequence[bool]) -> int:
    """The context whose source a connection box uses (module docstring): the lowest ``k >= 1``
    with ``ctx_bits[k-1]`` set and ``has_source[k]`` (a non-zero select), else 0.
    ``has_source[0]`` is ignored."""
    for k in range(1, len(has_source)):
        if k - 1 < len(ctx_bits) and ctx_bits[k - 1] and has_source[k]:
            return k
    return 0


def effective_select(sels: Sequence[int], ctx_bits: Sequence[int]) -> int:
    """The select value a connection box with context selects ``sels`` (``sels[0]`` its own)
    uses for the context bits ``ctx_bits`` (``ctx1`` first)."""
    return sels[effective_context(ctx_bits, [s != 0 for s in sels])]
