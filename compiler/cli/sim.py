"""``ubc sim``: the main job, the app end to end on the generated accelerator in Verilator
(``sim.main``; docs/simulation.md), and ``ubc evaluate``: the thesis and paper tables
(``compiler.sweep.evaluate``; docs/sweep.md). ``make sim`` and ``make evaluate`` call these."""
from __future__ import annotations

__all__ = ["add_sim_subcommands"]


def add_sim_subcommands(subparsers) -> None:
    import argparse
    from sim import main as sim_main
    from ..sweep import evaluate
    s = subparsers.add_parser(
        "sim", help="run APP end to end on the generated accelerator (Verilator) and check it",
        description=sim_main.__doc__.split("\n\n")[0],
        epilog=sim_main.__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sim_main.add_arguments(s)
    s.set_defaults(func=sim_main.run_from_args)
    e = subparsers.add_parser(
        "evaluate", help="the thesis/paper evaluation on the sweep engine -> docs/evaluation.md",
        description=evaluate.__doc__.split("\n\n")[0])
    evaluate.add_arguments(e)
    e.set_defaults(func=evaluate.run_from_args)
