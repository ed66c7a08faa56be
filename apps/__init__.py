"""The application set of thesis Table 7.1 (paper Table III), one module per app.

Each module provides ``SIZES`` (defaults from Table 7.1), ``build(**sizes) -> Program`` (the
loop-nest DSL, thesis §4.1), ``make_inputs(seed=0, **sizes)`` and ``reference(inputs, **sizes)``
(an independent numpy golden). See docs/apps.md.
"""
from __future__ import annotations

import importlib
from types import ModuleType

NAMES = ("gaussian", "harris", "upsample", "unsharp", "camera", "gpyr", "laplacian", "resnet",
         "mobilenet", "gemm", "srcnn", "brighten_blur", "cascade")

APPS: dict[str, ModuleType] = {name: importlib.import_module(f"{__name__}.{name}")
                               for name in NAMES}


class UnknownAppError(KeyError):
    """An application name that is not in :data:`APPS`."""

    def __str__(self) -> str:      # KeyError would quote the whole message
        return self.args[0]


def get_app(name: str) -> ModuleType:
    """The module of application ``name``; a one-line error lists the known apps."""
    try:
        return APPS[name]
    except KeyError:
        raise UnknownAppError(f"unknown app '{name}'; known apps: {', '.join(NAMES)}") from None
