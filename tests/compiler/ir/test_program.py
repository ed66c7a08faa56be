"""The loop-nest DSL's construction checks (compiler/ir/program.py, compiler/ir/expr.py):
``validate()`` refuses loads and stores of undeclared buffers with one line naming the op and
the buffer; a kernel refuses a Python ``bool`` (what ``a == b`` gives); the reflected and unary
operators build the same calls as the forward ones. Each check with its negative control."""
from __future__ import annotations

import pytest

from compiler.ir import Call, Const, Kernel, Program, ProgramError, s16, select, u16


def _program(declare: tuple[str, ...] = ("input", "output"), load="input", store="output"):
    prog = Program("p")
    if "input" in declare:
        prog.add_input("input", (4,))
    if "output" in declare:
        prog.add_output("output", (4,))
    op = prog.add_loop("x", 0, 4).add_op("scale")
    op.add_load(load, "x")
    op.add_store(store, "x")
    op.add_function(Kernel.from_fn("k", lambda a: a * 3, u16))
    return prog


@pytest.mark.parametrize("kwargs, message", [
    ({"load": "inptu"}, "op scale: loads undeclared buffer inptu (declare it with add_input, "
                        "add_output or add_buffer)"),
    ({"store": "outptu"}, "op scale: stores undeclared buffer outptu (declare it with "
                          "add_input, add_output or add_buffer)"),
    ({"declare": ("input",)}, "op scale: stores undeclared buffer output (declare it with "
                              "add_input, add_output or add_buffer)")])
def test_validate_refuses_undeclared_buffers(kwargs, message):
    prog = _program(**kwargs)
    with pytest.raises(ProgramError) as e:
        prog.validate()
    assert str(e.value) == message
    assert set(prog.buffers) <= {"input", "output"}      # nothing declared behind the user's back


def test_validate_accepts_declared_buffers():
    """Negative control: the same program with its buffers declared (a temp without a shape
    included) validates."""
    assert _program().validate().buffers.keys() == {"input", "output"}
    prog = _program(store="tmp")
    prog.add_buffer("tmp")
    assert prog.validate().buffers["tmp"].kind == "temp"


def test_python_equality_is_refused_in_a_kernel():
    with pytest.raises(TypeError, match=r"cannot use False in a kernel expression \(== and != "
                                        r"compare Python objects; write a.eq\(b\)"):
        Kernel.from_fn("k", lambda a, b: a == b, u16, u16)
    with pytest.raises(TypeError, match="cannot use True"):
        Kernel.from_fn("k", lambda a, b: select(a != b, a, b), u16, u16)
    with pytest.raises(TypeError, match=r"op 'select': argument True is not a kernel "
                                        r"expression"):
        Kernel.from_fn("k", lambda a, b: Call("select", (a != b, a, b)), u16, u16)
    k = Kernel.from_fn("k", lambda a, b: a.eq(b), u16, u16)     # negative control
    assert k.body.op == "eq" and k.body.type.bits == 1


@pytest.mark.parametrize("fn, op, const_first", [
    (lambda a: 255 ^ a, "xor", True), (lambda a: 1 << a, "shl", True),
    (lambda a: 40000 >> a, "lshr", True), (lambda a: -a, "sub", True),
    (lambda a: a ^ 255, "xor", False)])
def test_reflected_and_unary_operators(fn, op, const_first):
    body = Kernel.from_fn("k", fn, u16).body
    assert body.op == op and body.type == u16
    assert isinstance(body.args[0 if const_first else 1], Const)


def test_negation_and_reflected_shift_keep_the_signedness():
    assert Kernel.from_fn("k", lambda s: -s, s16).body.type == s16
    assert Kernel.from_fn("k", lambda s: -4 >> s, s16).body.op == "ashr"
