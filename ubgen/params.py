"""The architecture's parameters as plain dataclasses (docs/design.md §2): the sizes, widths and
latencies that parameterize the RTL generators and that the compiler reads, so the two always
agree. :mod:`ubgen.arch` fills them from a constraints file (``load_arch``) and re-exports them;
the specs of the blocks (controllers, PUB, MEM tile) import them from here, below the loader.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

WORD_WIDTH = 16
WORD_MASK = (1 << WORD_WIDTH) - 1
"""Bits of a data word, fixed for every block (PE, PUB, DP-SRAM, GLB, IO, the 16-bit network)
and for the compiler's kernels and interpreter. Not an arch-file option: a constraints file that
sets ``[word] width`` or a ``word_width`` is refused (docs/design.md §5.2)."""


CONTROLLER_KINDS = ("in2agg", "agg2sram", "sram2tb", "tb2out", "wr", "rd", "glb2f", "f2glb")
"""The controller kinds of the generated blocks: the PUB's four streams (thesis Fig. 6.4), the
DP-SRAM + AG buffer's write and read (Fig. 6.1) and the IO tile's two GLB streams. Each kind
may have its own number of loop levels (``[controller.dims]``, docs/controllers.md)."""


@dataclass(frozen=True)
class ControllerParams:
    """Widths of one ID/AG/SG controller (docs/design.md §4, docs/controllers.md "Sizes").

    ``max_dims`` is the number of loop levels of a controller kind not named in ``dims``
    (``(kind, levels)`` pairs from ``[controller.dims]``); :meth:`for_kind` gives one kind's
    parameters. ``extent_width`` bounds a (possibly fused) loop's trip count, ``cycle_width``
    the unstalled-cycle counter and every schedule register."""
    max_dims: int = 6
    extent_width: int = 16
    cycle_width: int = 20
    dims: tuple[tuple[str, int], ...] = ()

    def for_kind(self, kind: str) -> "ControllerParams":
        """The parameters of one controller of ``kind`` (its levels from ``dims``)."""
        return replace(self, max_dims=dict(self.dims).get(kind, self.max_dims), dims=())


@dataclass(frozen=True)
class PUBParams:
    """Physical Unified Buffer sizes (thesis §6.1.3)."""
    word_width: int = WORD_WIDTH
    fetch_width: int = 4
    sram_depth: int = 512
    sram_read_latency: int = 1
    input_ports: int = 2
    output_ports: int = 2
    agg_depth: int = 2
    tb_depth: int = 2
    chain_bits: int = 4
    agg_slack_width: int = 4
    controller: ControllerParams = ControllerParams()

    @property
    def sram_addr_width(self) -> int:
        return _clog2(self.sram_depth)

    @property
    def max_agg_slack(self) -> int:
        """The largest ``agg2sram`` slack (cycles an AGG -> SRAM write may wait after the
        earliest, docs/pub.md): the delay line holds ``2**agg_slack_width`` cycles."""
        return (1 << self.agg_slack_width) - 1

    @property
    def agg_words(self) -> int:
        return self.agg_depth * self.fetch_width

    @property
    def tb_words(self) -> int:
        return self.tb_depth * self.fetch_width

    @property
    def capacity_words(self) -> int:
        return self.sram_depth * self.fetch_width


@dataclass(frozen=True)
class MemParams:
    """The MEM tile: which memory it is (``kind``, thesis Table 6.1: ``pub`` the Physical
    Unified Buffer, ``dp`` a dual-port SRAM with address generators, ``dp-pe`` a plain dual-port
    SRAM whose controllers the compiler builds from PEs; :mod:`ubgen.mem.dp_spec`) and the
    PUB tile's register-file mode (docs/mem_rf.md): the register level of the memory
    hierarchy (thesis §5.4), banks of at most the shift-register threshold (20 words, §5.1.2)
    held in registers of a memory tile instead of its SRAM."""
    rf_words: int = 32            # words of the register file (a power of two)
    rf_contexts: int = 1          # controllers per register-file port (docs/mem_rf.md; 1 or 2)
    kind: str = "pub"             # pub | dp | dp-pe

    @property
    def rf_addr_width(self) -> int:
        return _clog2(self.rf_words)


@dataclass(frozen=True)
class DPBufParams:
    """Dual-port SRAM + AddressGenerator baseline buffer (thesis §6.1.1, Fig. 6.1)."""
    word_width: int = WORD_WIDTH
    sram_depth: int = 2048
    read_latency: int = 1
    chain_bits: int = 4
    controller: ControllerParams = ControllerParams()

    @property
    def sram_addr_width(self) -> int:
        return _clog2(self.sram_depth)


@dataclass(frozen=True)
class ArrayParams:
    """The CGRA array (docs/design.md §5.3, paper Fig. 11): island style, MEM every ``mem_period``-th
    column, an IO row on the north edge, a 16-bit and a 1-bit network with ``tracks`` tracks."""
    rows: int = 4                 # rows of PE/MEM tiles (the IO row is extra, on the north edge)
    columns: int = 4
    mem_period: int = 4           # column c is a MEM column when c % mem_period == mem_period - 1
    tracks: int = 5
    switch_box: str = "wilton"    # wilton | disjoint | imran
    pipeline_registers: bool = True
    pe_output_register: bool = True
    pe_contexts: int = 1          # input contexts of every PE tile (ubgen.pe.contexts; 1: none)

    def is_mem_column(self, col: int) -> bool:
        """Column ``col`` holds MEM tiles (every ``mem_period``-th column, paper Fig. 11)."""
        return col % self.mem_period == self.mem_period - 1

    def tile_counts(self) -> dict[str, int]:
        """PE, MEM and IO tiles of the array (the IO row on the north edge is extra)."""
        mem_cols = sum(self.is_mem_column(c) for c in range(self.columns))
        return {"pe": (self.columns - mem_cols) * self.rows, "mem": mem_cols * self.rows,
                "io": self.columns}


@dataclass(frozen=True)
class GLBParams:
    """Global buffer (thesis §7.1, Fig. 7.1): banks of SRAM with a host port."""
    banks: int = 4
    bank_words: int = 4096


@dataclass(frozen=True)
class ScheduleParams:
    """Latencies the schedulers need (thesis §4.2.2): cycles per PE on a kernel's critical path
    (the PE output register, docs/design.md §5.2), SRAM read latency and store latency."""
    pe_latency: int = 1
    mem_read_latency: int = 1
    mem_write_latency: int = 0


@dataclass(frozen=True)
class AreaModel:
    """SRAM macro area model used by the area comparison (an assumption, stated in the toml)."""
    sp_512x64_um2: float = 5754.0
    dp_over_sp_ratio: float = 2.5
    um2_per_transistor: float = 0.05


@dataclass(frozen=True)
class Arch:
    """Everything one constraints file describes."""
    name: str
    pub: PUBParams
    dpbuf: DPBufParams
    mem: MemParams
    area: AreaModel
    array: ArrayParams
    glb: GLBParams
    schedule: ScheduleParams
    raw: dict


def _clog2(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
