"""Controllers built from PEs for the plain dual-port SRAM tile (``[mem] kind = "dp-pe"``;
thesis §6.3: "If the buffers do not contain controllers, the compiler will logic synthesize the
controllers ... These controllers are then added to the non-memory part of the application graph
that is mapped into PEs on a CGRA").

``synthesize(cfg, name) -> PEController`` turns one stream's affine form (a
:class:`ubgen.controller.ControllerConfig` of a :class:`~compiler.ir.ubimpl.DPBlock`: extents,
schedule, address ``addr``) into PE operations, using the PE's ``STEP`` op (docs/pe.md) to
build the recurrence form of thesis Fig. 6.2b (the optimised variant of thesis §7.2.2, "an
operator for a counter is added to the PE"). For ``n`` loop levels (levels of extent 1 dropped;
``P_d`` the product of the extents of levels ``0..d``; ``delta``/``gamma`` the address/schedule
recurrence deltas, :func:`ubgen.controller.compute_deltas`):

* **iteration domain**: per level ``d`` a down-counter of the fires modulo ``P_d``
  (``STEP``: ``a = -1``, ``b = c = P_d - 1``, ``bit2 = 1``, ``bit0`` = the fire): its ``res_p``
  ``z_d`` is 1 exactly when levels ``0..d`` are all at their last iteration, so the level that
  steps after a fire is the number of consecutive ``z`` from level 0;
* **address generator**: ``STEP`` with ``c`` = the start address, ``a`` = ``delta_0``, ``bit1`` =
  ``z_0`` and ``b`` = the delta of the outer level that steps: a chain of ``SEL`` PEs
  (``z_k ? <outer> : delta_k``) for levels 1..n-2, constants folded. ``res`` is the address of
  the current fire;
* **schedule generator**: ``STEP`` counting down the cycles to the next fire (``c`` = the first
  fire's cycle, ``a = -1``, ``bit0 = 1``, ``bit2 = 1``): at 0 it fires (``res_p``) and reloads
  ``gamma_L - 1``, chosen by ``SEL`` PEs over ``z_0..z_{n-1}``; after the last fire every
  ``z`` is 1 and it parks at ``0xFFFF`` (no fire within the 16-bit cycle range the schedule
  must fit).

Every output used is a PE's output register (the fire, the level flags, the address), the
``SEL`` PEs are combinational, and every edge has latency 0: the fire of cycle ``c`` steps the
counters and generators at the end of ``c``, like the built-in controller (docs/controllers.md).
Per stream ``3n`` PEs at most (``n`` counters, ``1 + max(0, n - 2)`` for the address, ``1 + n``
for the schedule), fewer when deltas coincide. A stream the 16-bit PE words cannot express (a
fire at cycle 65535 or later; then the level products, at most the number of fires, fit too)
raises :class:`PEControllerError`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ubgen.arch import WORD_MASK
from ubgen.controller import ControllerConfig, compute_deltas
from ubgen.pe.ops import PEOp

__all__ = ["PEController", "PENode", "PEEdge", "PEControllerError", "synthesize",
           "controller_pes", "PARK", "MAX_CYCLE"]

PARK = WORD_MASK                 # the schedule generator's wait after the last fire
MAX_CYCLE = WORD_MASK - 1        # the last cycle a PE-built schedule may fire at


class PEControllerError(ValueError):
    """A stream the PE-built controller cannot express (one line, names the stream)."""


@dataclass
class PENode:
    """One PE: its op, constant inputs (port -> value) and whether its output is registered."""
    name: str
    op: PEOp
    consts: dict[str, int]
    registered: bool
    label: str

    def config(self) -> dict[str, int]:
        cfg = {"op": int(self.op), "out_reg": int(self.registered)}
        for port, v in self.consts.items():
            cfg[f"{port}_const_en"] = 1
            cfg[f"{port}_const"] = v & (1 if port.startswith("bit") else WORD_MASK)
        return cfg


@dataclass
class PEEdge:
    src: str
    src_port: str
    dst: str
    dst_port: str
    width: int


@dataclass
class PEController:
    """The PEs and edges of one controller; ``fire`` and ``addr`` are ``(node, port)``."""
    nodes: list[PENode] = field(default_factory=list)
    edges: list[PEEdge] = field(default_factory=list)
    fire: tuple[str, str] = ("", "")
    addr: tuple[str, str] = ("", "")


def _levels(cfg: ControllerConfig) -> ControllerConfig:
    """``cfg`` without levels of extent 1 (they never step); one level of extent 1 when every
    level has extent 1."""
    keep = [d for d, e in enumerate(cfg.extents) if e > 1] or [0]

    def pick(strides):
        return tuple(strides[d] for d in keep)
    return ControllerConfig(tuple(cfg.extents[d] for d in keep),
                            type(cfg.schedule)(cfg.schedule.start, pick(cfg.schedule.strides)),
                            {k: type(a)(a.start, pick(a.strides))
                             for k, a in cfg.addresses.items()})


def _check(cfg: ControllerConfig, name: str) -> list[int]:
    """The level products ``P_d``; raises :class:`PEControllerError` for a stream the 16-bit
    PE words cannot express."""
    last = cfg.schedule.start + sum(s * (e - 1) for s, e in
                                    zip(cfg.schedule.strides, cfg.extents))
    if cfg.schedule.start < 0 or last > MAX_CYCLE:
        raise PEControllerError(f"{name}: a fire at cycle {last} does not fit the PE's "
                                f"{WORD_MASK.bit_length()}-bit schedule generator (last cycle "
                                f"{MAX_CYCLE}), a pattern the PE-built controller cannot "
                                f"express")
    prods, p = [], 1
    for e in cfg.extents:          # <= 65535 fires: the schedule is strictly increasing
        p *= e
        prods.append(p)
    return prods


class _Builder:
    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.out = PEController()
        self.flags: dict[int, str] = {}

    def node(self, role: str, op: PEOp, consts: dict[str, int], registered: bool,
             label: str) -> str:
        n = f"{self.name}.{role}"
        self.out.nodes.append(PENode(n, op, consts, registered, f"{self.what}: {label}"))
        return n

    def edge(self, src: str, src_port: str, dst: str, dst_port: str) -> None:
        width = 1 if dst_port.startswith("bit") else WORD_MASK.bit_length()
        self.out.edges.append(PEEdge(src, src_port, dst, dst_port, width))

    def select(self, role: str, levels: list[int], values: list[int], last) -> object:
        """``z_k ? <next> : values[i]`` for ``k = levels[i]``, innermost first, ending in
        ``last``; a constant (int) or a node name. Equal choices fold to a constant."""
        nxt = last
        for i in range(len(levels) - 1, -1, -1):
            k, v = levels[i], values[i] & WORD_MASK
            if isinstance(nxt, int) and nxt & WORD_MASK == v:
                continue
            consts = {"data1": v}
            if isinstance(nxt, int):
                consts["data0"] = nxt
            sel = self.node(f"{role}{k}", PEOp.SEL, consts, False, f"delta select, level {k}")
            self.edge(self.flags.setdefault(k, f"{self.name}.z{k}"), "res_p", sel, "bit0")
            if not isinstance(nxt, int):
                self.edge(nxt, "res", sel, "data0")
            nxt = sel
        return nxt


def synthesize(cfg: ControllerConfig, name: str, what: str = "") -> PEController:
    """The PEs of one controller (module docstring); ``name`` prefixes the node names, ``what``
    the labels. Raises :class:`PEControllerError` for a stream the PEs cannot express."""
    cfg = _levels(cfg)
    prods = _check(cfg, what or name)
    n = cfg.dims
    b = _Builder(name, what or name)
    amap = cfg.addresses["addr"]
    delta = compute_deltas(cfg.extents, amap.strides)
    gamma = compute_deltas(cfg.extents, cfg.schedule.strides)

    # schedule generator: the fire
    sg_b = b.select("sg_sel", list(range(n)), [g - 1 for g in gamma], PARK)
    sg = b.node("sg", PEOp.STEP, {"data0": WORD_MASK, "data2": cfg.schedule.start, "bit0": 1,
                                  "bit2": 1, **({"data1": sg_b} if isinstance(sg_b, int)
                                               else {})}, True, "schedule generator")
    if not isinstance(sg_b, int):
        b.edge(sg_b, "res", sg, "data1")
    b.out.fire = (sg, "res_p")

    # address generator
    outer = b.select("ag_sel", list(range(1, n - 1)), delta[1:n - 1],
                     delta[n - 1] if n > 1 else delta[0])
    consts = {"data0": delta[0], "data2": amap.start, "bit2": 0}
    if isinstance(outer, int):
        consts["data1"] = outer
    if n == 1 or (isinstance(outer, int) and outer & WORD_MASK == delta[0] & WORD_MASK):
        consts["bit1"] = 0
    ag = b.node("ag", PEOp.STEP, consts, True, "address generator")
    if "bit1" not in consts:
        b.edge(b.flags.setdefault(0, f"{name}.z0"), "res_p", ag, "bit1")
    if not isinstance(outer, int):
        b.edge(outer, "res", ag, "data1")
    b.edge(sg, "res_p", ag, "bit0")
    b.out.addr = (ag, "res")

    # the iteration domain: one counter per level flag in use
    for d in sorted(b.flags):
        z = b.node(f"z{d}", PEOp.STEP, {"data0": WORD_MASK, "data1": prods[d] - 1,
                                        "data2": prods[d] - 1, "bit2": 1}, True,
                   f"level {d} counter (mod {prods[d]})")
        b.edge(sg, "res_p", z, "bit0")
    return b.out


def controller_pes(cfg: ControllerConfig) -> int:
    """PEs of the controller :func:`synthesize` builds for ``cfg``."""
    return len(synthesize(cfg, "c").nodes)
