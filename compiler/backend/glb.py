"""The global buffer as the host sees it (docs/top.md): which words the host loads before a
run and where it reads each output element after it, from the netlist's IO streams.

Each IO node's stream lives in its own bank (placement gives the bank: the IO tile's column
modulo the banks) at the node's :class:`~.netlist.GLBLayout`. An output element written by
several streams (an accumulator drained more than once, an output split over banks) is read
where its last write lands: the write times come from the ``f2glb`` controllers' registers
(``compiler.mapping.pub_model.decode_arrays``), as the hardware replays them.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ubgen.arch import Arch, WORD_MASK
from ubgen.glb.spec import ROW_WORDS
from ubgen.io.spec import io_layouts

from ..mapping.decode import decode_arrays
from .netlist import GLBLayout, Netlist, NetlistError


def io_fires(net: Netlist, arch: Arch, node: str) -> list[tuple[int, int]]:
    """``(cycle, offset)`` of every fire of IO node ``node``'s stream."""
    d = net.graph.nodes[node]
    cycles, addrs = decode_arrays(d["config"], io_layouts(arch)[d["stream"]])
    return list(zip(cycles.tolist(), addrs["addr"].tolist()))


def input_words(net: Netlist, inputs: dict[str, np.ndarray]) -> dict[str, dict[int, int]]:
    """Per ``glb2f`` IO node, the words of its bank the host loads: the input buffer's elements
    at the stream's layout, as 16-bit words."""
    banks = {}
    for n, d in net.graph.nodes(data=True):
        if d["kind"] != "io" or d["stream"] != "glb2f":
            continue
        lay = GLBLayout.from_dict(d["glb"])
        if lay.buffer not in inputs:
            raise NetlistError(f"no input array for buffer {lay.buffer}")
        arr = np.asarray(inputs[lay.buffer]).astype(np.int64) & WORD_MASK
        banks[n] = {lay.offset(i): int(arr[i]) for i in lay.elements()}
    return banks


def input_places(net: Netlist) -> dict[str, list[tuple[str, int, tuple]]]:
    """``{input buffer: [(IO node, offset, element), ...]}``: every word the host loads, by the
    element it holds (an element read by several streams is loaded into each)."""
    out: dict[str, list[tuple[str, int, tuple]]] = {}
    for n, d in sorted(net.graph.nodes(data=True)):
        if d["kind"] != "io" or d["stream"] != "glb2f":
            continue
        lay = GLBLayout.from_dict(d["glb"])
        out.setdefault(lay.buffer, []).extend((n, lay.offset(i), tuple(i))
                                              for i in lay.elements())
    return out


def output_places(net: Netlist, arch: Arch) -> dict[str, dict[tuple, tuple[str, int]]]:
    """``{output buffer: {element: (IO node, offset)}}``: where each output element's last
    write lands."""
    latest: dict[str, dict[tuple, tuple[int, str, int]]] = {}
    for n, d in sorted(net.graph.nodes(data=True)):
        if d["kind"] != "io" or d["stream"] != "f2glb":
            continue
        lay = GLBLayout.from_dict(d["glb"])
        elems = _elements(lay)
        place = latest.setdefault(lay.buffer, {})
        for c, off in io_fires(net, arch, n):
            e = elems.get(off)
            if e is not None and (e not in place or place[e][0] < c):
                place[e] = (c, n, off)
    return {b: {e: (n, off) for e, (_c, n, off) in p.items()} for b, p in latest.items()}


def _elements(lay: GLBLayout) -> dict[int, tuple]:
    return _elements_cached(lay.buffer, lay.lows, lay.steps, lay.extents, lay.base)


@lru_cache(maxsize=64)
def _elements_cached(buffer, lows, steps, extents, base) -> dict[int, tuple]:
    lay = GLBLayout(buffer, lows, steps, extents, base)
    return {lay.offset(i): i for i in lay.elements()}


def output_writes(net: Netlist, arch: Arch) -> int:
    """How many GLB writes the array performs (every ``f2glb`` fire)."""
    return sum(len(io_fires(net, arch, n)) for n in net.nodes("io")
               if net.graph.nodes[n]["stream"] == "f2glb")


def double_buffer(net: Netlist, arch: Arch, io_banks: dict[str, dict], index) -> dict:
    """Whether the global buffer holds two data regions per stream, so the host can load the
    next tile and read back the previous one while a run goes on (``cgra_top``'s ``SHARE``
    register, docs/top.md "Sharing the global buffer"; docs/simulation.md "Overlapped runs").

    Region 0 is where the netlist's IO streams put their words (every fire's offset, decoded
    from the ``glb2f`` / ``f2glb`` controllers as the hardware replays them); region 1 is the
    same words ``delta`` further into the bank (the region's span rounded up to whole rows).
    It holds when every bank's streams are all inputs or all outputs (a host write takes the
    bank's write port, which an output stream uses; a read the read port, which an input
    stream uses) and both regions fit the bank. ``io_banks`` is the placement's
    ``{io node: {"bank", "tile_id"}}`` (``PnRResult.io_banks``), ``index`` the array's
    :class:`~.bitstream.RegisterIndex`.

    Returns ``{"overlap": bool, "why": one line, "bank_words", "delta": {bank: words}, "registers":
    [[byte address, region 0 value, region 1 value], ...]}``: the IO tiles' ``addr_start``
    registers, the only configuration words that differ between the regions."""
    words = arch.glb.bank_words
    span: dict[int, list[int]] = {}
    kinds: dict[int, set[str]] = {}
    for n in sorted(net.nodes("io")):
        d, bank = net.graph.nodes[n], io_banks[n]["bank"]
        offs = [off for _c, off in io_fires(net, arch, n)]
        if not offs:
            continue
        lo, hi = span.setdefault(bank, [min(offs), max(offs)])
        span[bank] = [min(lo, *offs), max(hi, *offs)]
        kinds.setdefault(bank, set()).add(d["stream"])
    no = {"overlap": False, "bank_words": words, "delta": {}, "registers": []}
    mixed = sorted(b for b, k in kinds.items() if len(k) > 1)
    if mixed:
        return {**no, "why": f"bank {mixed[0]} holds an input and an output stream (the host's "
                             f"load would take the port the run uses)"}
    delta = {}
    for b, (lo, hi) in sorted(span.items()):
        delta[b] = -(-(hi - lo + 1) // ROW_WORDS) * ROW_WORDS
        if hi + delta[b] >= words:
            return {**no, "why": f"bank {b}'s streams use words {lo}..{hi}: two regions need "
                                 f"{hi + delta[b] + 1} of its {words} words"}
    regs = []
    for n in sorted(net.nodes("io")):
        d, bank = net.graph.nodes[n], io_banks[n]["bank"]
        if bank not in delta:
            continue
        name = f"{d['stream']}_addr_start"
        v0 = int(d["config"][name])
        regs.append([index.address(io_banks[n]["tile_id"], name), v0, v0 + delta[bank]])
    ins = sorted(b for b, k in kinds.items() if k == {"glb2f"})
    outs = sorted(b for b, k in kinds.items() if k == {"f2glb"})
    return {"overlap": True, "bank_words": words, "delta": {str(b): v for b, v in delta.items()}, "registers": regs,
            "why": f"two regions in each stream's bank (inputs in banks {ins}, outputs in "
                   f"{outs}; largest span {max(delta.values())} of {words} words)"}
