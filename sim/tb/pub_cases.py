"""Test cases for the generated PUB and DP-SRAM + AG buffers (pure Python, no cocotb).

Each case holds hand-written controller configs in affine form (what the compiler would emit),
the input streams, and the expected output streams written straight from the unified-buffer
specification ("output row y col x appears at cycle 64 + 64y + x with the value input at
(x, y)"), never from a simulation. Cycles are unstalled cycles after ``run`` goes high.

Timing contract (ubgen/pub/pub.py): AGG words are visible one cycle after in2agg, an SRAM write
is visible to a read one cycle later, and an SRAM read at c reaches the TB for a tb2out at c+2.
Where a figure's numbers do not meet that contract the case says so and shifts minimally.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from typing import Callable

from ubgen.controller import AffineMap, ControllerConfig
from ubgen.regmap import RegisterMap

Encoder = Callable[[dict[str, ControllerConfig]], dict[str, int]]


@dataclass
class Case:
    name: str
    configs: dict[str, ControllerConfig]
    inputs: dict[int, dict[int, int]]                 # port -> unstalled cycle -> word
    expected: dict[int, list[tuple[int, int]]]        # port -> [(unstalled cycle, word)]
    horizon: int                                      # unstalled cycles to run
    regs: dict[str, int] = field(default_factory=dict)  # mode, chain_en, tile_id
    window: dict[int, int] = field(default_factory=dict)  # word address -> word (ROM load)
    expect_error: bool = False
    stall: float = 0.0                                # probability of a stalled cycle
    seed: int = 1


def ctl(extents, start, strides, **addrs) -> ControllerConfig:
    """``ctl((64, 64), 0, (1, 64), agg=(0, (1, 0)))``: an affine controller config."""
    return ControllerConfig(tuple(extents), AffineMap(start, tuple(strides)),
                            {ag: AffineMap(s, tuple(st)) for ag, (s, st) in addrs.items()})


def case_registers(case: Case, encode: Encoder, tile_id: int | None = None) -> dict[str, int]:
    """A case's register values by name: every controller (unused ones disabled) encoded by the
    block's encoder (``ubgen.pub.encode_pub`` / ``ubgen.dpbuf.encode_dpbuf`` with the block's
    parameters), then the block registers (and ``tile_id`` when given)."""
    values = dict(encode(case.configs))
    values.update(case.regs)
    if tile_id is not None:
        values["tile_id"] = tile_id
    return values


def register_values(case: Case, encode: Encoder, regmap: RegisterMap,
                    tile_id: int | None = None) -> list[tuple[int, int]]:
    """Configuration bus writes for a case (:func:`case_registers` through
    :meth:`RegisterMap.writes`)."""
    return regmap.writes(case_registers(case, encode, tile_id))


def image(w: int, h: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(1 << 16) for _ in range(w)] for _ in range(h)]


def raster_input(img) -> dict[int, int]:
    """Pixel (x, y) of a W-wide image at cycle x + W*y."""
    w = len(img[0])
    return {x + w * y: v for y, row in enumerate(img) for x, v in enumerate(row)}


def delayed(img, delay: int) -> list[tuple[int, int]]:
    """The specification of a delay line: pixel (x, y) at cycle delay + x + W*y."""
    w = len(img[0])
    return [(delay + x + w * y, v) for y, row in enumerate(img) for x, v in enumerate(row)]


def _horizon(expected) -> int:
    return max(c for stream in expected.values() for c, _ in stream) + 8


def gaussian_line_buffer(stall: float = 0.0) -> Case:
    """docs/design.md §4 fixture: a 64x64 image in, rows delayed by 64 and 128 cycles out.

    The fixture's numbers are legal under our timing: agg2sram fires at 0 mod 4, sram2tb_0 at
    1 mod 4 and sram2tb_1 at 2 mod 4 (no SRAM conflict); sram2tb at 61 + 4xo + 64y fills the TB
    for tb2out at 64 + 4xo + 64y (needs >= c+2), and sram2tb_1 at 126 for 128 (exactly c+2).
    The remaining AG strides: AGG slot xo mod 2, TB slot xo mod 2, TB word x mod 8.
    The SRAM address xo + 16y exceeds 512 wide words and wraps (a 32-row circular buffer).
    """
    img = image(64, 64, seed=11)
    cfg = {
        "in2agg_0": ctl((64, 64), 0, (1, 64), agg=(0, (1, 0))),
        "agg2sram_0": ctl((16, 64), 4, (4, 64), agg=(0, (1, 0)), sram=(0, (1, 16))),
        "sram2tb_0": ctl((16, 64), 61, (4, 64), sram=(0, (1, 16)), tb=(0, (1, 0))),
        "sram2tb_1": ctl((16, 64), 126, (4, 64), sram=(0, (1, 16)), tb=(0, (1, 0))),
        "tb2out_0": ctl((64, 64), 64, (1, 64), tb=(0, (1, 0))),
        "tb2out_1": ctl((64, 64), 128, (1, 64), tb=(0, (1, 0))),
    }
    exp = {0: delayed(img, 64), 1: delayed(img, 128)}
    return Case("gaussian" + ("_stall" if stall else ""), cfg, {0: raster_input(img)}, exp,
                _horizon(exp), stall=stall, seed=5)


def brighten_blur_delay(rows: int = 8, width: int = 64) -> dict[str, ControllerConfig]:
    """Paper Fig. 9 (64-cycle delay through AGG/SRAM/TB) with SRAM address x mod 64 (xo).

    The figure's SRAM->TB time 63 + 64y + 4xo is one cycle late for our TB (the word reaches
    the TB at the end of c+1 and tb2out starts at 64 + 64y + 4xo, so c <= 62): we use 62, which
    is 2 mod 4 and so never meets an AGG->SRAM write (0 mod 4).
    """
    xo = width // 4
    return {
        "in2agg_0": ctl((width, rows), 0, (1, width), agg=(0, (1, 0))),
        "agg2sram_0": ctl((xo, rows), 4, (4, width), agg=(0, (1, 0)), sram=(0, (1, 0))),
        "sram2tb_0": ctl((xo, rows), 62, (4, width), sram=(0, (1, 0)), tb=(0, (1, 0))),
        "tb2out_0": ctl((width, rows), 64, (1, width), tb=(0, (1, 0))),
    }


def brighten_blur() -> Case:
    img = image(64, 8, seed=12)
    exp = {0: delayed(img, 64)}
    return Case("brighten_blur", brighten_blur_delay(), {0: raster_input(img)}, exp,
                _horizon(exp))


def downsample() -> Case:
    """Thesis Fig. 6.3: read every other pixel of every other row of an 8x8 image.

    The 8x8 image is written row-major (two wide words per row); sram2tb fetches the two words
    of every even row at 9 + 4xo + 16j (1 mod 4); tb2out reads TB word (2i + 16j) mod 8, i.e.
    the thesis's strides (2, 16) over extents (4, 4), at cycle 11 + 4i + 16j.
    """
    img = image(8, 8, seed=13)
    cfg = {
        "in2agg_0": ctl((8, 8), 0, (1, 8), agg=(0, (1, 0))),
        "agg2sram_0": ctl((2, 8), 4, (4, 8), agg=(0, (1, 0)), sram=(0, (1, 2))),
        "sram2tb_0": ctl((2, 4), 9, (4, 16), sram=(0, (1, 4)), tb=(0, (1, 0))),
        "tb2out_0": ctl((4, 4), 11, (4, 16), tb=(0, (2, 16))),
    }
    exp = {0: [(11 + 4 * i + 16 * j, img[2 * j][2 * i]) for j in range(4) for i in range(4)]}
    return Case("downsample", cfg, {0: raster_input(img)}, exp, _horizon(exp))


def transpose_stream(n: int = 8) -> list[tuple[int, int, int]]:
    """The 4x4-block transposed order of an n x n matrix (thesis §6.1.3 footnote): for each
    column block xo, row block yo, column xi, row yi: (row, col, destination address) where the
    destination address is the element's position in the transposed matrix (row-major)."""
    out = []
    for xo in range(n // 4):
        for yo in range(n // 4):
            for xi in range(4):
                for yi in range(4):
                    r, c = 4 * yo + yi, 4 * xo + xi
                    out.append((r, c, c * n + r))
    return out


def transpose() -> Case:
    """Full-rate 4x4-block transpose of an 8x8 matrix: one output word per cycle.

    Needs four TB slots (a whole 4x4 block is live at once; with two slots the SRAM would have
    to deliver one wide word per output word), so this case runs on a PUB with tb_depth = 4.
    A fetched word goes to the TB slot of its SRAM address's low bits, so the matrix is
    written row-major with a row pitch of 3 wide words (odd: four stacked rows 3yi + xo land in
    four different slots (3yi + xo) mod 4). After the last write (cycle 64) sram2tb fetches
    the four rows of block (xo, yo) at 66 + yi + 16yo + 32xo, and tb2out reads TB word
    4((3yi + xo) mod 4) + xi, i.e. (12yi + xi + 4xo) mod 16, at 68 + yi + 4xi + 16yo + 32xo.
    """
    n = 8
    img = image(n, n, seed=14)
    cfg = {
        "in2agg_0": ctl((8, 8), 0, (1, 8), agg=(0, (1, 0))),
        "agg2sram_0": ctl((2, 8), 4, (4, 8), agg=(0, (1, 0)), sram=(0, (1, 3))),
        "sram2tb_0": ctl((4, 2, 2), 66, (1, 16, 32), sram=(0, (3, 12, 1)),
                         tb=(0, (3, 0, 1))),
        "tb2out_0": ctl((4, 4, 2, 2), 68, (1, 4, 16, 32), tb=(0, (12, 1, 0, 4))),
    }
    exp = {0: [(68 + t, img[r][c]) for t, (r, c, _) in enumerate(transpose_stream(n))]}
    return Case("transpose", cfg, {0: raster_input(img)}, exp, _horizon(exp))


def sliding_window() -> Case:
    """Thesis §5.5.2, Fig. 5.7 example A: a 5-tap 1-D window over a 32-word row (36 words in),
    read x-outer, dx-inner: output (x, dx) = in[x + dx] at cycle 28 + 5x + dx.

    The TB is read at word (x + dx) mod 8 (strides (1, 1)), so each fetched wide word is reused
    by up to 5 windows; the SRAM is read only 9 times, word j at 5 + 20j into TB slot j mod 2
    (1 mod 4, so never with the AGG->SRAM writes at 4 + 4j).
    """
    rng = random.Random(15)
    row = [rng.randrange(1 << 16) for _ in range(36)]
    cfg = {
        "in2agg_0": ctl((36,), 0, (1,), agg=(0, (1,))),
        "agg2sram_0": ctl((9,), 4, (4,), agg=(0, (1,)), sram=(0, (1,))),
        "sram2tb_0": ctl((9,), 5, (20,), sram=(0, (1,)), tb=(0, (1,))),
        "tb2out_0": ctl((5, 32), 28, (1, 5), tb=(0, (1, 1))),
    }
    exp = {0: [(28 + 5 * x + dx, row[x + dx]) for x in range(32) for dx in range(5)]}
    return Case("sliding_window", cfg, {0: dict(enumerate(row))}, exp, _horizon(exp))


def dual_port(stall: float = 0.0, n: int = 256) -> Case:
    """Both input and both output ports at once, using all four SRAM slots of every 4 cycles:
    agg2sram_0 at 0 mod 4, agg2sram_1 at 1, sram2tb_0 at 2, sram2tb_1 at 3. Output 0 is stream A
    delayed by 12; output 1 is stream B delayed by 13 with each group of four reversed.

    The delays make TB reuse tight: the fetch at c refills a slot whose old word is read for the
    last time at c+1 (legal, the refill lands at the end of c+1). Under stalls this is what
    checks that a word in flight from the SRAM waits for the next unstalled cycle."""
    rng = random.Random(16)
    a = [rng.randrange(1 << 16) for _ in range(n)]
    b = [rng.randrange(1 << 16) for _ in range(n)]
    wn = n // 4
    cfg = {
        "in2agg_0": ctl((n,), 0, (1,), agg=(0, (1,))),
        "in2agg_1": ctl((n,), 0, (1,), agg=(0, (1,))),
        "agg2sram_0": ctl((wn,), 4, (4,), agg=(0, (1,)), sram=(0, (1,))),
        "agg2sram_1": ctl((wn,), 5, (4,), agg=(0, (1,)), sram=(wn, (1,))),
        "sram2tb_0": ctl((wn,), 6, (4,), sram=(0, (1,)), tb=(0, (1,))),
        "sram2tb_1": ctl((wn,), 7, (4,), sram=(wn, (1,)), tb=(0, (1,))),
        "tb2out_0": ctl((n,), 12, (1,), tb=(0, (1,))),
        "tb2out_1": ctl((4, wn), 13, (1, 4), tb=(3, (-1, 4))),
    }
    exp = {0: [(12 + t, a[t]) for t in range(n)],
           1: [(13 + 4 * j + i, b[4 * j + 3 - i]) for j in range(wn) for i in range(4)]}
    return Case("dual_port" + ("_stall" if stall else ""), cfg,
                {0: dict(enumerate(a)), 1: dict(enumerate(b))}, exp, _horizon(exp),
                stall=stall, seed=7)


def gamma_rom(stall: float = 0.0, n: int = 300) -> Case:
    """ROM mode: a 256-entry gamma curve loaded through the configuration window, then one
    lookup per cycle: address a at cycle c gives table[a] at cycle c+1."""
    table = {i: round(65535 * (i / 255) ** (1 / 2.2)) for i in range(256)}
    rng = random.Random(17)
    addrs = [rng.randrange(256) for _ in range(n)]
    exp = {0: [(c + 1, table[a]) for c, a in enumerate(addrs)], 1: []}
    return Case("gamma_rom" + ("_stall" if stall else ""), {}, {0: dict(enumerate(addrs))}, exp,
                n + 1, regs={"mode": 1}, window=table, stall=stall, seed=3)


def conflict() -> Case:
    """A schedule that writes the SRAM (agg2sram_0) and reads it (sram2tb_0) in the same
    cycle: the sticky error flag must be set."""
    cfg = {
        "in2agg_0": ctl((8,), 0, (1,), agg=(0, (1,))),
        "agg2sram_0": ctl((2,), 4, (4,), agg=(0, (1,)), sram=(0, (1,))),
        "sram2tb_0": ctl((2,), 8, (1,), sram=(0, (1,)), tb=(0, (1,))),
    }
    return Case("conflict", cfg, {0: {c: c for c in range(8)}}, {0: [], 1: []}, 16,
                expect_error=True)


PUB_CASES = {c.name: c for c in (gaussian_line_buffer(), gaussian_line_buffer(stall=0.25),
                                 brighten_blur(), downsample(), sliding_window(), dual_port(),
                                 dual_port(stall=0.3), gamma_rom(), gamma_rom(stall=0.3),
                                 conflict())}
TB4_CASES = {c.name: c for c in (transpose(),)}


def chained_delay() -> tuple[Case, int]:
    """Paper §V-C: the brighten-blur 64-word delay on PUBs of 32 words (pub_small), chained.
    The logical SRAM address xo (0..15) splits as TileID = floor(4xo/32) = xo >> 3 and physical
    address xo mod 8; both tiles get the same streams and configs except tile_id."""
    img = image(64, 8, seed=18)
    exp = {0: delayed(img, 64), 1: []}
    case = Case("chain", brighten_blur_delay(), {0: raster_input(img)}, exp, _horizon(exp),
                regs={"chain_en": 1})
    return case, 2


def dp_delay(stall: float = 0.0) -> Case:
    """DP-SRAM + AG: a 64-cycle delay line, write at x + 64y to address x, read at
    63 + x + 64y (data out at 64 + x + 64y)."""
    img = image(64, 8, seed=19)
    cfg = {"wr": ctl((64, 8), 0, (1, 64), addr=(0, (1, 0))),
           "rd": ctl((64, 8), 63, (1, 64), addr=(0, (1, 0)))}
    exp = {0: delayed(img, 64)}
    return Case("dp_delay" + ("_stall" if stall else ""), cfg, {0: raster_input(img)}, exp,
                _horizon(exp), stall=stall, seed=9)


DP_CASES = {c.name: c for c in (dp_delay(), dp_delay(stall=0.3))}

__all__ = ["Case", "ctl", "case_registers", "register_values", "PUB_CASES", "TB4_CASES", "DP_CASES",
           "chained_delay", "transpose_stream"]

