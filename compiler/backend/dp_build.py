"""Netlist nodes of the dual-port SRAM memories (:class:`~compiler.ir.ubimpl.DPBlock`; thesis
Table 6.1 and §6.3), for the two dual-port MEM tiles ``[mem] kind`` selects
(``ubgen.mem.dp_spec``):

* ``dp`` (DP-SRAM + AG): one MEM node per tile of the block with the block's ``wr``/``rd``
  registers (:meth:`DPBlock.registers`), chained tiles linked ``data_out0 -> chain_in0`` and
  ``valid_out0 -> chain_valid_in0``; the last tile's ``data_out0`` is the read stream;
* ``dp-pe`` (plain dual-port SRAM): one MEM node with no registers, and the write and read
  controllers built from PEs (:func:`.pe_controllers.synthesize`) driving its ``wen``/``waddr``
  and ``ren``/``raddr`` ports with latency-0 edges. A chain would need the tile selection in
  PEs too; a block that needs more than one tile is refused.

Timing is the tile's (docs/pub.md "DP-SRAM + AG"): the ``rd`` stream fires a cycle before each
read, so ``data_out0`` carries stream cycle ``t`` at ``t`` (offset 0), and ``data_in0`` is
sampled at the write's landing cycle (needed 0), like a PUB's ports.
"""
from __future__ import annotations

from ubgen.arch import WORD_WIDTH

from ..ir.ubimpl import DPBlock
from .netlist import NetlistError
from .pe_controllers import PEControllerError, synthesize
from .sources import Source

__all__ = ["add_dp_block", "dp_pe_controllers"]


def add_dp_block(builder, B: str, block: DPBlock, base: str) -> None:
    """Add ``block`` of buffer ``B`` to ``builder`` (:class:`.build.NetlistBuilder`): its nodes, its
    input demand and its output stream's source (module docstring)."""
    kind = builder.arch.mem.kind
    if kind == "dp":
        tiles = []
        for t, regs in enumerate(block.registers()):
            name = base + (f".t{t}" if block.tiles > 1 else "")
            builder.net.add_node(name, "mem", regs, label=f"{B}: {block.name} (DP-SRAM + AG)"
                                 + (f" tile {t}/{block.tiles}" if block.tiles > 1 else ""),
                                 buffer=B, op=None,
                                 chain=(base, t) if block.tiles > 1 else None)
            builder.demand((B, block.inputs[0]), name, "data_in0", 0)
            tiles.append(name)
        for a, b in zip(tiles, tiles[1:]):
            builder.net.add_edge(a, "data_out0", b, "chain_in0", 0)
            builder.net.add_edge(a, "valid_out0", b, "chain_valid_in0", 0, width=1)
        last = tiles[-1]
    elif kind == "dp-pe":
        if block.tiles > 1:
            raise NetlistError(f"buffer {B}: memory {block.name} needs {block.tiles} chained "
                               f"dual-port SRAMs; the PE-built controllers do not select "
                               f"chained tiles (a DP-SRAM holds {block.params.sram_depth} words)")
        last = base
        builder.net.add_node(base, "mem", {}, label=f"{B}: {block.name} (DP-SRAM)", buffer=B,
                             op=None)
        builder.demand((B, block.inputs[0]), base, "data_in0", 0)
        for port, (en, addr) in (("wr", ("wen", "waddr")), ("rd", ("ren", "raddr"))):
            ctl = _synthesize(block, port, f"{base}.{port}", B)
            for n in ctl.nodes:
                builder.net.add_node(n.name, "pe", n.config(), label=n.label, buffer=B, op=None)
            for e in ctl.edges:
                builder.net.add_edge(e.src, e.src_port, e.dst, e.dst_port, 0, e.width)
            builder.net.add_edge(*ctl.fire, base, en, 0, width=1)
            builder.net.add_edge(*ctl.addr, base, addr, 0, WORD_WIDTH)
    else:
        raise NetlistError(f"buffer {B}: memory {block.name} is a dual-port SRAM block, but the "
                           f"arch's MEM tile is a {kind}")
    builder.streams[(B, block.outputs[0])] = Source(last, "data_out0", 0)
    builder.valids[(B, block.outputs[0])] = Source(last, "valid_out0", 0, 1)


def _synthesize(block: DPBlock, port: str, name: str, B: str):
    what = f"memory {block.name} {'write' if port == 'wr' else 'read'} controller"
    try:
        return synthesize(block.configs[port], name, what)
    except PEControllerError as e:
        raise NetlistError(f"buffer {B}: {e}") from None


def dp_pe_controllers(block: DPBlock, B: str) -> int:
    """PEs of the two controllers of ``block`` on the ``dp-pe`` tile (thesis Table 7.5's "extra
    PE for AGEN"); raises a one-line :class:`NetlistError` for a stream they cannot express."""
    return sum(len(_synthesize(block, port, f"{B}.{port}", B).nodes) for port in ("wr", "rd"))
