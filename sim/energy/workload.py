"""The 3x3 convolution's line buffer of thesis Table 7.2 as the compiler maps it onto each
memory backend (docs/energy.md "Table 7.2"): gaussian 64x64 (docs/design.md §4) mapped onto the
PUB gives one PUB block (the rows delayed by 64 and 128 cycles on its two outputs,
:func:`pub_case`); mapped with ``[mem] kind = "dp"`` it gives two dual-port memory blocks (delay
lines of 64 and 128 cycles, docs/backends.md), and the same blocks drive

* DP-SRAM + AG: each block's ``wr``/``rd`` configuration on ``ubgen.dpbuf.DPBuffer``
  (:func:`dp_case`);
* DP-SRAM + PEs: each block on the plain dual-port SRAM core with its write and read
  controllers built from PEs (:func:`compiler.backend.pe_controllers.synthesize`, what the
  ``dp-pe`` netlist instantiates; :mod:`sim.energy.dppe_block`);
* the buffet: each block's buffet configuration (:func:`compiler.mapping.buffet.buffet_config`)
  with the block's fills and reads at the cycles of its static schedule (:func:`buffet_jobs`).

The data are the PUB fixture's image (``sim.tb.pub_cases.image(64, 64, seed=11)``), written in
raster order at the cycles of each block's ``wr`` stream; the expected read streams come from
the compiler's model of the block (:func:`compiler.mapping.dp_model.simulate_dp`), which buffer
mapping checks against the unified buffer's specification. Cycles count from ``run`` rising.
"""
from __future__ import annotations

from functools import lru_cache

__all__ = ["IMAGE_SEED", "PE_MODULE", "line_image", "line_buffer_blocks", "pub_block",
           "pub_case", "writes", "expected_reads", "dp_case", "pe_slots", "dppe_writes",
           "dppe_controllers", "dppe_case", "buffet_jobs"]

IMAGE_SEED = 11          # the PUB fixture's image (sim.tb.pub_cases.gaussian_line_buffer)
APP = "gaussian"         # 64x64 at its default sizes: the docs/design.md §4 line buffer
PE_MODULE = "ctl_pe"     # the PE core's Verilog module in DP-SRAM + PEs (sim.energy.harness)


def line_image(zero: bool = False) -> list[int]:
    """The 64x64 image in raster order (all zero for the negative control)."""
    from sim.tb.pub_cases import image
    img = image(64, 64, seed=IMAGE_SEED)
    return [0 if zero else v for row in img for v in row]


@lru_cache(maxsize=None)
def line_buffer_blocks() -> tuple:
    """The dual-port memory blocks of gaussian's line buffer (``compile_app`` until ``map``
    onto the ``pub`` constraints' dual-port SRAM, as ``bench/area.py`` counts them)."""
    from compiler.mapping.common import MappingError
    from compiler.mapping.report import backend_arch
    from compiler.pipeline import compile_app
    from ubgen.arch import load_arch
    r = compile_app(APP, backend_arch(load_arch("pub"), "dp"), until="map")
    if r.refused:
        raise MappingError(r.refusal())
    blocks = tuple(b for impl in r.impls.values() for b in impl.dps)
    if not blocks:
        raise MappingError(f"{APP}: no dual-port memory block in the mapping")
    return blocks


@lru_cache(maxsize=None)
def pub_block():
    """The PUB block of gaussian's line buffer (``compile_app`` until ``map`` onto the ``pub``
    constraints' PUB): one block, the rows delayed by 64 and 128 cycles on its two outputs."""
    from compiler.mapping.common import MappingError
    from compiler.pipeline import compile_app
    from ubgen.arch import load_arch
    r = compile_app(APP, load_arch("pub"), until="map")
    if r.refused:
        raise MappingError(r.refusal())
    blocks = [b for impl in r.impls.values() for b in impl.pubs]
    if len(blocks) != 1 or blocks[0].tiles != 1:
        raise MappingError(f"{APP}: the line buffer maps to {len(blocks)} PUB blocks, not one "
                           "PUB")
    return blocks[0]


def pub_case(zero: bool = False):
    """A ``sim.tb.pub_cases.Case`` of the PUB block: its configuration, the image on input
    port 0 at the ``in2agg_0`` fires, the expected outputs by the compiler's PUB model
    (:func:`compiler.mapping.pub_model.simulate_pub`)."""
    from compiler.mapping.pub_model import simulate_pub
    from sim.tb.pub_cases import Case
    from ubgen.arch import load_arch
    from ubgen.controller import iterate
    b, params = pub_block(), load_arch("pub").pub
    times = [t for t, _a in iterate(b.configs["in2agg_0"])]
    ins = dict(zip(times, line_image(zero), strict=True))
    run = simulate_pub(b.registers(params), params, [ins])
    exp = {q: sorted(o.items()) for q, o in enumerate(run.outputs) if o}
    horizon = max(c for s in exp.values() for c, _ in s) + 8
    return Case("pub" + ("_zero" if zero else ""),
                {n: c for n, c in b.configs.items() if c.extents}, {0: ins}, exp, horizon, seed=5)


def writes(block, words: list[int]) -> dict[int, int]:
    """The block's write stream: cycle of each ``wr`` fire -> the next word of ``words``."""
    from ubgen.controller import iterate
    times = [t for t, _a in iterate(block.configs["wr"])]
    if len(times) != len(words):
        raise ValueError(f"{block.name}: {len(times)} writes, {len(words)} words")
    return dict(zip(times, words))


def expected_reads(block, words: list[int]) -> list[tuple[int, int]]:
    """``(cycle, word)`` of every word on the block's read port (``data_out0`` one cycle after
    the ``rd`` fire), by the compiler's model of the block."""
    from compiler.mapping.dp_model import simulate_dp
    run = simulate_dp(block.registers(), block.params, writes(block, words))
    return sorted(run.outputs[0].items())


def dp_case(block, zero: bool = False):
    """A ``sim.tb.pub_cases.Case`` of one block on the DP-SRAM + AG (or any block with a
    ``data_in``/``data_out`` pair): its configuration, write stream and expected reads."""
    from sim.tb.pub_cases import Case
    words = line_image(zero)
    exp = {0: expected_reads(block, words)}
    horizon = max(c for c, _ in exp[0]) + 8
    return Case(f"{block.name}{'_zero' if zero else ''}", dict(block.configs),
                {0: writes(block, words)}, exp, horizon, seed=9)


def pe_slots(controllers) -> list[tuple[str, object]]:
    """``(submodule name, PENode)`` of every controller PE, in configuration-bus order;
    ``controllers``: one ``(wr, rd)`` pair of :class:`PEController` per memory. The names
    start with ``wr``/``rd`` (the write / read controller of memory ``i``)."""
    out = []
    for i, pair in enumerate(controllers):
        for port, ctl in zip(("wr", "rd"), pair):
            for n in ctl.nodes:
                out.append((f"{port}{i}_{n.name.rsplit('.', 1)[-1]}", n))
    return out


def dppe_writes(controllers) -> list[tuple[int, int]]:
    """The configuration bus writes of every controller PE (its :meth:`PENode.config` through
    the PE register map, at the PE's index above the tile-local offset)."""
    from ubgen.array.tilespec import TILE_ADDR_WIDTH
    from ubgen.pe.spec import pe_regmap
    rm = pe_regmap()
    return [((k << TILE_ADDR_WIDTH) | off, v)
            for k, (_n, node) in enumerate(pe_slots(controllers))
            for off, v in rm.writes(node.config())]


def dppe_controllers() -> list[tuple]:
    """``(wr, rd)`` :class:`~compiler.backend.pe_controllers.PEController` of every block: the
    PEs ``dp-pe`` builds for its write and read streams (``compiler.backend.dp_build``)."""
    from compiler.backend.pe_controllers import synthesize
    return [tuple(synthesize(b.configs[port], f"{port}{i}",
                             f"memory {b.name} {'write' if port == 'wr' else 'read'} controller")
                  for port in ("wr", "rd"))
            for i, b in enumerate(line_buffer_blocks())]


def dppe_case(zero: bool = False) -> tuple[list[tuple[int, int]], object]:
    """``(configuration bus writes, Case)`` of DP-SRAM + PEs: every memory block on its own
    SRAM and PE controllers (:class:`sim.energy.harness.DPPELineBuffer`), one input stream
    written into all of them, memory ``i``'s reads on output port ``i``."""
    from sim.tb.pub_cases import Case
    words = line_image(zero)
    blocks = line_buffer_blocks()
    ins = [writes(b, words) for b in blocks]
    if any(w != ins[0] for w in ins):
        raise ValueError("the memory blocks write the line buffer at different cycles")
    exp = {i: expected_reads(b, words) for i, b in enumerate(blocks)}
    horizon = max(c for s in exp.values() for c, _ in s) + 8
    case = Case("dppe" + ("_zero" if zero else ""), {}, {0: ins[0]}, exp, horizon, seed=9)
    return dppe_writes(dppe_controllers()), case


def buffet_jobs(zero: bool = False) -> list:
    """One :class:`sim.buffet_run.BuffetJob` per block: the image filled and read at the cycles
    of the block's static ``wr`` and ``rd`` streams (no gaps, no back-pressure), the reads'
    ``(idx, shrink)`` from the buffet configuration's address generator."""
    from compiler.mapping.buffet import buffet_config
    from sim.buffet_run import BuffetJob
    from ubgen.buffet.spec import requests
    from ubgen.controller import iterate
    words = line_image(zero)
    jobs = []
    for block in line_buffer_blocks():
        reqs = requests(buffet_config(block))
        rd = [t for t, _a in iterate(block.configs["rd"])]
        if len(rd) != len(reqs):
            raise ValueError(f"{block.name}: {len(rd)} reads, {len(reqs)} buffet requests")
        jobs.append(BuffetJob(f"{block.name}{'_zero' if zero else ''}", words, reqs,
                              [v for _c, v in expected_reads(block, words)],
                              fill_at=sorted(writes(block, words)), read_at=rd))
    return jobs
