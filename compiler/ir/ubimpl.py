"""UBImpl: the unified buffer implementation (thesis §5.7; docs/design.md §3 "buffer mapping").

The physical blocks one unified buffer maps to, and how they connect to its logical ports. It
is a stream graph: every node is a stream of values over unstalled cycles, named

* after a logical input port (the data arriving at the buffer, at the port's write cycles);
* after the output of a :class:`ShiftRegister` (its source delayed by ``delay`` cycles; 0 is a
  wire), which the shift-register and port-sharing passes name after the port they serve;
* after an output of a :class:`PUBBlock` (``PUBBlock.outputs[q]`` is ``data_out[q]``) or of a
  :class:`DPBlock` (a dual-port SRAM, the ``dp`` and ``dp-pe`` MEM tiles, thesis Table 6.1);
* after a read port of a :class:`RegisterFile` (a bank too small for a memory tile, §5.4);
* after the logical output port a :class:`BankSelect` rebuilds from per-writer sub-streams.

``connections[port]`` is the node each logical output port reads at its scheduled cycles.
Each PUB block carries the affine :class:`~ubgen.controller.ControllerConfig` of all its
controllers; :meth:`PUBBlock.registers` encodes them with ``ubgen.pub.encode_pub`` (the PUB's
encoder over ``ubgen.controller.encode_controller``) and checks every value against the PUB's
exported register map.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ubgen.arch import DPBufParams, PUBParams
from ubgen.controller import ControllerConfig, EncodeError
from ubgen.mem.dp_spec import dpbuf_regmap, encode_dpbuf
from ubgen.pub import encode_pub, pub_regmap


class RegisterWidthError(ValueError):
    """A configuration value does not fit its register (names the buffer)."""


@dataclass
class ShiftRegister:
    """``dst(t) = src(t - delay)``: a chain of ``delay`` pipeline registers (0: a wire)."""
    src: str
    dst: str
    delay: int

    def to_dict(self) -> dict:
        return {"src": self.src, "dst": self.dst, "delay": self.delay}


@dataclass
class PUBBlock:
    """One physical unified buffer (thesis Fig. 6.4), or a chain of ``tiles`` identical ones
    (paper Fig. 10: same controllers, ``tile_id`` 0..tiles-1, outputs passed down the chain)."""
    name: str
    buffer: str
    inputs: list[str]                      # node feeding data_in[p]
    outputs: list[str]                     # node names of data_out[q]
    configs: dict[str, ControllerConfig]
    tiles: int = 1
    capacity_words: int = 0                # circular capacity (live words, power of two)
    sram_words: int = 0                    # words of SRAM actually addressed
    # The same ports one word at a time, before vectorization: the DP-SRAM + AG form of thesis
    # Table 6.1 (an address ``addr`` per fire; ``writes[p]`` fires at the landing cycles of
    # ``inputs[p]``, ``reads[q]`` at the read cycles of ``outputs[q]``). ``addr`` is the linear
    # word address of the chosen layout, modulo ``words`` (the circular capacity, else one past
    # the largest address); ``elem`` the element's unreduced linear address (its identity, for
    # checks). The FPGA backend (compiler.fpga) builds block RAM from them.
    writes: list[ControllerConfig] = field(default_factory=list)
    reads: list[ControllerConfig] = field(default_factory=list)
    words: int = 0

    def registers(self, params: PUBParams) -> list[dict[str, int]]:
        """Register values of every tile (one dict per tile, register-map names)."""
        return _tile_registers(self, lambda cfgs: encode_pub(cfgs, params), pub_regmap(params),
                               {"mode": 0})

    def to_dict(self) -> dict:
        return {"name": self.name, "inputs": self.inputs, "outputs": self.outputs,
                "tiles": self.tiles, "capacity_words": self.capacity_words,
                "sram_words": self.sram_words,
                "configs": {k: _config_dict(v) for k, v in self.configs.items() if v.extents},
                "words": self.words, "writes": [_config_dict(c) for c in self.writes],
                "reads": [_config_dict(c) for c in self.reads]}


@dataclass
class DPBlock:
    """One dual-port SRAM (thesis Fig. 6.1), or a chain of ``tiles`` of them: one write stream
    ``configs["wr"]`` (fires at the cycle the value lands, ``data_in`` of that cycle) and one
    read stream ``configs["rd"]`` (fires one cycle before the read: the word is on ``data_out``
    at the read cycle), each with one address generator ``addr`` (word address, the tile ID in
    the bits above ``sram_addr_width`` when chained). The DP-SRAM + AG tile runs the configs on
    its controllers (:meth:`registers`); for the plain dual-port SRAM tile the compiler builds
    the same streams from PEs (``compiler.backend.pe_controllers``)."""
    name: str
    buffer: str
    inputs: list[str]                      # node feeding data_in (one)
    outputs: list[str]                     # node name of data_out (one)
    configs: dict[str, ControllerConfig]
    params: DPBufParams = DPBufParams()
    tiles: int = 1
    capacity_words: int = 0                # circular capacity (live words, power of two)
    sram_words: int = 0                    # words of SRAM actually addressed

    def registers(self) -> list[dict[str, int]]:
        """Register values of every tile of the DP-SRAM + AG (``ubgen.mem.dp_spec``)."""
        return _tile_registers(self, lambda cfgs: encode_dpbuf(cfgs, self.params),
                               dpbuf_regmap(self.params), {})

    def to_dict(self) -> dict:
        return {"name": self.name, "inputs": self.inputs, "outputs": self.outputs,
                "tiles": self.tiles, "capacity_words": self.capacity_words,
                "sram_words": self.sram_words,
                "configs": {k: _config_dict(v) for k, v in self.configs.items() if v.extents}}


def _tile_registers(block, encode: Callable[[dict[str, ControllerConfig]], dict[str, int]],
                    regmap, base: dict[str, int]) -> list[dict[str, int]]:
    """Register values of every tile of a memory ``block`` (a :class:`PUBBlock` or
    :class:`DPBlock`): its controllers encoded by the block's own encoder ``encode``
    (``ubgen.pub.encode_pub``, which fits the loop levels and checks the PUB's fixed parts, or
    ``ubgen.mem.dp_spec.encode_dpbuf``; absent controllers disabled), chaining on when the block
    has several tiles, ``tile_id`` per tile, every value checked against ``regmap``. Raises
    :class:`RegisterWidthError` naming the buffer."""
    base = dict(base, chain_en=int(block.tiles > 1))
    try:
        base.update(encode({n: c for n, c in block.configs.items() if c.extents}))
    except EncodeError as e:
        raise RegisterWidthError(f"buffer {block.buffer}: {e}") from None
    out = []
    for t in range(block.tiles):
        regs = dict(base, tile_id=t)
        try:
            regmap.writes(regs)
        except ValueError as e:
            raise RegisterWidthError(f"buffer {block.buffer}: {e}") from None
        out.append(regs)
    return out


def _config_dict(c: ControllerConfig) -> dict:
    return {"extents": list(c.extents),
            "schedule": {"start": c.schedule.start, "strides": list(c.schedule.strides)},
            "addresses": {k: {"start": a.start, "strides": list(a.strides)}
                          for k, a in c.addresses.items()}}


@dataclass
class RegisterFile:
    """A bank held in ``words`` registers instead of a memory tile (thesis §5.4 / §6.2: the
    register level of the memory hierarchy; a weight is one register). Every port is one affine
    controller (docs/design.md §4) with a single address generator ``addr`` (the register index):
    ``writes[k]`` captures node ``inputs[k]`` into register ``addr`` at each fire; ``reads[q]``
    drives node ``outputs[q]`` with register ``addr`` at each fire. A read sees the writes of
    its own cycle (write-through), like a unified-buffer read sees the writes landed by then.
    The hardware is a MEM tile's register file (docs/mem_rf.md): banks are placed into tiles
    and encoded with ubgen's layouts by :mod:`compiler.mapping.registers`."""
    name: str
    buffer: str
    words: int
    inputs: list[str]
    outputs: list[str]
    writes: list[ControllerConfig]
    reads: list[ControllerConfig]

    @property
    def addr_width(self) -> int:
        return max(1, (self.words - 1).bit_length())

    def to_dict(self) -> dict:
        def cfg(c: ControllerConfig) -> dict:
            return {"extents": list(c.extents),
                    "schedule": {"start": c.schedule.start, "strides": list(c.schedule.strides)},
                    "addr": {"start": c.addresses["addr"].start,
                             "strides": list(c.addresses["addr"].strides)}}
        return {"name": self.name, "words": self.words, "inputs": self.inputs,
                "outputs": self.outputs, "writes": [cfg(c) for c in self.writes],
                "reads": [cfg(c) for c in self.reads]}


@dataclass
class BankSelect:
    """``dst(t) = srcs[k](t)`` for the one source that fires at ``t`` (the sources fire at
    disjoint cycles): a logical output port whose reads are split over banks by writer
    (:mod:`compiler.mapping.bank_select`; the thesis' bank selection, Table 7.7)."""
    srcs: list[str]
    dst: str

    def to_dict(self) -> dict:
        return {"srcs": self.srcs, "dst": self.dst}


@dataclass
class UBImpl:
    buffer: str
    level: str                                         # GLB | MEM | REG (thesis §5.4)
    inputs: list[str]
    outputs: list[str]
    pubs: list[PUBBlock] = field(default_factory=list)
    shift_registers: list[ShiftRegister] = field(default_factory=list)
    connections: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    register_files: list[RegisterFile] = field(default_factory=list)
    selects: list[BankSelect] = field(default_factory=list)
    dps: list[DPBlock] = field(default_factory=list)

    @property
    def blocks(self) -> list:
        """Every memory block: the PUBs, then the dual-port SRAMs."""
        return list(self.pubs) + list(self.dps)

    @property
    def mems(self) -> int:
        """Physical memory tiles (chained tiles count one each)."""
        return sum(p.tiles for p in self.blocks)

    def stats(self) -> dict:
        regs = [s for s in self.shift_registers if s.delay > 0]
        return {"buffer": self.buffer, "level": self.level, "mems": self.mems,
                "pub_blocks": len(self.pubs), "dp_blocks": len(self.dps),
                "shift_registers": len(regs), "register_delay": sum(s.delay for s in regs),
                "wires": sum(s.delay == 0 for s in self.shift_registers),
                "chained_tiles": sum(p.tiles for p in self.blocks if p.tiles > 1),
                "sram_words": [p.sram_words for p in self.blocks],
                "register_files": len(self.register_files),
                "register_file_words": sum(r.words for r in self.register_files),
                "bank_selects": len(self.selects)}

    def to_dict(self) -> dict:
        return {"buffer": self.buffer, "level": self.level, "inputs": self.inputs,
                "outputs": self.outputs, "pubs": [p.to_dict() for p in self.pubs],
                "dps": [p.to_dict() for p in self.dps],
                "shift_registers": [s.to_dict() for s in self.shift_registers],
                "register_files": [r.to_dict() for r in self.register_files],
                "selects": [b.to_dict() for b in self.selects],
                "connections": self.connections, "notes": self.notes, "stats": self.stats()}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)
