"""Register level of the hierarchy (compiler/mapping/registers.py) and lane banking of
isomorphic accumulator writers (compiler/mapping/lane_banking.py), checked by the
register-driven model against the unified buffer's isl specification."""
import pytest

from compiler.ir.ubimpl import RegisterFile
from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping.banking import choose_banking
from compiler.mapping.common import MappingError
from compiler.mapping.lane_banking import choose_lane_banking, lane_factors, lanes
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.registers import RFTile, register_file, rf_tile_registers
from compiler.mapping.pub_model import check_buffer, simulate_rf_tile
from ubgen.arch import MemParams, PUBParams
from ubgen.controller import AffineMap, ControllerConfig

from .fixtures import port


def weights(n: int = 4, first_read: int = 10) -> UnifiedBuffer:
    """``n`` weights loaded one per cycle, then read by ``n`` concurrent consumers (one weight
    each) at every pixel of a 16-pixel row (mobilenet's ``w_dw_mem`` in small)."""
    ports = [port("load_w", "in", f"{{ lw[c] : 0 <= c < {n} }}", "{ lw[c] -> w[c] }",
                  "{ lw[c] -> [c] }")]
    for k in range(n):
        ports.append(port(f"use_{k}", "out", "{ r[x] : 0 <= x < 16 }", f"{{ r[x] -> w[{k}] }}",
                          f"{{ r[x] -> [{first_read} + x] }}"))
    return UnifiedBuffer("w", [n], "temp", "s16", ports)


def test_one_word_banks_become_registers():
    ub = weights()
    impl = map_buffer(ub, "pub")
    assert impl.level == "REG" and impl.mems == 0
    assert [rf.words for rf in impl.register_files] == [1, 1, 1, 1]
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()
    assert rep.checked == 4 * 16


def test_register_threshold_and_mem_hint():
    ub = weights()
    assert register_file(ub, "w", max_words=3) is None
    rf = register_file(ub, "w", max_words=4)
    assert rf.words == 4 and rf.addr_width == 2
    assert [c.addresses["addr"].start for c in rf.reads] == [0, 1, 2, 3]
    # threshold 0 keeps every bank in a memory tile; so does the MEM level hint
    for impl in (map_buffer(ub, "pub", threshold=0), map_buffer(ub, "pub", level="MEM")):
        assert impl.level == "MEM" and impl.mems >= 1 and not impl.register_files
        assert check_buffer(ub, impl).ok


def test_reg_hint_refused_when_memory_remains():
    with pytest.raises(MappingError, match="buffer w: stored in registers"):
        map_buffer(weights(), "pub", threshold=0, level="REG")


def test_register_file_model_write_through_and_conflict():
    """Hand-computed: register 1 written at cycles 2 and 5 (port 0) and 5 (port 1: conflict,
    the higher port wins); reads at 2..6 see the write of their own cycle."""
    w0 = ControllerConfig((2,), AffineMap(2, (3,)), {"addr": AffineMap(1, (0,))})
    w1 = ControllerConfig((1,), AffineMap(5, (1,)), {"addr": AffineMap(1, (0,))})
    r0 = ControllerConfig((5,), AffineMap(2, (1,)), {"addr": AffineMap(1, (0,))})
    r1 = ControllerConfig((1,), AffineMap(3, (1,)), {"addr": AffineMap(0, (0,))})
    rf = RegisterFile("rf", "b", 2, ["a", "b"], ["x", "y"], [w0, w1], [r0, r1])
    regs = rf_tile_registers(RFTile([rf]), PUBParams(), MemParams())
    run = simulate_rf_tile(regs, PUBParams(), MemParams(), [{2: 7, 5: 8}, {5: 9}])
    assert run.outputs[0] == {2: 7, 3: 7, 4: 7, 5: 9, 6: 9}
    assert run.outputs[1] == {3: None}
    assert run.conflicts == [5]


def accumulator(lanes_n: int = 4, start: int = 60, drain: int = 96) -> UnifiedBuffer:
    """gemm's ``c_mem`` in small (thesis Fig. 4.3 structure): ``init`` zeroes a 16 x 4
    accumulator row by row; ``lanes_n`` isomorphic update ops (unrolled columns ``4 jo + j``)
    read and rewrite it for two reduction steps ``ko``, starting while the init still runs;
    ``drain`` reads it all. Write-to-read distances are at least 2 x FW (thesis §5.5.3)."""
    ports = [port("init", "in", "{ z[i, x] : 0 <= i < 4 and 0 <= x < 16 }",
                  "{ z[i, x] -> acc[x, i] }", "{ z[i, x] -> [x + 16i] }")]
    dom = "{ u[ko, i, jo] : 0 <= ko < 2 and 0 <= i < 4 and 0 <= jo < 4 }"
    sched = f"{{ u[ko, i, jo] -> [{start} + jo + 4i + 16ko] }}"
    for j in range(lanes_n):
        acc = f"{{ u[ko, i, jo] -> acc[{lanes_n}jo + {j}, i] }}"
        ports.append(port(f"update_{j}_st", "in", dom, acc, sched, latency=2))
        ports.append(port(f"update_{j}_ld", "out", dom, acc, sched))
    ports.append(port("drain", "out", "{ d[i, x] : 0 <= i < 4 and 0 <= x < 16 }",
                      "{ d[i, x] -> acc[x, i] }", f"{{ d[i, x] -> [{drain} + x + 16i] }}"))
    return UnifiedBuffer("acc", [16, 4], "temp", "s16", ports)


def test_lane_factors_ignore_the_init_and_drain_walks():
    ub = accumulator()
    # the GCD heuristic over whole concurrent groups (init overlaps the first updates) gives
    # factor 1 and duplicates: every copy would take all 5 writers
    assert choose_banking(ub, ub.outputs, 2, 2).duplicated
    assert sorted(len(lane) for lane in lanes(ub.inputs)) == [1, 4]
    assert lane_factors(ub, ub.outputs, 2, 2) == (4, 1)
    assert choose_lane_banking(ub, ub.outputs, 2, 2).factors == (4, 1)
    # one input port per memory cannot hold init + an update lane
    assert choose_lane_banking(ub, ub.outputs, 2, 1) is None


@pytest.mark.parametrize("threshold", [0, 20])
def test_accumulator_maps_to_lane_banks_and_passes_the_model(threshold):
    """Threshold 0: four PUBs, each init + one update lane in, its lane + the drain piece out.
    Default threshold 20: the 16-word banks are register files instead."""
    ub = accumulator()
    impl = map_buffer(ub, "pub", threshold=threshold)
    blocks = impl.pubs if threshold == 0 else impl.register_files
    assert len(blocks) == 4
    assert (impl.mems, impl.level) == ((4, "MEM") if threshold == 0 else (0, "REG"))
    for b in blocks:
        assert len(b.inputs) == 2 and len(b.outputs) == 2
    (sel,) = impl.selects
    assert sel.dst == "drain" and len(sel.srcs) == 4
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()
    assert rep.checked == 4 * 32 + 64


def test_map_report_counts_register_file_words():
    from compiler.mapping.report import map_report
    from ubgen.arch import load_arch
    rep = map_report("w", {"w": map_buffer(weights(), "pub")}, {}, "pub", load_arch("pub"))
    assert rep["mems"] == 0 and rep["register_file_words"] == 4
    assert rep["register_file_tiles"] == 2          # two one-word banks per tile (its ports)
    assert rep["buffers"][0]["level"] == "REG"
