"""The host side of an FPGA design (docs/fpga.md "Applications on the FPGA"): the words the host
streams into each input and the words it must receive from each output, from the app's inputs
and the golden outputs (``compiler.frontend.source.establish_golden``, the same golden as ``make sim``).

An input stream's words are the input buffer's elements in the order its controller fires
(``in`` node ``stream``: the element index of every fire as affine maps). An output stream's
fires write elements of the output buffer; an element written more than once (an accumulator
drained each time it is updated) holds its last write, by cycle over all the buffer's output
streams, and only that write is compared: the other fires are counted, not checked.
"""
from __future__ import annotations

import numpy as np

from ubgen.arch import WORD_MASK

from ..mapping.common import Affine
from ..mapping.vectorize import enumerate_affine
from .design import FPGADesign, FPGADesignError

__all__ = ["stream_fires", "host_vectors"]


def stream_fires(stream: dict) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """``(cycles, element index per buffer dimension)`` of every fire of a host stream."""
    ext = stream["extents"]

    def values(a: dict) -> np.ndarray:
        return enumerate_affine(ext, Affine(a["start"], tuple(a["strides"])))
    return values(stream["time"]), tuple(values(a) for a in stream["addr"])


def host_vectors(design: FPGADesign, inputs: dict[str, np.ndarray],
                 golden: dict[str, np.ndarray]) -> dict:
    """``{"inputs": [[word, ...] per in node], "outputs": [{"buffer", "fires", "expected":
    [[fire index, word], ...]} per out node], "cycles_predicted", "output_writes"}``.
    Raises :class:`FPGADesignError` when an input array is missing or an output element is
    never written."""
    vec_in = []
    for n in design.inputs:
        buf = n.params["buffer"]
        if buf not in inputs:
            raise FPGADesignError(f"no input array for buffer {buf}")
        _, idx = stream_fires(n.params["stream"])
        arr = np.asarray(inputs[buf]).astype(np.int64) & WORD_MASK
        vec_in.append([int(w) for w in arr[idx]])
    last: dict[str, dict[tuple, tuple[int, int, int]]] = {}   # element -> (cycle, out, fire)
    fires = []
    for k, n in enumerate(design.outputs):
        cycles, idx = stream_fires(n.params["stream"])
        fires.append(len(cycles))
        place = last.setdefault(n.params["buffer"], {})
        for f, (c, *e) in enumerate(zip(cycles.tolist(), *(i.tolist() for i in idx))):
            e = tuple(e)
            if e not in place or place[e][0] < c:
                place[e] = (c, k, f)
    expected: list[list[list[int]]] = [[] for _ in design.outputs]
    for buf, want in golden.items():
        want = np.asarray(want).astype(np.int64) & WORD_MASK
        place = last.get(buf, {})
        for e in np.ndindex(*want.shape):
            if e not in place:
                raise FPGADesignError(f"output {buf}{list(e)} is written by no output stream")
            _c, k, f = place[e]
            expected[k].append([f, int(want[e])])
    return {"inputs": vec_in,
            "outputs": [{"buffer": n.params["buffer"], "fires": fires[k],
                         "expected": sorted(expected[k])}
                        for k, n in enumerate(design.outputs)],
            "cycles_predicted": design.cycles_predicted,
            "output_writes": sum(fires)}
