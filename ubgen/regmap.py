"""Register maps as data (docs/design.md §2: one source of truth).

Every configurable block describes its registers with a :class:`RegisterMap`. The same object
builds the RTL register file (:class:`ubgen.config.ConfigRegisters`), is exported as JSON by
``ubgen regmap`` and is what the compiler reads to turn register values into bus writes.
Each register occupies one 32-bit configuration word; ``offset`` is its word address.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, asdict

CONFIG_DATA_WIDTH = 32


@dataclass(frozen=True)
class Register:
    name: str
    width: int
    offset: int
    reset: int = 0
    doc: str = ""


@dataclass(frozen=True)
class Window:
    """A range of configuration addresses that reaches storage rather than registers."""
    name: str
    offset: int
    size: int
    width: int
    doc: str = ""


@dataclass
class RegisterMap:
    block: str
    registers: list[Register] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)

    def add(self, name: str, width: int, reset: int = 0, doc: str = "") -> Register:
        if name in self:
            raise ValueError(f"{self.block}: register {name} defined twice")
        if not 1 <= width <= CONFIG_DATA_WIDTH:
            raise ValueError(f"{self.block}: register {name} width {width} is not 1..32")
        reg = Register(name, width, len(self.registers), reset, doc)
        self.registers.append(reg)
        return reg

    def add_window(self, name: str, offset: int, size: int, width: int, doc: str = "") -> Window:
        if offset < len(self.registers):
            raise ValueError(f"{self.block}: window {name} overlaps the registers")
        win = Window(name, offset, size, width, doc)
        self.windows.append(win)
        return win

    def __contains__(self, name: str) -> bool:
        return any(r.name == name for r in self.registers)

    def __getitem__(self, name: str) -> Register:
        for r in self.registers:
            if r.name == name:
                return r
        raise KeyError(f"{self.block}: no register named {name}")

    @property
    def addr_width(self) -> int:
        top = max([1] + [r.offset + 1 for r in self.registers]
                  + [w.offset + w.size for w in self.windows])
        return max(1, (top - 1).bit_length())

    def writes(self, values: dict[str, int]) -> list[tuple[int, int]]:
        """``(offset, value)`` bus writes for a dict of register values, checking widths."""
        out = []
        for name, value in values.items():
            reg = self[name]
            if not 0 <= value < 1 << reg.width:
                raise ValueError(f"{self.block}: value {value} does not fit register "
                                 f"{name} ({reg.width} bits)")
            out.append((reg.offset, value))
        return out

    def to_dict(self) -> dict:
        return {"block": self.block, "data_width": CONFIG_DATA_WIDTH,
                "addr_width": self.addr_width,
                "registers": [asdict(r) for r in self.registers],
                "windows": [asdict(w) for w in self.windows]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def to_markdown(self) -> str:
        lines = [f"### {self.block}", "", "| offset | name | width | reset | description |",
                 "|---:|---|---:|---:|---|"]
        for r in self.registers:
            lines.append(f"| 0x{r.offset:04x} | `{r.name}` | {r.width} | {r.reset} | {r.doc} |")
        for w in self.windows:
            lines.append(f"| 0x{w.offset:04x}..0x{w.offset + w.size - 1:04x} | `{w.name}` "
                         f"(window) | {w.width} | - | {w.doc} |")
        return "\n".join(lines) + "\n"
