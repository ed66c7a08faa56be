"""Architecture parameters read from ``ubgen/constraints/arch/*.toml`` (package data).

The same dataclasses parameterize the RTL generators and are exported to the compiler, so the
two always agree on sizes, widths and latencies (docs/design.md §2, "one source of truth").
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .paths import CONSTRAINTS_DIR

ARCH_DIR = CONSTRAINTS_DIR / "arch"

WORD_WIDTH = 16
WORD_MASK = (1 << WORD_WIDTH) - 1
"""Bits of a data word, fixed for every block (PE, PUB, DP-SRAM, GLB, IO, the 16-bit network)
and for the compiler's kernels and interpreter. Not an arch-file option: a constraints file that
sets ``[word] width`` or a ``word_width`` is refused (docs/design.md §5.2)."""


class ArchError(ValueError):
    """A constraints file is missing, malformed, or describes an impossible architecture."""


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
    """The MEM tile's register-file mode (docs/mem_rf.md): the register level of the memory
    hierarchy (thesis §5.4), banks of at most the shift-register threshold (20 words, §5.1.2)
    held in registers of a memory tile instead of its SRAM."""
    rf_words: int = 32            # words of the register file (a power of two)
    rf_contexts: int = 1          # controllers per register-file port (docs/mem_rf.md; 1 or 2)

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


def _section(data: dict, name: str, cls, source: str, extra: dict | None = None,
             allow_zero: bool = False):
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ArchError(f"{source}: [{name}] must be a table")
    known = {f.name: f for f in fields(cls)}
    kwargs = dict(extra or {})
    for key, value in table.items():
        if key not in known:
            raise ArchError(f"{source}: unknown key '{key}' in [{name}]")
        default = known[key].default
        if isinstance(default, bool) != isinstance(value, bool) or not isinstance(
                value, type(default)) and not (isinstance(default, float) and isinstance(value, int)):
            raise ArchError(f"{source}: [{name}] {key} must be a {type(default).__name__}, "
                            f"got {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                value < 0 or value == 0 and not allow_zero):
            raise ArchError(f"{source}: [{name}] {key} must be "
                            f"{'non-negative' if allow_zero else 'positive'}, got {value}")
        kwargs[key] = value
    return cls(**kwargs)


def _controller(data: dict, source: str) -> ControllerParams:
    """``[controller]`` with its ``[controller.dims]`` table (levels per controller kind)."""
    table = data.get("controller", {})
    if not isinstance(table, dict):
        raise ArchError(f"{source}: [controller] must be a table")
    dims = table.get("dims", {})
    if not isinstance(dims, dict):
        raise ArchError(f"{source}: [controller.dims] must be a table of controller kinds")
    rest = {k: v for k, v in table.items() if k != "dims"}
    ctrl = _section({"controller": rest}, "controller", ControllerParams, source)
    for kind, n in dims.items():
        if kind not in CONTROLLER_KINDS:
            raise ArchError(f"{source}: unknown controller kind '{kind}' in [controller.dims] "
                            f"(kinds: {', '.join(CONTROLLER_KINDS)})")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 6:
            raise ArchError(f"{source}: [controller.dims] {kind} must be an integer 1..6, "
                            f"got {n!r}")
    if ctrl.max_dims > 6:
        raise ArchError(f"{source}: [controller] max_dims must be at most 6")
    return replace(ctrl, dims=tuple(sorted(dims.items())))


def arch_file(path: str | Path) -> Path:
    """The constraints file an arch name (``ubgen/constraints/arch/<name>.toml``) or path names."""
    p = Path(path)
    return ARCH_DIR / f"{path}.toml" if not p.suffix else p


def load_arch(path: str | Path = "pub") -> Arch:
    """Load a constraints file by path or by name (``ubgen/constraints/arch/<name>.toml``)."""
    p = arch_file(path)
    source = str(p)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        if not Path(path).suffix:
            shipped = ", ".join(sorted(q.stem for q in ARCH_DIR.glob("*.toml")))
            raise ArchError(f"unknown arch '{path}'; shipped archs: {shipped} (or the path of "
                            f"a .toml constraints file)") from None
        raise ArchError(f"{source}: constraints file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ArchError(f"{source}: malformed TOML: {e}") from None
    if "word" in data or any("word_width" in data.get(sec, {}) for sec in ("pub", "dpbuf")):
        raise ArchError(f"{source}: the word width is not configurable (fixed at {WORD_WIDTH} "
                        f"bits, ubgen.arch.WORD_WIDTH); remove [word] width / word_width")
    word = WORD_WIDTH
    ctrl = _controller(data, source)
    pub = _section(data, "pub", PUBParams, source, {"word_width": word, "controller": ctrl})
    dp = _section(data, "dpbuf", DPBufParams, source, {"word_width": word, "controller": ctrl})
    for label, n in (("pub.fetch_width", pub.fetch_width), ("pub.sram_depth", pub.sram_depth),
                     ("pub.agg_depth", pub.agg_depth), ("pub.tb_depth", pub.tb_depth),
                     ("dpbuf.sram_depth", dp.sram_depth)):
        if not _is_pow2(n):
            raise ArchError(f"{source}: {label} must be a power of two, got {n}")
    if not 1 <= pub.agg_slack_width <= 8:
        raise ArchError(f"{source}: pub.agg_slack_width must be 1..8, got {pub.agg_slack_width}")
    if pub.sram_read_latency != 1 or dp.read_latency != 1:
        raise ArchError(f"{source}: only SRAM read latency 1 is supported")
    mem = _section(data, "mem", MemParams, source)
    if not _is_pow2(mem.rf_words) or mem.rf_words < 2:
        raise ArchError(f"{source}: mem.rf_words must be a power of two of at least 2, "
                        f"got {mem.rf_words}")
    if mem.rf_contexts not in (1, 2):
        raise ArchError(f"{source}: mem.rf_contexts must be 1 or 2, got {mem.rf_contexts}")
    from .mem.spec import rf_ports          # the register file's ports borrow PUB controllers
    try:
        rf_ports(pub, mem)
    except ValueError as e:
        raise ArchError(f"{source}: {e}") from None
    area = _section(data, "area", AreaModel, source)
    array = _section(data, "array", ArrayParams, source)
    if array.switch_box not in ("wilton", "disjoint", "imran"):
        raise ArchError(f"{source}: [array] switch_box must be wilton, disjoint or imran, "
                        f"got {array.switch_box!r}")
    from .pe.contexts import MAX_CONTEXTS
    if array.pe_contexts > MAX_CONTEXTS:
        raise ArchError(f"{source}: [array] pe_contexts must be at most {MAX_CONTEXTS}, "
                        f"got {array.pe_contexts}")
    glb = _section(data, "glb", GLBParams, source)
    if not _is_pow2(glb.bank_words):
        raise ArchError(f"{source}: glb.bank_words must be a power of two, got {glb.bank_words}")
    if glb.bank_words < 4:      # ubgen.glb.spec.ROW_WORDS: a bank is rows of four words
        raise ArchError(f"{source}: glb.bank_words must be at least 4 (one row of the global "
                        f"buffer), got {glb.bank_words}")
    schedule = _section(data, "schedule", ScheduleParams, source, allow_zero=True)
    return Arch(name=p.stem, pub=pub, dpbuf=dp, mem=mem, area=area, array=array, glb=glb,
                schedule=schedule, raw=data)
