"""What the application modules share besides the loop-nest DSL (whose builders are
:mod:`compiler.frontend.loopnest`): size checks, and the

* plain-numpy golden helpers (:func:`wrap`, :func:`window`, :func:`weighted_window`,
  :func:`test_image`) used by every app's ``reference()``. They work on int64 arrays and wrap to
  16 bits where the CGRA would, so they share no code with the Program or the interpreter.

Index convention (Halide's, as in :mod:`compiler.ir.program`): the first index of a buffer is the
innermost dimension, so an image is ``img[x, y]`` and numpy arrays use the same order.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from compiler.ir import IntType, u16


def check_sizes(app: str, **sizes: int) -> None:
    """Reject sizes the app cannot be built with (one-line :class:`ValueError`)."""
    for name, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{app}: size {name}={value!r} must be a positive integer")


def require(app: str, cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(f"{app}: {message}")


# --------------------------------------------------------------------------------------------
# Plain-numpy golden helpers


def wrap(a, t: IntType = u16) -> np.ndarray:
    """Two's-complement wraparound of an integer array to ``t`` (as int64)."""
    a = np.asarray(a, dtype=np.int64) & ((1 << t.bits) - 1)
    if t.signed:
        a = np.where(a >= 1 << (t.bits - 1), a - (1 << t.bits), a)
    return a


def window(a: np.ndarray, dx: int, dy: int, width: int, height: int) -> np.ndarray:
    """``a[x + dx, y + dy]`` for ``0 <= x < width, 0 <= y < height`` (extra axes kept)."""
    return a[dx:dx + width, dy:dy + height]


def weighted_window(a: np.ndarray, weights: Sequence[Sequence[int]], width: int,
                    height: int) -> np.ndarray:
    """``sum(weights[dy][dx] * a[x + dx, y + dy])`` as int64 (no wrap)."""
    a = np.asarray(a, dtype=np.int64)
    out = np.zeros((width, height) + a.shape[2:], dtype=np.int64)
    for dy, row in enumerate(weights):
        for dx, w in enumerate(row):
            out += w * window(a, dx, dy, width, height)
    return out


def to_dtype(a: np.ndarray, t: IntType) -> np.ndarray:
    """Store an int64 array of in-range values with the numpy dtype of ``t``."""
    dtype = {(16, False): np.uint16, (16, True): np.int16}[(t.bits, t.signed)]
    return wrap(a, t).astype(dtype)


def test_image(seed: int, width: int, height: int, *extra: int, bits: int = 8) -> np.ndarray:
    """A deterministic natural-looking test image with values in ``[0, 2**bits)``.

    Smooth gradient + a few flat rectangles (edges and corners for harris) + noise, the
    kind of content the stencil apps are meant for; not uniform noise."""
    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    shape = (width, height) + tuple(extra)
    xs = np.linspace(0.0, 1.0, width)[:, None]
    ys = np.linspace(0.0, 1.0, height)[None, :]
    base = 0.25 * top * (xs + ys)
    base = np.broadcast_to(base.reshape(base.shape + (1,) * len(extra)), shape).copy()
    for _ in range(max(2, (width * height) // 400)):
        x0, y0 = rng.integers(0, width), rng.integers(0, height)
        w, h = rng.integers(2, max(3, width // 4)), rng.integers(2, max(3, height // 4))
        base[x0:x0 + w, y0:y0 + h] = rng.uniform(0, top)
    noise = rng.normal(0.0, 0.03 * top, size=shape)
    return np.clip(np.rint(base + noise), 0, top).astype(np.uint16)


def image_inputs(seed: int = 0, width: int = 64, height: int = 64, **_sizes) -> dict:
    """``make_inputs`` of the single-image stencil apps: ``{"input": test_image(...)}``.

    Sizes that do not shape the input (levels, factor, share) are accepted and ignored."""
    return {"input": test_image(seed, width, height)}


def small_signed(seed: int, shape: Sequence[int], limit: int) -> np.ndarray:
    """Deterministic small signed integers in ``[-limit, limit]`` (DNN weights) as int16."""
    rng = np.random.default_rng(seed)
    return rng.integers(-limit, limit + 1, size=tuple(shape)).astype(np.int16)


def small_unsigned(seed: int, shape: Sequence[int], limit: int) -> np.ndarray:
    """Deterministic small activations in ``[0, limit]`` (quantized ReLU outputs) as int16."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, limit + 1, size=tuple(shape)).astype(np.int16)
