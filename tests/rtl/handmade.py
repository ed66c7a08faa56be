"""A hand-made bundle (sim/bundle.py's format) without the compiler: the IO stream of
tests/rtl/test_cgra_top_rtl.py (GLB -> IO tile -> PE computing ``3x + 7`` -> pipeline registers
-> IO tile -> GLB), routed on the exported routing graph, with every expected output computed
here in plain Python. It tests the end-to-end testbench independently of place and route."""
from __future__ import annotations

import random

from tests.rtl.test_cgra_top_rtl import Planner, io_stream


def stream_bundle(arch, seed: int = 0) -> dict:
    p = Planner(arch)
    s = io_stream(p, random.Random(seed))
    outs = {w for w, _ in s["expected"]} - {w for w, _ in s["glb_init"]}
    expected = [[w, v] for w, v in s["expected"] if w in outs]
    return {"app": "stream", "arch": arch.name,
            "bitstream": [list(x) for x in s["writes"]],
            "glb_inputs": [[w, v] for w, v in s["glb_init"] if w not in outs],
            "glb_outputs": sorted(expected),
            "cycles_predicted": s["done_cycle"] - 1, "done_cycle": s["done_cycle"],
            "output_writes": len(expected)}
