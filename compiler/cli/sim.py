"""``ubc sim``: the main job, the app end to end on the generated accelerator in Verilator
(``sim.main``; docs/simulation.md), ``ubc regress``: every app end to end at its Table 7.1 size
on the sweep engine (``compiler.sweep.regress``; docs/simulation.md "Regression"), and ``ubc
evaluate``: the thesis and paper tables (``compiler.sweep.evaluate``; docs/sweep.md). ``make
sim``, ``make regress`` and ``make evaluate`` call these."""
from __future__ import annotations

__all__ = ["add_sim_subcommands"]


def _add(subparsers, name: str, help: str, module) -> None:
    """One subcommand whose description and epilog are ``module``'s docstring and whose
    arguments and action are its ``add_arguments`` and ``run_from_args``."""
    import argparse
    p = subparsers.add_parser(name, help=help, description=module.__doc__.split("\n\n")[0],
                              epilog=module.__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(p)
    p.set_defaults(func=module.run_from_args)


def add_sim_subcommands(subparsers) -> None:
    from sim import main as sim_main
    from ..sweep import evaluate, regress
    _add(subparsers, "sim", "run APP end to end on the generated accelerator (Verilator) and "
         "check it", sim_main)
    _add(subparsers, "regress", "every app at its Table 7.1 size end to end on the RTL (Dask)",
         regress)
    e = subparsers.add_parser(
        "evaluate", help="the thesis/paper evaluation on the sweep engine -> docs/evaluation.md",
        description=evaluate.__doc__.split("\n\n")[0])
    evaluate.add_arguments(e)
    e.set_defaults(func=evaluate.run_from_args)
