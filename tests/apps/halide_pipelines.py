"""Independent Halide (PyPI ``halide``) definitions of the stencil apps, used by test_apps.py to
cross-check each app's numpy ``reference()``: a third implementation, in Halide's own
semantics (16-bit wraparound, arithmetic shifts of signed types), written from the algorithm
descriptions in the app docstrings.

Index order: ``hl.Buffer(numpy)`` reverses the axes by default, so arrays go in transposed
(:func:`to_hl`) and come back transposed (:func:`from_hl`) to keep the project's ``arr[x, y]``.
"""
from __future__ import annotations

import halide as hl
import numpy as np

U16, S16 = hl.UInt(16), hl.Int(16)


_KEEP: list[np.ndarray] = []


def to_hl(a: np.ndarray) -> hl.Buffer:
    """A Halide view of ``a`` with the same index order. The view does not own its memory, so
    the transposed copy is kept alive for the life of the test session."""
    arr = np.ascontiguousarray(np.asarray(a).T)
    _KEEP.append(arr)
    return hl.Buffer(arr)


def from_hl(b: hl.Buffer) -> np.ndarray:
    return np.asarray(b).T.copy()


def realize(f: hl.Func, *shape: int) -> np.ndarray:
    return from_hl(f.realize(list(shape)))


def _input(a: np.ndarray, t=U16) -> tuple[hl.Func, hl.Var, hl.Var]:
    x, y = hl.Var("x"), hl.Var("y")
    buf = to_hl(a)
    f = hl.Func("in")
    f[x, y] = hl.cast(t, buf[x, y])
    return f, x, y


def _conv3x3(f: hl.Func, x, y, weights, name: str) -> hl.Func:
    """``sum w[dy][dx] * f(x+dx, y+dy)`` with an RDom (in f's type)."""
    kbuf = to_hl(np.array(weights, dtype=np.int16).T)  # kbuf[dx, dy]
    r = hl.RDom([(0, 3), (0, 3)])
    g = hl.Func(name)
    g[x, y] = hl.sum(hl.cast(f.type(), kbuf[r.x, r.y]) * f[x + r.x, y + r.y])
    return g


def gaussian(img: np.ndarray) -> dict:
    f, x, y = _input(img)
    blur = _conv3x3(f, x, y, [[1, 2, 1], [2, 4, 2], [1, 2, 1]], "blur")
    out = hl.Func("out")
    out[x, y] = blur[x, y] >> 4
    w, h = img.shape
    return {"output": realize(out, w - 2, h - 2)}


def cascade(img: np.ndarray) -> dict:
    f, x, y = _input(img)
    k = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    b1 = _conv3x3(f, x, y, k, "b1")
    n1 = hl.Func("n1")
    n1[x, y] = b1[x, y] >> 4
    b2 = _conv3x3(n1, x, y, k, "b2")
    out = hl.Func("out")
    out[x, y] = b2[x, y] >> 4
    w, h = img.shape
    return {"output": realize(out, w - 4, h - 4)}


def harris(img: np.ndarray) -> dict:
    f, x, y = _input(img, S16)
    gx = hl.Func("gx")
    gy = hl.Func("gy")
    gx[x, y] = hl.clamp(f[x + 2, y] - f[x, y] + 2 * (f[x + 2, y + 1] - f[x, y + 1])
                        + f[x + 2, y + 2] - f[x, y + 2], -255, 255)
    gy[x, y] = hl.clamp(f[x, y + 2] - f[x, y] + 2 * (f[x + 1, y + 2] - f[x + 1, y])
                        + f[x + 2, y + 2] - f[x + 2, y], -255, 255)
    lxx, lyy, lxy = hl.Func("lxx"), hl.Func("lyy"), hl.Func("lxy")
    lxx[x, y] = ((gx[x, y] >> 1) * (gx[x, y] >> 1)) >> 5
    lyy[x, y] = ((gy[x, y] >> 1) * (gy[x, y] >> 1)) >> 5
    lxy[x, y] = ((gx[x, y] >> 1) * (gy[x, y] >> 1)) >> 5
    box = hl.RDom([(0, 3), (0, 3)])
    sums = []
    for name, l in (("sxx", lxx), ("syy", lyy), ("sxy", lxy)):
        s = hl.Func(name)
        s[x, y] = hl.sum(l[x + box.x, y + box.y]) >> 6
        sums.append(s)
    a, b, c = (s[x, y] for s in sums)
    cim = hl.Func("cim")
    cim[x, y] = a * b - c * c - (((a + b) * (a + b)) >> 4)
    centre = cim[x + 1, y + 1]
    is_max = centre >= 100
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                is_max = is_max & (centre > cim[x + dx, y + dy])
    out = hl.Func("out")
    out[x, y] = hl.select(is_max, hl.u16(255), hl.u16(0))
    w, h = img.shape
    return {"output": realize(out, w - 6, h - 6)}


def unsharp(img: np.ndarray) -> dict:
    f, x, y = _input(img)
    taps = to_hl(np.array([1, 4, 6, 4, 1], dtype=np.uint16))
    r = hl.RDom([(0, 5)])
    by, bx = hl.Func("by"), hl.Func("bx")
    by[x, y] = hl.sum(taps[r.x] * f[x, y + r.x])
    bx[x, y] = hl.sum(taps[r.x] * by[x + r.x, y]) >> 8
    out = hl.Func("out")
    out[x, y] = hl.cast(U16, hl.clamp(2 * hl.cast(S16, f[x + 2, y + 2]) - hl.cast(S16, bx[x, y]),
                                      0, 255))
    w, h = img.shape
    return {"output": realize(out, w - 4, h - 4)}


def upsample(img: np.ndarray, factor: int = 2) -> dict:
    f, x, y = _input(img)
    out = hl.Func("out")
    out[x, y] = f[x / factor, y / factor]      # Halide's integer division floors
    w, h = img.shape
    return {"output": realize(out, w * factor, h * factor)}


def _down(f: hl.Func, x, y, name: str) -> hl.Func:
    g = hl.Func(name)
    g[x, y] = (f[2 * x, 2 * y] + f[2 * x + 1, 2 * y] + f[2 * x, 2 * y + 1]
               + f[2 * x + 1, 2 * y + 1]) >> 2
    return g


def gpyr(img: np.ndarray, levels: int = 4) -> dict:
    f, x, y = _input(img)
    for k in range(levels):
        f = _down(f, x, y, f"p{k + 1}")
    w, h = img.shape
    return {"output": realize(f, w >> levels, h >> levels)}


def laplacian(img: np.ndarray, levels: int = 3) -> dict:
    g0, x, y = _input(img)
    g = [g0]
    for k in range(1, levels):
        g.append(_down(g[-1], x, y, f"g{k}"))
    w, h = img.shape
    out = {}
    for k in range(levels - 1):
        lap = hl.Func(f"lap{k}")
        lap[x, y] = hl.cast(S16, g[k][x, y]) - hl.cast(S16, g[k + 1][x / 2, y / 2])
        out[f"lap{k}"] = realize(lap, w >> k, h >> k)
    out[f"lap{levels - 1}"] = realize(g[-1], w >> (levels - 1), h >> (levels - 1))
    return out


def brighten_blur(img: np.ndarray) -> dict:
    x, y, t = hl.Var("x"), hl.Var("y"), hl.Var("t")
    buf = to_hl(img)
    br = hl.Func("br")
    br[x, y, t] = hl.cast(U16, buf[x, y, t]) * 2
    out = hl.Func("blur")
    out[x, y, t] = (br[x, y, t] + br[x + 1, y, t] + br[x, y + 1, t] + br[x + 1, y + 1, t]) >> 2
    w, h, n = img.shape
    return {"blur": realize(out, w - 1, h - 1, n)}


def camera(raw: np.ndarray, ccm, table) -> dict:
    f, x, y = _input(raw)
    den = hl.Func("denoised")      # in input coordinates: den(x, y) for 2 <= x < w-2
    n, s, wv, e = f[x, y - 2], f[x, y + 2], f[x - 2, y], f[x + 2, y]
    den[x, y] = hl.clamp(f[x, y], hl.min(hl.min(n, s), hl.min(wv, e)),
                         hl.max(hl.max(n, s), hl.max(wv, e)))

    def avg2(a, b):
        return (a + b + 1) >> 1

    def avg4(a, b, c, d):
        return (a + b + c + d + 2) >> 2

    orth = avg4(den[x, y - 1], den[x - 1, y], den[x + 1, y], den[x, y + 1])
    diag = avg4(den[x - 1, y - 1], den[x + 1, y - 1], den[x - 1, y + 1], den[x + 1, y + 1])
    horz = avg2(den[x - 1, y], den[x + 1, y])
    vert = avg2(den[x, y - 1], den[x, y + 1])
    c = den[x, y]
    ex, ey = (x % 2) == 0, (y % 2) == 0          # RGGB: R at (even, even), B at (odd, odd)
    r_site, b_site = ex & ey, (~ex) & (~ey)
    g_red_row = (~ex) & ey
    rgb = hl.Func("rgb")
    cc = hl.Var("c")
    r = hl.select(r_site, c, b_site, diag, g_red_row, horz, vert)
    b = hl.select(b_site, c, r_site, diag, g_red_row, vert, horz)
    g = hl.select(r_site | b_site, orth, c)
    rgb[x, y, cc] = hl.cast(S16, hl.select(cc == 0, r, cc == 1, g, b))
    lut = to_hl(np.array(table, dtype=np.uint16))
    m = to_hl(np.array(ccm, dtype=np.int16).T)   # m[col, row]
    lin = hl.Func("lin")
    lin[x, y, cc] = (m[0, cc] * rgb[x, y, 0] + m[1, cc] * rgb[x, y, 1] + m[2, cc] * rgb[x, y, 2]
                     + m[3, cc]) >> 4
    out = hl.Func("out")
    out[x, y, cc] = lut[hl.clamp(hl.cast(hl.Int(32), lin[x + 3, y + 3, cc]), 0, len(table) - 1)]
    w, h = raw.shape
    return {"output": realize(out, w - 6, h - 6, 3)}
