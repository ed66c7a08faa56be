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
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from ..ir.program import Program, ProgramError, ProgramWarning


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

    @property
    def file(self) -> str | None:
        """The file that defines the app: ``path``, or an apps/ module's source file."""
        return self.path or getattr(self.module, "__file__", None)


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
        return Program.from_dict(data).validate()
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
    try:
        return program.validate()
    except ProgramError as e:
        raise AppError(f"app file {path}: {_line(e)}") from None


@contextmanager
def warnings_once(prog: str):
    """Inside: every :class:`~compiler.ir.program.ProgramWarning` (e.g. the Halide-style
    DSL's missing ``stream_to_accelerator()``) is printed on stderr as one line
    ``<prog>: warning: ...``, each message once however often the app is built; other
    warnings are shown as usual."""
    seen: set[str] = set()
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, ProgramWarning):
            return shown(message, category, filename, lineno, file, line)
        text = _line(message)
        if text not in seen:
            seen.add(text)
            print(f"{prog}: warning: {text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.filterwarnings("always", category=ProgramWarning)
        warnings.showwarning = show
        yield


def app_inputs(source: AppSource, seed: int = 0) -> dict:
    """The app's inputs, the one source of them for the golden and the hardware alike: its
    module's ``make_inputs(seed, **sizes)`` (one-line error if it raises or gives an array of
    the wrong shape or a value its buffer's type cannot hold), else uniformly random words of
    every input buffer's type."""
    import numpy as np
    from ..interp import numpy_dtype
    if source.module is not None and hasattr(source.module, "make_inputs"):
        try:
            inputs = source.module.make_inputs(seed, **source.sizes)
        except Exception as e:
            raise AppError(f"{source.path or source.name}: make_inputs raised "
                           f"{type(e).__name__}: {_line(e)}") from None
        return _check_inputs(source, inputs)
    rng = np.random.default_rng(seed)
    out = {}
    for b in _input_buffers(source.program):
        lo, hi = type_range(b.type)
        out[b.name] = rng.integers(lo, hi + 1, b.shape).astype(numpy_dtype(b.type))
    return out


def extreme_inputs(source: AppSource, which: str) -> dict:
    """Every input buffer filled with one extreme value of its type: ``"zeros"`` or ``"max"``
    (the largest value of the type), where wrap-around and overflow disagreements between the
    interpreter and a reference show (:func:`establish_golden`)."""
    import numpy as np
    from ..interp import numpy_dtype
    if which not in EXTREMES:
        raise ValueError(f"extreme inputs are {' or '.join(EXTREMES)}, got {which!r}")
    return {b.name: np.full(b.shape, 0 if which == "zeros" else type_range(b.type)[1],
                            dtype=numpy_dtype(b.type))
            for b in _input_buffers(source.program)}


EXTREMES = ("zeros", "max")


def type_range(t) -> tuple[int, int]:
    """The smallest and largest value of the integer type ``t``."""
    if t.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _input_buffers(program: Program) -> list:
    return [b for b in program.buffers.values() if b.kind == "input"]


def _check_inputs(source: AppSource, inputs) -> dict:
    """``make_inputs`` gave, for every input buffer, an integer array of the declared shape
    whose values its type holds; returns the arrays in the buffers' numpy types."""
    import numpy as np
    from ..interp import numpy_dtype
    where = f"{source.path or source.name}: make_inputs"
    if not isinstance(inputs, dict):
        raise AppError(f"{where} returned {type(inputs).__name__}, expected a dict of arrays")
    out = dict(inputs)
    for b in _input_buffers(source.program):
        if b.name not in inputs:
            raise AppError(f"{where} gave no array for input '{b.name}'")
        arr = np.asarray(inputs[b.name])
        if tuple(arr.shape) != tuple(b.shape):
            raise AppError(f"{where} gave input '{b.name}' the shape {list(arr.shape)}, the "
                           f"Program declares {list(b.shape)}")
        if arr.dtype.kind not in "iub":
            raise AppError(f"{where} gave input '{b.name}' values of type {arr.dtype}, "
                           f"expected integers of its type {b.type}")
        lo, hi = type_range(b.type)
        bad = np.argwhere((arr.astype(np.int64) < lo) | (arr.astype(np.int64) > hi))
        if len(bad):
            at = tuple(int(i) for i in bad[0])
            raise AppError(f"{where} gave input '{b.name}' ({b.type}, {lo}..{hi}) the value "
                           f"{int(arr[at])} at {list(at)} ({len(bad)} values out of range)")
        out[b.name] = arr.astype(numpy_dtype(b.type))
    return out


GOLDEN_KINDS = ("reference", "halide", "interpreter")


@dataclass(frozen=True)
class Golden:
    """The outputs every PASS verdict compares with, and how they were established
    (:func:`establish_golden`): ``kind`` is ``"reference"`` (the interpreter equals the app's
    ``reference()`` bit for bit), ``"halide"`` (it equals real Halide running the Halide-style
    program) or ``"interpreter"`` (neither exists: the interpreter alone); ``checked`` names
    the input sets the two agreed on (the seeded inputs and the extremes)."""
    outputs: dict
    kind: str
    checked: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for a log: which golden and on what it was checked."""
        if self.kind == "interpreter":
            return "interpreter (the app has no reference() and is not Halide-style)"
        against = "the app's reference()" if self.kind == "reference" else "real Halide"
        return (f"interpreter == {against}, bit-exact on {', '.join(self.checked)} "
                f"(golden: {self.kind})")


def establish_golden(source: AppSource, inputs: dict, extremes: bool = True) -> Golden:
    """The golden outputs of ``source`` on ``inputs``, the one way every PASS verdict gets
    them (``make sim`` at both levels, ``make regress``, the bundle, the netlist model's check):
    the interpreter (:mod:`compiler.interp`) must equal the module's ``reference()`` bit for
    bit, or, without one, real Halide when the Program came from the Halide-style DSL; the
    interpreter alone only when neither exists. With ``extremes`` the two are also compared on
    all-zero and all-maximum inputs (:func:`extreme_inputs`). A disagreement raises
    :class:`GoldenMismatch` naming the output and the first differing word."""
    from ..interp import run
    outs = [b.name for b in source.program.buffers.values() if b.kind == "output"]
    kind, theirs_of = _independent(source)
    ours = run(source.program, inputs)
    golden = {k: ours[k] for k in outs}
    if kind == "interpreter":
        return Golden(golden, kind)
    checked = ["the app's inputs"]
    _compare(golden, theirs_of(inputs), outs, kind, "the app's inputs")
    if extremes:
        for which in EXTREMES:
            ext = extreme_inputs(source, which)
            _compare(run(source.program, ext), theirs_of(ext), outs, kind, f"all-{which} inputs")
            checked.append(f"all-{which}")
    return Golden(golden, kind, tuple(checked))


def _independent(source: AppSource):
    """``(kind, fn)``: the golden kind of ``source`` and the function computing the outputs
    independently of the interpreter (``None`` for the interpreter alone)."""
    ref = getattr(source.module, "reference", None) if source.module is not None else None
    where = source.path or source.name
    if ref is not None:
        def theirs(inputs):
            try:
                return ref(inputs, **source.sizes)
            except Exception as e:
                raise AppError(f"{where}: reference raised {type(e).__name__}: "
                               f"{_line(e)}") from None
        return "reference", theirs
    if getattr(source.program, "halide", None) is not None:
        from .halide.check import realize_halide
        out, sizes = source.program.halide
        return "halide", lambda inputs: {out.name: realize_halide(out, inputs, sizes)}
    return "interpreter", None


def _compare(ours: dict, theirs, outs: list[str], kind: str, on: str) -> None:
    import numpy as np
    what = "the app's reference()" if kind == "reference" else "real Halide"
    if not isinstance(theirs, dict):
        raise GoldenMismatch(f"golden ({kind}): {what} returned {type(theirs).__name__}, expected a "
                             f"dict of output arrays", kind)
    for name in outs:
        if name not in theirs:
            raise GoldenMismatch(f"golden ({kind}): {what} gives no output '{name}'", kind)
        a = np.asarray(ours[name]).astype(np.int64)
        b = np.asarray(theirs[name]).astype(np.int64)
        if a.shape != b.shape:
            raise GoldenMismatch(f"golden ({kind}): output '{name}' is {list(a.shape)} in the "
                                 f"interpreter, {list(b.shape)} in {what}", kind)
        diff = np.argwhere(a != b)
        if len(diff):
            at = tuple(int(i) for i in diff[0])
            raise GoldenMismatch(
                f"golden ({kind}): interpreter and {what} disagree on {on}: output '{name}' at "
                f"{list(at)}: interpreter {int(a[at])}, {kind} {int(b[at])} "
                f"({len(diff)} of {a.size} words differ)", kind)


class GoldenMismatch(AssertionError):
    """The interpreter and the app's reference (or real Halide) disagree; ``kind`` is the
    golden that was being established (``"reference"`` or ``"halide"``)."""

    def __init__(self, message: str, kind: str | None = None):
        super().__init__(message)
        self.kind = kind


def effective_sizes(source: AppSource) -> dict[str, int]:
    """The sizes the app was built with: its ``build``'s defaults updated with the sizes
    given (``{}`` for a Program JSON file)."""
    import inspect
    if source.module is None:
        return dict(source.sizes)
    sizes = {k: p.default for k, p in inspect.signature(source.module.build).parameters.items()
             if p.default is not inspect.Parameter.empty and isinstance(p.default, int)}
    sizes.update(source.sizes)
    return sizes


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
