"""The MEM tile core as data: its register map, the PUB's then the register file's
(docs/mem_rf.md), and the register file's controllers.

No Amaranth here: the compiler encodes register-file banks with these layouts and names
(``compiler.mapping.registers.rf_tile_registers``), the RTL
(:class:`ubgen.mem.register_file.MemRegisterFile`, :class:`ubgen.mem.mem_tile.MemCore`) is built
from the same objects, and ``full_regmap`` / ``ubgen array-regmap`` / docs/regmap.md show them.

The register file (thesis §5.4: the register level of the memory hierarchy) has ``rf_words``
words (``[mem]`` of the constraints file), one write controller ``rf_write_<p>`` per PUB input
port and one read controller ``rf_read_<q>`` per PUB output port, each with one address
generator ``addr`` of ``clog2(rf_words)`` bits (the standard registers of
:meth:`~ubgen.controller.ControllerLayout.add_registers`). Its registers: ``rf_en`` first, the
controllers, then the read-only status ``rf_error`` (last, as
:class:`~ubgen.pub.control.BlockConfig` wants its status registers). In the MEM core's map
they follow the PUB's registers at the first offset that leaves the PUB's ``sram`` window alone
(:func:`rf_base`): the PUB's own map, its status registers last and its aligned window, is
unchanged. :data:`MEM_STATUS` names every read-only register of the MEM core.
"""
from __future__ import annotations

from ..arch import Arch, MemParams, PUBParams
from ..controller import ControllerLayout
from ..pub.spec import PUB_STATUS, pub_regmap
from ..regmap import Register, RegisterMap

__all__ = ["RF_ENABLE", "RF_STATUS", "MEM_STATUS", "rf_layouts", "rf_regmap", "rf_base",
           "rf_registers", "mem_regmap", "mem_ports"]

RF_ENABLE = "rf_en"
RF_STATUS = ("rf_error",)
MEM_STATUS = PUB_STATUS + RF_STATUS     # the MEM core's read-only (status) registers


def rf_layouts(params: PUBParams, mem: MemParams = MemParams()) -> dict[str, ControllerLayout]:
    """The register file's controllers in register-map order: ``rf_write_<p>`` for each input
    port, then ``rf_read_<q>`` for each output port, each with address generator ``addr``."""
    ag = {"addr": mem.rf_addr_width}
    c = params.controller
    out = {f"rf_write_{p}": ControllerLayout(f"rf_write_{p}", ag, c)
           for p in range(params.input_ports)}
    out.update({f"rf_read_{q}": ControllerLayout(f"rf_read_{q}", ag, c)
                for q in range(params.output_ports)})
    return out


def rf_regmap(params: PUBParams, mem: MemParams = MemParams()) -> RegisterMap:
    """The register file's registers at offsets from 0 (the map its configuration decodes)."""
    rm = RegisterMap("mem_rf")
    rm.add(RF_ENABLE, 1, doc="1: the tile's data ports are the register file's "
                             "(data_out/valid_out from rf_read_*); 0: the PUB's")
    for layout in rf_layouts(params, mem).values():
        layout.add_registers(rm)
    rm.add("rf_error", 1, doc="read-only status: sticky register-file conflict (two write "
                              "ports on one word in a cycle); write 1 to clear")
    return rm


def rf_base(params: PUBParams, mem: MemParams = MemParams()) -> int:
    """Offset of ``rf_en`` in the MEM core's map: the first offset after the PUB's registers
    from which the register file's registers overlap none of the PUB's windows."""
    pub = pub_regmap(params)
    n = len(rf_regmap(params, mem).registers)
    base = len(pub.registers)
    moved = True
    while moved:
        moved = False
        for w in pub.windows:
            if base < w.offset + w.size and w.offset < base + n:
                base, moved = w.offset + w.size, True
    return base


def rf_registers(params: PUBParams, mem: MemParams = MemParams()) -> list[Register]:
    """The register file's registers at their offsets in the MEM core's map."""
    base = rf_base(params, mem)
    return [Register(r.name, r.width, base + r.offset, r.reset, r.doc)
            for r in rf_regmap(params, mem).registers]


def mem_regmap(arch: Arch | PUBParams, mem: MemParams | None = None) -> RegisterMap:
    """The MEM core's configuration space for ``arch`` (or a :class:`PUBParams` and a
    :class:`MemParams`): the PUB's registers and ``sram`` window
    (:func:`ubgen.pub.spec.pub_regmap`, unchanged), then the register file's."""
    params = arch.pub if isinstance(arch, Arch) else arch
    mem = mem or (arch.mem if isinstance(arch, Arch) else MemParams())
    pub = pub_regmap(params)
    rm = RegisterMap("mem", list(pub.registers) + rf_registers(params, mem), list(pub.windows))
    names = [r.name for r in rm.registers]
    if len(set(names)) != len(names):
        raise ValueError("mem: a register-file register name clashes with a PUB register")
    return rm


def mem_ports(params: PUBParams) -> dict[str, tuple[str, int]]:
    """The MEM core's routed ports: name -> (direction, width) (:mod:`ubgen.mem.mem_tile`)."""
    w = params.word_width
    ports = {f"data_in{p}": ("in", w) for p in range(params.input_ports)}
    ports.update({f"chain_in{q}": ("in", w) for q in range(params.output_ports)})
    ports.update({f"chain_valid_in{q}": ("in", 1) for q in range(params.output_ports)})
    ports.update({f"data_out{q}": ("out", w) for q in range(params.output_ports)})
    ports.update({f"valid_out{q}": ("out", 1) for q in range(params.output_ports)})
    return ports
