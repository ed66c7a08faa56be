"""Cycle model of the dual-port SRAM memories (thesis Fig. 6.1; ``ubgen.mem.dp_spec``), driven
only by register values like the PUB's (:mod:`compiler.mapping.pub_model`).

:class:`DPTile` replays a DP-SRAM + AG tile from its ``wr``/``rd`` registers
(:func:`compiler.mapping.decode.decode_arrays`, the hardware's recurrence): a ``wr`` fire at cycle c
stores ``data_in`` of c at the end of c; an ``rd`` fire at c presents the word on ``data_out``
with ``valid_out`` in c+1, seeing the writes of cycles up to c-1. Chained tiles
(``chain_en``) access the SRAM only for addresses whose bits above ``sram_addr_width`` equal
their ``tile_id`` and pass ``chain_in`` through otherwise. :class:`DPRAM` is the plain dual-port
SRAM of the ``dp-pe`` tile, driven by its routed ports (the netlist model feeds it).
:func:`simulate_dp` runs a block (or chain) over whole streams for the buffer check.
"""
from __future__ import annotations

from collections import defaultdict

from ubgen.arch import DPBufParams
from ubgen.mem.dp_spec import dpbuf_layouts

from .decode import PUBRun, decode_arrays

__all__ = ["DPTile", "DPRAM", "simulate_dp"]


class DPTile:
    """One DP-SRAM + AG tile from its register values (module docstring). Per cycle ``c``:
    :meth:`output` gives ``(word, valid, owned)`` of cycle ``c`` (the read fired at ``c - 1``),
    then :meth:`commit` takes ``data_in`` of ``c`` and applies the cycle's read and write."""

    def __init__(self, regs: dict[str, int], params: DPBufParams):
        self.params = params
        self.chain_en = bool(regs.get("chain_en", 0))
        self.tile_id = regs.get("tile_id", 0)
        self.fires: dict[str, dict[int, int]] = {}
        for name, layout in dpbuf_layouts(params).items():
            cycles, addrs = decode_arrays(regs, layout)
            self.fires[name] = dict(zip(cycles.tolist(), addrs["addr"].tolist()))
        self.sram: dict[int, int | None] = {}
        self.read: tuple[int | None, bool] | None = None     # (word, owned) of the last rd fire
        self.read_at = -1

    def _match(self, addr: int) -> bool:
        return not self.chain_en or (addr >> self.params.sram_addr_width) == self.tile_id

    def output(self, c: int) -> tuple[int | None, bool] | None:
        """``(word, owned)`` when a read fired at ``c - 1``, else ``None``."""
        return self.read if self.read_at == c - 1 else None

    def commit(self, c: int, data_in: int | None) -> None:
        depth = self.params.sram_depth
        ra = self.fires["rd"].get(c)
        if ra is not None:
            self.read = (self.sram.get(ra & (depth - 1)), self._match(ra))
            self.read_at = c
        wa = self.fires["wr"].get(c)
        if wa is not None and self._match(wa):
            self.sram[wa & (depth - 1)] = data_in

    @property
    def cycles(self) -> list[int]:
        """Every cycle with an effect: the fires and the cycles after a read."""
        rd = self.fires["rd"]
        return sorted(set(self.fires["wr"]) | set(rd) | {c + 1 for c in rd})


class DPRAM:
    """The plain dual-port SRAM of the ``dp-pe`` tile (``ubgen.mem.dp_tile.DPRAMCore``): per
    cycle, :meth:`step` takes ``wen, waddr, data_in, ren, raddr`` of ``c`` and returns
    ``(data_out, valid_out)`` of ``c + 1``. An unknown (``None``) enable or address makes the
    memory's contents unknown."""

    def __init__(self, params: DPBufParams):
        self.depth = params.sram_depth
        self.sram: dict[int, int | None] = {}
        self.poisoned = False
        self.word: int | None = None

    def step(self, wen, waddr, data_in, ren, raddr) -> tuple[int | None, int]:
        valid = 0
        if ren is None or (ren and raddr is None) or self.poisoned:
            self.word, valid = None, int(bool(ren))
        elif ren:
            self.word, valid = self.sram.get(raddr & (self.depth - 1)), 1
        if wen is None or (wen and waddr is None):
            self.poisoned = True
        elif wen:
            self.sram[waddr & (self.depth - 1)] = data_in
        return self.word, valid


def simulate_dp(tile_regs: list[dict[str, int]], params: DPBufParams,
                data_in: dict[int, int]) -> PUBRun:
    """Run a DP block (or chain: tile ``t``'s ``chain_in`` is tile ``t-1``'s output) over the
    ``data_in`` stream (cycle -> value). Returns the output stream (cycle -> value) as a
    one-port :class:`compiler.mapping.decode.PUBRun` (no conflicts: two ports)."""
    chain: dict[int, int | None] = {}
    for regs in tile_regs:
        tile = DPTile(regs, params)
        own: dict[int, tuple] = defaultdict(tuple)
        for c in tile.cycles:
            o = tile.output(c)
            if o is not None:
                own[c] = o
            tile.commit(c, data_in.get(c))
        if tile.chain_en:
            out = dict(chain)
            out.update({c: v for c, (v, owned) in own.items() if owned})
        else:
            out = {c: v for c, (v, _owned) in own.items()}
        chain = out
    return PUBRun([chain])
