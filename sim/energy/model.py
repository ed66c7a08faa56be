"""Joules from counted switching (docs/energy.md "Method"): the assumptions of
``ubgen/constraints/energy.toml`` applied to the counts of an instrumented gate-level run
(:mod:`sim.energy.gates`).

Per module instance, with V the supply and the counts of the cycles in the energy window:

* data energy  = 1/2 V^2 (tdrv C_out + (tfan - tin) (C_in + C_wire)): every toggle of a net
  charges or discharges its capacitance once (C V^2 drawn per rising edge, 1/2 C V^2 per toggle
  on average);
* input load   = 1/2 V^2 tin (C_in + C_wire): the gate inputs a net entering a tile from a
  neighbour drives inside the tile, and hop = 1/2 V^2 thop C_hop: both charged by the driver in
  the neighbour, booked as interconnect (part ``"input"`` / ``"hop"``), not as the receiving
  tile's own switching;
* clock energy = flip-flops x cycles x (C_clock_pin + C_wire) V^2 (the clock node toggles twice
  per cycle);
* SRAM energy  = reads x E_read + writes x E_write of the macro's kind and shape.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from ubgen.paths import CONSTRAINTS_DIR

from .gates import EnergyError
from .sram import SRAMModel

__all__ = ["Tech", "load_tech", "energy", "Breakdown", "TECH_FILE"]

TECH_FILE = CONSTRAINTS_DIR / "energy.toml"


@dataclass(frozen=True)
class Tech:
    """The modelled part (``ubgen/constraints/energy.toml``); capacitances in fF, energies in
    pJ."""
    name: str
    vdd: float
    c_in: float
    c_out: float
    c_wire_fanout: float
    c_hop: float
    c_clock: float
    leakage: bool
    sram_model: SRAMModel | None = None
    sram_scale: float = 1.0

    def sram(self, kind: str, depth: int, width: int) -> tuple[float, float]:
        """(read pJ, write pJ) of one access of a ``kind`` (sp/dp) macro, times the scale."""
        try:
            r, w = self.sram_model.access(kind, depth, width)
        except (ValueError, AttributeError) as e:
            raise EnergyError(f"no SRAM energy for a {kind} {depth}x{width} macro ({e})") \
                from None
        return r * self.sram_scale, w * self.sram_scale

    def scaled(self, sram_scale: float) -> "Tech":
        return replace(self, sram_scale=sram_scale)


def load_tech(path: Path | None = None) -> Tech:
    """Read the energy assumptions; a missing or malformed entry is a one-line error."""
    path = Path(path or TECH_FILE)
    try:
        d = tomllib.loads(path.read_text())
        t = d["technology"]
        wire = t["wire_ff_per_um"]
        sram = SRAMModel.from_toml(t, d["sram"])
        return Tech(name=t["name"], vdd=float(t["vdd_v"]), c_in=float(t["gate_input_ff"]),
                    c_out=float(t["gate_output_ff"]),
                    c_wire_fanout=wire * float(t["wire_um_per_fanout"]),
                    c_hop=wire * float(t["hop_um"]),
                    c_clock=float(t["ff_clock_pin_ff"]) + wire * float(t["wire_um_per_fanout"]),
                    leakage=bool(t["leakage"]), sram_model=sram)
    except (OSError, KeyError, ValueError, tomllib.TOMLDecodeError) as e:
        raise EnergyError(f"{path}: bad energy assumptions ({type(e).__name__}: {e})") from None


@dataclass
class Breakdown:
    """Energy in pJ by category and by module instance."""
    categories: dict[str, float]
    instances: dict[str, dict]
    sram_accesses: dict[str, dict]
    cycles: int

    @property
    def total(self) -> float:
        return sum(self.categories.values())

    def as_dict(self) -> dict:
        return {"total_pj": round(self.total, 3), "cycles": self.cycles,
                "categories_pj": {k: round(v, 3) for k, v in self.categories.items()},
                "sram_accesses": self.sram_accesses}


def energy(counts: dict, infos: dict, tech: Tech, category) -> Breakdown:
    """Energies of a run's counts (:func:`sim.energy.gates.parse_counts`). ``infos``: emitted
    module name -> :class:`~sim.energy.gates.ModuleInfo`; ``category(path, orig_module,
    part)`` names the category of a module instance's ``part`` (``"data"``, ``"hop"``,
    ``"input"``, ``"clock"`` or ``"sram"``)."""
    half_v2 = 0.5 * tech.vdd ** 2 * 1e-3          # fF x V^2 -> pJ
    cats: dict[str, float] = {}
    insts: dict[str, dict] = {}
    cycles = 0

    def add(cat, pj):
        cats[cat] = cats.get(cat, 0.0) + pj

    for path, c in counts["modules"].items():
        info = infos.get(c["module"])
        if info is None:
            raise EnergyError(f"counts of an unknown module {c['module']} ({path})")
        tin = c.get("tin", 0)
        data = half_v2 * (c["tdrv"] * tech.c_out
                          + (c["tfan"] - tin) * (tech.c_in + tech.c_wire_fanout))
        load = half_v2 * tin * (tech.c_in + tech.c_wire_fanout)
        hop = half_v2 * c["thop"] * tech.c_hop
        clock = 2 * half_v2 * info.ffs * c["cycles"] * tech.c_clock
        cycles = max(cycles, c["cycles"])
        add(category(path, info.orig, "data"), data)
        if hop:
            add(category(path, info.orig, "hop"), hop)
        if load:
            add(category(path, info.orig, "input"), load)
        if clock:
            add(category(path, info.orig, "clock"), clock)
        insts[path] = {"module": info.orig, "data_pj": data, "hop_pj": hop, "input_pj": load,
                       "clock_pj": clock,
                       "ffs": info.ffs, **c}
    accesses = {}
    for path, s in counts["srams"].items():
        er, ew = tech.sram(s["kind"], s["depth"], s["width"])
        pj = s["reads"] * er + s["writes"] * ew
        owner = path.rsplit(".", 1)[0]
        orig = insts.get(owner, {}).get("module", "")
        add(category(owner, orig, "sram"), pj)
        accesses[path] = dict(s, pj=round(pj, 3))
    return Breakdown(cats, insts, accesses, cycles)
