"""The end-to-end bundle: everything a host needs to run one placed and routed application on
``cgra_top`` and check it (docs/simulation.md), as one JSON object:

``{"app", "arch", "bitstream": [[byte_address, value], ...], "glb_inputs": [[glb_word, value],
...], "glb_outputs": [[glb_word, expected], ...], "cycles_predicted", "done_cycle",
"output_writes"}``

``glb_word`` is ``bank * bank_words + offset`` (the host's GLB address ``0x1000_0000 + 4 *
glb_word``): each IO stream's words sit in the bank of the column placement gave its IO tile,
at its GLB layout (:mod:`.glb`). The expected outputs are the golden outputs
(``compiler.frontend.source.establish_golden``: the interpreter checked against the app's reference or
real Halide), at the words the host reads back; ``cycles_predicted`` is the schedule's completion (the unstalled cycle of
the last GLB write), ``done_cycle`` one past it, ``output_writes`` the number of ``f2glb``
fires. The testbench consumes it and re-derives nothing.
"""
from __future__ import annotations

import numpy as np

from ubgen.arch import WORD_MASK
from .glb import double_buffer, input_places, input_words, output_places, output_writes
from .netlist import NetlistError


def make_bundle(net, arch, pnr, inputs: dict, golden: dict) -> dict:
    """The bundle of the netlist ``net`` on ``arch``, placed and routed as ``pnr`` (its
    ``bitstream`` and ``io_banks()``), with the app's ``inputs`` and the ``golden`` outputs the
    host must read back (``compiler.frontend.source.establish_golden``; the driver,
    ``compiler.pipeline``, passes both: this module computes no golden of its own)."""
    bank_words = arch.glb.bank_words
    banks = {n: b["bank"] for n, b in pnr.io_banks().items()}

    def word(node: str, offset: int) -> int:
        return banks[node] * bank_words + offset

    loads: dict[int, int] = {}
    for node, words in input_words(net, inputs).items():
        for off, v in words.items():
            w = word(node, off)
            if loads.setdefault(w, v) != v:
                raise NetlistError(f"GLB word {w} holds two different input words "
                                   f"(IO tiles share a bank)")
    expected = []
    for buffer, places in sorted(output_places(net, arch).items()):
        arr = np.asarray(golden[buffer]).astype(np.int64) & WORD_MASK
        expected += [[word(n, off), int(arr[e])] for e, (n, off) in sorted(places.items())]
    return {"app": net.app, "arch": arch.name,
            "bitstream": pnr.bitstream.to_list(),
            "glb_inputs": sorted([w, v] for w, v in loads.items()),
            "glb_outputs": sorted(expected),
            "cycles_predicted": net.cycles_predicted,
            "done_cycle": net.cycles_predicted + 1,
            "output_writes": output_writes(net, arch)}


def make_tiled_bundle(net, arch, pnr, plan) -> dict:
    """The bundle of a tiled app (``compiler.tiling``): one configuration run once per tile.
    Instead of words and values it gives the tile's GLB words by element: ``input_map``
    (``{input: [[glb_word, [index...]], ...]}``, the tile buffer's indices) and
    ``output_map`` (where each output element's last write lands), and the ``tiling``: the
    whole host buffers' ``shapes``, the ``outputs`` and per tile its output ``box`` (whole
    coordinates, inclusive) and the ``lows`` of every host buffer (where the tile's buffer
    sits in the whole one). The host runtime (``sim/host.py``) gathers each tile's input words
    from the whole arrays, runs, reads the tile's outputs back and stitches its box.
    ``overlap`` (:func:`.glb.double_buffer`) says whether the global buffer holds two regions
    per stream, and the configuration words that switch between them, so the runtime can load
    tile ``k + 1`` and read back tile ``k - 1`` during run ``k``."""
    from .pnr import array_data
    bank_words = arch.glb.bank_words
    banks = {n: b["bank"] for n, b in pnr.io_banks().items()}
    ins = {b: sorted([banks[n] * bank_words + off, list(e)] for n, off, e in places)
           for b, places in input_places(net).items()}
    outs = {b: sorted([banks[n] * bank_words + off, list(e)] for e, (n, off) in places.items())
            for b, places in output_places(net, arch).items()}
    return {"app": net.app, "arch": arch.name, "bitstream": pnr.bitstream.to_list(),
            "cycles_predicted": net.cycles_predicted,
            "done_cycle": net.cycles_predicted + 1,
            "output_writes": output_writes(net, arch),
            "input_map": ins, "output_map": outs, "tiling": plan.to_dict(),
            "overlap": double_buffer(net, arch, pnr.io_banks(), array_data(arch).index)}


def make_blocked_bundle(plan, configs) -> dict:
    """The bundle of a layer run as channel blocks (``compiler.tiling.blocks``): the two
    configurations' tiled bundles (:func:`make_tiled_bundle`; ``configs[0]`` runs the blocks
    before the last, ``configs[1]`` the last) and the plan: per run the reduction channels
    ``[lo, hi)`` it sums, the inputs cut along them (``sliced``: input -> dimension), and the
    carried buffers (``carry``: the input the run starts from, the output it leaves). The host
    runtime (``sim/host.py``, ``Accelerator.run_blocks``) runs every block with every output
    tile, the partial sums it reads back from one run the next run's carried input, and
    between configurations rewrites only the words that differ. The first block's carry (the
    bias as partial sums) is the caller's input array of that name."""
    a, b = (c.bundle for c in configs)
    for f in ("cycles_predicted", "done_cycle", "output_writes"):
        if a[f] != b[f]:
            raise NetlistError(f"the channel blocks' two configurations differ in {f} "
                               f"({a[f]} and {b[f]})")
    spec = plan.spec
    return {"app": a["app"], "arch": a["arch"], "bitstream": a["bitstream"],
            "cycles_predicted": a["cycles_predicted"], "done_cycle": a["done_cycle"],
            "output_writes": a["output_writes"], "configs": [a, b],
            "blocks": {"block": plan.block, "runs": plan.runs,
                       "ranges": [[k.lo, k.hi] for k in plan.blocks],
                       "sliced": dict(spec["sliced"]), "carry": [spec["carry_in"],
                                                                 spec["carry_out"]],
                       "output": spec["output"], "size": spec["size"]}}
