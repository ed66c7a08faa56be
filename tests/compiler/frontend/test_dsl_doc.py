"""docs/apps.md's sections on the two DSLs are this test's data, so they cannot rot:

* the operation table ("Kernel operations and what they cost"): every cell of both DSL columns
  is compiled as a one-op kernel through the whole compiler (``compile_app`` to the netlist)
  and its PE operations and PE count must be the row's; the table covers every operation of
  the kernel IR (``compiler.ir.expr.ALL_OPS``) in both DSLs together;
* the ``build`` of each DSL's section is run and compiled, and its netlist model reproduces the
  golden interpreter."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import compiler.ir as ir
from compiler.frontend import halide as hl
from compiler.ir.expr import ALL_OPS, Call
from compiler.pipeline import check_result, compile_app
from ubgen.arch import load_arch
from ubgen.pe.ops import PEOp

DOC = Path(__file__).resolve().parents[3] / "docs" / "apps.md"
HEADING = "### Kernel operations and what they cost"
TYPES = {"a": ir.u16, "b": ir.u16, "c": ir.u16, "d": ir.u16, "s": ir.s16, "t": ir.s16}
N = 8            # elements of the one-loop test program
ARCH = load_arch("cgra_4x4")


@dataclass
class Row:
    operation: str
    loopnest: list[str]
    halide: list[str]
    pe_ops: list[str]
    pes: int


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` is a literal bar)."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def parse_table(text: str) -> list[Row]:
    """The rows of the first table after :data:`HEADING`."""
    after = text.split(HEADING, 1)[1]
    lines = after.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| operation"))
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        op, ln_cell, hl_cell, ops, pes = _cells(ln)
        rows.append(Row(op, re.findall(r"`([^`]+)`", ln_cell), re.findall(r"`([^`]+)`", hl_cell),
                        [] if ops == "—" else [o.strip() for o in ops.split(",")], int(pes)))
    return rows


ROWS = parse_table(DOC.read_text())


def _args(expr: str) -> list[str]:
    names = compile(expr, "<cell>", "eval").co_names
    return [n for n in TYPES if n in names]


def loopnest_program(expr: str) -> ir.Program:
    """``out[x] = expr`` in the loop-nest DSL, one load per argument name used."""
    args = _args(expr)
    ns = {n: getattr(ir, n) for n in ir.__all__}
    kernel = ir.Kernel.from_fn("k", lambda *v: eval(expr, dict(ns, **dict(zip(args, v)))),
                               *[TYPES[n] for n in args])
    prog = ir.Program("cell")
    for n in args:
        prog.add_input(n, (N,), TYPES[n])
    prog.add_output("out", (N,), kernel.body.type)
    op = prog.add_loop("x", 0, N).add_op("k")
    for n in args:
        op.add_load(n, "x")
    op.add_store("out", "x")
    op.add_function(kernel)
    return prog.validate()


def halide_program(expr: str) -> ir.Program:
    """``out[x] = expr`` in the Halide-style DSL, each argument name its own input."""
    x = hl.Var("x")
    ns = {n: getattr(hl, n) for n in hl.__all__}
    ns.update({n: hl.Input(n, TYPES[n], (N,))[x] for n in _args(expr)})
    out = hl.Func("out")
    out[x] = eval(expr, ns)
    return hl.Pipeline(out).lower("cell", (N,))


def measured(prog: ir.Program) -> list[str]:
    """The PE operations of ``prog``'s netlist, sorted."""
    net = compile_app(prog, ARCH).netlist
    return sorted(PEOp(net.graph.nodes[n]["config"]["op"]).name.lower() for n in net.nodes("pe"))


def mismatches(row: Row) -> list[str]:
    """Every cell of ``row`` whose netlist differs from the row's PE ops or PE count."""
    bad = []
    if len(row.pe_ops) != row.pes:
        bad.append(f"{row.operation}: {row.pes} PEs but {len(row.pe_ops)} PE ops listed")
    for dsl, build, cells in (("loop-nest", loopnest_program, row.loopnest),
                              ("Halide-style", halide_program, row.halide)):
        for expr in cells:
            got = measured(build(expr))
            if got != sorted(row.pe_ops):
                bad.append(f"{row.operation}: {dsl} `{expr}` maps to {len(got)} PEs "
                           f"{', '.join(got) or '(none)'}, the table says {row.pes} "
                           f"{', '.join(row.pe_ops) or '(none)'}")
    return bad


def test_table_is_found_and_every_row_has_an_example():
    assert len(ROWS) >= 50
    assert all(r.loopnest or r.halide for r in ROWS)
    assert sum(len(r.loopnest) for r in ROWS) >= 50 and sum(len(r.halide) for r in ROWS) >= 50


@pytest.mark.parametrize("row", ROWS, ids=[r.operation for r in ROWS])
def test_row_matches_the_netlist(row):
    assert mismatches(row) == []


def test_a_wrong_row_is_reported():
    """Negative control: the fused multiply-add claimed as two PEs, a shift claimed as a
    multiply, and a count that disagrees with the listed ops are all reported."""
    fused = next(r for r in ROWS if r.loopnest and r.loopnest[0] == "a * b + c")
    wrong = Row(fused.operation, ["a * b + c"], ["a * b + c"], ["mul", "add"], 2)
    assert len(mismatches(wrong)) == 2
    wrong = Row("power of two", ["a * 8"], [], ["mul"], 1)
    assert mismatches(wrong) == ["power of two: loop-nest `a * 8` maps to 1 PEs shl, the table "
                                 "says 1 mul"]
    wrong = Row("count", [], ["a + b"], ["add"], 2)
    assert mismatches(wrong)[0] == "count: 2 PEs but 1 PE ops listed"


def _calls(prog: ir.Program) -> set[str]:
    return {n.op for op in prog.ops() for n in op.kernel.nodes() if isinstance(n, Call)}


def test_table_covers_every_kernel_operation():
    """The cells of both DSLs together build every call of the kernel IR; the Halide-style
    DSL's expression helpers each appear in its column."""
    seen = set()
    for r in ROWS:
        for expr in r.loopnest:
            seen |= _calls(loopnest_program(expr))
        for expr in r.halide:
            seen |= _calls(halide_program(expr))
    assert ALL_OPS - seen == set()
    halide_text = " ".join(e for r in ROWS for e in r.halide)
    helpers = ["select", "min_", "max_", "abs_", "absd", "cast", "lookup"]
    assert [h for h in helpers if f"{h}(" not in halide_text] == []


def _snippet(heading: str) -> str:
    """The first indented code block after ``heading``."""
    lines = DOC.read_text().split(heading, 1)[1].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("    "))
    block = []
    for ln in lines[start:]:
        if ln and not ln.startswith("    "):
            break
        block.append(ln[4:])
    return "\n".join(block)


@pytest.mark.parametrize("heading", ["### The loop-nest DSL", "### The Halide-style DSL"])
def test_the_sections_build_is_a_working_app(heading):
    code = _snippet(heading)
    assert code.lstrip().startswith("from compiler.") and "def build(" in code
    ns: dict = {}
    exec(compile(code, heading, "exec"), ns)
    prog = ns["build"](width=12, height=8)
    assert isinstance(prog, ir.Program) and prog.validate() is prog
    check = check_result(compile_app(prog, ARCH))
    assert check.ok, check.summary()
