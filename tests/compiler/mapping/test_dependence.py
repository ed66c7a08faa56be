"""Dependence-distance analysis on the brighten buffer of thesis Fig. 3.2 (Tables 5.1, 5.2)."""
import islpy as isl

from compiler.mapping.common import t2addr
from compiler.mapping.dependence import (constant_distances, set_values, time_differences,
                                         value_flow, write_to_read)

from .fixtures import brighten_buffer, port


def test_t2addr_table_5_1():
    ub = brighten_buffer()
    w = t2addr(ub.inputs[0])
    # [x + 64y] -> [x, y]: cycle 130 is x = 2, y = 2
    assert w.intersect_domain(isl.Set("{ [130] }")).range().is_equal(
        isl.Set("{ brighten[2, 2] }"))
    r4 = t2addr(ub.outputs[3])
    # [65 + x + 64y] -> [x + 1, y + 1]: cycle 65 reads (1, 1)
    assert r4.intersect_domain(isl.Set("{ [65] }")).range().is_equal(
        isl.Set("{ brighten[1, 1] }"))


def test_time_differences_table_5_2():
    ub = brighten_buffer()
    w = ub.inputs[0]
    got = [set_values(time_differences(w, r)) for r in ub.outputs]
    assert got == [[65], [64], [1], [0]]
    # eq. 5.1 for pair [0, 3]: [x + 64y] -> [65 + x + 64(y - 1)]
    m = write_to_read(w, ub.outputs[2])
    assert m.intersect_domain(isl.Set("{ [130] }")).range().is_equal(isl.Set("{ [131] }"))


def test_constant_distances_and_value_flow():
    ub = brighten_buffer()
    d = constant_distances(ub)
    assert {k: v.delay for k, v in d.items()} == {"blur_1": 65, "blur_2": 64, "blur_3": 1,
                                                   "blur_4": 0}
    assert all(v.pin == "brighten" for v in d.values())
    vf = value_flow(ub, ub.outputs[0])
    assert vf.intersect_domain(isl.Set("{ [65] }")).range().is_equal(isl.Set("{ [0, 0] }"))


def test_rewritten_element_is_not_a_constant_delay():
    # an accumulator: acc[0] written at every cycle 0..9, read at 5 and 10 -> reads see the
    # latest write (distances 0 and 1 differ from eq. 5.3's full set)
    ub_ports = [port("w", "in", "{ w[i] : 0 <= i < 10 }", "{ w[i] -> acc[0] }", "{ w[i] -> [i] }"),
                port("r", "out", "{ r[j] : 0 <= j < 2 }", "{ r[j] -> acc[0] }",
                     "{ r[j] -> [5 + 5j] }")]
    from compiler.ir.ubuf import UnifiedBuffer
    ub = UnifiedBuffer("acc", [1], "temp", "u16", ub_ports)
    assert set_values(time_differences(*ub_ports)) == list(range(-4, 11))
    vf = value_flow(ub, ub_ports[1])
    assert vf.intersect_domain(isl.Set("{ [10] }")).range().is_equal(isl.Set("{ [0, 9] }"))
    assert vf.intersect_domain(isl.Set("{ [5] }")).range().is_equal(isl.Set("{ [0, 5] }"))
    assert constant_distances(ub) == {}
