"""A plain-Python cycle model of the PUB timing contract (ubgen/pub/pub.py docstring).

It runs the *affine* controller configs (via :func:`ubgen.controller.iterate`), not the
recurrence hardware, so it is an independent check that a hand-written test schedule is legal
and produces the unified-buffer specification's streams before the RTL sees it.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ubgen.arch import PUBParams
from ubgen.controller import ControllerConfig, iterate
from ubgen.pub import pub_layouts


@dataclass
class ModelResult:
    outputs: dict[int, list[tuple[int, int | None]]] = field(default_factory=dict)
    conflicts: list[int] = field(default_factory=list)


def run_pub_model(params: PUBParams, configs: dict[str, ControllerConfig],
                  inputs: dict[int, dict[int, int]], tile_id: int | None = None,
                  sram: dict[int, list] | None = None) -> ModelResult:
    """Simulate one PUB tile; with ``tile_id`` chaining is on and only this tile's outputs
    (TB slots its SRAM supplied) are reported. Words never written read as None."""
    layouts = pub_layouts(params)
    fw, saw = params.fetch_width, params.sram_addr_width
    events = defaultdict(list)
    for name, layout in layouts.items():
        cfg = configs.get(name)
        if cfg is None:
            continue
        for cycle, addrs in iterate(cfg, layout.addr_widths):
            events[cycle].append((name, addrs))
    agg = {p: [None] * params.agg_words for p in range(params.input_ports)}
    tb = {q: [(None, False)] * params.tb_words for q in range(params.output_ports)}
    mem = sram if sram is not None else {}
    res = ModelResult({q: [] for q in range(params.output_ports)})
    pending = []
    for c in range(max(events, default=-1) + 3):
        agg_w, sram_w, tb_w, accesses = [], [], pending, 0
        pending = []
        for name, a in events.get(c, []):
            kind, port = name.rsplit("_", 1)
            port = int(port)
            if kind == "in2agg":
                agg_w.append((port, a["agg"], inputs[port].get(c)))
            elif kind == "agg2sram":
                if tile_id is None or a["sram"] >> saw == tile_id:
                    accesses += 1
                    word = agg[port][a["agg"] * fw:(a["agg"] + 1) * fw]
                    sram_w.append((a["sram"] % (1 << saw), list(word)))
            elif kind == "sram2tb":
                owned = tile_id is None or a["sram"] >> saw == tile_id
                accesses += owned
                word = mem.get(a["sram"] % (1 << saw), [None] * fw) if owned else [None] * fw
                pending.append((port, a["tb"], list(word), owned))
            elif kind == "tb2out":
                value, owned = tb[port][a["tb"]]
                if owned:
                    res.outputs[port].append((c, value))
        if accesses > 1:
            res.conflicts.append(c)
        for port, addr, value in agg_w:
            agg[port][addr] = value
        for addr, word in sram_w:
            mem[addr] = word
        for port, slot, word, owned in tb_w:
            for lane in range(fw):
                tb[port][slot * fw + lane] = (word[lane], owned)
    return res
