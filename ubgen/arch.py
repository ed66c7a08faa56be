"""Architecture parameters read from ``ubgen/constraints/arch/*.toml`` (package data).

The same dataclasses parameterize the RTL generators and are exported to the compiler, so the
two always agree on sizes, widths and latencies (docs/design.md §2, "one source of truth").
"""
from __future__ import annotations

import tomllib
from dataclasses import fields, replace
from pathlib import Path

from .params import (  # noqa: F401  (re-exported: ubgen.arch is where callers import them)
    WORD_WIDTH, WORD_MASK, CONTROLLER_KINDS, ControllerParams, PUBParams, MemParams, DPBufParams,
    ArrayParams, GLBParams, ScheduleParams, AreaModel, Arch, _clog2, _is_pow2)
from .paths import CONSTRAINTS_DIR

ARCH_DIR = CONSTRAINTS_DIR / "arch"


class ArchError(ValueError):
    """A constraints file is missing, malformed, or describes an impossible architecture."""


def _section(data: dict, name: str, cls, source: str, extra: dict | None = None,
             allow_zero: bool = False):
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ArchError(f"{source}: [{name}] must be a table")
    known = {f.name: f for f in fields(cls)}
    kwargs = dict(extra or {})
    for key, value in table.items():
        if key not in known:
            raise ArchError(f"{source}: unknown key '{key}' in [{name}]")
        default = known[key].default
        if isinstance(default, bool) != isinstance(value, bool) or not isinstance(
                value, type(default)) and not (isinstance(default, float) and isinstance(value, int)):
            raise ArchError(f"{source}: [{name}] {key} must be a {type(default).__name__}, "
                            f"got {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                value < 0 or value == 0 and not allow_zero):
            raise ArchError(f"{source}: [{name}] {key} must be "
                            f"{'non-negative' if allow_zero else 'positive'}, got {value}")
        kwargs[key] = value
    return cls(**kwargs)


def _controller(data: dict, source: str) -> ControllerParams:
    """``[controller]`` with its ``[controller.dims]`` table (levels per controller kind)."""
    table = data.get("controller", {})
    if not isinstance(table, dict):
        raise ArchError(f"{source}: [controller] must be a table")
    dims = table.get("dims", {})
    if not isinstance(dims, dict):
        raise ArchError(f"{source}: [controller.dims] must be a table of controller kinds")
    rest = {k: v for k, v in table.items() if k != "dims"}
    ctrl = _section({"controller": rest}, "controller", ControllerParams, source)
    for kind, n in dims.items():
        if kind not in CONTROLLER_KINDS:
            raise ArchError(f"{source}: unknown controller kind '{kind}' in [controller.dims] "
                            f"(kinds: {', '.join(CONTROLLER_KINDS)})")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 6:
            raise ArchError(f"{source}: [controller.dims] {kind} must be an integer 1..6, "
                            f"got {n!r}")
    if ctrl.max_dims > 6:
        raise ArchError(f"{source}: [controller] max_dims must be at most 6")
    return replace(ctrl, dims=tuple(sorted(dims.items())))


def arch_file(path: str | Path) -> Path:
    """The constraints file an arch name (``ubgen/constraints/arch/<name>.toml``) or path names."""
    p = Path(path)
    return ARCH_DIR / f"{path}.toml" if not p.suffix else p


def load_arch(path: str | Path = "pub") -> Arch:
    """Load a constraints file by path or by name (``ubgen/constraints/arch/<name>.toml``)."""
    p = arch_file(path)
    source = str(p)
    try:
        data = tomllib.loads(p.read_text())
    except FileNotFoundError:
        if not Path(path).suffix:
            shipped = ", ".join(sorted(q.stem for q in ARCH_DIR.glob("*.toml")))
            raise ArchError(f"unknown arch '{path}'; shipped archs: {shipped} (or the path of "
                            f"a .toml constraints file)") from None
        raise ArchError(f"{source}: constraints file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ArchError(f"{source}: malformed TOML: {e}") from None
    if "word" in data or any("word_width" in data.get(sec, {}) for sec in ("pub", "dpbuf")):
        raise ArchError(f"{source}: the word width is not configurable (fixed at {WORD_WIDTH} "
                        f"bits, ubgen.arch.WORD_WIDTH); remove [word] width / word_width")
    word = WORD_WIDTH
    ctrl = _controller(data, source)
    pub = _section(data, "pub", PUBParams, source, {"word_width": word, "controller": ctrl})
    dp = _section(data, "dpbuf", DPBufParams, source, {"word_width": word, "controller": ctrl})
    for label, n in (("pub.fetch_width", pub.fetch_width), ("pub.sram_depth", pub.sram_depth),
                     ("pub.agg_depth", pub.agg_depth), ("pub.tb_depth", pub.tb_depth),
                     ("dpbuf.sram_depth", dp.sram_depth)):
        if not _is_pow2(n):
            raise ArchError(f"{source}: {label} must be a power of two, got {n}")
    if not 1 <= pub.agg_slack_width <= 8:
        raise ArchError(f"{source}: pub.agg_slack_width must be 1..8, got {pub.agg_slack_width}")
    if pub.sram_read_latency != 1 or dp.read_latency != 1:
        raise ArchError(f"{source}: only SRAM read latency 1 is supported")
    mem = _section(data, "mem", MemParams, source)
    if not _is_pow2(mem.rf_words) or mem.rf_words < 2:
        raise ArchError(f"{source}: mem.rf_words must be a power of two of at least 2, "
                        f"got {mem.rf_words}")
    if mem.rf_contexts not in (1, 2):
        raise ArchError(f"{source}: mem.rf_contexts must be 1 or 2, got {mem.rf_contexts}")
    from .mem.dp_spec import MEM_KINDS
    if mem.kind not in MEM_KINDS:
        raise ArchError(f"{source}: [mem] kind must be one of {', '.join(MEM_KINDS)}, "
                        f"got {mem.kind!r}")
    from .mem.spec import rf_ports          # the register file's ports borrow PUB controllers
    try:
        rf_ports(pub, mem)
    except ValueError as e:
        raise ArchError(f"{source}: {e}") from None
    area = _section(data, "area", AreaModel, source)
    array = _section(data, "array", ArrayParams, source)
    if array.switch_box not in ("wilton", "disjoint", "imran"):
        raise ArchError(f"{source}: [array] switch_box must be wilton, disjoint or imran, "
                        f"got {array.switch_box!r}")
    from .pe.contexts import MAX_CONTEXTS
    if array.pe_contexts > MAX_CONTEXTS:
        raise ArchError(f"{source}: [array] pe_contexts must be at most {MAX_CONTEXTS}, "
                        f"got {array.pe_contexts}")
    glb = _section(data, "glb", GLBParams, source)
    if not _is_pow2(glb.bank_words):
        raise ArchError(f"{source}: glb.bank_words must be a power of two, got {glb.bank_words}")
    if glb.bank_words < 4:      # ubgen.glb.spec.ROW_WORDS: a bank is rows of four words
        raise ArchError(f"{source}: glb.bank_words must be at least 4 (one row of the global "
                        f"buffer), got {glb.bank_words}")
    schedule = _section(data, "schedule", ScheduleParams, source, allow_zero=True)
    return Arch(name=p.stem, pub=pub, dpbuf=dp, mem=mem, area=area, array=array, glb=glb,
                schedule=schedule, raw=data)
