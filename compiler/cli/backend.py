"""``ubc compile`` and ``ubc netlist``: the whole compiler path of an app (compiler.pipeline).

    ubc compile APP [--arch A] [--size K=V ...] [--dump DIR] [--json]
    ubc netlist APP [--arch A] [--size K=V ...] [--json] [--dot FILE] [--no-model] [--seed N]

``compile`` runs every stage (place and route included when the app fits the arch) and reports
counts and per-stage seconds; ``--dump DIR`` writes every IR (Program, PolyProgram, schedules,
unified buffers, UBImpls, netlist, the padded netlist, placement, routing, bitstream, report).
``netlist`` prints the netlist (``--json``: one JSON object with its counts, whether it fits the
arch, the predicted cycles and the netlist model's verdict, which runs the netlist on the app's
inputs against the golden outputs of ``compiler.frontend.source.establish_golden``, the same golden as
``make sim``: the interpreter checked against the app's reference or real Halide). The netlist
and its model do not need the app to fit the arch; ``--arch`` defaults to the smallest shipped
array the app fits (docs/cli.md).
"""
from __future__ import annotations

import json

from ..pipeline import CompileResult, check_result
from .common import add_app_arguments, check_dir, compile_for, write_dir, write_file

__all__ = ["add_backend_subcommands", "cmd_compile", "cmd_netlist", "netlist_dot"]


def _dump(result: CompileResult, directory: str) -> None:
    """Every IR of ``result`` into ``directory`` (all or nothing)."""
    s = result.scheduled
    bufs = s.buffers.values()
    write_dir(directory, {
        "program.json": lambda: result.program.to_json(indent=1),
        "program.txt": lambda: str(result.program) + "\n",
        "program_balanced.txt": lambda: str(s.program) + "\n",
        "poly.json": lambda: json.dumps(s.poly.to_dict(), indent=1),
        "poly.isl": lambda: s.poly.to_isl(),
        "dependences.json": lambda: json.dumps([d.to_dict() for d in s.deps], indent=1),
        "schedule_sequential.json": lambda: s.sequential.to_json(indent=1),
        "schedule.json": lambda: s.optimized.to_json(indent=1),
        "schedule.isl": lambda: s.optimized.to_isl(),
        "buffers.json": lambda: json.dumps([b.to_dict() for b in bufs], indent=1),
        "buffers.isl": lambda: "\n".join(b.to_isl() for b in bufs),
        "ubimpls.json": lambda: json.dumps([i.to_dict() for i in result.impls.values()],
                                           indent=1),
        "netlist.json": lambda: result.netlist.to_json(indent=1),
        "netlist.txt": lambda: str(result.netlist) + "\n",
        "netlist.dot": lambda: netlist_dot(result.netlist),
        "report.json": lambda: json.dumps(result.report, indent=1),
        **({} if result.pnr is None else {
            "netlist_padded.json": lambda: result.pnr.padded.to_json(indent=1),
            "placement.json": lambda: json.dumps(result.pnr.placement.to_dict(), indent=1),
            "routing.json": lambda: json.dumps(result.pnr.routing.to_dict(), indent=1),
            "bitstream.json": lambda: result.pnr.bitstream.to_json(),
            "pnr.json": lambda: json.dumps(result.pnr.summary(), indent=1)}),
    })


def netlist_dot(net) -> str:
    """The netlist in Graphviz DOT: PEs as boxes, MEMs as cylinders, IOs as ellipses; edges
    labelled with their latency when it is not 0, 1-bit edges dashed."""
    shape = {"pe": "box", "mem": "cylinder", "io": "ellipse"}
    lines = [f'digraph "{net.app}" {{', "  rankdir=LR;", "  node [fontsize=10];"]
    for n, d in sorted(net.graph.nodes(data=True)):
        lines.append(f'  "{n}" [shape={shape[d["kind"]]}, label="{d["label"]}"];')
    for u, v, d in sorted(net.graph.edges(data=True), key=lambda e: (e[0], e[1],
                                                                        e[2]["dst_port"])):
        attrs = [f'label="{d["latency"]}"'] if d["latency"] else []
        if d["width"] == 1:
            attrs.append("style=dashed")
        lines.append(f'  "{u}" -> "{v}"' + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    return "\n".join(lines + ["}"]) + "\n"


def _compile(args, until: str = "netlist") -> tuple[CompileResult, str | None]:
    """The app compiled to ``until`` and, when the arch was chosen by the default rule, the
    line saying which (docs/cli.md)."""
    result, choice = compile_for(args, until, say=None, seed=getattr(args, "seed", 0))
    return result, choice.describe(result.app) if choice else None


def cmd_compile(args) -> int:
    check_dir(args.dump)
    if args.arch is None:                 # the default arch is one the app places and routes on
        result, chosen = _compile(args, "pnr")
    else:                                 # a named arch: place and route when the app fits it
        result, chosen = _compile(args)
        if result.fits()[0]:
            result.run("pnr")
    if chosen and not args.json:
        print(chosen)
    if args.dump:
        _dump(result, args.dump)
    rep = result.report
    if chosen:
        rep["arch_choice"] = chosen
    if args.json:
        print(json.dumps(rep))
        return 0
    print(f"{rep['app']} on {rep['arch']}: {rep['pes']} PEs, {rep['mems']} MEMs, {rep['ios']} "
          f"IOs, {rep['registers']} register stages; {rep['cycles_predicted']} cycles; "
          + ("fits" if rep["fits"] else f"does not fit: {rep['misfit']}"))
    print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in rep["seconds"].items()))
    if args.dump:
        print(f"  every stage written to {args.dump}/")
    return 0


def cmd_netlist(args) -> int:
    check_dir(args.dot)
    result, chosen = _compile(args)
    if chosen and not args.json:
        print(chosen)
    rep = result.report
    out = {k: rep[k] for k in ("app", "arch", "pes", "mems", "ios", "registers", "fits",
                               "misfit", "cycles_predicted")}
    if chosen:
        out["arch_choice"] = chosen
    check = None
    if not args.no_model:
        from ..frontend.source import GoldenMismatch
        try:
            check = check_result(result)
        except GoldenMismatch as e:            # the golden itself is wrong: a failed check
            out.update(netlist_model="fail", golden=e.kind, model_detail=str(e))
            print(json.dumps(out) if args.json else f"netlist model: not run: {e}")
            return 1
        out["golden"] = result.golden.kind
    out.update(cycles_netlist=check.cycles_netlist if check else None,
               netlist_model=("pass" if check.ok else "fail") if check else "skipped",
               model_detail=check.summary() if check else None,
               compile_seconds=rep["compile_seconds"],
               model_seconds=round(check.seconds, 3) if check else None)
    if args.dot:
        write_file(args.dot, netlist_dot(result.netlist))
    if args.json:
        print(json.dumps(out))
    else:
        print(result.netlist)
        print(f"\nnetlist model: {out['model_detail'] or 'skipped'}"
              + (f" (golden: {out['golden']})" if check else ""))
    return 0 if check is None or check.ok else 1


def add_backend_subcommands(subparsers) -> None:
    s = subparsers.add_parser(
        "compile", help="run every stage (schedule, map, netlist, place and route); report "
        "counts and seconds",
        description="Compile APP through every stage of the compiler: tree-height reduction, "
        "extraction, scheduling and verification, buffer mapping, the netlist of PE, MEM "
        "and IO tiles, and (when it fits the arch) place and route with the bitstream; report "
        "the counts, whether it fits the arch, and seconds per stage. --dump DIR writes every "
        "stage's IR, placement, routing and bitstream included.")
    add_app_arguments(s)
    s.add_argument("--dump", metavar="DIR", help="write every stage's IR into DIR (JSON, ISL "
                   "text, DOT)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_compile)

    s = subparsers.add_parser(
        "netlist", help="print the PE/MEM/IO netlist and prove it with the netlist model",
        description="Build the netlist of APP (PE, MEM and IO tiles with their register "
        "values, port-level edges with exact latencies) and run the netlist model: the app's "
        "inputs through a cycle-level simulation of the netlist, against the golden "
        "interpreter and the schedule's predicted cycles. Exit status 1 when the model fails.")
    add_app_arguments(s)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--dot", metavar="FILE", help="write the netlist as a Graphviz DOT file")
    s.add_argument("--no-model", action="store_true", help="do not run the netlist model")
    s.add_argument("--seed", type=int, default=0, help="input generator seed (default 0)")
    s.set_defaults(func=cmd_netlist)
