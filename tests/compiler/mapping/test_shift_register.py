"""Shift-register introduction on thesis Fig. 5.1 (distances from Table 5.2)."""
import pytest

from compiler.mapping.dependence import constant_distances
from compiler.mapping.shift_register import (Segment, delay_chain, delay_tree, group_taps,
                                             segment_kind, summarize)

from .fixtures import brighten_buffer

TAPS = {"port1": 0, "port2": 1, "port3": 64, "port4": 65}   # §5.1.3's sorted distances


def test_chain_fig_5_1b():
    segs = delay_chain("in", TAPS)
    assert segs == [Segment("in", "port1", 0, "wire"),
                    Segment("port1", "port2", 1, "registers"),
                    Segment("port2", "port3", 63, "memory"),
                    Segment("port3", "port4", 1, "registers")]


def test_tree_fig_5_1c():
    assert group_taps(TAPS) == [["port1", "port2"], ["port3", "port4"]]
    segs = delay_tree("in", TAPS)
    assert segs == [Segment("in", "port1", 0, "wire"),
                    Segment("port1", "port2", 1, "registers"),
                    Segment("in", "port3", 64, "memory"),
                    Segment("port3", "port4", 1, "registers")]
    # paper §V-C: two shift registers and a memory that delays by 64 cycles
    assert summarize(segs) == {"memories": 1, "shift_registers": 2, "register_delay": 2,
                               "wires": 1}


def test_threshold_is_configurable():
    assert segment_kind(20) == "registers" and segment_kind(21) == "memory"
    assert group_taps(TAPS, threshold=100) == [["port1", "port2", "port3", "port4"]]
    segs = delay_tree("in", TAPS, threshold=100)
    assert [s.kind for s in segs] == ["wire", "registers", "registers", "registers"]
    assert sum(s.delay for s in segs) == 65
    with pytest.raises(ValueError):
        segment_kind(-1)


def test_from_dependence_analysis():
    d = constant_distances(brighten_buffer())
    segs = delay_tree("brighten", {k: v.delay for k, v in d.items()})
    assert [(s.src, s.dst, s.delay, s.kind) for s in segs] == [
        ("brighten", "blur_4", 0, "wire"), ("blur_4", "blur_3", 1, "registers"),
        ("brighten", "blur_2", 64, "memory"), ("blur_2", "blur_1", 1, "registers")]
