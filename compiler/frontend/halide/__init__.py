"""A Halide-style DSL that lowers to the Program IR (thesis §3.2, paper Fig. 1 and §V-A;
docs/design.md §3.1, docs/apps.md "Write your own app").

Algorithm::

    x, y, c = Var("x"), Var("y"), Var("c")
    inp = Input("input", u16, (64, 64, 16))
    brighten, blur = Func("brighten"), Func("blur")
    brighten[x, y, c] = inp[x, y, c] * 2
    blur[x, y, c] = (brighten[x, y, c] + brighten[x + 1, y, c]
                     + brighten[x, y + 1, c] + brighten[x + 1, y + 1, c]) / 4
    brighten.compute_at(blur, c)
    prog = Pipeline(blur).lower("brighten_blur", (63, 63, 16))

Values are typed (:class:`~compiler.ir.types.IntType`, 16 bits at most: the PE's word);
integer literals take the type of the other operand, operands of different types need an
explicit :func:`cast`. ``/`` and ``%`` by a power of two become shifts and masks (Halide's
division rounds down, like ``ashr``); other divisors are rejected. Comparisons give ``u1``;
``abs``/``absd`` give the unsigned type (as in Halide). Loop variables can only be used in
(quasi-affine) indices.

Schedule (a subset of Halide's, plus the accelerator commands of the thesis):

* ``split(v, outer, inner, factor)`` (the factor must divide the extent), ``tile``,
  ``reorder`` (innermost first, as in Halide), ``unroll(v)``: an unrolled pure dimension
  replicates the op (one op per value); unrolled reduction dimensions of an update that reads
  the function only where it writes are folded into ONE op with many loads (a fully unrolled
  reduction becomes one op);
* ``compute_root()``, ``compute_at(f, v)``, ``store_at(f, v)``, ``compute_inline()`` (the
  default for pure functions, as in Halide): a function computed at ``f``'s loop ``v`` gets its
  own loops inside that loop, over the region ``f`` needs in one iteration of ``v``, in local
  coordinates (loops start at 0; loops of extent 1 are dropped); its buffer covers the region
  needed in one iteration of the store loop, dimensions of extent 1 dropped (so the thesis' ``brighten[x, y]`` inside ``t``);
* ``hw_accelerate(xi, xo)`` on the output: the accelerated region is the loops inside ``xo``;
  functions computed at the root (outside it) are stored in the GLB, except the accelerator's
  inputs: a ``stream_to_accelerator()`` function (computed at the root) is the input stream of
  the accelerator (paper §V-A): its op reads the GLB inputs through IO streams and writes the
  buffer its consumers read on the array, whose level buffer mapping chooses (MEM or REG, like
  the apps' ``hw_input``, docs/apps.md); ``store_in("GLB"|"MEM"|"REG")`` sets a buffer's
  memory level (``BufferDecl.level``), which buffer mapping obeys or refuses with a one-line
  error (docs/mapping.md); ``unit(name)``/``share(other)`` set the compute unit (``Op.unit``,
  thesis §4.3.3). An input that functions other than such a copy read at several places gets
  a :class:`HalideWarning` from :meth:`Pipeline.lower`: each of those reads is an IO stream of
  its own.

Lowering (:meth:`Pipeline.lower`) infers rectangular bounds from the consumers' accesses
(halos included, interval arithmetic over the consumers' loops), orders the loops as scheduled
(Halide's default: the first variable innermost; reduction variables inside the pure ones in
updates), emits producers before consumers and turns each definition into an op whose kernel is
a :class:`~compiler.ir.expr.Kernel` DAG (identical loads are shared). A function with update
definitions (a reduction over an ``RDom``) is never inlined: wherever it is computed (root,
``compute_at``, ``store_at``) it gets its pure definition and then each update, each with its
own loops over the region its consumers need, as Halide computes it; an update's reads of its
own function are not consumers, and an update must write and read inside that region (Halide
would grow the region of the earlier stages; this lowering refuses it). A pure variable in an
update keeps its position in the arguments (as in Halide). Loop names are
``<func>_<dim>`` (``<func>_u<i>_<dim>`` for update ``i``), op names ``<func>`` / ``<func>_u<i>``.
Errors are one-line :class:`HalideError` naming the function.
"""
from __future__ import annotations

from .expr import (Bool, FExpr, HalideError, HalideWarning, Int, RDom, RVar, UInt, Var, abs_,
                   absd, cast, lookup, max_, min_, select, typeof)
from .func import Func, Input
from .lower import Pipeline

__all__ = ["HalideError", "HalideWarning", "Var", "RVar", "RDom", "Func", "Input", "Pipeline",
           "cast", "select", "min_", "max_", "abs_", "absd", "lookup", "FExpr", "typeof", "UInt",
           "Int", "Bool"]
