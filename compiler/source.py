"""Where an application comes from: an apps/ module name, a Python file with the same protocol
(a user's own app), or a Program JSON file (docs/apps.md, "Write your own app"). The command
line, the pipeline driver, ``make sim`` and the sweep engine all load apps here.

A Python app file defines ``build(**sizes) -> Program`` (either DSL; a Halide-style file
returns its ``Pipeline(...).lower(...)``) and ``make_inputs(seed=0, **sizes)``, and optionally
``SIZES`` (the defaults) and ``reference(inputs, **sizes)`` (an independent golden). Without a
reference the golden is the interpreter (:mod:`compiler.interp`), cross-checked with real
Halide (PyPI ``halide``) when the Program came from the Halide-style DSL.

Every problem with the file (missing, not importable, a missing function, ``build`` raising or
returning something else than a Program, a JSON file that is not a Program) is a one-line
:class:`AppError` naming the file and the cause.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from .ir.program import Program


class AppError(ValueError):
    """An app file (Python or JSON) that is not a valid app; one line naming the file."""


@dataclass
class AppSource:
    """A loaded application: its Program, and the module providing inputs and golden."""
    name: str
    program: Program
    module: ModuleType | None = None     # None for a Program JSON file
    sizes: dict[str, int] = field(default_factory=dict)
    path: str | None = None              # the file it came from (Python or JSON)


def is_file_app(app: str) -> bool:
    """Whether ``app`` names a file (``.py`` or ``.json``) rather than an apps/ module."""
    return app.endswith((".py", ".json"))


def load_app(app: str, sizes: dict[str, int] | None = None) -> AppSource:
    """Load ``app``: an apps/ name, a ``.py`` app file or a Program ``.json`` file."""
    sizes = dict(sizes or {})
    if app.endswith(".json"):
        return AppSource(Path(app).stem, _load_json(app), None, sizes, app)
    if app.endswith(".py"):
        module = load_module(app)
        return AppSource(Path(app).stem, _build(module, app, sizes), module, sizes, app)
    from apps import get_app
    module = get_app(app)
    try:
        return AppSource(app, module.build(**sizes), module, sizes)
    except TypeError as e:
        raise ValueError(f"{app}: bad size argument: {e}") from None


def load_program(app: str, sizes: dict[str, int]) -> Program:
    """The Program of ``app`` (:func:`load_app`)."""
    return load_app(app, sizes).program


def _load_json(path: str) -> Program:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise AppError(f"program file {path} not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise AppError(f"program file {path} is not valid JSON: {_line(e)}") from None
    if not isinstance(data, dict) or "program" not in data:
        raise AppError(f"program file {path} is not a Program JSON: expected an object with "
                       f"the keys program, buffers and children (ubc schedule --dump writes "
                       f"one as program.json)")
    try:
        return Program.from_dict(data)
    except KeyError as e:
        raise AppError(f"program file {path} is not a Program JSON: missing key {e}") from None
    except (TypeError, AttributeError, ValueError) as e:
        raise AppError(f"program file {path} is not a valid Program JSON: {_line(e)}") from None


def load_module(path: str) -> ModuleType:
    """Import the Python app file ``path`` (a fresh module each time) and check it defines
    ``build`` and ``make_inputs``."""
    p = Path(path)
    if not p.is_file():
        raise AppError(f"app file {path} not found")
    name = f"_ubc_app_{p.stem}"
    spec = importlib.util.spec_from_file_location(name, p)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(p.resolve().parent))    # the file may import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise AppError(f"app file {path}: syntax error at line {e.lineno}: {e.msg}") from None
    except Exception as e:      # any error of the user's code: one line, no traceback
        raise AppError(f"app file {path}: importing it raised {type(e).__name__}: "
                       f"{_line(e)}") from None
    finally:
        sys.path.remove(str(p.resolve().parent))
    for fn in ("build", "make_inputs"):
        if not callable(getattr(module, fn, None)):
            raise AppError(f"app file {path}: defines no {fn}() (an app file defines "
                           f"build(**sizes) and make_inputs(seed=0, **sizes); docs/apps.md)")
    return module


def _build(module: ModuleType, path: str, sizes: dict[str, int]) -> Program:
    known = getattr(module, "SIZES", None)
    if isinstance(known, dict):
        unknown = sorted(set(sizes) - set(known))
        if unknown:
            raise AppError(f"app file {path}: unknown size {', '.join(unknown)} (SIZES has "
                           f"{', '.join(known) or 'none'})")
    try:
        program = module.build(**sizes)
    except Exception as e:
        raise AppError(f"app file {path}: build({_kw(sizes)}) raised {type(e).__name__}: "
                       f"{_line(e)}") from None
    if not isinstance(program, Program):
        raise AppError(f"app file {path}: build() returned {type(program).__name__}, expected "
                       f"a Program (a Halide-style file returns Pipeline(out).lower(name, "
                       f"sizes))")
    return program


def app_inputs(source: AppSource, seed: int = 0) -> dict:
    """The app's inputs: its module's ``make_inputs(seed, **sizes)`` (one-line error if it
    raises), else uniformly random words of every input buffer's type."""
    import numpy as np
    from .interp import numpy_dtype
    if source.module is not None and hasattr(source.module, "make_inputs"):
        try:
            inputs = source.module.make_inputs(seed, **source.sizes)
        except Exception as e:
            raise AppError(f"{source.path or source.name}: make_inputs raised "
                           f"{type(e).__name__}: {_line(e)}") from None
        _check_inputs(source, inputs)
        return inputs
    rng = np.random.default_rng(seed)
    out = {}
    for b in source.program.buffers.values():
        if b.kind == "input":
            lo, hi = ((-(1 << (b.type.bits - 1)), 1 << (b.type.bits - 1)) if b.type.signed
                      else (0, 1 << b.type.bits))
            out[b.name] = rng.integers(lo, hi, b.shape).astype(numpy_dtype(b.type))
    return out


def _check_inputs(source: AppSource, inputs) -> None:
    """``make_inputs`` gave an array of the declared shape for every input buffer."""
    import numpy as np
    where = f"{source.path or source.name}: make_inputs"
    if not isinstance(inputs, dict):
        raise AppError(f"{where} returned {type(inputs).__name__}, expected a dict of arrays")
    for b in source.program.buffers.values():
        if b.kind != "input":
            continue
        if b.name not in inputs:
            raise AppError(f"{where} gave no array for input '{b.name}'")
        shape = tuple(np.shape(inputs[b.name]))
        if shape != tuple(b.shape):
            raise AppError(f"{where} gave input '{b.name}' the shape {list(shape)}, the "
                           f"Program declares {list(b.shape)}")


def golden(source: AppSource, inputs: dict) -> tuple[dict, str]:
    """The golden outputs of ``source`` on ``inputs`` and how they were checked: the
    interpreter against the module's ``reference`` when it has one, else against real Halide
    when the Program came from the Halide-style DSL, else the interpreter alone. A mismatch
    raises :class:`GoldenMismatch`."""
    import numpy as np
    from .interp import run
    ours = run(source.program, inputs)
    outs = [b.name for b in source.program.buffers.values() if b.kind == "output"]
    ref = getattr(source.module, "reference", None) if source.module is not None else None
    if ref is not None:
        try:
            theirs, how = ref(inputs, **source.sizes), "numpy reference"
        except Exception as e:
            raise AppError(f"{source.path or source.name}: reference raised "
                           f"{type(e).__name__}: {_line(e)}") from None
    elif getattr(source.program, "halide", None) is not None:
        from .frontend.halide_check import realize_halide
        out, sizes = source.program.halide
        theirs, how = {out.name: realize_halide(out, inputs, sizes)}, "real Halide"
    else:
        return {k: ours[k] for k in outs}, "interpreter (no reference to check against)"
    for name in outs:
        if name not in theirs or not np.array_equal(np.asarray(ours[name]).astype(np.int64),
                                                    np.asarray(theirs[name]).astype(np.int64)):
            raise GoldenMismatch(f"interpreter vs {how}: output '{name}' differs")
    return {k: ours[k] for k in outs}, f"interpreter == {how} (bit-exact)"


class GoldenMismatch(AssertionError):
    """The interpreter and the app's reference (or real Halide) disagree."""


def _kw(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


def parse_sizes(items: list[str]) -> dict[str, int]:
    """``NAME=INTEGER`` items (``--size``) as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise ValueError(f"--size expects NAME=INTEGER, got '{item}'")
        out[key] = int(value)
    return out
