"""Address linearization (thesis §5.6, paper §V-C)."""
import numpy as np

from compiler.mapping.common import Affine, Stream
from compiler.mapping.linearize import (box_layout, linear, live_span, next_pow2, offset_vector,
                                        reduce_offsets, row_dimension)


def test_line_buffer_paper_v_c():
    # 64 x 64 image, 64 live pixels: (1, 64) mod 64 = (1, 0), linear address x
    o = offset_vector([64, 64])
    assert o == (1, 64)
    assert reduce_offsets(o, 64) == (1, 0)
    # addresses (x, y) over the iteration (x inner, y outer)
    lin = linear((Affine(0, (1, 0)), Affine(0, (0, 1))), reduce_offsets(o, 64), (0, 0))
    assert lin == Affine(0, (1, 0))


def test_transpose_buffer_eq_5_38():
    # TB address (4xo + xi + dxi, dxo); the row holds 35 words fetched as 9 wide words -> 36
    o = offset_vector([35, 2], pad=4)
    assert o == (1, 36)
    assert reduce_offsets(o, 8) == (1, 4)
    # iteration (xi, xo, dxi, dxo), innermost first
    a0 = Affine(0, (1, 4, 1, 0))
    a1 = Affine(0, (0, 0, 0, 1))
    assert linear((a0, a1), (1, 4), (0, 0)) == Affine(0, (1, 4, 1, 4))   # 4xo + 4dxo + xi + dxi


def test_live_span_of_delay_line():
    t = np.arange(4096)
    # written at t, read 64 cycles later: 64 live words (the write at the read's cycle excluded)
    assert live_span(t, t, t + 64, t) == 64
    assert next_pow2(64) == 64 and next_pow2(65) == 128 and next_pow2(1) == 1
    # non-monotonic write order: no circular reuse
    assert live_span(t, t[::-1], t + 5, t) is None


def test_writer_row_is_laid_out_innermost():
    """§5.5.1 needs unit-stride, wide-word aligned writes: resnet's in_mem[c, x, y] banked by
    channel lane keeps the channel block c first, but the input streams walk x; the layout
    puts x innermost (rows of 30 padded to 32), then c, then y."""
    # iteration (x 30, y 30, ci 2) innermost first; address dims (c, x, y) in buffer order
    write = Stream("load_input_0_st", (30, 30, 2), Affine(0, (1, 30, 900)),
                   (Affine(0, (0, 0, 1)), Affine(0, (1, 0, 0)), Affine(0, (0, 1, 0))))
    assert row_dimension([write]) == 1
    lows, offs, words = box_layout([write], pad=4, row=1)
    assert offs == (32, 1, 64) and words == 2 * 30 * 30
    assert linear(write.addr, offs, lows) == Affine(0, (1, 64, 32))
    # without the writers' row, buffer order: c innermost, x steps by 4 -- not aligned
    assert box_layout([write], pad=4)[1] == (1, 4, 120)
    # a writer whose innermost loop moves two address dimensions gives no row
    diag = Stream("d", (8,), Affine(0, (1,)), (Affine(0, (1,)), Affine(0, (1,))))
    assert row_dimension([diag]) is None and row_dimension([write, diag]) is None
