"""Circular buffers across a tile loop (thesis Fig. 4.1 + §5.6), the exact SRAM aliasing check,
delay memories laid out by their stream, and bank selection (a 2x2-unrolled demosaic, §5.2)."""
from dataclasses import replace

import numpy as np
import pytest

from apps import get_app
from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping.bank_select import split_by_writer, split_port
from compiler.mapping.common import Affine, MappingError
from compiler.mapping.linearize import tile_dims, versions_match, with_tile_dims
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.vectorize import WordStream, pub_configs
from compiler.mapping.pub_model import check_buffer
from compiler.schedule.report import schedule_program
from ubgen.arch import PUBParams, load_arch

from .fixtures import port

PUB = PUBParams()


def tiled_brighten(n=16, tiles=3, read_tile_shift=0):
    """Fig. 4.1 / Fig. 4.18: every tile ``t`` rewrites ``brighten[x, y]`` (x + n*y + n*n*t) and
    the fused 2x2 blur reads it one row and one pixel later. ``read_tile_shift`` moves the
    reads one tile later (then a read sees the *next* tile's data: not a pure versioning)."""
    per = n * n
    wdom = f"{{ br[t, y, x] : 0 <= t < {tiles} and 0 <= x < {n} and 0 <= y < {n} }}"
    rdom = f"{{ bl[t, y, x] : 0 <= t < {tiles} and 0 <= x < {n - 1} and 0 <= y < {n - 1} }}"
    ports = [port("br", "in", wdom, "{ br[t, y, x] -> brighten[x, y] }",
                  f"{{ br[t, y, x] -> [x + {n}y + {per}t] }}")]
    start = n + 1 + read_tile_shift * per
    for k, (dx, dy) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        ports.append(port(f"bl{k}", "out", rdom,
                          f"{{ bl[t, y, x] -> brighten[x + {dx}, y + {dy}] }}",
                          f"{{ bl[t, y, x] -> [{start} + x + {n}y + {per}t] }}"))
    return UnifiedBuffer("brighten", [n, n], "temp", "u16", ports)


def test_tile_loop_is_an_extra_address_dimension():
    ext = [(16, 16, 3), (15, 15, 3)]
    addr = [(Affine(0, (1, 0, 0)), Affine(0, (0, 1, 0)))] * 2
    assert tile_dims(ext, addr) == 1
    aug = with_tile_dims(ext[0], addr[0], 1)
    assert aug[2] == Affine(0, (0, 0, 1))
    # an address that moves with the outer loop is not a tile version
    assert tile_dims(ext, [(Affine(0, (1, 0, 0)), Affine(0, (0, 1, 1)))] * 2) == 0


def test_versions_match_is_exact():
    # element 0 written at cycles 0 (version 0) and 10 (version 1)
    wt, we, wv = np.array([0, 10]), np.array([0, 0]), np.array([0, 1])
    assert versions_match(wt, we, wv, np.array([5, 12]), np.array([0, 0]), np.array([0, 1]))
    # a read at 12 claiming version 0 sees version 1: the versioning is wrong
    assert not versions_match(wt, we, wv, np.array([12]), np.array([0]), np.array([0]))


def test_tiled_brighten_is_one_circular_mem():
    # thesis Fig. 3.1 / 5.1c: shift registers and ONE memory; the memory holds one row (n live
    # pixels, §5.6: (1, n) mod n = (1, 0)) although every tile rewrites the same addresses
    n = 32
    ub = tiled_brighten(n)
    impl = map_buffer(ub, "pub")
    (pub,) = impl.pubs
    assert impl.mems == 1 and pub.tiles == 1
    assert pub.capacity_words == n and pub.sram_words == n
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()
    assert rep.checked == 3 * 4 * (n - 1) ** 2


def tiled_upsample(n=16, tiles=3, delay=20):
    """A buffer rewritten by every tile and read twice per element (``buf[x2 / 2, y]``, the
    upsample pattern): the read is not a delay line, so it stays a memory bank addressed by
    element, and only the tile loop as an address dimension makes it circular."""
    per = 2 * n * n
    wdom = f"{{ w[t, y, x] : 0 <= t < {tiles} and 0 <= x < {n} and 0 <= y < {n} }}"
    rdom = f"{{ r[t, y, x] : 0 <= t < {tiles} and 0 <= x < {2 * n} and 0 <= y < {n} }}"
    return UnifiedBuffer("buf", [n, n], "temp", "u16", [
        port("w", "in", wdom, "{ w[t, y, x] -> buf[x, y] }",
             f"{{ w[t, y, x] -> [2x + {2 * n}y + {per}t] }}"),
        port("r", "out", rdom, "{ r[t, y, x] -> buf[floor(x / 2), y] }",
             f"{{ r[t, y, x] -> [{delay} + x + {2 * n}y + {per}t] }}")])


def test_tile_versions_make_a_rewritten_bank_circular():
    ub = tiled_upsample()
    impl = map_buffer(ub, "pub")
    (pub,) = impl.pubs
    # a handful of live pixels (the read trails the write by ~delay/2 pixels), not the 16x16
    # tile: circular capacity 16 (two wide-fetch rounds of 8 would do; next power of two)
    assert pub.tiles == 1 and 0 < pub.capacity_words <= 16
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()
    assert rep.checked == 3 * 2 * 16 * 16


def test_reads_of_the_next_tile_are_not_versioned():
    # with reads one tile late, each tile's reads see the next tile's writes: the tile loop is
    # not a version dimension; the mapping must still be exact (or refuse)
    ub = tiled_brighten(8, 3, read_tile_shift=1)
    try:
        impl = map_buffer(ub, "pub")
    except MappingError as e:
        assert str(e).startswith("buffer brighten:")
        return
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()


def _delay_line(reduce_rows: bool):
    # a writer of 4 rows of 64 at one pixel per cycle; the reader 128 cycles (two rows) later
    e = Affine(0, (1, 64))
    addr = Affine(0, (1, 64)) if not reduce_rows else Affine(0, (1, 0))
    w = WordStream("in", (64, 4), Affine(0, (1, 64)), addr, e)
    r = WordStream("out", (64, 4), Affine(128, (1, 64)), addr, e)
    return [w], [r]


def test_sram_check_finds_aliasing_of_live_words():
    # 128 live words: addresses (1, 64) mod 128 keep rows y and y+2 apart in a 32-word SRAM...
    ins, outs = _delay_line(reduce_rows=False)
    pub_configs(ins, outs, PUB, "m", sram_wrap=128 // PUB.fetch_width)
    # ...but a 16-word SRAM (64 pixels) overwrites a row before it is read
    with pytest.raises(MappingError):
        pub_configs(ins, outs, PUB, "m", sram_wrap=64 // PUB.fetch_width)
    # and so do offsets reduced modulo a too small capacity, (1, 64) mod 64 = (1, 0)
    ins, outs = _delay_line(reduce_rows=True)
    with pytest.raises(MappingError):
        pub_configs(ins, outs, PUB, "m")


def demosaic_like(delay: int, width=32, rows=6, readers=1):
    """Four writers of ``x mod 4 = k`` landing together every 4 cycles (an unrolled producer,
    like a demosaic unrolled over 2x2 quads) and one reader of every pixel at one per cycle,
    ``delay`` cycles after the quad lands (``readers`` identical readers: a colour correction
    reads each channel three times)."""
    ports = []
    for k in range(4):
        dom = f"{{ w{k}[y, i] : 0 <= i < {width // 4} and 0 <= y < {rows} }}"
        ports.append(port(f"w{k}", "in", dom, f"{{ w{k}[y, i] -> buf[4i + {k}, y] }}",
                          f"{{ w{k}[y, i] -> [4i + {width}y] }}"))
    for name in ("r", "r2")[:readers]:
        rdom = f"{{ {name}[y, x] : 0 <= x < {width} and 0 <= y < {rows} }}"
        ports.append(port(name, "out", rdom, f"{{ {name}[y, x] -> buf[x, y] }}",
                          f"{{ {name}[y, x] -> [{delay} + x + {width}y] }}"))
    return UnifiedBuffer("buf", [width, rows], "temp", "u16", ports)


def test_split_port_by_writer():
    ub = demosaic_like(40)
    subs = split_port(ub.outputs[0], ub.inputs)
    assert [s.name for s in subs] == ["r_w0", "r_w1", "r_w2", "r_w3"]
    assert sum(s.domain.count_val().to_python() for s in subs) == 32 * 6
    # a port that reads one writer's elements only is not split
    assert split_port(ub.outputs[0], ub.inputs[:1]) is None
    new, selects = split_by_writer(ub)
    assert len(new.outputs) == 4 and selects[0].dst == "r"


@pytest.mark.parametrize("delay, mems", [(8, 0), (40, 4)])
def test_bank_select_maps_a_reader_of_all_banks(delay, mems):
    # the reader spans the four banks cyclic banking makes for the four writers; split by
    # writer, each part is a constant delay (8 + k: registers; 40 + k: a delay memory laid out
    # by its own dense stream although the writer strides by 4) and a select rebuilds the port;
    # the second, identical reader shares the first one's select through a wire (§5.1.4)
    ub = demosaic_like(delay, readers=2)
    impl = map_buffer(ub, "pub")
    assert impl.mems == mems
    assert len(impl.selects) == 1 and sorted(impl.selects[0].srcs) == ["r_w0", "r_w1", "r_w2",
                                                                        "r_w3"]
    assert any((s.src, s.dst, s.delay) == ("r", "r2", 0) for s in impl.shift_registers)
    assert impl.connections == {"r": "r", "r2": "r2"} and impl.outputs == ["r", "r2"]
    rep = check_buffer(ub, impl)
    assert rep.ok, rep.summary()
    assert rep.checked == 2 * 32 * 6


def test_plain_layout_when_versions_need_more_tiles():
    """resnet with two output-channel tiles reloads in_mem per tile; a bank holds both
    input-channel blocks (2 x 12 rows x 12 words at 10x10 pixels). Versioned by tile the block
    needs twice the words (no circular reuse: it is live as a whole), so with 512-word PUBs the
    plain layout (one tile, 288 words) is chosen over the versioned one (two tiles); with
    1024-word PUBs both fit and the versioned one is kept. The plain one passes the model
    check."""
    res = schedule_program(get_app("resnet").build(width=10, height=10))
    ub = res.buffers["in_mem"]
    assert res.optimized.info["tiles"] == 2 and res.optimized.info["storage_copies"]["in_mem"] == 1
    arch = load_arch("pub")
    impls = {}
    for depth, words in ((128, 288), (256, 576)):
        small = replace(arch, pub=replace(arch.pub, sram_depth=depth))
        impls[depth] = map_buffer(ub, small)
        assert len(impls[depth].pubs) == 8
        assert all(p.tiles == 1 and p.sram_words == words for p in impls[depth].pubs)
    rep = check_buffer(ub, impls[128], replace(arch.pub, sram_depth=128))
    assert rep.ok and rep.checked > 0, rep.summary()
