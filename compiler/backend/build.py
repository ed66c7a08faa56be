"""Netlist construction: Program + Schedule + UnifiedBuffers + UBImpls -> :class:`Netlist`
(thesis §6.3: "The memories are connected to the hardware compute kernels through the port
connection relation extracted in the unified buffer implementation ... forming an application
graph which is then mapped onto the CGRA"; paper §V "Finishing Steps").

Everything is timed against the static schedule (docs/design.md, "Timing"):

* a *stream* is a unified-buffer port or a node of a UBImpl's stream graph (``compiler.ir.
  ubimpl``): a value at each of its cycles ``t`` (a load reads at its op's cycle ``T``; a
  store's value lands at ``T + L``, ``L`` the op latency);
* every stream has a hardware :class:`Source`: a node's output port and an ``offset``: the
  value of stream cycle ``t`` is on that port at cycle ``t + offset``. A shift register
  (``dst(t) = src(t - d)``) is therefore free: ``dst`` has ``src``'s source with its offset
  lowered by ``d``, and the delay becomes routing latency on the edges that read it;
* a consumer that needs stream cycle ``t``'s value at its input at ``t + needed`` gets an edge
  of latency ``needed - offset`` (never negative for a legal schedule).

Per op, the kernel's PE graph (:mod:`.kernel_map`) reads its loads ``mem_read_latency`` cycles
after ``T`` (the load latency of the op latency, thesis eq. 4.7) and its root's output is the
store's source, ``L - depth`` cycles early at most (the kernel may be shallower than the
scheduler's latency model after fusion and pass elimination; the store's consumers absorb the
difference).

Per buffer: a host input is read by one IO tile per load port (``glb2f``: the word of a fire at
``T`` is on the tile's output at ``T + 1``), a host output is written by one IO tile per store
port (``f2glb`` at the landing cycle), each with its own GLB layout; a stream longer than a GLB
bank is split over several IO tiles by its outer loop (inputs merged again by ``SEL`` PEs on
the tiles' valid bits). On-chip buffers become MEM tiles with their PUB registers (chained tiles
in a chain), shift registers become edge latency, register files MEM tiles in register-file
mode, lookup tables MEM tiles in ROM mode, and bank selects ``SEL`` PEs whose select bits are
MEM valid outputs or schedule generators (a spare ``tb2out`` controller of a MEM tile). A kernel's
loop phase (``x % 2 == 0``, :class:`~compiler.ir.expr.LoopPhase`) is a schedule generator too:
its controller walks the op's iterations whose loop value has the phase, at the op's cycles, so
its ``valid`` is the phase bit at every cycle the op fires (constant phases are constant bits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ubgen.arch import Arch, WORD_MASK, WORD_WIDTH
from ubgen.controller import AffineMap, ControllerConfig, EncodeError, encode_controller
from ubgen.io.spec import io_layouts
from ubgen.mem.spec import RF_CONTEXT_INPUT
from ubgen.pe.contexts import context_port, ctx_port
from ubgen.pe.ops import PEOp
from ubgen.pub import pub_layouts

from ..ir.program import Program
from ..ir.schedule import Schedule
from ..ir.ubimpl import UBImpl
from ..ir.ubuf import UBPort, UnifiedBuffer
from ..mapping.bank_select import split_port
from ..mapping.common import Affine, MappingError, Stream, port_stream
from ..mapping.registers import (context_tile, context_tile_registers, pack_register_files,
                                 rf_tile_registers)
from .dp_build import add_dp_block
from .kernel_map import KernelGraph, KNode, Operand, map_kernel
from .netlist import GLBLayout, Netlist, NetlistError
from .sharing import (SharedUnit, check_one_kernel, issue_controller, operand_banks,
                      shared_units)
from .sources import Alias, Source


@dataclass
class _Demand:
    stream: tuple[str, str]
    node: str
    port: str
    needed: int
    width: int = WORD_WIDTH
    base: str | None = None      # a context source (ubgen.pe.contexts): the input it serves


@dataclass
class BuildOptions:
    pe_latency: int = 1
    read_latency: int = 1


class NetlistBuilder:
    """Builds the netlist of one application (module docstring). The hardware each stream
    gets is chosen by the leaf methods (:meth:`pe`, :meth:`kernel_node`, :meth:`pub_block`,
    :meth:`register_files`, :meth:`input_stream`, :meth:`output_stream`, :meth:`timer`,
    :meth:`resolve_valid`); the timing (sources, offsets, demands, edge latencies) is this
    class's, so a builder for other hardware (the FPGA backend, ``compiler.fpga``) overrides
    the leaves and keeps the timing. ``netlist`` is the graph class built."""

    netlist = Netlist

    def __init__(self, program: Program, schedule: Schedule,
                 buffers: dict[str, UnifiedBuffer], impls: dict[str, UBImpl], arch: Arch):
        self.program, self.schedule, self.buffers, self.impls = program, schedule, buffers, impls
        self.arch = arch
        self.net = self.netlist(program.name, arch.name, cycles_predicted=schedule.completion)
        self.streams: dict[tuple[str, str], Source | Alias] = {}
        self.valids: dict[tuple[str, str], Source | Alias] = {}
        self.demands: list[_Demand] = []
        self.consts: dict[int, str] = {}
        self.pe_latency = arch.schedule.pe_latency
        self.read_latency = arch.schedule.mem_read_latency
        self.has_out_reg = arch.array.pe_output_register
        if self.pe_latency not in (0, 1) or (self.pe_latency and not self.has_out_reg):
            raise NetlistError(f"{arch.name}: [schedule] pe_latency = {self.pe_latency} is not "
                               f"a latency the PE can have (0, or 1 with its output register)")
        if self.read_latency != 1:
            raise NetlistError(f"{arch.name}: [schedule] mem_read_latency must be 1")
        self.timers: list[tuple[str, int]] = []          # free (MEM node, tb2out port)
        self.n_timer_tiles = 0
        self.shared: list[SharedUnit] = []
        self.context_banks: set[tuple[str, str]] = set()     # (buffer, bank) in context tiles
        self.issue_timers: dict[tuple, Source] = {}       # issue controller -> its valid_out
        self.phase_timers: dict[tuple, tuple] = {}      # pseudo-stream key -> controller

    # --- helpers --------------------------------------------------------------------------
    def pe(self, node: str, pe_op: PEOp, inputs: dict[str, Operand] | None = None, *,
           comb: bool = False, label: str = "", **attrs) -> str:
        cfg = {"op": int(pe_op)}
        if self.has_out_reg:
            cfg["out_reg"] = 0 if comb else self.pe_latency
        for port, opd in (inputs or {}).items():
            if opd.kind == "const":
                cfg[f"{port}_const_en"] = 1
                cfg[f"{port}_const"] = opd.value & (1 if port.startswith("bit") else WORD_MASK)
        self.net.add_node(node, "pe", cfg, label=label or pe_op.name.lower(), **attrs)
        return node

    def const(self, value: int) -> Source:
        """A constant word: one PE per distinct value (PASS of a constant register)."""
        if value not in self.consts:
            self.consts[value] = self.pe(f"const.{value}", PEOp.PASS,
                                         {"data0": Operand("const", value)}, comb=True,
                                         label=f"const {value}", op=None, buffer=None)
        return Source(self.consts[value], "res", None)

    def demand(self, stream, node, port, needed, width=WORD_WIDTH) -> None:
        self.demands.append(_Demand(stream, node, port, needed, width))

    def resolve_valid(self, key) -> Source | None:
        """The 1-bit signal that marks stream ``key``'s cycles, if the hardware has one (a MEM
        output's ``valid_out``, through shift registers); else ``None``."""
        try:
            return self.resolve(key, self.valids)
        except KeyError:
            return None

    def resolve(self, key, table=None, seen=()) -> Source:
        table = self.streams if table is None else table
        if key not in table:
            if table is self.valids:
                raise KeyError(key)
            raise NetlistError(f"buffer {key[0]}: stream {key[1]} has no hardware source")
        s = table[key]
        if isinstance(s, Source):
            return s
        if key in seen:
            raise NetlistError(f"buffer {key[0]}: stream {key[1]} is defined by itself")
        base = self.resolve(s.stream, table, seen + (key,))
        return Source(base.node, base.port, None if base.offset is None
                      else base.offset + s.shift, base.width)

    # --- ops ----------------------------------------------------------------------------------
    def ops(self) -> None:
        cache: dict[int, KernelGraph] = {}

        def graph(op) -> KernelGraph:
            if id(op.kernel) not in cache:
                cache[id(op.kernel)] = map_kernel(op.kernel, self.pe_latency)
            return cache[id(op.kernel)]
        units = shared_units(self.program)
        sharing = {op.name for ops in units.values() for op in ops}
        for op in self.program.ops():
            if op.name not in sharing:
                self.op(op, graph(op))
        for unit, ops in units.items():
            kg = check_one_kernel(unit, ops, [graph(op) for op in ops],
                                  self.arch.array.pe_contexts, self.arch.name)
            if kg.result.kind != "node":           # nothing computed: nothing to share
                for op in ops:
                    self.op(op, kg)
                continue
            self.shared_op(SharedUnit(unit, tuple(ops), kg))

    def shared_op(self, su: SharedUnit) -> None:
        """One kernel for every op of a shared unit (:mod:`.sharing`): op ``k`` reads its
        loads through input context ``k``; every op's store comes from the root."""
        kg, names = su.graph, [su.node(i) for i in range(len(su.graph.nodes))]
        attrs = {"op": su.unit, "kernel": kg.name, "shared": [op.name for op in su.ops]}
        for i, kn in enumerate(kg.nodes):
            self.kernel_node(names[i], kn, {**attrs, "knode": i}, su.unit)
            for port, opd in kn.inputs.items():
                if opd.kind == "node":
                    self.kernel_edge(kg, opd, names, names[i], kn, port)
        for k, op in enumerate(su.ops):
            sched = self.schedule.ops[op.name]
            R = self.read_latency if op.loads else 0
            if R + kg.depth > sched.latency:
                raise NetlistError(f"op {op.name}: kernel {kg.name} needs {R + kg.depth} "
                                   f"cycles, the schedule gives it {sched.latency}")
            for i, kn in enumerate(kg.nodes):
                for port, opd in kn.inputs.items():
                    if opd.kind == "arg":
                        width = 1 if port.startswith("bit") else WORD_WIDTH
                        self.demands.append(_Demand(
                            (op.loads[opd.value].buffer, f"{op.name}_ld{opd.value}"), names[i],
                            context_port(port, k), R + kn.sample, width, port if k else None))
            self.streams[(op.store.buffer, f"{op.name}_st")] = Source(
                names[kg.result.value], "res", R + kg.depth - sched.latency)
        self.shared.append(su)

    def kernel_edge(self, kg: KernelGraph, opd: Operand, names: list[str], dst: str,
                    kn: KNode, port: str) -> None:
        """The edge from kernel node ``opd.value`` into ``dst.port``, timed by the nodes'
        sample cycles."""
        src = kg.nodes[opd.value]
        width = 1 if port.startswith("bit") else WORD_WIDTH
        lat = kn.sample - (src.sample + src.latency(self.pe_latency))
        self.net.add_edge(names[opd.value], "res_p" if opd.bit else
                          ("data_out0" if src.kind == "rom" else "res"), dst, port, lat, width)

    def op(self, op, kg: KernelGraph) -> None:
        sched = self.schedule.ops[op.name]
        R = self.read_latency if op.loads else 0
        L = sched.latency
        if R + kg.depth > L:
            raise NetlistError(f"op {op.name}: kernel {kg.name} needs {R + kg.depth} cycles, "
                               f"the schedule gives it {L}")
        loads = [(a.buffer, f"{op.name}_ld{k}") for k, a in enumerate(op.loads)]
        phases = [self.phase_stream(op.name, sched, ph) for ph in kg.phases]
        names = [f"{op.name}.{i}" for i in range(len(kg.nodes))]
        attrs = {"op": op.name, "kernel": kg.name}
        for i, kn in enumerate(kg.nodes):
            kn = _constant_phases(kn, phases)
            self.kernel_node(names[i], kn, {**attrs, "knode": i}, op.name)
            for port, opd in kn.inputs.items():
                if opd.kind == "phase":
                    self.demand(phases[opd.value], names[i], port, R + kn.sample, 1)
        for i, kn in enumerate(kg.nodes):
            for port, opd in kn.inputs.items():
                width = 1 if port.startswith("bit") else WORD_WIDTH
                if opd.kind == "arg":
                    self.demand(loads[opd.value], names[i], port, R + kn.sample, width)
                elif opd.kind == "node":
                    self.kernel_edge(kg, opd, names, names[i], kn, port)
        store = (op.store.buffer, f"{op.name}_st")
        res = kg.result
        if res.kind == "node":
            port = "data_out0" if kg.nodes[res.value].kind == "rom" else "res"
            self.streams[store] = Source(names[res.value], port, R + kg.depth - L)
        elif res.kind == "arg":
            self.streams[store] = Alias(loads[res.value], -L)
        else:
            self.streams[store] = self.const(res.value)

    def phase_stream(self, op: str, sched, ph) -> tuple | int:
        """The pseudo-stream of loop phase ``ph`` of ``op`` (its schedule generator is made by
        :meth:`phase_timers_`), or the phase's constant bit when every or no iteration has it.
        The generator fires at the op's cycles of the iterations whose loop value is
        ``ph.residue`` modulo ``ph.modulus``."""
        if ph.loop not in sched.dims:
            raise NetlistError(f"op {op}: loop phase {ph}: the schedule has no loop {ph.loop}")
        k = sched.dims.index(ph.loop)
        start, extent = sched.bounds[k]
        first = start + (ph.residue - start) % ph.modulus
        count = len(range(first, start + extent, ph.modulus))
        if count in (0, extent):
            return int(count == extent)
        if sched.coeffs[k] == 0:
            raise NetlistError(f"op {op}: loop phase {ph}: loop {ph.loop} does not advance the "
                               f"op's cycle, so no signal can tell its iterations apart")
        time = sched.offset + sum(c * s for c, (s, _) in zip(sched.coeffs, sched.bounds))
        time += sched.coeffs[k] * (first - start)
        extents = [e for _, e in sched.bounds]
        strides = list(sched.coeffs)
        extents[k], strides[k] = count, sched.coeffs[k] * ph.modulus
        pattern = (tuple(reversed(extents)), tuple(reversed(strides)))    # innermost first
        key = ("@phase", f"{op}: {ph}")
        self.phase_timers[key] = (pattern, time, f"op {op}: loop phase {ph}")
        return key

    def phase_timers_(self) -> None:
        """One schedule generator (:meth:`spare_controller`) per distinct pattern of loop-phase
        cycles: the earliest of the phases with that pattern gets it, the later ones read it
        delayed (routing latency)."""
        first: dict[tuple, tuple[int, tuple]] = {}
        for key, (pattern, time, _what) in self.phase_timers.items():
            if pattern not in first or time < first[pattern][0]:
                first[pattern] = (time, key)
        for key, (pattern, time, what) in self.phase_timers.items():
            t0, owner = first[pattern]
            if key == owner:
                extents, strides = pattern
                cfg = ControllerConfig(extents, AffineMap(time, strides),
                                       {"tb": AffineMap(0, (0,) * len(extents))})
                self.streams[key] = self.spare_controller(cfg, what, None)
            else:
                self.streams[key] = Alias(owner, t0 - time)

    def kernel_node(self, name: str, kn: KNode, attrs: dict, op: str) -> None:
        if kn.kind == "pe":
            self.pe(name, kn.op, kn.inputs, label=f"{op}: {kn.label}", buffer=None, **attrs)
            return
        if self.arch.mem.kind != "pub":
            raise NetlistError(f"op {op}: a lookup table needs a MEM tile in ROM mode; the "
                               f"arch's MEM tile ([mem] kind = {self.arch.mem.kind}) has none")
        cap = self.arch.pub.capacity_words
        if len(kn.table) > cap:
            raise NetlistError(f"op {op}: lookup table of {len(kn.table)} words exceeds a MEM "
                               f"tile's {cap}")
        self.net.add_node(name, "mem", {"mode": 1}, label=f"{op}: {kn.label} (ROM)",
                          window=dict(enumerate(kn.table)), buffer=None, **attrs)

    # --- buffers ------------------------------------------------------------------------
    def buffers_(self) -> None:
        self.context_register_files()
        for name, ub in self.buffers.items():
            impl = self.impls.get(name)
            if impl is None:
                raise NetlistError(f"buffer {name}: not mapped")
            if ub.kind == "input":
                for p in ub.outputs:
                    self.input_stream(ub, p)
                continue
            if ub.kind == "output":
                for p in ub.inputs:
                    self.output_stream(ub, p)
            if impl.level == "GLB" and ub.kind == "temp" and ub.inputs and ub.outputs:
                raise NetlistError(f"buffer {name}: a temporary buffer kept in the global "
                                   f"buffer is not supported by the netlist yet")
            self.on_chip(ub, impl)

    def on_chip(self, ub: UnifiedBuffer, impl: UBImpl) -> None:
        B = ub.name
        for sr in impl.shift_registers:
            self.streams[(B, sr.dst)] = Alias((B, sr.src), -sr.delay)
            self.valids[(B, sr.dst)] = Alias((B, sr.src), -sr.delay)
        for i, pub in enumerate(impl.pubs):
            self.pub_block(B, pub, f"{B}.pub{i}")
        for i, block in enumerate(impl.dps):
            add_dp_block(self, B, block, f"{B}.dp{i}")
        self.register_files(B, impl)
        for port, node in impl.connections.items():
            if node != port:
                self.streams[(B, port)] = Alias((B, node), 0)
                self.valids[(B, port)] = Alias((B, node), 0)

    def pub_block(self, B: str, pub, base: str) -> None:
        regs = pub.registers(self.arch.pub)
        tiles = []
        for t, r in enumerate(regs):
            name = base + (f".t{t}" if pub.tiles > 1 else "")
            self.net.add_node(name, "mem", r, label=f"{B}: {pub.name}"
                              + (f" tile {t}/{pub.tiles}" if pub.tiles > 1 else ""),
                              buffer=B, op=None, chain=(base, t) if pub.tiles > 1 else None)
            tiles.append(name)
            for p, src in enumerate(pub.inputs):
                self.demand((B, src), name, f"data_in{p}", 0)
        for a, b in zip(tiles, tiles[1:]):
            for q in range(len(pub.outputs)):
                self.net.add_edge(a, f"data_out{q}", b, f"chain_in{q}", 0)
                self.net.add_edge(a, f"valid_out{q}", b, f"chain_valid_in{q}", 0, width=1)
        last = tiles[-1]
        for q, out in enumerate(pub.outputs):
            self.streams[(B, out)] = Source(last, f"data_out{q}", 0)
            self.valids[(B, out)] = Source(last, f"valid_out{q}", 0, 1)
        if pub.tiles == 1:
            used = {f"tb2out_{q}" for q in range(len(pub.outputs))}
            self.timers += [(last, q) for q in range(self.arch.pub.output_ports)
                            if f"tb2out_{q}" not in used]

    def context_register_files(self) -> None:
        """The register-file banks a shared unit's ops read one operand from, one MEM tile
        per operand when its ports have two contexts (:func:`.sharing.operand_banks`,
        ``compiler.mapping.registers.context_tile``); every other bank is packed per buffer."""
        for label, banks in operand_banks(self.shared, self.impls):
            tile = context_tile(banks, self.arch.pub, self.arch.mem)
            if tile is None:
                continue
            name = f"ctx_rf.{label}"
            regs = context_tile_registers(tile, self.arch.pub, self.arch.mem)
            words = sum(b.words for b in banks)
            self.net.add_node(name, "mem", regs, label=f"register files {tile.name} ({words} "
                              f"words, two contexts per port)", buffer=banks[0].buffer, op=None,
                              banks=[f"{b.buffer}.{b.name}" for b in banks])
            for bank, (q, _j), ws in zip(banks, tile.reads, tile.writes):
                self.context_banks.add((bank.buffer, bank.name))
                self.streams[(bank.buffer, bank.outputs[0])] = Source(name, f"data_out{q}", 0)
                for src, (p, j) in zip(bank.inputs, ws):
                    self.demand((bank.buffer, src), name,
                                f"{RF_CONTEXT_INPUT}{p}" if j else f"data_in{p}", 0)

    def register_files(self, B: str, impl: UBImpl) -> None:
        """The register files of buffer ``B`` not read by a shared unit through contexts
        (:meth:`context_register_files`), packed into MEM tiles in register-file mode."""
        banks = [b for b in impl.register_files if (B, b.name) not in self.context_banks]
        for i, tile in enumerate(pack_register_files(banks, self.arch.pub, self.arch.mem)):
            self.register_file_tile(B, tile, f"{B}.rf{i}")

    def register_file_tile(self, B: str, tile, name: str) -> None:
        regs = rf_tile_registers(tile, self.arch.pub, self.arch.mem)
        words = sum(b.words for b in tile.banks)
        self.net.add_node(name, "mem", regs, label=f"{B}: register file {tile.name} ({words} "
                          f"words)", buffer=B, op=None)
        self.memory_ports(B, name, tile.inputs, tile.outputs)

    def memory_ports(self, B: str, node: str, inputs: list[str], outputs: list[str]) -> None:
        """A memory ``node`` of buffer ``B``: stream ``inputs[p]`` into its ``data_in<p>`` in
        the landing cycle, stream ``outputs[q]`` out of its ``data_out<q>`` (with
        ``valid_out<q>``) in the read cycle."""
        for p, src in enumerate(inputs):
            self.demand((B, src), node, f"data_in{p}", 0)
        for q, out in enumerate(outputs):
            self.streams[(B, out)] = Source(node, f"data_out{q}", 0)
            self.valids[(B, out)] = Source(node, f"valid_out{q}", 0, 1)

    # --- IO streams -------------------------------------------------------------------------
    def io_controller(self, stream: Stream, layout: GLBLayout, kind: str) -> dict[str, int]:
        addr = _layout_affine(stream, layout)
        cfg = ControllerConfig(stream.extents, AffineMap(stream.time.start, stream.time.strides),
                               {"addr": AffineMap(addr.start, addr.strides)})
        try:
            regs = encode_controller(cfg, io_layouts(self.arch)[kind])
        except EncodeError as e:
            raise NetlistError(f"buffer {layout.buffer}: IO stream: {e}") from None
        regs["f2glb_bit"] = 0
        return regs

    @staticmethod
    def host_stream(port: UBPort) -> Stream:
        """The stream of a host buffer's port (one controller; a one-line error if not)."""
        try:
            return port_stream(port)
        except MappingError as e:
            raise NetlistError(f"buffer {port.access.get_tuple_name(_out())}: port {port.name}: "
                               f"{e}") from None

    def io_parts(self, port: UBPort) -> list[tuple[Stream, GLBLayout]]:
        buffer = port.access.get_tuple_name(_out())
        return _split_stream(self.host_stream(port), buffer, self.arch.glb.bank_words)

    def input_stream(self, ub: UnifiedBuffer, port: UBPort) -> None:
        parts = self.io_parts(port)
        nodes = []
        for k, (st, lay) in enumerate(parts):
            name = f"io.{port.name}" + (f".{k}" if len(parts) > 1 else "")
            self.net.add_node(name, "io", self.io_controller(st, lay, "glb2f"),
                              label=f"{ub.name} -> {port.op}"
                              + (f" (part {k + 1}/{len(parts)})" if len(parts) > 1 else ""),
                              stream="glb2f", glb=lay.to_dict(), buffer=ub.name, op=None)
            nodes.append(name)
        if len(nodes) == 1:
            self.streams[(ub.name, port.name)] = Source(nodes[0], "io2f_16", 1)
            return
        # parts merged on their valid bits: SEL(v0, d0, SEL(v1, d1, ... d_last)), combinational
        nxt = Source(nodes[-1], "io2f_16", 1)
        for k in range(len(nodes) - 2, -1, -1):
            sel = self.pe(f"sel.{port.name}.{k}", PEOp.SEL, comb=True,
                          label=f"{ub.name}: merge GLB parts", op=None, buffer=ub.name)
            self.net.add_edge(nodes[k], "io2f_1", sel, "bit0", 0, width=1)
            self.net.add_edge(nodes[k], "io2f_16", sel, "data0", 0)
            self.net.add_edge(nxt.node, nxt.port, sel, "data1", 0)
            nxt = Source(sel, "res", 1)
        self.streams[(ub.name, port.name)] = nxt

    def output_stream(self, ub: UnifiedBuffer, port: UBPort) -> None:
        parts = self.io_parts(port)
        for k, (st, lay) in enumerate(parts):
            name = f"io.{port.name}" + (f".{k}" if len(parts) > 1 else "")
            self.net.add_node(name, "io", self.io_controller(st, lay, "f2glb"),
                              label=f"{port.op} -> {ub.name}"
                              + (f" (part {k + 1}/{len(parts)})" if len(parts) > 1 else ""),
                              stream="f2glb", glb=lay.to_dict(), buffer=ub.name, op=None)
            self.demand((ub.name, port.name), name, "f2io_16", 0)

    # --- bank selects -------------------------------------------------------------------------
    def selects(self) -> None:
        for name, impl in self.impls.items():
            ub = self.buffers[name]
            for sel in impl.selects:
                self.select(ub, sel)

    def timer(self, ub: UnifiedBuffer, stream: str, logical: str) -> Source:
        """A 1-bit signal that is 1 exactly at the cycles of sub-stream ``stream`` of port
        ``logical``: a spare ``tb2out`` controller of a MEM tile (its ``valid_out``)."""
        port = next(p for p in ub.outputs if p.name == logical)
        sub = next((s for s in split_port(port, ub.inputs) or [] if s.name == stream), None)
        if sub is None:
            raise NetlistError(f"buffer {ub.name}: select source {stream} is not a sub-port of "
                               f"{logical}")
        if self.arch.mem.kind != "pub":
            raise NetlistError(f"buffer {ub.name}: bank select {logical} needs a schedule "
                               f"generator of a PUB tile; the arch's MEM tile ([mem] kind = "
                               f"{self.arch.mem.kind}) has none")
        st = port_stream(sub)
        cfg = ControllerConfig(st.extents, AffineMap(st.time.start, st.time.strides),
                               {"tb": AffineMap(0, (0,) * len(st.extents))})
        return self.spare_controller(cfg, f"buffer {ub.name}: select timer", ub.name)

    def spare_controller(self, cfg: ControllerConfig, what: str, buffer: str | None) -> Source:
        """A schedule generator: a spare ``tb2out`` controller of a MEM tile (a new tile of
        schedule generators when none is left) configured with ``cfg``; its ``valid_out`` is 1
        exactly at ``cfg``'s cycles."""
        if not self.timers:
            node = f"timer.{self.n_timer_tiles}"
            self.n_timer_tiles += 1
            self.net.add_node(node, "mem", {"mode": 0}, label="schedule generators",
                              buffer=buffer, op=None)
            self.timers = [(node, q) for q in range(self.arch.pub.output_ports)]
        node, q = self.timers.pop(0)
        layout = pub_layouts(self.arch.pub)[f"tb2out_{q}"]
        try:
            regs = encode_controller(cfg, layout)
        except EncodeError as e:
            raise NetlistError(f"{what}: {e}") from None
        self.net.graph.nodes[node]["config"].update(regs)
        self.net.graph.nodes[node].setdefault("generators", []).append(q)
        return Source(node, f"valid_out{q}", 0, 1)

    def issue_timer(self, op) -> Source:
        """The schedule generator of op ``op``'s issue cycles (one per distinct schedule:
        the lanes of an unrolled shared unit share it)."""
        cfg = issue_controller(self.schedule.ops[op.name])
        key = (cfg.extents, cfg.schedule.start, cfg.schedule.strides)
        if key not in self.issue_timers:
            self.issue_timers[key] = self.spare_controller(
                cfg, f"op {op.name}: context timer", None)
        return self.issue_timers[key]

    def select(self, ub: UnifiedBuffer, sel) -> None:
        B = ub.name
        data = [self.resolve((B, s)) for s in sel.srcs]
        valid = []
        for s in sel.srcs[:-1]:
            v = self.resolve_valid((B, s))
            valid.append(v if v is not None else self.timer(ub, s, sel.dst))
        offsets = [x.offset for x in data + valid if x.offset is not None]
        a = max(offsets)
        nxt = data[-1]
        nxt_at = a
        for k in range(len(data) - 2, -1, -1):
            node = self.pe(f"sel.{B}.{sel.dst}.{k}", PEOp.SEL, comb=True,
                           label=f"{B}: bank select {sel.dst}", op=None, buffer=B)
            self.net.add_edge(valid[k].node, valid[k].port, node, "bit0",
                              a - valid[k].offset, width=1)
            self.net.add_edge(data[k].node, data[k].port, node, "data0",
                              0 if data[k].offset is None else a - data[k].offset)
            self.net.add_edge(nxt.node, nxt.port, node, "data1",
                              0 if nxt.offset is None else nxt_at - nxt.offset)
            nxt, nxt_at = Source(node, "res", a), a
        self.streams[(B, sel.dst)] = nxt

    # --- edges --------------------------------------------------------------------------------
    def connect(self) -> None:
        placed: dict[tuple[str, str], tuple[str, str, int]] = {}
        for d in sorted(self.demands, key=lambda d: d.base is not None):
            src = self.resolve(d.stream)
            lat = 0 if src.offset is None else d.needed - src.offset
            if lat < 0:
                raise NetlistError(f"{d.node}.{d.port} needs stream {d.stream[1]} of buffer "
                                   f"{d.stream[0]} {-lat} cycle(s) before {src.node} "
                                   f"produces it")
            if d.base is not None and placed.get((d.node, d.base)) == (src.node, src.port, lat):
                continue        # what context 0 reads: the connection box falls back to it
            if d.base is not None and self.net.graph.nodes[d.node]["kind"] != "pe":
                raise NetlistError(f"{d.node}: ops of a shared unit read different "
                                   f"{d.base} operands, and only PEs have input contexts")
            self.net.add_edge(src.node, src.port, d.node, d.port, lat, d.width)
            placed[(d.node, d.port)] = (src.node, src.port, lat)
        self.context_bits()

    def context_bits(self) -> None:
        """``ctx<k>`` of every shared PE that reads a context-``k`` source: op ``k``'s issue
        timer, delayed to the cycle the PE samples its operands."""
        g = self.net.graph
        for su in self.shared:
            for k, op in enumerate(su.ops[1:], 1):
                R = self.read_latency if op.loads else 0
                for i, kn in enumerate(su.graph.nodes):
                    node = su.node(i)
                    if not any(p.endswith(f"_c{k}") for _u, _v, p in g.in_edges(node, keys=True)):
                        continue
                    t = self.issue_timer(op)
                    self.net.add_edge(t.node, t.port, node, ctx_port(k), R + kn.sample - t.offset,
                                      width=1)

    def build(self) -> Netlist:
        self.ops()
        self.buffers_()
        self.selects()
        self.phase_timers_()
        self.connect()
        return self.net


def _constant_phases(kn: KNode, phases: list) -> KNode:
    """``kn`` with its loop-phase inputs that are constant bits (``phases[i]`` an int) turned
    into constant operands."""
    if not any(o.kind == "phase" and isinstance(phases[o.value], int)
               for o in kn.inputs.values()):
        return kn
    inputs = {p: Operand("const", phases[o.value]) if o.kind == "phase"
              and isinstance(phases[o.value], int) else o for p, o in kn.inputs.items()}
    return KNode(kn.kind, inputs, kn.op, kn.table, kn.label, kn.sample)


def _out():
    import islpy as isl
    return isl.dim_type.out


def _box(st: Stream) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per buffer dimension the (low, step, extent) of the addresses ``st`` reaches."""
    lows, steps, exts = [], [], []
    for a in st.addr:
        lo = a.start + sum(min(0, s * (e - 1)) for s, e in zip(a.strides, st.extents))
        hi = a.start + sum(max(0, s * (e - 1)) for s, e in zip(a.strides, st.extents))
        g = 0
        for s, e in zip(a.strides, st.extents):
            if e > 1:
                g = math.gcd(g, abs(s))
        g = g or 1
        lows.append(lo)
        steps.append(g)
        exts.append((hi - lo) // g + 1)
    return tuple(lows), tuple(steps), tuple(exts)


def _layout_affine(st: Stream, lay: GLBLayout) -> Affine:
    """The GLB offset of each fire of ``st`` as one affine map (the IO tile's AG)."""
    start, strides, scale = lay.base, [0] * len(st.extents), 1
    for a, lo, step, ext in zip(st.addr, lay.lows, lay.steps, lay.extents):
        start += (a.start - lo) // step * scale
        for j, s in enumerate(a.strides):
            strides[j] += s // step * scale
        scale *= ext
    return Affine(start, tuple(strides))


def _part(st: Stream, dim: int, lo: int, n: int) -> Stream:
    """The fires of ``st`` with loop ``dim`` in ``[lo, lo + n)``."""
    ext = list(st.extents)
    ext[dim] = n

    def shift(a: Affine) -> Affine:
        return Affine(a.start + lo * a.strides[dim], a.strides)
    return Stream(st.name, tuple(ext), shift(st.time), tuple(shift(a) for a in st.addr))


def _split_stream(st: Stream, buffer: str, bank_words: int) -> list[tuple[Stream, GLBLayout]]:
    """``st`` as one or more IO streams whose GLB layouts each fit a bank: split by the outer
    loop into the fewest equal parts whose boxes fit (recursively inward)."""
    lay = GLBLayout(buffer, *_box(st))
    if lay.words <= bank_words:
        return [(st, lay)]
    for dim in range(len(st.extents) - 1, -1, -1):
        n = st.extents[dim]
        if n == 1:
            continue
        for k in range(2, n + 1):
            chunk = -(-n // k)
            parts = [_part(st, dim, lo, min(chunk, n - lo)) for lo in range(0, n, chunk)]
            if all(GLBLayout(buffer, *_box(p)).words <= bank_words for p in parts):
                return [(p, GLBLayout(buffer, *_box(p))) for p in parts]
        parts = [_part(st, dim, lo, 1) for lo in range(n)]
        return [x for p in parts for x in _split_stream(p, buffer, bank_words)]
    raise NetlistError(f"buffer {buffer}: one word of stream {st.name} does not fit a GLB bank")


def build_netlist(program: Program, schedule: Schedule, buffers: dict[str, UnifiedBuffer],
                  impls: dict[str, UBImpl], arch: Arch) -> Netlist:
    """The netlist of a scheduled and mapped application (module docstring)."""
    return NetlistBuilder(program, schedule, buffers, impls, arch).build()
