"""cocotb + Verilator tests of the generated array: cgra_4x4 cut to 2 rows (+ the IO row) x 4
columns (MEM column 3) with 2 tracks, to keep the Verilator build short (the mesh's structural
combinational loops make Verilator flatten the switch boxes; the C++ is compiled at -O0).

The routes are found on the exported routing graph (networkx), turned into register writes by
the graph's edge annotations (``reg``/``sel``) and sent over the array's config bus; the
expected latency of a route is the graph's sum of edge latencies. The cores are the real PE and
MEM cores; the IO cores are a placeholder that exposes the IO tiles' tracks on the ``glb_<col>``
ports with zero latency (tests/ubgen/array/probe_cores.py: StreamIO).
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sim.runner import BUILD, run_cocotb
from sim.tb.pub_cases import brighten_blur, register_values
from tests.ubgen.array.probe_cores import StreamIO
from ubgen.array.routes import add_pipeline_registers, route
from ubgen.arch import load_arch
from ubgen.array import ARRAY_MODULE, KINDS, tile_module, write_verilog
from ubgen.array.graph import global_address, path_latency, port_node, route_bus_writes, \
    routing_graph
from ubgen.array.layout import ArrayLayout
from ubgen.mem.mem_tile import MemCore
from ubgen.pe.pe import PE
from ubgen.pub.spec import encode_pub, pub_regmap

pytestmark = pytest.mark.rtl

CORES = {"io": StreamIO, "pe": PE,
         "mem": MemCore}


def bus_writes(g, path):
    return route_bus_writes(g.graph["layout"], g, path)


# ``hier`` is a second Verilator build of the same checks: in CI, the hierarchical Verilation
# of the tiles is exercised by every run of tests/rtl/test_e2e.py (cgra_8x8's model has the tile
# modules as hierarchical blocks, its routes crossing many tile instances), so it is regress.
@pytest.mark.parametrize("hierarchical", [False, pytest.param(True, marks=pytest.mark.regress)],
                         ids=["flat", "hier"])
def test_array_routes_and_line_buffer(hierarchical):
    """``hier``: the tile modules Verilated as hierarchical blocks (what bench/cgra.py builds):
    the combinational routes cross several tile instances, i.e. several library models."""
    base = load_arch("cgra_4x4")
    arch = replace(base, array=replace(base.array, rows=2, tracks=2))
    lay = ArrayLayout(arch, CORES)
    g = routing_graph(lay)
    g.graph["layout"] = lay
    plan = {"routes": []}

    # IO tile 0 -> through a PE tile deep in the array -> IO tile 3, then with 3 pipeline regs
    src, dst = port_node(0, "out", "io2f_16"), port_node(3, "in", "f2io_16")
    path = route(g, src, dst, via_tile=lay.tile_id(2, 1))
    assert sum(1 for n in path if g.nodes[n]["kind"] == "sb_mux") >= 4
    for name, p in (("comb", path), ("piped", add_pipeline_registers(g, path, 3))):
        plan["routes"].append({"name": name, "writes": bus_writes(g, p), "src_col": 0,
                               "dst_col": 3, "latency": path_latency(g, p)})
    assert [r["latency"] for r in plan["routes"]] == [0, 3]

    # a MEM tile as a line buffer (paper Fig. 9 delay of 64) inside the array
    mem = lay.tile_id(2, 3)
    assert lay.kind(2, 3) == "mem"
    r_in = route(g, port_node(0, "out", "io2f_16"), port_node(mem, "in", "data_in0"))
    r_out = route(g, port_node(mem, "out", "data_out0"), port_node(2, "in", "f2io_16"),
                  avoid=r_in)
    r_valid = route(g, port_node(mem, "out", "valid_out0"), port_node(2, "in", "f2io_1"))
    r_out, r_valid = add_pipeline_registers(g, r_out, 2), add_pipeline_registers(g, r_valid, 2)
    assert path_latency(g, r_in) == 0
    out_latency = path_latency(g, r_out)
    assert out_latency == path_latency(g, r_valid) == 2
    case = brighten_blur()
    prm = arch.pub
    mem_writes = [(global_address(mem, off), v)
                  for off, v in register_values(case, lambda c: encode_pub(c, prm),
                                                pub_regmap(prm))]
    writes = bus_writes(g, r_in) + bus_writes(g, r_out) + bus_writes(g, r_valid) + mem_writes
    plan["linebuf"] = {
        "writes": writes, "in_col": 0, "out_col": 2, "horizon": case.horizon + out_latency,
        "inputs": {str(c): v for c, v in case.inputs[0].items()},
        # the unified-buffer specification, shifted by the output route's graph latency
        "expected": [(c + out_latency, v) for c, v in case.expected[0]],
    }

    name = "array_2x4_hier" if hierarchical else "array_2x4"
    rtl = BUILD / name / "rtl"
    sources = write_verilog(arch, rtl, CORES)
    plan_path = BUILD / name / "plan.json"
    plan_path.write_text(json.dumps(plan))
    run_cocotb(name=name, sources=sources, toplevel=ARRAY_MODULE,
               test_module="sim.tb.test_array", build_args=["-CFLAGS", "-O0"],
               extra_env={"UBGEN_ARRAY_PLAN": str(plan_path)},
               hier_blocks=[tile_module(k) for k in KINDS] if hierarchical else None)
