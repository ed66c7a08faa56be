"""Polyhedral extraction and dependences against the thesis' worked example (Fig. 4.1/4.2,
eqs. 4.1-4.5 and 4.10-4.13) and the user errors of extraction."""
import islpy as isl
import pytest

from compiler.ir import Kernel, Program, ProgramError, u16
from compiler.poly.deps import dependency_graph, raw_dependences
from compiler.poly.extract import ExtractError, extract, kernel_depth
from compiler.ir.hw import HwParams

from ..thesis_programs import brighten_blur, conv1d, copy_chain, copy_kernel

BOX_BR = "0 <= t <= 15 and 0 <= y <= 63 and 0 <= x <= 63"
BOX_BL = "0 <= t <= 15 and 0 <= y <= 62 and 0 <= x <= 62"


def same(a, text):
    return a.is_equal(type(a).read_from_str(isl.DEFAULT_CONTEXT, text))


def test_domains_and_access_maps_fig_4_2():
    poly = extract(brighten_blur())
    br, bl = poly.ops["Brighten"], poly.ops["Blur"]
    assert same(br.domain, f"{{ Brighten[t, y, x] : {BOX_BR} }}")
    assert same(bl.domain, f"{{ Blur[t, y, x] : {BOX_BL} }}")
    # eq. 4.1
    assert same(br.store.access, f"{{ Brighten[t, y, x] -> brighten[x, y] : {BOX_BR} }}")
    # eqs. 4.2-4.5, in declaration order
    for load, (dx, dy) in zip(bl.loads, [(0, 0), (1, 0), (0, 1), (1, 1)]):
        assert load.buffer == "brighten"
        assert same(load.access, f"{{ Blur[t, y, x] -> brighten[x + {dx}, y + {dy}] : {BOX_BL} }}")
    assert same(bl.store.access, f"{{ Blur[t, y, x] -> blur[x, y, t] : {BOX_BL} }}")
    # program order: Brighten of tile t before Blur of tile t before Brighten of tile t+1
    order = poly.order()
    assert order.is_injective()


def test_dependences_eqs_4_10_to_4_13():
    deps = raw_dependences(extract(brighten_blur()))
    assert sorted(d.slot for d in deps) == [0, 1, 2, 3]
    for d in deps:
        assert (d.producer, d.consumer, d.buffer) == ("Brighten", "Blur", "brighten")
        dx, dy = [(0, 0), (1, 0), (0, 1), (1, 1)][d.slot]
        # Blur(x, y, t) -> Brighten(x + dx, y + dy) of the same tile, written as prod -> cons
        expect = (f"{{ Brighten[t, yp, xp] -> Blur[t, y, x] : xp = x + {dx} and yp = y + {dy} "
                  f"and {BOX_BL} }}")
        assert same(d.relation, expect)
    g = dependency_graph(extract(brighten_blur()))
    assert list(g.edges) == [("Brighten", "Blur")]


def test_reduction_reads_last_writer():
    """conv1d (Fig. 4.16a): mac at dx reads the value mac wrote at dx-1 (not init), and the
    final store reads the mac of dx = 4."""
    deps = raw_dependences(extract(conv1d(n=8)))
    by = {(d.producer, d.consumer): d.relation for d in deps}
    assert same(by[("init", "mac")], "{ init[x] -> mac[x, 0] : 0 <= x <= 7 }")
    assert same(by[("mac", "mac")], "{ mac[x, dx] -> mac[x, dx + 1] : 0 <= x <= 7 and 0 <= dx <= 3 }")
    assert same(by[("mac", "store")], "{ mac[x, 4] -> store[x] : 0 <= x <= 7 }")
    assert dependency_graph(extract(conv1d(n=8))).nodes["mac"]["self_deps"]


def test_kernel_latency_from_constraints():
    params = HwParams(pe_latency=1, mem_read_latency=1, mem_write_latency=0)
    k = Kernel.from_fn("k", lambda a, b, c, d: ((a + b) + (c + d)) >> 2, u16, u16, u16, u16)
    assert kernel_depth(k, params) == 3
    poly = extract(brighten_blur(), params)
    assert poly.ops["Brighten"].latency == 1 + 1          # load + mul
    assert poly.ops["Blur"].latency == 1 + 4              # load + 3 chained adds + shift


def _one_stage(load_index, shape=(8, 8), store_shape=(8, 8), extent=8):
    prog = Program("bad")
    prog.add_input("in", shape)
    prog.add_output("out", store_shape)
    x = prog.add_loop("y", 0, extent).add_loop("x", 0, extent)
    op = x.add_op("copy")
    op.add_load("in", *load_index)
    op.add_store("out", "x", "y")
    op.add_function(copy_kernel())
    return prog


def test_out_of_bounds_read_is_reported():
    with pytest.raises(ExtractError, match=r"op copy: in\[x \+ 1, y\] reads out of bounds, "
                                           r"e\.g\. in\[8, 0\] outside shape \(8, 8\)"):
        extract(_one_stage(("x+1", "y")))


def test_out_of_bounds_write_is_reported():
    with pytest.raises(ExtractError, match="writes out of bounds"):
        extract(_one_stage(("x", "y"), store_shape=(4, 8)))


def test_non_affine_index_is_reported():
    with pytest.raises(ProgramError, match="non-affine index"):
        _one_stage(("x*y", "y"))


def never_written_program() -> Program:
    """tmp[0:4] is written, tmp[0:7] is read."""
    return copy_chain("never", [8, 8, 7], [4, 7], buffers=["in", "tmp", "out"])


def test_read_of_value_never_written():
    with pytest.raises(ExtractError, match=r"op op1: tmp\[x1\] reads a value never written, "
                                           r"e\.g\. tmp\[4\]"):
        extract(never_written_program())


def cyclic_program() -> Program:
    """a reads b's buffer, b reads a's buffer, in the same iteration: no order works."""
    prog = Program("cyclic")
    prog.add_buffer("ba", (8,))
    prog.add_buffer("bb", (8,))
    prog.add_output("out", (8,))
    x = prog.add_loop("x", 0, 8)
    op = x.add_op("a")
    op.add_load("bb", "x")
    op.add_store("ba", "x")
    op.add_function(copy_kernel())
    op = x.add_op("b")
    op.add_load("ba", "x")
    op.add_store("bb", "x")
    op.add_function(copy_kernel())
    op = x.add_op("c")
    op.add_load("bb", "x")
    op.add_store("out", "x")
    op.add_function(copy_kernel())
    return prog


def test_cyclic_dependence_is_reported():
    with pytest.raises(ExtractError, match=r"cyclic dependence: op a reads bb\[0\] of bb, which "
                                           r"op b writes only after depending on op a"):
        raw_dependences(extract(cyclic_program()))


def test_latencies_from_constraints_file(tmp_path):
    arch = tmp_path / "slow.toml"
    arch.write_text("[schedule]\npe_latency = 2\nmem_read_latency = 3\nmem_write_latency = 1\n"
                    "[pub]\ninput_ports = 1\n[controller]\ncycle_width = 24\n")
    params = HwParams.from_arch(str(arch))
    assert (params.pe_latency, params.mem_read_latency, params.mem_write_latency) == (2, 3, 1)
    assert (params.write_ports, params.read_ports, params.cycle_width) == (1, 2, 24)
    poly = extract(brighten_blur(tiles=1, n=4), params)
    assert poly.ops["Brighten"].latency == 3 + 2 * 1 + 1
    assert poly.ops["Blur"].latency == 3 + 2 * 4 + 1
