"""``ubgen graph`` and ``ubgen array-regmap``: the array's routing graph and full register map
as JSON. :func:`register_subcommand` adds them to the ``ubgen`` argument parser."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..arch import ArchError, load_arch


def _write(text: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(text + "\n")
        return
    path = Path(out)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text + "\n")
    tmp.replace(path)


def _export(args, command: str, produce) -> int:
    try:
        text = produce(load_arch(args.arch))
    except (ArchError, ValueError, ImportError) as e:
        print(f"ubgen {command}: {e}", file=sys.stderr)
        return 1
    _write(text, args.out)
    return 0


def cmd_graph(args) -> int:
    from .graph import graph_to_json, routing_graph
    return _export(args, "graph", lambda arch: json.dumps(graph_to_json(routing_graph(arch))))


def cmd_array_regmap(args) -> int:
    from .graph import full_regmap
    return _export(args, "array-regmap", lambda arch: json.dumps(full_regmap(arch), indent=1))


ARCH_HELP = ("constraints file name or path (default: cgra_4x4; "
             "docs/cli.md)")


def register_subcommand(sub) -> None:
    """Add ``graph`` and ``array-regmap`` to an ``argparse`` subparsers object."""
    g = sub.add_parser("graph", help="write the array's routing-resource graph (JSON)",
                       description="Write the routing-resource graph of the array "
                                   "(networkx node_link_data, edges under 'edges').")
    g.add_argument("--arch", default="cgra_4x4", help=ARCH_HELP)
    g.add_argument("--out", help="output file (default: stdout)")
    g.set_defaults(func=cmd_graph)
    r = sub.add_parser("array-regmap", help="write every tile register with its global address",
                       description="Write the full register map of the array (JSON list of "
                                   "{tile_id, tile_kind, name, width, offset, global_addr, "
                                   "reset}).")
    r.add_argument("--arch", default="cgra_4x4", help=ARCH_HELP)
    r.add_argument("--out", help="output file (default: stdout)")
    r.set_defaults(func=cmd_array_regmap)
