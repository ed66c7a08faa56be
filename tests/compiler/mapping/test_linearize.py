"""Address linearization (thesis §5.6, paper §V-C)."""
import numpy as np

from compiler.mapping.common import Affine
from compiler.mapping.linearize import (linear, live_span, next_pow2, offset_vector,
                                        reduce_offsets)


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
