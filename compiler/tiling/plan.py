"""A tiling of a Program's output into runs of one configuration (Halide's ``tile``; thesis
§7.1: data tiles brought into the global buffer one after another).

:func:`plan_tiles` cuts the output into boxes of one shape: per dimension the boxes start at
``0, T, 2T, ...``; where the output is not a multiple of ``T`` the last box is shifted inwards
to end at the edge (Halide's ``TailStrategy::ShiftInwards``), so every box has the same shape
and overlapping boxes compute the same values twice. Each box gets its restricted Program
(:mod:`.region`); the plan holds when they are all equal, so one configuration runs every tile
and only the host's copies move: each tile's host buffers are the whole buffers' boxes at its
``lows``. :func:`stitch` puts the tiles' outputs back together; :func:`run_tiles` runs the
plan on the golden interpreter (``compiler.interp``), the check the tests make against the
whole program's golden.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import prod

import numpy as np

from ..ir.hw import HwParams
from ..ir.program import Program
from ..poly.deps import raw_dependences
from ..poly.extract import extract
from .region import Box, TilingError, required_instances, restrict


@dataclass
class Tile:
    """One run: the output ``box`` (whole coordinates, inclusive) it is responsible for, and
    where each host buffer of the tile Program sits in the whole buffer (``lows``)."""
    box: Box
    lows: dict[str, tuple[int, ...]]

    def to_dict(self) -> dict:
        return {"box": [list(b) for b in self.box],
                "lows": {k: list(v) for k, v in self.lows.items()}}


@dataclass
class TilePlan:
    """The tile Program (the same for every tile), the tiles, and the whole Program's host
    buffer shapes."""
    whole: str
    program: Program
    shape: tuple[int, ...]                   # output tile extents
    outputs: list[str]
    tiles: list[Tile]
    shapes: dict[str, tuple[int, ...]]       # whole host buffers
    removed: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.tiles)

    def host_words(self) -> int:
        """Words the host moves per run (every host buffer of the tile Program)."""
        return sum(prod(b.shape) for b in self.program.buffers.values()
                   if b.kind != "temp" and b.shape is not None)

    def to_dict(self) -> dict:
        return {"whole": self.whole, "shape": list(self.shape), "outputs": self.outputs,
                "runs": self.runs, "tiles": [t.to_dict() for t in self.tiles],
                "shapes": {k: list(v) for k, v in self.shapes.items()},
                "removed": self.removed}


def output_buffers(program: Program) -> list[str]:
    """The output buffers; tiling needs them to share one shape (the tile box applies to
    each)."""
    outs = [b for b, d in program.buffers.items() if d.kind == "output"]
    shapes = {program.buffers[b].shape for b in outs}
    if not outs or None in shapes:
        raise TilingError(f"{program.name}: tiling needs declared output shapes")
    if len(shapes) > 1:
        raise TilingError(f"{program.name}: outputs {', '.join(outs)} have different shapes "
                          f"({', '.join(str(list(s)) for s in sorted(shapes))}); tiling cuts "
                          f"one output box")
    return outs


def starts(size: int, tile: int, align: int = 1) -> list[int] | None:
    """Box starts along one dimension: multiples of ``tile``, the last one shifted inwards to
    the largest multiple of ``align`` that keeps it inside (``None`` when the boxes cannot
    reach the edge at that alignment)."""
    if tile >= size:
        return [0]
    out = list(range(0, size - tile + 1, tile))
    if out[-1] + tile < size:
        last = (size - tile) // align * align
        if last + tile < size:
            return None
        out.append(last)
    return out


class _Analysis:
    """The whole Program's polyhedral view, computed once for every box."""

    def __init__(self, program: Program):
        self.program = program
        self.poly = extract(program, HwParams())
        self.deps = raw_dependences(self.poly)
        self.outputs = output_buffers(program)
        self.whole = program.buffers[self.outputs[0]].shape
        self._aligned: dict[tuple, tuple[int, ...]] = {}

    def tile(self, box: Box):
        need = required_instances(self.poly, self.deps, {o: box for o in self.outputs})
        return restrict(self.program, need, f"{self.program.name}_tile")

    def alignment(self, shape: tuple[int, ...], most: int = 16) -> tuple[int, ...]:
        """Per output dimension the least shift ``a`` (at most ``most``) of a ``shape`` box
        that gives the same tile Program: the period of the indices' strides and divisions
        along it (1 for a stencil, 2 for a down- or up-sampling by 2, a Bayer quad)."""
        key = tuple(shape)
        if key not in self._aligned:
            box0 = tuple((0, t - 1) for t in shape)
            ref = self.tile(box0).program.to_dict()
            out = []
            for d, (t, s) in enumerate(zip(shape, self.whole)):
                a = next((a for a in range(1, min(most, s - t) + 1)
                          if self.tile(tuple((lo + a, hi + a) if e == d else (lo, hi)
                                             for e, (lo, hi) in enumerate(box0))
                                       ).program.to_dict() == ref), None)
                out.append(a if a is not None else max(1, s - t) if t < s else 1)
            self._aligned[key] = tuple(out)
        return self._aligned[key]


def plan_tiles(program: Program, shape: tuple[int, ...], check_all: bool = True,
               analysis: "_Analysis | None" = None) -> TilePlan:
    """The plan of output boxes of ``shape`` (module docstring), the boxes aligned to the
    period the Program's indices need (:meth:`_Analysis.alignment`); ``check_all`` restricts
    every tile and requires their Programs to be equal (else only the first is restricted, for
    a quick look at its size). Raises :class:`TilingError` naming the first tile whose Program
    differs, or a shape the alignment cannot cover."""
    an = analysis or _Analysis(program)
    whole = an.whole
    if len(shape) != len(whole) or any(t < 1 for t in shape):
        raise TilingError(f"{program.name}: tile shape {list(shape)} does not fit output shape "
                          f"{list(whole)}")
    shape = tuple(min(t, s) for t, s in zip(shape, whole))
    align = an.alignment(shape)
    per_dim = [starts(s, t, a) for s, t, a in zip(whole, shape, align)]
    if None in per_dim or any(t % a and t < s for t, a, s in zip(shape, align, whole)):
        raise TilingError(f"{program.name}: tile shape {list(shape)} is not a multiple of the "
                          f"alignment {list(align)} its indices need")
    first = None
    tiles = []
    for origin in itertools.product(*per_dim):
        box = tuple((o, o + t - 1) for o, t in zip(origin, shape))
        if first is not None and not check_all:
            tiles.append(Tile(box, {}))
            continue
        r = an.tile(box)
        if first is None:
            first, ref = r, r.program.to_dict()
        elif r.program.to_dict() != ref:
            raise TilingError(f"{program.name}: the tile at output {list(origin)} needs another "
                              f"program than the tile at 0 (an index that is not a "
                              f"translation of the output's)")
        hosts = {b: lo for b, lo in r.lows.items() if program.buffers[b].kind != "temp"}
        tiles.append(Tile(box, hosts))
    shapes = {b: d.shape for b, d in program.buffers.items()
              if d.kind != "temp" and d.shape is not None}
    return TilePlan(program.name, first.program, shape, an.outputs, tiles, shapes,
                    first.removed)


def tile_inputs(plan: TilePlan, tile: Tile, inputs: dict[str, np.ndarray]
                ) -> dict[str, np.ndarray]:
    """The tile's host input arrays: each whole input's box at the tile's ``lows``."""
    out = {}
    for b, decl in plan.program.buffers.items():
        if decl.kind == "input":
            lo = tile.lows[b]
            out[b] = np.asarray(inputs[b])[tuple(slice(a, a + n) for a, n in
                                                 zip(lo, decl.shape))]
    return out


def stitch(plan: TilePlan, tile: Tile, outputs: dict[str, np.ndarray],
           whole: dict[str, np.ndarray]) -> None:
    """Copy the tile's ``box`` from its output arrays into the ``whole`` outputs."""
    for b in plan.outputs:
        lo = tile.lows[b]
        local = tuple(slice(a - l, c - l + 1) for (a, c), l in zip(tile.box, lo))
        target = tuple(slice(a, c + 1) for a, c in tile.box)
        whole[b][target] = np.asarray(outputs[b])[local]


def run_tiles(plan: TilePlan, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The whole outputs computed tile by tile by the golden interpreter on the tile Program
    (the stitched result every tiled run must equal)."""
    from ..interp import numpy_dtype, run as interp
    whole = {}
    for b in plan.outputs:
        decl = plan.program.buffers[b]
        whole[b] = np.zeros(plan.shapes[b], dtype=numpy_dtype(decl.type))
    for tile in plan.tiles:
        stitch(plan, tile, interp(plan.program, tile_inputs(plan, tile, inputs)), whole)
    return whole
