"""Lazy package exports: a package ``__init__`` names its Amaranth components without importing
them, so importing the package's Amaranth-free exports (register maps, encodings) does not import
Amaranth (docs/design.md §2)."""
from __future__ import annotations

import importlib


def lazy_exports(package: str, names: dict[str, str]):
    """A module ``__getattr__`` for ``package`` that imports ``names[attr]`` (a submodule
    relative to the package) on first access of ``attr`` and returns its ``attr``."""
    def __getattr__(attr: str):
        if attr in names:
            return getattr(importlib.import_module(names[attr], package), attr)
        raise AttributeError(f"module {package!r} has no attribute {attr!r}")
    return __getattr__
