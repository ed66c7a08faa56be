"""Per-stage operation counts of camera, unsharp and harris: ours against the reference as Halide
lowers it (docs/evaluation.md, Table IV's comments; docs/apps.md).

    .venv/bin/python bench/app_ops.py [camera] [unsharp] [harris] [--arch cgra_16x32]

For each line-buffered stage of the reference generator (Halide-to-Hardware
``apps/camera_pipeline``, ``apps/unsharp`` and ``apps/harris``, transcribed to the PyPI ``halide`` API in
tests/apps/halide_pipelines.py) the script applies the generator's CoreIR schedule (the same
``compute_root`` stages, ``unroll(c)`` and window unrolls, everything else inlined), lowers it
with real Halide (``compile_to_lowered_stmt``) and counts the value operations of one output
pixel of the stage: every binary operator, comparison, ``select``, ``min``, ``max``, ``absd``
of the stage's stores and of the ``let`` bindings that compute values (index arithmetic, casts,
loads and constants are not counted; a table read is a load). Beside it: our stage's kernel
operations as the app writes them (``Call`` nodes, the kernel IR) and the PEs and ROMs its
kernels map to in the netlist (``compiler.pipeline.compile_app`` to the netlist; register PEs
and schedule generators are not a stage's). Everything printed is counted; writes
``build/bench/app_ops.json``.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import halide as hl  # noqa: E402

from apps import get_app  # noqa: E402
from compiler.ir.expr import Call  # noqa: E402
from compiler.pipeline import compile_app  # noqa: E402
from tests.apps.halide_pipelines import camera_funcs, harris_funcs, unsharp_funcs  # noqa: E402,E501

OUT = ROOT / "build" / "bench" / "app_ops.json"
# Halide prints + - and comparisons with spaces around them, * / % without.
BINARY = re.compile(r" (\+|-|<|>|<=|>=|==|!=|&&|\|\||&|\||\^|<<|>>) |[*/%]")
CALLS = re.compile(r"\b(select|min|max|absd|abs|shift_left|shift_right|bitwise_and|"
                   r"bitwise_or|bitwise_xor)\(")


def _camera_schedule(f: dict) -> tuple[hl.Func, list]:
    for name in ("hw_input", "denoised", "curve"):
        f[name].compute_root()
    dem = f["demosaicked"]
    dem.compute_root().bound(dem.args()[2], 0, 3).unroll(dem.args()[2])
    out = f["hw_output"]
    c, x, y = out.args()
    out.bound(c, 0, 3).bound(x, 0, 58).bound(y, 0, 58).unroll(c)
    return out, [(n, f[k].name()) for n, k in (("hw_input", "hw_input"),
                                                 ("denoised", "denoised"),
                                                 ("demosaicked", "demosaicked"),
                                                 ("curved", "hw_output"))]


def _root_with_window_unrolled(g: hl.Func) -> None:
    """``g`` line-buffered with its reduction window fully unrolled (``update(0).unroll``)."""
    g.compute_root()
    win = g.rvars(0)
    g.update(0).unroll(win[0]).unroll(win[1])


def _output_stages(f: dict, extent: int, names: tuple) -> tuple[hl.Func, list]:
    """``hw_output`` bounded to ``extent`` x ``extent`` and the (stage, unique name) pairs."""
    out = f["hw_output"]
    x, y = out.args()
    out.bound(x, 0, extent).bound(y, 0, extent)
    return out, [(n, f[n].name()) for n in names]


def _unsharp_schedule(f: dict) -> tuple[hl.Func, list]:
    for name in ("hw_input", "gray", "kernel", "ratio"):
        f[name].compute_root()
    _root_with_window_unrolled(f["blur_unnormalized"])
    return _output_stages(f, 60, ("hw_input", "gray", "blur_unnormalized", "ratio",
                                  "hw_output"))


def _harris_schedule(f: dict) -> tuple[hl.Func, list]:
    """harris_generator.cpp's CoreIR schedule: ``padded16`` and ``hw_output`` computed at the
    root, every other stage line-buffered (a root stage of its own), the box sums' windows
    unrolled; ``grad_xx``/``grad_yy``/``grad_xy`` are inlined into ``lxx``/``lyy``/``lxy``."""
    for name in ("padded16", "grad_x", "grad_y", "lxx", "lyy", "lxy", "cim"):
        f[name].compute_root()
    for name in ("lgxx", "lgyy", "lgxy"):
        _root_with_window_unrolled(f[name])
    return _output_stages(f, 58, ("padded16", "grad_x", "grad_y", "lxx", "lyy", "lxy", "lgxx",
                                  "lgyy", "lgxy", "cim", "hw_output"))


REFERENCE = {
    "camera": (lambda: hl.ImageParam(hl.UInt(8), 2, "input"), camera_funcs, _camera_schedule),
    "unsharp": (lambda: hl.ImageParam(hl.UInt(8), 3, "input"), unsharp_funcs,
                _unsharp_schedule),
    "harris": (lambda: hl.ImageParam(hl.Int(8), 2, "input"), harris_funcs, _harris_schedule),
}
# Our stage (op name prefix) for each lowered reference stage.
STAGES = {
    "camera": {"hw_input": "hw_input", "denoised": "denoise", "demosaicked": "demosaic",
               "curved": "hw_output"},
    "unsharp": {"hw_input": "hw_input", "gray": "gray", "blur_unnormalized": "blur_unnormalized",
                "ratio": "ratio", "hw_output": "hw_output"},
    "harris": {"padded16": "hw_input", **{n: n for n in ("grad_x", "grad_y", "lxx", "lyy", "lxy",
                                                          "lgxx", "lgyy", "lgxy", "cim")},
               "hw_output": "nms"},
}


def _strip_loads(expr: str) -> str:
    """``expr`` with every ``name[...]`` replaced by ``LOAD`` (index arithmetic is not counted)."""
    out, i = [], 0
    while i < len(expr):
        m = re.match(r"[A-Za-z_][\w.$]*\[", expr[i:])
        if m:
            depth, j = 1, i + m.end()
            while depth:
                depth += {"[": 1, "]": -1}.get(expr[j], 0)
                j += 1
            out.append("LOAD")
            i = j
        else:
            out.append(expr[i])
            i += 1
    return "".join(out)


def _ops(expr: str) -> int:
    e = _strip_loads(expr)
    return len(BINARY.findall(e)) + len(CALLS.findall(e))


def _produce_block(text: str, stage: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == f"produce {stage} {{")
    depth, block = 0, []
    for line in lines[start:]:
        depth += line.count("{") - line.count("}")
        block.append(line.strip())
        if depth == 0:
            return block
    raise ValueError(f"produce {stage}: unterminated block")


def lowered_ops(stmt: str, stage: str) -> int:
    """Value operations of one pixel of ``stage`` (every channel of an unrolled ``c``): the
    stores of the update definitions (the pure definition too when it is the only one) and
    the value ``let`` bindings of the produce block; a stage lowered as several loops counts
    each loop's stores once (``unroll(c)`` splits the channels)."""
    block = _produce_block(stmt, stage)
    values: set[str] = set()
    total = 0
    stores = [l for l in block if re.match(rf"{re.escape(stage)}\[.*\] = ", l)]
    updates = [l for l in stores if re.search(rf"= {re.escape(stage)}\[", l)]
    for line in block:
        m = re.match(r"let ([\w.$]+) = (.*)$", line)
        if m:
            name, rhs = m.groups()
            stripped = _strip_loads(rhs)
            if ("LOAD" in stripped or any(v in rhs for v in values)
                    or CALLS.search(rhs) or re.search(r" (==|!=|<|>|<=|>=) ", rhs)):
                values.add(name)
                total += _ops(rhs)
            continue
        if line in stores and (not updates or line in updates):
            total += _ops(line.split(" = ", 1)[1])
    return total


def reference_counts(app: str) -> dict[str, int]:
    make_input, funcs, schedule = REFERENCE[app]
    inp = make_input()
    out, stages = schedule(funcs(inp))     # stage names as Halide made them unique
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{app}.stmt"
        out.compile_to_lowered_stmt(str(path), [inp], hl.StmtOutputFormat.Text)
        (OUT.parent / f"{app}.stmt").parent.mkdir(parents=True, exist_ok=True)
        (OUT.parent / f"app_ops_{app}.stmt").write_text(path.read_text())
        stmt = path.read_text()
    return {s: lowered_ops(stmt, unique) for s, unique in stages}


def our_counts(app: str, arch: str) -> dict[str, dict[str, int]]:
    prog = get_app(app).build()
    result = compile_app(app, arch, until="netlist")
    net = result.netlist
    out: dict[str, dict[str, int]] = {}
    for ref_stage, prefix in STAGES[app].items():
        ops = [op for op in prog.ops() if op.name.startswith(prefix)]
        names = {op.name for op in ops}
        kinds = Counter(d["kind"] for _n, d in net.graph.nodes(data=True) if d.get("op") in names)
        ir = sum(isinstance(n, Call) and n.op != "pass" for op in ops for n in op.kernel.nodes())
        out[ref_stage] = {"ops": len(ops), "kernel_ops": ir, "pes": kinds.get("pe", 0),
                          "roms": kinds.get("mem", 0)}
    return out


def run(apps: list[str], arch: str) -> dict:
    result = {}
    for app in apps:
        print(f"[app_ops] {app}: lowering the reference with Halide, compiling ours ...",
              flush=True)
        ref, ours = reference_counts(app), our_counts(app, arch)
        result[app] = [{"stage": s, "halide_ops": ref[s], **ours[s]} for s in ref]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2))
    return result


def format_table(result: dict) -> str:
    lines = []
    for app, rows in result.items():
        lines += [f"{app}: per output pixel of each stage (all channels)",
                  "| stage | Halide lowered ops | our ops | our kernel ops | our PEs | our ROMs |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['stage']} | {r['halide_ops']} | {r['ops']} | {r['kernel_ops']} "
                         f"| {r['pes']} | {r['roms']} |")
        tot = {k: sum(r[k] for r in rows) for k in ("halide_ops", "kernel_ops", "pes", "roms")}
        lines.append(f"| total | {tot['halide_ops']} | | {tot['kernel_ops']} | {tot['pes']} | "
                     f"{tot['roms']} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("apps", nargs="*", default=["camera", "unsharp"],
                    help="camera, unsharp and/or harris (default camera and unsharp)")
    ap.add_argument("--arch", default="cgra_16x32", help="arch of our netlist (cgra_16x32)")
    args = ap.parse_args(argv)
    bad = [a for a in args.apps if a not in REFERENCE]
    if bad:
        print(f"app_ops: error: no reference transcription for {', '.join(bad)}; known: "
              f"{', '.join(REFERENCE)}", file=sys.stderr)
        return 2
    print(format_table(run(args.apps, args.arch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
