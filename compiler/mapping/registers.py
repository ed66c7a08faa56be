"""The register level of the memory hierarchy (thesis §5.4, §6.2; §5.1.2 threshold).

After banking and bank merging, a bank whose data fits in a handful of words does not need a
memory tile: a weight read at every pixel (mobilenet's ``w_dw_mem`` after full partitioning) is
one word, and the thesis replaces buffers "having fewer than 20 words" by registers (§7.3,
Fig. 7.5; the shift-register threshold of §5.1.2, default 20). Such a bank becomes a
:class:`~compiler.ir.ubimpl.RegisterFile`: the bank's addresses are linearized densely (row-major
over the address box of its ports, §5.6 without fetch-width padding), and every port keeps its
own affine controller (docs/design.md §4) whose single address generator ``addr`` picks the register.

:func:`register_file` returns ``None`` for a bank above the limit (it stays a memory tile) and
raises :class:`MappingError` only for a port no controller can drive.

The hardware block is the register file of a MEM tile (docs/mem_rf.md, ``ubgen.mem.spec``):
:func:`pack_register_files` places banks into tiles (:class:`RFTile`) and
:func:`rf_tile_registers` encodes one tile with ubgen's exported layouts and register map.
"""
from __future__ import annotations

from dataclasses import dataclass

from ubgen.arch import MemParams, PUBParams
from ubgen.controller import AffineMap, ControllerConfig, EncodeError, iterate
from ubgen.mem.spec import encode_rf_ports, mem_regmap

from ..ir.ubimpl import RegisterFile, RegisterWidthError
from ..ir.ubuf import UnifiedBuffer
from .common import Affine, MappingError, Stream, port_stream
from .linearize import box_layout, linear
from .shift_register import DEFAULT_THRESHOLD


def _config(s: Stream, addr: Affine) -> ControllerConfig:
    keep = [d for d, e in enumerate(s.extents) if e > 1] or [0]
    pick = lambda a: AffineMap(a.start, tuple(a.strides[d] for d in keep))   # noqa: E731
    return ControllerConfig(tuple(s.extents[d] for d in keep), pick(s.time),
                            {"addr": pick(addr)})


def register_file(bank: UnifiedBuffer, buffer: str,
                  max_words: int = DEFAULT_THRESHOLD) -> RegisterFile | None:
    """The bank as a register file when it needs at most ``max_words`` registers, else None."""
    if max_words < 1 or not bank.inputs or not bank.outputs:
        return None
    ins = [port_stream(p) for p in bank.inputs]
    outs = [port_stream(p) for p in bank.outputs]
    lows, offsets, words = box_layout(ins + outs)
    if words > max_words:
        return None
    return RegisterFile(bank.name, buffer, words, [p.name for p in bank.inputs],
                        [p.name for p in bank.outputs],
                        [_config(s, linear(s.addr, offsets, lows, len(s.extents))) for s in ins],
                        [_config(s, linear(s.addr, offsets, lows, len(s.extents))) for s in outs])


@dataclass
class RFTile:
    """Register-file banks sharing one MEM tile's register file: in order, each bank takes the
    next ``rf_write`` ports (one per input), the next ``rf_read`` ports (one per output) and the
    next ``words`` words (its ``base``). Two one-writer one-reader banks: bank ``k`` on
    ``rf_write_k``/``rf_read_k``, bank 0 at word 0, bank 1 right after it."""
    banks: list[RegisterFile]

    @property
    def name(self) -> str:
        return "+".join(b.name for b in self.banks)

    @property
    def inputs(self) -> list[str]:
        """The node feeding ``data_in[p]``."""
        return [n for b in self.banks for n in b.inputs]

    @property
    def outputs(self) -> list[str]:
        """The node of ``data_out[q]``."""
        return [n for b in self.banks for n in b.outputs]

    @property
    def bases(self) -> list[int]:
        out, base = [], 0
        for b in self.banks:
            out.append(base)
            base += b.words
        return out


def _fits(banks: list[RegisterFile], params: PUBParams, mem: MemParams) -> bool:
    return (sum(b.words for b in banks) <= mem.rf_words
            and sum(len(b.inputs) for b in banks) <= params.input_ports
            and sum(len(b.outputs) for b in banks) <= params.output_ports)


def rf_tile(banks: list[RegisterFile], params: PUBParams, mem: MemParams) -> RFTile:
    """The banks in one tile's register file, or a one-line :class:`MappingError` naming the
    buffer when they need more words or ports than it has."""
    names = ", ".join(b.name for b in banks)
    buffer = banks[0].buffer if banks else "?"
    if not banks or any(not b.inputs or not b.outputs for b in banks):
        raise MappingError(f"buffer {buffer}: register-file bank(s) {names or '(none)'} need "
                           f"a writer and a reader each")
    if not _fits(banks, params, mem):
        raise MappingError(
            f"buffer {buffer}: register-file bank(s) {names} need "
            f"{sum(b.words for b in banks)} words, {sum(len(b.inputs) for b in banks)} write "
            f"and {sum(len(b.outputs) for b in banks)} read ports; a MEM tile's register file "
            f"has {mem.rf_words} words, {params.input_ports} write and {params.output_ports} "
            f"read ports: a lower --threshold keeps the bank in a memory tile instead")
    return RFTile(list(banks))


def pack_register_files(rfs: list[RegisterFile], params: PUBParams,
                        mem: MemParams) -> list[RFTile]:
    """Place banks into MEM tiles' register files, first fit in order (each bank alone must
    fit, see :func:`rf_tile`)."""
    tiles: list[list[RegisterFile]] = []
    for rf in rfs:
        rf_tile([rf], params, mem)
        for t in tiles:
            if _fits(t + [rf], params, mem):
                t.append(rf)
                break
        else:
            tiles.append([rf])
    return [RFTile(t) for t in tiles]


def _based(cfg: ControllerConfig, base: int) -> ControllerConfig:
    a = cfg.addresses["addr"]
    return ControllerConfig(cfg.extents, cfg.schedule,
                            {"addr": AffineMap(a.start + base, a.strides)})


def rf_tile_registers(tile: RFTile, params: PUBParams, mem: MemParams) -> dict[str, int]:
    """The MEM tile's register values for ``tile`` (``rf_en`` = 1 and the PUB controllers the
    register file's ports borrow; every other PUB register keeps its reset value): each port's
    affine form, its address moved by the bank's base, encoded by
    ``ubgen.mem.spec.encode_rf_ports`` (``ubgen.controller.encode_controller`` on the borrowed
    controllers' layouts) and checked against the MEM core's register map. A value that does
    not fit raises :class:`RegisterWidthError` naming the buffer."""
    rf_tile(tile.banks, params, mem)
    writes, reads = [], []
    for bank, base in zip(tile.banks, tile.bases):
        writes += [_based(c, base) for c in bank.writes]
        reads += [_based(c, base) for c in bank.reads]
    cfgs = {f"rf_write_{p}": c for p, c in enumerate(writes)}
    cfgs.update({f"rf_read_{q}": c for q, c in enumerate(reads)})
    buffer = tile.banks[0].buffer
    try:
        regs = encode_rf_ports(cfgs, params, mem)
    except EncodeError as e:
        raise RegisterWidthError(f"buffer {buffer}: {e}") from None
    try:
        mem_regmap(params, mem).writes(regs)
    except ValueError as e:
        raise RegisterWidthError(f"buffer {buffer}: {e}") from None
    return regs


@dataclass
class ContextRFTile:
    """Register-file banks of different buffers in one MEM tile whose ports have two contexts
    (``[mem] rf_contexts`` = 2, docs/mem_rf.md): ``reads[i]`` / ``writes[i]`` give, per bank,
    the ``(port, context)`` of its reader and of each of its writers. Banks on one port are
    accessed at disjoint cycles (:func:`context_tile`). The banks' words follow each other
    (``bases``) as in :class:`RFTile`."""
    banks: list[RegisterFile]
    reads: list[tuple[int, int]]
    writes: list[list[tuple[int, int]]]

    @property
    def name(self) -> str:
        return "+".join(b.name for b in self.banks)

    @property
    def bases(self) -> list[int]:
        return RFTile(self.banks).bases


def _fires(cfg: ControllerConfig) -> set[int]:
    return {c for c, _a in iterate(cfg)}


def context_tile(banks: list[RegisterFile], params: PUBParams,
                 mem: MemParams) -> ContextRFTile | None:
    """The banks in one tile with two contexts per port, or None when they do not fit: more
    words than the register file has, a bank with more than one reader, more accesses than
    the ports have contexts, or two accesses on one port in one cycle. Readers take the read
    contexts in bank order, port 0's first (so consecutive banks share an output), writers the
    write contexts likewise."""
    if mem.rf_contexts < 2 or sum(b.words for b in banks) > mem.rf_words \
            or any(len(b.outputs) != 1 or not b.inputs for b in banks):
        return None
    read_slots = [(q, j) for q in range(params.output_ports) for j in range(mem.rf_contexts)]
    write_slots = [(p, j) for p in range(params.input_ports) for j in range(mem.rf_contexts)]
    n_writes = sum(len(b.inputs) for b in banks)
    if len(banks) > len(read_slots) or n_writes > len(write_slots):
        return None
    reads = read_slots[:len(banks)]
    writes, k = [], 0
    for b in banks:
        writes.append(write_slots[k:k + len(b.inputs)])
        k += len(b.inputs)
    for slots, cfgs in ((reads, [b.reads[0] for b in banks]),
                        ([s for w in writes for s in w], [c for b in banks for c in b.writes])):
        busy: dict[int, set[int]] = {}
        for (port, _j), c in zip(slots, cfgs):
            fires = _fires(c)
            if busy.setdefault(port, set()) & fires:
                return None
            busy[port] |= fires
    return ContextRFTile(list(banks), reads, writes)


def context_tile_registers(tile: ContextRFTile, params: PUBParams,
                           mem: MemParams) -> dict[str, int]:
    """The MEM tile's register values for a :class:`ContextRFTile`: every access's affine form,
    its address moved by the bank's base, on its port and context (``rf_read_<q>`` /
    ``rf_read_<q>_c1``, ...), encoded by ``ubgen.mem.spec.encode_rf_ports``."""
    cfgs = {}
    name = lambda kind, port, j: f"{kind}_{port}" + (f"_c{j}" if j else "")   # noqa: E731
    for bank, base, (q, j), ws in zip(tile.banks, tile.bases, tile.reads, tile.writes):
        cfgs[name("rf_read", q, j)] = _based(bank.reads[0], base)
        for (p, i), c in zip(ws, bank.writes):
            cfgs[name("rf_write", p, i)] = _based(c, base)
    try:
        regs = encode_rf_ports(cfgs, params, mem)
        mem_regmap(params, mem).writes(regs)
    except (EncodeError, ValueError) as e:
        raise RegisterWidthError(f"buffer {tile.banks[0].buffer}: {e}") from None
    return regs
