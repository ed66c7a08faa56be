"""The netlist model: a cycle-level simulation of a :class:`~.netlist.Netlist` from its nodes'
register values (docs/design.md, the test pyramid: the level between the per-buffer model and
the RTL).

Every node is replayed from its core registers only: a PE with ``ubgen.pe.ops.pe_reference``
(its ``op``, constant registers and output register; a ``STEP`` PE's state is its output
register), a MEM tile with the config-driven PUB model
(:class:`compiler.mapping.pub_model.PUBTile`, chaining included), in ROM mode from its window
words, in register-file mode from its ``rf_*`` controllers, a dual-port MEM tile (``[mem] kind``
``dp`` / ``dp-pe``) with :class:`compiler.mapping.dp_model.DPTile` /
:class:`~compiler.mapping.dp_model.DPRAM`, and an IO tile from its ``glb2f`` / ``f2glb``
controller (``compiler.mapping.pub_model.decode_arrays`` on ``ubgen.io`` layouts). Edges
delay values by their latency. The application's inputs are loaded into a modelled global
buffer at every IO stream's :class:`~.netlist.GLBLayout` (one bank per IO tile), the netlist
runs, and the outputs are read back from the banks the ``f2glb`` streams wrote (for an element
written by several streams, the latest write).

Values the hardware would not define (a MEM output outside its fires, an uninitialised
register, a word read before it was written) are ``None`` and propagate; writing ``None`` to the
global buffer is reported. Unconnected inputs read 0 (a connection box's select 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ubgen.arch import Arch, WORD_MASK
from ubgen.io.spec import GLB2F_LATENCY, io_layouts
from ubgen.mem.spec import RF_CONTEXT_INPUT, RF_ENABLE
from ubgen.pe.contexts import split_port
from ubgen.pe.ops import PEOp, pe_reference, step_reset

from ..ir.program import Program
from ..mapping.decode import decode_arrays
from ..mapping.dp_model import DPRAM, DPTile
from ..mapping.pub_model import PUBTile, RegisterFileTile
from .glb import input_words, output_places
from .netlist import GLBLayout, Netlist, NetlistError

_DATA = ("data0", "data1", "data2")
_BITS = ("bit0", "bit1", "bit2")


@dataclass
class NetlistRun:
    """What the netlist model observed."""
    outputs: dict[str, np.ndarray]            # output buffers read back from the global buffer
    writes: int = 0                           # GLB writes by the array
    first_write: int | None = None            # unstalled cycle of the first and last GLB write
    last_write: int | None = None
    unknown_writes: list[str] = field(default_factory=list)   # writes of undefined values
    conflicts: list[str] = field(default_factory=list)        # SRAM / register-file conflicts
    missing: list[str] = field(default_factory=list)          # output elements never written

    @property
    def cycles(self) -> int | None:
        return self.last_write


class _Node:
    """One simulated tile: ``outputs(c)`` sets its output ports' values of cycle ``c``,
    ``end(c)`` takes its inputs of cycle ``c`` (registers, memories)."""
    comb_inputs: tuple[str, ...] = ()

    def __init__(self, name: str, data: dict, sim: "_Sim"):
        self.name, self.sim = name, sim
        self.cfg = data["config"]
        self.inputs: dict[str, tuple[list, int]] = {}

    def inp(self, port: str, c: int):
        src = self.inputs.get(port)
        if src is None:
            return 0
        hist, lat = src
        return hist[c - lat] if c >= lat else None

    def out(self, port: str) -> list | None:
        return self.sim.hist.get((self.name, port))

    def emit(self, c: int, data, valid: int) -> None:
        """A memory tile's ``data_out0``/``valid_out0`` of cycle ``c`` (when connected)."""
        h, hv = self.out("data_out0"), self.out("valid_out0")
        if h is not None:
            h[c] = data
        if hv is not None:
            hv[c] = valid

    def prepare(self) -> None:
        """Called once the edges are known."""

    def outputs(self, c: int) -> None: ...

    def end(self, c: int) -> None: ...


class _PE(_Node):
    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        cfg = self.cfg
        self.op = PEOp(cfg.get("op", 0))
        self.reg = bool(cfg.get("out_reg", 0))
        self.comb_inputs = () if self.reg else _DATA + _BITS
        self.consts = {p: cfg[f"{p}_const"] for p in _DATA + _BITS
                       if cfg.get(f"{p}_const_en", 0)}
        self.lut = cfg.get("lut", 0)
        self.step = self.op is PEOp.STEP
        self.state: tuple | None = None
        if self.step:
            if not self.reg:
                raise NetlistError(f"{name}: a STEP PE keeps its state in its output register "
                                   f"(out_reg = 1)")
            self.state = step_reset(self.consts.get("data2", 0))
        self.res, self.res_p = None, None

    def prepare(self) -> None:
        """Each operand as ``(constant, None, 0)`` or ``(None, history, latency)``; with input
        contexts (``ubgen.pe.contexts``) one per context that has a source, and the ctx bits."""
        self.operands, self.alternatives = [], []
        for p in _DATA + _BITS:
            self.operands.append(self.operand(p))
            self.alternatives.append([(k, self.operand(q)) for q in self.context_inputs
                                      if split_port(q)[0] == p
                                      for k in [split_port(q)[1]]])
        self.ctx = {int(q[3:]): src for q, src in self.inputs.items() if q.startswith("ctx")}
        self.contexts = bool(self.ctx)
        if not self.reg:
            self.comb_inputs = tuple(self.inputs)
        self.sel = self.op is PEOp.SEL

    @property
    def context_inputs(self) -> list[str]:
        return [q for q in self.inputs if split_port(q)[1] > 0]

    def operand(self, p: str):
        if p in self.consts and split_port(p)[1] == 0:
            return (self.consts[p], None, 0)
        if p in self.inputs:
            hist, lat = self.inputs[p]
            return (None, hist, lat)
        return (0, None, 0)

    def context_operands(self, c: int) -> list:
        """The operands of cycle ``c``: each core input's context-0 source unless a context
        bit picks one of its context sources (the lowest active context with a source)."""
        bits = {k: c >= lat and bool(hist[c - lat]) for k, (hist, lat) in self.ctx.items()}
        out = []
        for i, p in enumerate(_DATA + _BITS):
            chosen = self.operands[i]
            if p not in self.consts:
                for k, alt in sorted(self.alternatives[i]):
                    if bits.get(k):
                        chosen = alt
                        break
            out.append(chosen)
        return out

    def compute(self, c: int):
        ops = self.context_operands(c) if self.contexts else self.operands
        if self.sel:                            # only the selected operand matters
            k, h, lat = ops[3]
            b0 = k if h is None else (h[c - lat] if c >= lat else None)
            if b0 is None:
                return None
            k, h, lat = ops[0] if b0 & 1 else ops[1]
            v = k if h is None else (h[c - lat] if c >= lat else None)
            return None if v is None else (v & WORD_MASK, 0)
        vals = []
        for k, h, lat in ops:
            if h is not None:
                if c < lat:
                    return None
                k = h[c - lat]
                if k is None:
                    return None
            vals.append(k)
        if self.step:
            if self.state is None:
                return None
            return pe_reference(self.op, vals[0], vals[1], vals[2], (vals[3], vals[4], vals[5]),
                                acc=self.state[0])
        return pe_reference(self.op, vals[0], vals[1], vals[2], (vals[3], vals[4], vals[5]),
                            lut=self.lut)

    def outputs(self, c):
        r = self.state if self.reg else self.compute(c)
        if r is None:
            return                              # the histories start as None
        if self.res is not None:
            self.res[c] = r[0]
        if self.res_p is not None:
            self.res_p[c] = r[1]

    def end(self, c):
        if self.reg:
            self.state = self.compute(c)


class _PUB(_Node):
    comb_inputs = ("chain_in0", "chain_in1", "chain_valid_in0", "chain_valid_in1")

    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        prm = sim.arch.pub
        self.tile = PUBTile(self.cfg, prm)
        self.q = prm.output_ports
        self.p = prm.input_ports
        self.busy = set(self.tile.events) | {c + 1 for c in self.tile.events}

    def prepare(self) -> None:
        self.hists = [(self.out(f"data_out{q}"), self.out(f"valid_out{q}"))
                      for q in range(self.q)]

    def outputs(self, c):
        if not self.tile.chain_en and c not in self.tile.events:
            return                              # data None, valid 0: the histories' defaults
        own = self.tile.outputs(c)
        for q, (h, hv) in enumerate(self.hists):
            o = own[q]
            fired = o is not None and (o[1] or not self.tile.chain_en)
            if self.tile.chain_en and not fired:
                data, valid = self.inp(f"chain_in{q}", c), self.inp(f"chain_valid_in{q}", c)
            else:
                data, valid = (o[0] if o is not None else None), int(o is not None)
            if h is not None:
                h[c] = data
            if hv is not None:
                hv[c] = valid

    def end(self, c):
        if c not in self.busy:
            return
        n = len(self.tile.conflicts)
        self.tile.commit(c, [self.inp(f"data_in{p}", c) for p in range(self.p)])
        if len(self.tile.conflicts) > n:
            self.sim.run.conflicts.append(f"{self.name}: SRAM conflict at cycle {c}")


class _DP(_Node):
    """A DP-SRAM + AG tile (``[mem] kind = "dp"``): its read of cycle ``c - 1`` on
    ``data_out0`` at ``c``; a chained tile passes ``chain_in0`` through when it does not own
    the read (combinationally, like the hardware)."""
    comb_inputs = ("chain_in0", "chain_valid_in0")

    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        self.tile = DPTile(self.cfg, sim.arch.dpbuf)

    def outputs(self, c):
        o = self.tile.output(c)
        if self.tile.chain_en and not (o is not None and o[1]):
            self.emit(c, self.inp("chain_in0", c), self.inp("chain_valid_in0", c))
        else:
            self.emit(c, *((o[0], 1) if o is not None else (None, 0)))

    def end(self, c):
        self.tile.commit(c, self.inp("data_in0", c))


class _DPRAM(_Node):
    """A plain dual-port SRAM tile (``[mem] kind = "dp-pe"``) driven by its routed ports."""

    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        self.ram = DPRAM(sim.arch.dpbuf)
        self.word, self.valid = None, 0

    def outputs(self, c):
        self.emit(c, self.word, self.valid)

    def end(self, c):
        self.word, self.valid = self.ram.step(*(self.inp(p, c) for p in (
            "wen", "waddr", "data_in0", "ren", "raddr")))


class _ROM(_Node):
    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        self.table = data["window"]
        self.word = None
        self.valid = 0

    def outputs(self, c):
        self.emit(c, self.word, self.valid)

    def end(self, c):
        i = self.inp("data_in0", c)
        self.word = None if i is None else self.table.get(i, 0)
        self.valid = 1


class _RF(_Node):
    """A MEM tile in register-file mode (compiler.mapping.pub_model.RegisterFileTile): a read sees the
    writes of its own cycle, so its outputs depend on its ``data_in`` of the same cycle."""
    comb_inputs = ("data_in0", "data_in1", "chain_in0", "chain_in1")

    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        self.tile = RegisterFileTile(self.cfg, sim.arch.pub, sim.arch.mem)
        self.p = sim.arch.pub.input_ports

    def prepare(self) -> None:
        self.hists = [(self.out(f"data_out{q}"), self.out(f"valid_out{q}"))
                      for q in range(self.tile.ports)]

    def outputs(self, c):
        if c not in self.tile.events:
            return
        n = len(self.tile.conflicts)
        for (h, hv), v in zip(self.hists, self.tile.step(
                c, [self.inp(f"data_in{p}", c) for p in range(self.p)],
                [self.inp(f"{RF_CONTEXT_INPUT}{p}", c) for p in range(self.p)])):
            if v is not False:
                if h is not None:
                    h[c] = v
                if hv is not None:
                    hv[c] = 1
        if len(self.tile.conflicts) > n:
            self.sim.run.conflicts.append(f"{self.name}: two writes of one word at cycle {c}")


class _IO(_Node):
    def __init__(self, name, data, sim):
        super().__init__(name, data, sim)
        self.stream = data["stream"]
        self.layout = GLBLayout.from_dict(data["glb"])
        layout = io_layouts(sim.arch)[self.stream]
        cycles, addrs = decode_arrays(self.cfg, layout)
        self.fires = dict(zip(cycles.tolist(), addrs["addr"].tolist()))
        self.bank: dict[int, int | None] = {}
        self.word, self.fresh = None, 0
        self.written: list[tuple[int, int, int | None]] = []     # (cycle, offset, value)

    def outputs(self, c):
        h, hv = self.out("io2f_16"), self.out("io2f_1")
        if h is not None:
            h[c] = self.word
        if hv is not None:
            hv[c] = self.fresh

    def end(self, c):
        addr = self.fires.get(c)
        if self.stream == "glb2f":
            assert GLB2F_LATENCY == 1
            if addr is not None:
                self.word = self.bank.get(addr)
            self.fresh = int(addr is not None)
        elif addr is not None:
            v = self.inp("f2io_1" if self.cfg.get("f2glb_bit") else "f2io_16", c)
            self.bank[addr] = v
            self.written.append((c, addr, v))


def _make(name: str, data: dict, sim: "_Sim") -> _Node:
    kind, cfg = data["kind"], data["config"]
    if kind == "pe":
        return _PE(name, data, sim)
    if kind == "io":
        return _IO(name, data, sim)
    if sim.arch.mem.kind == "dp":
        return _DP(name, data, sim)
    if sim.arch.mem.kind == "dp-pe":
        return _DPRAM(name, data, sim)
    if cfg.get(RF_ENABLE):
        return _RF(name, data, sim)
    if cfg.get("mode"):
        return _ROM(name, data, sim)
    return _PUB(name, data, sim)


class _Sim:
    def __init__(self, net: Netlist, arch: Arch, horizon: int):
        self.net, self.arch = net, arch
        self.run = NetlistRun({})
        g = net.graph
        self.hist: dict[tuple[str, str], list] = {}
        for u, _v, d in g.edges(data=True):
            init = 0 if d["src_port"].startswith("valid_out") else None
            self.hist.setdefault((u, d["src_port"]), [init] * (horizon + 1))
        self.nodes = {n: _make(n, d, self) for n, d in g.nodes(data=True)}
        for u, v, d in g.edges(data=True):
            self.nodes[v].inputs[d["dst_port"]] = (self.hist[(u, d["src_port"])], d["latency"])
        for n in self.nodes.values():
            if isinstance(n, _PE):
                n.res, n.res_p = n.out("res"), n.out("res_p")
            n.prepare()
        comb = nx.DiGraph()
        comb.add_nodes_from(self.nodes)
        for u, v, d in g.edges(data=True):
            if d["latency"] == 0 and d["dst_port"] in self.nodes[v].comb_inputs:
                comb.add_edge(u, v)
        try:
            self.order = [self.nodes[n] for n in nx.lexicographical_topological_sort(comb)]
        except nx.NetworkXUnfeasible:
            loop = nx.find_cycle(comb)
            raise NetlistError(f"combinational loop through {', '.join(u for u, _ in loop)}") \
                from None
        self.horizon = horizon

    def simulate(self) -> None:
        order = self.order
        for c in range(self.horizon):
            for n in order:
                n.outputs(c)
            for n in order:
                n.end(c)


def _horizon(net: Netlist, arch: Arch) -> int:
    """One cycle past the last fire of any controller of the netlist."""
    last = 0
    for n, d in net.graph.nodes(data=True):
        if d["kind"] == "io":
            cycles, _ = decode_arrays(d["config"], io_layouts(arch)[d["stream"]])
            last = max([last] + cycles.tolist()[-1:])
    return last + 2


def read_outputs(net: Netlist, arch: Arch, program: Program,
                 banks: dict[str, dict[int, int | None]]) -> tuple[dict, list]:
    """The output buffers read back from the ``f2glb`` nodes' banks at the places the host
    reads them (:func:`.glb.output_places`). Returns (arrays, elements never written)."""
    from ..interp import numpy_dtype
    places = output_places(net, arch)
    out, missing = {}, []
    for name, decl in program.buffers.items():
        if decl.kind != "output":
            continue
        arr = np.zeros(decl.shape, dtype=np.int64)
        got = places.get(name, {})
        for idx in np.ndindex(*decl.shape):
            v = banks[got[idx][0]].get(got[idx][1]) if idx in got else None
            if v is None:
                missing.append(f"{name}{list(idx)}")
            else:
                arr[idx] = decl.type.wrap(v)
        out[name] = arr.astype(numpy_dtype(decl.type))
    return out, missing


def simulate_netlist(net: Netlist, arch: Arch, program: Program,
                     inputs: dict[str, np.ndarray], horizon: int | None = None) -> NetlistRun:
    """Run the netlist on ``inputs`` (module docstring); ``program`` gives the output buffers'
    shapes and types."""
    sim = _Sim(net, arch, horizon or _horizon(net, arch))
    for n, words in input_words(net, inputs).items():
        sim.nodes[n].bank = dict(words)
    sim.simulate()
    writes = {n.name: n.written for n in sim.nodes.values()
              if isinstance(n, _IO) and n.stream == "f2glb"}
    run = sim.run
    allw = sorted(c for ws in writes.values() for c, _o, _v in ws)
    run.writes = len(allw)
    run.first_write = allw[0] if allw else None
    run.last_write = allw[-1] if allw else None
    for n, ws in writes.items():
        run.unknown_writes += [f"{n}: undefined value written at cycle {c} (offset {o})"
                               for c, o, v in ws if v is None]
    banks = {n.name: n.bank for n in sim.nodes.values() if isinstance(n, _IO)}
    run.outputs, run.missing = read_outputs(net, sim.arch, program, banks)
    return run


@dataclass
class NetlistCheck:
    """The netlist model against the golden interpreter: ``ok`` when every output element is
    bit-exact, no undefined value was written, no conflict occurred and the last GLB write is
    at the predicted cycle."""
    cycles_predicted: int
    cycles_netlist: int | None
    writes: int
    mismatches: list[str]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.cycles_netlist == self.cycles_predicted

    def summary(self) -> str:
        if self.ok:
            return (f"pass: {self.writes} GLB writes bit-exact, last at cycle "
                    f"{self.cycles_netlist} == predicted")
        first = self.mismatches[0] if self.mismatches else (
            f"last GLB write at cycle {self.cycles_netlist}, predicted {self.cycles_predicted}")
        return f"fail: {first}" + (f" (+{len(self.mismatches) - 1} more)"
                                   if len(self.mismatches) > 1 else "")


def check_netlist(net: Netlist, arch: Arch, program: Program, inputs: dict[str, np.ndarray],
                  golden: dict[str, np.ndarray]) -> NetlistCheck:
    """Run the netlist model on ``inputs`` and compare with ``golden`` (the interpreter's
    outputs) and with the schedule's predicted completion."""
    import time
    t = time.perf_counter()
    run = simulate_netlist(net, arch, program, inputs)
    bad = list(run.conflicts) + run.unknown_writes[:5] + run.missing[:5]
    for name, want in golden.items():
        if name not in run.outputs:
            continue
        got = run.outputs[name].astype(np.int64)
        want = np.asarray(want).astype(np.int64)
        diff = np.argwhere(got != want)
        if len(diff):
            idx = tuple(int(i) for i in diff[0])
            bad.append(f"{name}{list(idx)} = {got[idx]}, expected {want[idx]} "
                       f"({len(diff)} elements differ)")
    return NetlistCheck(net.cycles_predicted, run.cycles, run.writes, bad,
                        time.perf_counter() - t)
