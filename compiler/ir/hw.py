"""Hardware constraints every stage reads (thesis §4.2.2): latencies, port counts, fetch width and
the cycle-counter width, from a constraints toml. Part of the IR layer, so extraction, scheduling
and the backend share one definition without importing one another (docs/design.md §2).

Latencies come from the ``[schedule]`` section (:class:`ubgen.arch.ScheduleParams`); port counts,
fetch width and the cycle-counter width come from the ``[pub]``/``[controller]`` sections, or,
when ``[mem] kind`` is a dual-port SRAM (``dp``, ``dp-pe``), are its one read and one write
port of one word (thesis §6.3: the port count and fetch width are what a backend tells the
scheduler).

``[schedule]`` keys: ``pe_latency`` (cycles per PE on a kernel's critical path; the PE output
register, docs/design.md §5.2), ``mem_read_latency`` (SRAM read, §5.1), ``mem_write_latency``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from ubgen.arch import Arch, load_arch


@dataclass(frozen=True)
class HwParams:
    pe_latency: int = 1
    mem_read_latency: int = 1
    mem_write_latency: int = 0
    read_ports: int = 2          # output ports of a (physical) unified buffer
    write_ports: int = 2         # input ports
    fetch_width: int = 4
    tb_depth: int = 2            # wide words of a transpose buffer (thesis §5.5.2)
    fetch_dims: int = 6          # loop levels of the SRAM -> TB fetch controller (sram2tb)
    # rows of the DNN scheduler read with the compact fetch instead of padded (thesis §5.5.3
    # pads them; compiler.schedule.fetch_pad.compact_fetch); off: resnet's 8x8 block gains
    # 118 of 8148 cycles but keeps 24 more live words, the 16/16 layer is unchanged
    compact_fetch: bool = False
    cycle_width: int = 20
    # host streams (IO tiles) a Program may use: the cap of compiler.passes.stream_split
    # (0: no cap); from_arch: the array's IO tiles, at most one per GLB bank (0 without an
    # [array] section)
    io_streams: int = 0

    @property
    def max_cycle(self) -> int:
        return (1 << self.cycle_width) - 1

    @staticmethod
    def from_arch(arch: Arch | str | None = None) -> "HwParams":
        if arch is None:
            arch = "pub"
        if not isinstance(arch, Arch):
            arch = load_arch(arch)
        sched = arch.schedule
        kw = {f.name: getattr(sched, f.name) for f in fields(sched)}
        pub = arch.pub
        # an arch without an [array] section (pub: single PUBs) has no IO tiles to count
        kw["io_streams"] = (min(arch.glb.banks, arch.array.tile_counts()["io"])
                            if "array" in arch.raw else 0)
        if arch.mem.kind != "pub":
            # a dual-port SRAM (thesis Table 6.1): one write and one read port of one word
            return HwParams(read_ports=1, write_ports=1, fetch_width=1,
                            cycle_width=arch.dpbuf.controller.cycle_width, **kw)
        return HwParams(read_ports=pub.output_ports, write_ports=pub.input_ports,
                        fetch_width=pub.fetch_width, tb_depth=pub.tb_depth,
                        fetch_dims=pub.controller.for_kind("sram2tb").max_dims,
                        cycle_width=pub.controller.cycle_width, **kw)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
