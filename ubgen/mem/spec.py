"""The MEM tile core as data: its register map, the PUB's then the register file's
(docs/mem_rf.md), and which of the PUB's controllers drive the register file's ports.

No Amaranth here: the compiler encodes register-file banks with these objects
(``compiler.mapping.registers.rf_tile_registers``), the RTL
(:class:`ubgen.mem.register_file.MemRegisterFile`, :class:`ubgen.mem.mem_tile.MemCore`) is built
from the same objects, and ``full_regmap`` / ``ubgen array-regmap`` / docs/regmap.md show them.

The register file (thesis §5.4: the register level of the memory hierarchy) has ``rf_words``
words (``[mem]`` of the constraints file), one write port ``rf_write_<p>`` per PUB input port
and one read port ``rf_read_<q>`` per PUB output port. It has no controllers of its own: in
register-file mode the PUB's datapath is idle, so each port borrows the PUB's affine
controllers (:func:`rf_ports`): ``rf_write_<p>`` fires with the PUB's ``in2agg_<p>`` (its
schedule) and takes its word address from ``agg2sram_<p>``, which in this mode steps with
``in2agg_<p>``'s fires; ``rf_read_<q>`` is the PUB's ``sram2tb_<q>``. The word address is the
low ``clog2(rf_words)`` bits of their ``sram`` address generator (the PUB's widest; the other
generators are unused and encoded as 0). The
register file's own registers are only ``rf_en`` and the read-only status ``rf_error`` (last,
as :class:`~ubgen.pub.control.BlockConfig` wants its status registers). In the MEM core's map
they follow the PUB's registers at the first offset that leaves the PUB's ``sram`` window alone
(:func:`rf_base`): the PUB's own map, its status registers last and its aligned window, is
unchanged. :data:`MEM_STATUS` names every read-only register of the MEM core.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..params import Arch, MemParams, PUBParams
from ..controller import (AffineMap, ControllerConfig, ControllerLayout, EncodeError,
                          encode_controller)
from ..pub.spec import PUB_STATUS, pub_layouts, pub_regmap
from ..regmap import Register, RegisterMap

__all__ = ["RF_ENABLE", "RF_STATUS", "MEM_STATUS", "RF_BORROW", "RF_CONTEXT_INPUT", "RFPort",
           "rf_ports", "rf_context_layouts", "encode_rf_ports",
           "rf_regmap", "rf_base", "rf_registers", "mem_regmap", "mem_ports"]

RF_ENABLE = "rf_en"
RF_STATUS = ("rf_error",)
MEM_STATUS = PUB_STATUS + RF_STATUS     # the MEM core's read-only (status) registers
# register-file port kind -> (the PUB controller timing its fires, the one whose generator is
# the word address, by port index; that generator)
RF_BORROW = {"rf_write": ("in2agg", "agg2sram", "sram"), "rf_read": ("sram2tb", "sram2tb", "sram")}
# the routed input a write port's second context writes from (idle in register-file mode)
RF_CONTEXT_INPUT = "chain_in"


@dataclass(frozen=True)
class RFPort:
    """One register-file port: ``name`` (``rf_write_<p>`` / ``rf_read_<q>``), ``index`` (``p`` /
    ``q``), the borrowed PUB controller ``layout`` whose fire is the port's fire and whose
    address generator ``ag``'s low ``addr_width`` bits are the word address, and the borrowed
    controller ``timing`` whose schedule times the fires (``layout`` itself, or for a write
    port ``in2agg_<p>``: ``agg2sram_<p>`` has no schedule and steps with it). ``context`` 1:
    the register file's own second-context controller (:func:`rf_context_layouts`)."""
    name: str
    index: int
    layout: ControllerLayout
    ag: str
    addr_width: int
    timing: ControllerLayout | None = None    # the controller timing the fires (default layout)
    context: int = 0          # 0: the borrowed PUB controllers; 1: the register file's own

    def __post_init__(self):
        if self.timing is None:
            object.__setattr__(self, "timing", self.layout)

    @property
    def is_read(self) -> bool:
        return self.name.startswith("rf_read")

    def register(self, field: str) -> str:
        """The borrowed controller's register ``field`` (``"dim"``, ``"cycle_start"``, ...)."""
        return f"{self.layout.name}_{field}"

    def addr_register(self, field: str) -> str:
        """The word-address generator's register ``field`` (``"start"``, ``"delta_<d>"``)."""
        return f"{self.layout.name}_{self.ag}_{field}"

    def controller_configs(self, cfg: ControllerConfig) -> dict[str, ControllerConfig]:
        """The borrowed controllers' configurations (by name) for a port configuration whose
        single address map is ``addr`` (a word address): the port's domain and schedule on
        both, ``addr`` on :attr:`ag` of :attr:`layout`, every other generator constant 0."""
        if not cfg.extents:
            return {self.timing.name: cfg, self.layout.name: cfg}
        if set(cfg.addresses) != {"addr"}:
            raise ValueError(f"{self.name}: needs address map 'addr', got "
                             f"{sorted(cfg.addresses)}")
        zero = AffineMap(0, (0,) * cfg.dims)
        out = {}
        for layout in (self.timing, self.layout):
            out[layout.name] = ControllerConfig(
                cfg.extents, cfg.schedule,
                {a: cfg.addresses["addr"] if layout is self.layout and a == self.ag else zero
                 for a in layout.addr_widths})
        return out


def rf_ports(params: PUBParams, mem: MemParams = MemParams()) -> dict[str, RFPort]:
    """The register file's ports: ``rf_write_<p>`` per input port, then ``rf_read_<q>`` per
    output port, each with the PUB controller it borrows (:data:`RF_BORROW`). Raises
    ``ValueError`` when a borrowed generator is narrower than ``clog2(rf_words)``."""
    pub = pub_layouts(params)
    out = {}
    for kind, count in (("rf_write", params.input_ports), ("rf_read", params.output_ports)):
        timing, ctl, ag = RF_BORROW[kind]
        for k in range(count):
            layout = pub[f"{ctl}_{k}"]
            if layout.addr_widths[ag] < mem.rf_addr_width:
                raise ValueError(f"mem: {layout.name}.{ag} has {layout.addr_widths[ag]} bits, "
                                 f"the register file's {mem.rf_words} words need "
                                 f"{mem.rf_addr_width}")
            out[f"{kind}_{k}"] = RFPort(f"{kind}_{k}", k, layout, ag, mem.rf_addr_width,
                                        pub[f"{timing}_{k}"])
    for name, layout in rf_context_layouts(params, mem).items():
        k = int(name.split("_")[2])
        out[name] = RFPort(name, k, layout, "addr", mem.rf_addr_width, context=1)
    return out


def rf_context_layouts(params: PUBParams, mem: MemParams = MemParams()
                       ) -> dict[str, ControllerLayout]:
    """The register file's own controllers (``[mem] rf_contexts`` = 2): a second context per
    port, ``rf_write_<p>_c1`` / ``rf_read_<q>_c1``, each with one word-address generator
    ``addr``. A write port's second context writes the routed ``chain_in<p>`` (the chain ports
    are idle in register-file mode); a read port's drives ``data_out<q>`` in the cycles it
    fires. Their loop levels are ``[controller] max_dims`` (``rf_write`` / ``rf_read`` are not
    kinds of ``[controller.dims]``). Empty with one context."""
    if mem.rf_contexts == 1:
        return {}
    if params.input_ports > params.output_ports:
        raise ValueError(f"mem: rf_contexts = 2 needs a {RF_CONTEXT_INPUT}<p> per write port: "
                         f"{params.input_ports} write ports, {params.output_ports} chain inputs")
    out = {}
    for kind, count in (("rf_write", params.input_ports), ("rf_read", params.output_ports)):
        for k in range(count):
            name = f"{kind}_{k}_c1"
            out[name] = ControllerLayout(name, {"addr": mem.rf_addr_width},
                                         params.controller.for_kind(kind))
    return out


def encode_rf_ports(configs: dict[str, ControllerConfig], params: PUBParams,
                    mem: MemParams = MemParams()) -> dict[str, int]:
    """The register values of every register-file port (``configs``: port name -> its affine
    form with one address map ``addr``, a word address; an absent port is disabled), encoded
    by :func:`ubgen.controller.encode_controller` into the borrowed PUB controllers' registers
    (a write port's into both ``in2agg_<p>`` and ``agg2sram_<p>``), plus ``rf_en`` = 1. Raises :class:`~ubgen.controller.EncodeError` for a value that does
    not fit and ``ValueError`` for an unknown port."""
    ports = rf_ports(params, mem)
    unknown = sorted(set(configs) - set(ports))
    if unknown:
        raise ValueError(f"mem: no register-file port {unknown[0]} (ports: {sorted(ports)})")
    regs = {RF_ENABLE: 1}
    for name, port in ports.items():
        cfg = configs.get(name, ControllerConfig.disabled())
        for ctl, c in port.controller_configs(cfg).items():
            layout = port.layout if ctl == port.layout.name else port.timing
            try:
                regs.update(encode_controller(c, layout))
            except EncodeError as e:
                raise EncodeError(f"{name}: {e}") from None
    return regs


def rf_regmap(params: PUBParams, mem: MemParams = MemParams()) -> RegisterMap:
    """The register file's own registers at offsets from 0 (the map its configuration decodes):
    ``rf_en`` and the status ``rf_error``; its ports' controllers are the PUB's
    (:func:`rf_ports`)."""
    rm = RegisterMap("mem_rf")
    rm.add(RF_ENABLE, 1, doc="1: register-file mode: the PUB's datapath is idle, its agg2sram_<p> "
                             "/ sram2tb_<q> controllers drive the register file's write / read "
                             "ports and the tile's data_out/valid_out are the register file's; "
                             "0: the PUB")
    for layout in rf_context_layouts(params, mem).values():
        layout.add_registers(rm)
    rm.add("rf_error", 1, doc="read-only status: sticky register-file conflict (two write "
                              "ports on one word in a cycle, or both contexts of a port in "
                              "one cycle); write 1 to clear")
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
