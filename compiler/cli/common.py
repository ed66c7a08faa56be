"""What every ``ubc`` command shares: how it names its input (``APP``, ``--arch``, ``--size``),
and how it writes files: all or nothing, after checking the target directory exists."""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

__all__ = ["add_app_arguments", "add_delay_argument", "check_dir", "write_file", "write_dir",
           "write_with", "compile_for", "ARRAY_ARCH_HELP", "PUB_ARCH_HELP"]

ARRAY_ARCH_HELP = ("constraints file name (ubgen/constraints/arch/) or path; default: the smallest "
                   "shipped array the app fits{routes} (cgra_4x4, cgra_8x8, cgra_4x16, "
                   "cgra_16x32), named in the output; give --arch to compare figures over time")
PARAMETERS_ARCH_HELP = ("constraints file name (ubgen/constraints/arch/) or path; only its "
                        "scheduling and buffer parameters are used (the design needs no array); "
                        "default: {arch}")
PUB_ARCH_HELP = ("constraints file name (ubgen/constraints/arch/) or path; this command works on a "
                 "single PUB per buffer, default: pub")


def add_app_arguments(s: argparse.ArgumentParser, on_array: bool = True,
                      routes: bool = False, parameters_of: str | None = None) -> None:
    """``APP``, ``--arch`` and ``--size``: how every ``ubc`` subcommand names its input
    (docs/cli.md). ``on_array``: the command runs on an array, so ``--arch`` defaults to the
    smallest shipped array the app fits (``routes``: and places and routes on,
    :func:`compiler.pipeline.compile_on_smallest`); otherwise it works on a single PUB and
    defaults to ``pub``. ``parameters_of``: the command needs no array, only the arch's
    scheduling and buffer parameters, and defaults to this arch."""
    s.add_argument("app", metavar="APP", help="application name (apps/), a Python app file "
                   "(FILE.py: build(**sizes), make_inputs(seed=0, **sizes); docs/apps.md) or a "
                   "Program JSON file")
    if parameters_of:
        s.add_argument("--arch", default=parameters_of, metavar="A",
                       help=PARAMETERS_ARCH_HELP.format(arch=parameters_of))
    elif on_array:
        s.add_argument("--arch", default=None, metavar="A", help=ARRAY_ARCH_HELP.format(
            routes=" and places and routes on" if routes else ""))
    else:
        s.add_argument("--arch", default="pub", metavar="A", help=PUB_ARCH_HELP)
    s.add_argument("--size", action="append", default=[], metavar="NAME=N",
                   help="override an application size, e.g. --size width=32 (repeatable)")


def compile_for(args, until: str, say=print, **options):
    """Compile ``args.app`` up to ``until`` on ``args.arch``, or, without one, on the smallest
    shipped array it fits (and places and routes on, from ``pnr`` on), saying which through
    ``say``. Returns ``(CompileResult, ArchChoice | None)``."""
    from ..pipeline import compile_app, compile_on_smallest
    from ..frontend.source import parse_sizes
    sizes = parse_sizes(args.size)
    if args.arch is not None:
        return compile_app(args.app, args.arch, sizes, until=until, **options), None
    result, choice = compile_on_smallest(args.app, sizes, until=until, **options)
    if say is not None:
        say(choice.describe(result.app))
    return result, choice


def add_delay_argument(s: argparse.ArgumentParser) -> None:
    """``--no-delay``: producers start as early as possible (compiler.schedule.delay)."""
    s.add_argument("--no-delay", action="store_true",
                   help="start input streams and other producers as early as possible instead "
                   "of as late as their consumers allow (more on-chip storage, same cycles)")


def add_reorder_argument(s: argparse.ArgumentParser) -> None:
    """``--no-reorder``: reductions in their written loop order (compiler.passes.reduction_order)."""
    s.add_argument("--no-reorder", action="store_true",
                   help="keep non-unrolled reductions in their written loop order instead of "
                   "moving their pure loops inside (the ablation of "
                   "compiler.passes.reduction_order)")


def check_dir(*paths: str | None) -> None:
    """One-line error unless the directory of every given output path exists (checked before
    any work, so a bad path leaves nothing behind)."""
    for path in paths:
        if path and not Path(path).resolve().parent.is_dir():
            raise ValueError(f"cannot write {path}: directory {Path(path).parent} does not exist")


def write_with(path: str, writer: Callable[[str], None], default_suffix: str = "") -> None:
    """Call ``writer(tmp)`` on a temporary file beside ``path`` (with ``path``'s suffix, else
    ``default_suffix``), then rename it to ``path``; on failure the temporary file is removed
    and ``path`` is untouched."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=target.suffix or default_suffix, prefix=".ubc-",
                               dir=target.parent)
    os.close(fd)
    try:
        writer(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`write_with`)."""
    write_with(path, lambda tmp: Path(tmp).write_text(text))


def write_dir(directory: str, files: dict[str, Callable[[], str]]) -> None:
    """Write ``{name: text producer}`` into ``directory``, all or nothing: into a temporary
    directory first, which then replaces ``directory``."""
    target = Path(directory)
    tmp = Path(tempfile.mkdtemp(prefix=".ubc-", dir=target.parent))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text())
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
