"""``map_buffer(ub, arch) -> UBImpl``: the buffer-mapping passes in order (thesis ch. 5, §5.7).

1. dependence distances (:mod:`.dependence`) and the shift-register tree (:mod:`.shift_register`):
   output ports at a constant distance from an input port become wires, register chains and
   delay memories (a delay memory is a small unified buffer: the input port and the same stream
   ``delay`` cycles later, thesis Fig. 5.5 **MEM**, addressed in stream order,
   :func:`.linearize.stream_layout`);
2. output-port sharing (:mod:`.port_sharing`) among the remaining output ports;
3. banking (:mod:`.banking`) of the ports that still read memory, then bank merging
   (:mod:`.merge`) with the delay memories, up to the PUB's port counts; when a port still
   spans several banks, it is split by writer and rebuilt by a bank select
   (:mod:`.bank_select`, the fallback after duplication);
4. per memory block: linearization with circular-buffer modulo (:mod:`.block_layout`; an outer
   tile loop that rewrites the same addresses is an extra address dimension), chaining by
   capacity (:mod:`.chaining`), vectorization and AGG/SRAM/TB scheduling (:mod:`.vectorize`);
5. the memory level (:mod:`.hierarchy`); a bank of at most ``threshold`` words becomes a
   register file (:mod:`.registers`) instead of a memory tile.

The memory the blocks go to is the arch's MEM tile (``[mem] kind``, thesis Table 6.1 / §6.3):
the PUB (two write and two read ports, step 4 above), or a dual-port SRAM (``dp``: DP-SRAM +
AG, ``dp-pe``: DP-SRAM whose controllers are PEs): one writer and one reader per memory for
banking and merging, no register files, and :func:`.dp_block.build_dp` instead of step 4.
"""
from __future__ import annotations

from ubgen.arch import Arch, PUBParams, load_arch
from ubgen.controller import AffineMap, ControllerConfig

from ..ir.ubimpl import PUBBlock, ShiftRegister, UBImpl
from ..ir.ubuf import UnifiedBuffer
from .bank_select import SpansBanks, split_by_writer
from .banking import bank_buffer, choose_banking
from .block_layout import layout_candidates
from .common import MappingError, NotWideWord, SramConflict, shifted_port
from .dependence import constant_distances
from .diagnose import order_hint
from .hierarchy import host_level, select_level
from .lane_banking import bank_lanes, choose_lane_banking
from .dp_block import build_dp
from .linearize import stream_layout
from .merge import merge_banks
from .port_sharing import share_output_ports
from .registers import register_file
from .shift_register import DEFAULT_THRESHOLD, delay_tree
from .vectorize import WordStream, pub_configs


def _arch(arch: Arch | str) -> Arch:
    return arch if isinstance(arch, Arch) else load_arch(arch)


def build_pub(bank: UnifiedBuffer, pub: PUBParams, buffer: str) -> PUBBlock:
    """Linearize, chain and vectorize one memory block (one PUB or one chain of PUBs).

    A tile loop that rewrites the same addresses can be an extra address dimension
    (:func:`.block_layout._tile_versioned`), which lets the writes advance and the block be circular
    (brighten_blur's 16 tiles in one line buffer); when it needs more chained tiles than the
    plain layout (resnet 16/16's ``in_mem``: the versions double a block that is live as a
    whole), the plain layout is used. Each layout is valid on its own: the value flow is the
    unified buffer's (a double-buffered buffer carries its storage copy as an index), and
    :func:`.vectorize.late_reads` proves no word is overwritten before its fetch."""
    cands, errors = layout_candidates(bank, pub, buffer)
    for c in cands:
        wrap = (pub.sram_depth if c.chain.tiles == 1
                else 1 << (pub.sram_addr_width + pub.chain_bits))
        try:
            cfgs = pub_configs(c.words[:c.n_in], c.words[c.n_in:], pub, buffer,
                               sram_wrap=wrap)
        except MappingError as e:
            errors.append(e)
            continue
        words = c.circ or c.max_addr + 1
        dp = [_element_config(w, words) for w in c.words]
        return PUBBlock(bank.name, buffer, [p.name for p in bank.inputs],
                        [p.name for p in bank.outputs], cfgs, c.chain.tiles,
                        capacity_words=c.circ or 0,
                        sram_words=min(c.circ or c.max_addr + 1, c.max_addr + 1),
                        writes=dp[:c.n_in], reads=dp[c.n_in:], words=words)
    raise errors[0]


def _element_config(ws: WordStream, words: int) -> ControllerConfig:
    """One port of a memory block word by word (:attr:`PUBBlock.writes` / ``reads``): its
    cycles, its linear address modulo ``words`` (``addr``, for a dual-port memory: thesis
    Table 6.1, DP-SRAM + AG; §6.1.1) and the element's unreduced linear address (``elem``, the
    element's identity for checks; not a hardware address)."""
    a, e = ws.addr, ws.element
    return ControllerConfig(ws.extents, AffineMap(ws.time.start, ws.time.strides),
                            {"addr": AffineMap(a.start % words, a.strides),
                             "elem": AffineMap(e.start, e.strides)})


def map_buffer(ub: UnifiedBuffer, arch: Arch | str,
               threshold: int = DEFAULT_THRESHOLD, level: str | None = None) -> UBImpl:
    """Map one unified buffer onto shift registers and PUBs of ``arch``; a buffer that cannot
    be mapped raises a one-line :class:`MappingError` starting ``buffer <name>:``."""
    try:
        try:
            try:
                return _map_buffer(ub, _arch(arch), threshold, level)
            except SramConflict as conflict:
                return _bank_per_reader(ub, _arch(arch), threshold, level, conflict)
        except SpansBanks:
            # §5.1.4 first (ports reading the same stream share one select), then split the
            # remaining ports by writer (:mod:`.bank_select`)
            shares = [s for s in share_output_ports(ub, [p.name for p in ub.outputs])
                      if s.delay <= threshold]
            split = split_by_writer(ub, {s.follower for s in shares})
            if split is None:
                raise
            impl = _map_buffer(split[0], _arch(arch), threshold, level)
            impl.outputs = [p.name for p in ub.outputs]
            impl.selects = split[1]
            impl.shift_registers += [ShiftRegister(s.leader, s.follower, s.delay)
                                     for s in shares]
            impl.connections = {p.name: p.name for p in ub.outputs}
            impl.notes.append(f"{len(split[1])} ports split over banks by writer (bank select)")
            return impl
    except MappingError as e:
        if str(e).startswith(f"buffer {ub.name}:"):
            raise
        raise MappingError(f"buffer {ub.name}: {e}") from None


def _bank_per_reader(ub: UnifiedBuffer, arch: Arch, threshold: int, level: str | None,
                     conflict: SramConflict) -> UBImpl:
    """§5.2: readers of one block that need its single SRAM port in the same cycles (each
    holding its TB word until the next fetch) get a bank each. When that does not map either,
    the conflict is the buffer's error (what the retry ran into is a consequence of it)."""
    try:
        impl = _map_buffer(ub, arch, threshold, level, read_ports=1)
    except SpansBanks:
        raise
    except MappingError:
        raise conflict from None
    impl.notes.append("one bank per reader: the readers' fetches conflict on one "
                      "single-port SRAM (thesis §5.2)")
    return impl


def memory_ports(arch: Arch) -> tuple[int, int]:
    """``(write ports, read ports)`` of one memory of the arch's MEM tile (``[mem] kind``)."""
    if arch.mem.kind == "pub":
        return arch.pub.input_ports, arch.pub.output_ports
    return 1, 1


def _map_buffer(ub: UnifiedBuffer, arch: Arch, threshold: int, level: str | None,
                read_ports: int | None = None) -> UBImpl:
    """The passes of the module docstring on one buffer (the bank-select fallback is
    :func:`map_buffer`'s); ``read_ports``: the concurrent readers a bank may have (default:
    the PUB's output ports; 1 when two readers cannot share a PUB's SRAM)."""
    impl = UBImpl(ub.name, "GLB", [p.name for p in ub.inputs], [p.name for p in ub.outputs])
    if _served_by_glb(ub, impl, level):
        return impl
    dist = constant_distances(ub)
    delay_banks = _delay_lines(ub, dist, threshold, impl)
    rest = [p.name for p in ub.outputs if p.name not in dist]
    shares = [s for s in share_output_ports(ub, rest) if s.delay <= threshold]
    for s in shares:
        impl.shift_registers.append(ShiftRegister(s.leader, s.follower, s.delay))
    followers = {s.follower for s in shares}
    leaders = [p for p in ub.outputs if p.name in rest and p.name not in followers]
    ports = memory_ports(arch)
    bank_ports = (ports[0], read_ports or ports[1])
    banks, copies = _bank_leaders(ub, leaders, bank_ports, impl) if leaders else ([], set())
    blocks = merge_banks(delay_banks + banks, ports[1], ports[0])
    _map_blocks(ub, blocks, copies, arch, threshold, level, impl)
    if accumulates_on_chip(ub):
        # the values live on the array; the writes also stream to the GLB (the host's copy)
        impl.level = select_level(ub.name, "temp", len(impl.blocks), level)
        impl.notes.append("output read on the array (an accumulator): held on chip, every "
                          "write also streamed to the global buffer")
    else:
        impl.level = select_level(ub.name, ub.kind, len(impl.blocks), level)
    impl.connections = {p.name: p.name for p in ub.outputs}
    return impl


def _served_by_glb(ub: UnifiedBuffer, impl: UBImpl, level: str | None) -> bool:
    """A host buffer (not an on-chip accumulator), a buffer stored in the GLB, or one with no
    writer or no reader on the array: served by the global buffer through IO streams (§5.4);
    sets ``impl``'s level. ``store_in GLB`` on an accumulator is an error."""
    if accumulates_on_chip(ub) and level == "GLB":
        raise MappingError(f"buffer {ub.name}: store_in GLB cannot be honoured: the output is "
                           f"read on the array (an accumulator), so its values are held on "
                           f"chip; use MEM or REG")
    if not ((host_level(ub.kind) and not accumulates_on_chip(ub)) or level == "GLB"
            or not ub.inputs or not ub.outputs):
        return False
    impl.level = select_level(ub.name, ub.kind, 0, level) if level != "GLB" else "GLB"
    if not host_level(ub.kind) and (not ub.inputs or not ub.outputs):
        impl.level = "GLB"
    impl.notes.append("served by the global buffer through IO streams")
    return True


def _delay_lines(ub: UnifiedBuffer, dist, threshold: int, impl: UBImpl) -> list[UnifiedBuffer]:
    """The shift-register tree of every input port (§5.1.2-5.1.3): short delays become register
    chains in ``impl``, long ones delay memories, returned as small unified buffers (the
    stream and itself ``delay`` cycles later)."""
    delay_banks: list[UnifiedBuffer] = []
    for pin in ub.inputs:
        taps = {d.pout: d.delay for d in dist.values() if d.pin == pin.name}
        for seg in delay_tree(pin.name, taps, threshold):
            if seg.kind == "memory":
                fifo = stream_layout(pin)          # §5.6: a delay line's layout is its stream
                delay_banks.append(UnifiedBuffer(
                    f"{ub.name}_d{seg.delay}", None, ub.kind, ub.type,
                    [fifo, shifted_port(fifo, seg.dst, seg.delay)]))
            else:
                impl.shift_registers.append(ShiftRegister(seg.src, seg.dst, seg.delay))
    return delay_banks


def _bank_leaders(ub: UnifiedBuffer, leaders, ports: tuple[int, int], impl: UBImpl):
    """Banking of the output ports that still read memory (§5.2; the isomorphic lanes of
    §4.3.2 when duplication would take every writer) for memories of ``ports`` = (write,
    read) ports: ``(banks, names of the full copies duplication made)``. Raises
    :class:`SpansBanks` when a port reads more than one bank."""
    copies: set[str] = set()
    n_in, n_out = ports
    banking = choose_banking(ub, leaders, n_out, n_in)
    lane = None
    if banking.duplicated and len(ub.inputs) > n_in:
        # copies would take every writer: bank the isomorphic lanes instead (§4.3.2)
        lane = choose_lane_banking(ub, leaders, n_out, n_in)
    if lane is not None:
        banking = lane
        banks, selects = bank_lanes(ub, leaders, banking)
        impl.selects += selects
    else:
        banks = bank_buffer(ub, leaders, banking)
    selected = {s.dst for s in impl.selects}
    for p in leaders:
        n = sum(any(q.name == p.name for q in b.outputs) for b in banks)
        if n != 1 and p.name not in selected:
            raise SpansBanks(f"buffer {ub.name}: output {p.name} reads {n} banks; "
                             f"a port must stay within one bank")
    if banking.duplicated:
        copies = {b.name for b in banks}
    if banking.banks > 1 or banking.duplicated:
        impl.notes.append(f"banking factors {list(banking.factors)}"
                          + (" (duplicated)" if banking.duplicated else ""))
    return banks, copies


def _map_blocks(ub: UnifiedBuffer, blocks, copies: set[str], arch: Arch, threshold: int,
                level: str | None, impl: UBImpl) -> None:
    """Every merged memory block into ``impl``: a register file when small enough (§5.4, PUB
    tiles only), else a PUB (linearization, chaining, vectorization) or a dual-port SRAM
    (:func:`.dp_block.build_dp`)."""
    pub, kind = arch.pub, arch.mem.kind
    n_in = memory_ports(arch)[0]
    for b in blocks:
        # §5.4: a bank of at most `threshold` words lives in registers (a MEM tile's register
        # file, so no more words than it has), not in a memory tile's SRAM
        rf = (register_file(b, ub.name, min(threshold, arch.mem.rf_words))
              if level != "MEM" and kind == "pub" else None)
        if rf is not None:
            impl.register_files.append(rf)
            continue
        if b.name in copies and len(b.inputs) > n_in:
            # §5.2.2: every copy takes every writer
            raise MappingError(f"buffer {ub.name}: its reads conflict in every bank of the "
                               f"GCD banking and duplication cannot solve it: each copy needs "
                               f"all {len(b.inputs)} writers, "
                               + (f"a PUB has {n_in} input ports" if kind == "pub" else
                                  "a dual-port SRAM has one write port"))
        if kind == "pub":
            _pub_or_register_file(ub, b, arch, level, impl)
        else:
            impl.dps.append(build_dp(b, arch.dpbuf, ub.name))
    if level == "MEM" and not impl.blocks:
        raise MappingError(f"buffer {ub.name}: store_in MEM cannot be honoured: every read is "
                           f"served by wires and shift registers (delays <= {threshold}), "
                           f"nothing is left to keep in a memory tile")


def _pub_or_register_file(ub: UnifiedBuffer, b: UnifiedBuffer, arch: Arch, level: str | None,
                          impl: UBImpl) -> None:
    """Block ``b`` as a PUB; when its streams do not fill or fetch whole wide words
    (:class:`.common.NotWideWord`: an accumulator read and rewritten at one address after
    another, §5.5.1) and it fits a MEM tile's register file (``rf_words``), a register file
    instead (§5.4: any address every cycle), with a note; otherwise the PUB's refusal stands."""
    try:
        impl.pubs.append(build_pub(b, arch.pub, ub.name))
    except NotWideWord as e:
        rf = register_file(b, ub.name, arch.mem.rf_words) if level != "MEM" else None
        if rf is None:
            raise
        impl.register_files.append(rf)
        impl.notes.append(f"{b.name}: a register file of {rf.words} words, its streams not "
                          f"being wide-word streams for a PUB ({str(e).split(':')[0]})")


def accumulates_on_chip(ub: UnifiedBuffer) -> bool:
    """An output buffer that ops also read (a reduction updating the output in place): its
    values are held on the array between the writes and the reads, so it is mapped like a
    temporary buffer (thesis §5.4) and its writes stream to the global buffer as well."""
    return ub.kind == "output" and bool(ub.inputs) and bool(ub.outputs)


def map_buffers(buffers: dict[str, UnifiedBuffer], arch: Arch | str,
                threshold: int = DEFAULT_THRESHOLD, levels: dict[str, str] | None = None,
                errors: dict[str, MappingError] | None = None
                ) -> tuple[dict[str, UBImpl], dict[str, str]]:
    """Map every unified buffer of an application. Returns the implementations and, for the
    buffers the passes refuse, the one-line reason (:class:`MappingError`; ``errors``, when
    given, receives the exceptions themselves)."""
    arch = _arch(arch)
    impls, refused = {}, {}
    for name, ub in buffers.items():
        try:
            impls[name] = map_buffer(ub, arch, threshold, (levels or {}).get(name))
        except MappingError as e:
            if errors is not None:
                errors[name] = e
            hint = order_hint(ub)
            refused[name] = f"{e} ({hint})" if hint else str(e)
    return impls, refused
