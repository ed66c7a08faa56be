"""A reduction too long for one run as runs of channel blocks, partial sums carried between
runs through the global buffer (docs/tiling.md "Channel blocks"; thesis §7.3.2: every ResNet
layer "properly blocked with 8 input channels and 8 output channels", Fig. 4.3's
initialisation of the output value being the hook).

A DNN layer's output is a sum over its input channels. When the channels do not fit one run
(the cycle counter, the global buffer), each run computes the sum over one block of channels
and starts from the partial sums of the blocks before it: the accumulator's initial value,
which the whole layer takes from the bias, is for block ``j`` the partial sums block ``j - 1``
wrote. The app declares the reduction (``CHANNEL_BLOCKS`` in its module: the size that is the
reduction's extent and its unroll, the inputs cut along it, the size that builds the block
Program, the size that marks the last block, the carried input and output) and the first
block's carry (``initial_carry``: the bias laid out as partial sums). The blocks before the
last drain the raw partial sums; the last applies the layer's ReLU: two Programs that differ
only in the drain's constant (resnet: ``max(a, -32768)``, the identity, against
``max(a, 0)``), so they share one netlist, placement and routing and their configurations
differ in those constants only. ReLU as a pass of its own would cost one more run and one more
round trip of the whole output through the global buffer; ReLU in every block would clip the
partial sums (a negative control of the tests).

:func:`plan_channel_blocks` makes the plan (the block Program and the channel range of every
run), :func:`block_inputs` one run's host inputs, :func:`run_blocks` runs the plan with any
runner (the golden interpreter by default; the netlist model or the RTL in the tests) and
returns the layer's outputs. Addition wraps at 16 bits on both sides, so the sum does not
depend on the order of the blocks; the channels of every operand must stay aligned, and the
carry must not be dropped or clipped (the negative controls of the tests).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..ir.program import Program
from .region import TilingError

# a runner: (one run's host inputs, whether it is the last block) -> that run's outputs
Runner = Callable[[dict[str, np.ndarray], bool], dict[str, np.ndarray]]


@dataclass(frozen=True)
class ChannelBlock:
    """One run: the reduction channels ``[lo, hi)`` it sums."""
    index: int
    lo: int
    hi: int


@dataclass
class BlockPlan:
    """The block Programs (``program`` for the blocks before the last, ``last`` for the
    last), the runs in order, the whole layer's sizes and the app's reduction declaration."""
    app: str
    sizes: dict[str, int]                 # the whole layer's
    block: int                            # reduction channels per run
    blocks: list[ChannelBlock]
    program: Program
    last: Program
    spec: dict
    module: object = None

    @property
    def runs(self) -> int:
        return len(self.blocks)

    def block_sizes(self, last: bool) -> dict[str, int]:
        """The sizes that build the block Program (the last block's with ``last``)."""
        return {**self.sizes, self.spec["size"]: self.block, self.spec["flag"]: 1,
                self.spec["last"]: int(last)}

    def program_for(self, last: bool) -> Program:
        return self.last if last else self.program

    def to_dict(self) -> dict:
        return {"app": self.app, "sizes": self.sizes, "block": self.block, "runs": self.runs,
                "blocks": [[b.lo, b.hi] for b in self.blocks],
                "carry": [self.spec["carry_in"], self.spec["carry_out"]]}


def reduction_spec(module, app: str) -> dict:
    """The app's ``CHANNEL_BLOCKS`` declaration (one-line :class:`TilingError` without one)."""
    spec = getattr(module, "CHANNEL_BLOCKS", None)
    if spec is None or not hasattr(module, "initial_carry"):
        raise TilingError(f"{app}: declares no channel blocks (CHANNEL_BLOCKS and "
                          f"initial_carry in its module)")
    return spec


def block_sizes(app: str, sizes: dict[str, int] | None) -> list[int]:
    """The block sizes of ``app``'s reduction at ``sizes`` that are more than one run,
    largest (fewest runs) first: the multiples of its unroll that divide its extent."""
    from ..frontend.source import load_app
    whole = load_app(app, sizes or {})
    spec = reduction_spec(whole.module, app)
    full = {**_defaults(whole.module), **(sizes or {})}
    extent, unroll = full[spec["size"]], full[spec["unroll"]]
    return [b for b in range(extent - 1, 0, -1) if extent % b == 0 and b % unroll == 0]


def _defaults(module) -> dict:
    import inspect
    return {k: p.default for k, p in inspect.signature(module.build).parameters.items()}


def plan_channel_blocks(app: str, sizes: dict[str, int] | None, block: int) -> BlockPlan:
    """Runs of ``block`` reduction channels each over the layer ``app`` at ``sizes``: the
    block must divide the reduction's extent and be a multiple of its unroll (one-line
    :class:`TilingError` otherwise)."""
    from ..frontend.source import load_app
    whole = load_app(app, sizes or {})
    spec = reduction_spec(whole.module, app)
    full = {**_defaults(whole.module), **(sizes or {})}
    if full.get(spec["flag"]):
        raise TilingError(f"{app}: the whole layer is already a block ({spec['flag']}=1)")
    extent, unroll = full[spec["size"]], full[spec["unroll"]]
    if block < 1 or extent % block or block % unroll:
        raise TilingError(f"{app}: a block of {block} {spec['size']} must divide {extent} and "
                          f"be a multiple of {spec['unroll']}={unroll}")
    blocks = [ChannelBlock(j, j * block, (j + 1) * block) for j in range(extent // block)]
    plan = BlockPlan(app, dict(sizes or {}), block, blocks, whole.program, whole.program, spec,
                     whole.module)
    plan.program = load_app(app, plan.block_sizes(False)).program
    plan.last = load_app(app, plan.block_sizes(True)).program
    return plan


def first_carry(plan: BlockPlan, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The first block's carried input from the whole layer's inputs (the app's
    ``initial_carry``: the bias as partial sums)."""
    return plan.module.initial_carry(inputs, **plan.block_sizes(False))


def block_inputs(plan: BlockPlan, blk: ChannelBlock, inputs: dict[str, np.ndarray],
                 carry: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One run's host inputs: every input the reduction cuts, its channels ``[lo, hi)``;
    the others whole; and the carried partial sums."""
    out = {}
    for name, decl in plan.program.buffers.items():
        if decl.kind != "input":
            continue
        if name == plan.spec["carry_in"]:
            out[name] = np.asarray(carry[name])
            continue
        arr = np.asarray(inputs[name])
        dim = plan.spec["sliced"].get(name)
        if dim is not None:
            arr = np.take(arr, range(blk.lo, blk.hi), axis=dim)
        out[name] = arr
    return out


def run_blocks(plan: BlockPlan, inputs: dict[str, np.ndarray], run: Runner | None = None,
               log=None) -> dict[str, np.ndarray]:
    """The layer's outputs computed block by block: each run (``run(block inputs, last)``
    -> block outputs; the golden interpreter on the block's Program by default) starts from
    the partial sums the run before wrote; the layer's output is the last run's."""
    if run is None:
        from ..interp import run as interp

        def run(block_in, last):
            return interp(plan.program_for(last), block_in)
    spec = plan.spec
    carry = first_carry(plan, inputs)
    out: dict[str, np.ndarray] = {}
    for n, blk in enumerate(plan.blocks):
        out = run(block_inputs(plan, blk, inputs, carry), n == plan.runs - 1)
        carry = {spec["carry_in"]: np.asarray(out[spec["carry_out"]])}
        if log:
            log(f"block {blk.index}: {spec['size']} {blk.lo}..{blk.hi - 1}")
    return {spec["output"]: np.asarray(out[spec["output"]])}
