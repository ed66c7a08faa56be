"""Where the project's data and outputs live, in a source checkout and in an installed package.

The constraints files (``arch/*.toml``, the FPGA pin files) are package data of ``ubgen``
(``ubgen/constraints/``), so ``pip install .`` carries them and every command finds them from
any working directory (docs/design.md §2). Outputs (Verilator models, FPGA runs, the sweep
cache) go to ``build/`` of the checkout when the packages are imported from one, and to
``build/`` under the current directory when they are installed (never into site-packages).
Amaranth-free: the compiler reads it.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PACKAGE_DIR", "CONSTRAINTS_DIR", "CHECKOUT", "build_dir", "cache_dir", "shown"]

PACKAGE_DIR = Path(__file__).resolve().parent
CONSTRAINTS_DIR = PACKAGE_DIR / "constraints"

CHECKOUT: Path | None = (PACKAGE_DIR.parent if (PACKAGE_DIR.parent / "pyproject.toml").is_file()
                         else None)
"""The source checkout the packages are imported from; ``None`` for an installed package."""


def build_dir(*parts: str) -> Path:
    """``build/<parts>`` of the checkout, or of the current directory when installed."""
    return (CHECKOUT if CHECKOUT is not None else Path.cwd()).joinpath("build", *parts)


def cache_dir(*parts: str) -> Path:
    """Where reusable outputs (the Verilog cache) live: ``build/<parts>`` of the checkout, or,
    when installed, ``ubgen/<parts>`` under the user's cache directory (``$XDG_CACHE_HOME``,
    else ``~/.cache``), so that a command run with ``--out`` writes nothing else into the
    current directory."""
    if CHECKOUT is not None:
        return build_dir(*parts)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).joinpath("ubgen", *parts)


def shown(path: Path) -> str:
    """``path`` as a message shows it: relative to the directory holding the packages (e.g.
    ``ubgen/constraints/fpga/x.pcf``) when it lies there, else as given."""
    base = PACKAGE_DIR.parent
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
