"""Every unified buffer of every application (apps/), mapped and checked by the cycle model.

For each buffer ``map_buffer`` either returns an implementation that the register-driven model
(compiler/mapping/pub_model.py) shows to produce, at every scheduled read, exactly the value the unified
buffer's isl maps require, with no single-port SRAM conflict; or it refuses with a one-line
MappingError naming the buffer. It never returns a wrong implementation. Every buffer of every
application must map as the pipeline maps it (``compiler.pipeline.map_scheduled``, with its
retries): the CI subset at small sizes, the full sizes of thesis Table 7.1 under
``-m regress`` (issue 4's "done"; about 3 minutes on one core, resnet 80 s of it).
"""
import pytest

from apps import NAMES, get_app
from compiler.mapping.pub_model import check_buffer
from compiler.pipeline import map_scheduled
from compiler.schedule.report import schedule_program
from ubgen.arch import load_arch

SMALL = {"gaussian": dict(width=32, height=32), "harris": dict(width=32, height=32),
         "unsharp": dict(width=32, height=32), "cascade": dict(width=32, height=32),
         "gpyr": dict(width=32, height=32, levels=2), "camera": dict(width=16, height=16),
         "brighten_blur": dict(width=32, height=32, tiles=2),
         "upsample": dict(width=16, height=16), "laplacian": dict(width=16, height=16),
         "mobilenet": dict(width=8, height=8, channels=2, out_channels=2),
         "gemm": dict(m=8, n=16, k=16, k_unroll=4, n_unroll=4),
         "resnet": dict(width=4, height=4, in_channels=8, out_channels=8, ic_unroll=4,
                        oc_unroll=4),
         "srcnn": dict(width=6, height=6, c_in=8, c_mid=4, c_out=8, unroll=4)}
# mobilenet's small layer fits in registers (thesis §5.4); every other app keeps a memory tile
NO_MEM = {"mobilenet"}


def _map_and_check(app: str, sizes: dict) -> tuple[dict, dict]:
    # mapped as compile_app maps (pipeline.map_scheduled): a refusal under the late-start
    # schedule (compiler.schedule.delay) or for a too-soon wide fetch is scheduled and mapped
    # again with the touching ops early and the buffer's gap doubled; a schedule every buffer
    # of which maps is kept as it is
    program = get_app(app).build(**sizes)
    res, impls, refused = map_scheduled(program, schedule_program(program), load_arch("pub"))
    for name, reason in refused.items():
        assert reason.startswith(f"buffer {name}:"), reason
        assert "\n" not in reason
    for name, impl in impls.items():
        ub = res.buffers[name]
        if impl.level == "GLB":
            assert ub.kind in ("input", "output") or not ub.inputs or not ub.outputs
            continue
        rep = check_buffer(ub, impl)
        assert rep.ok, rep.summary()
        assert rep.checked > 0
    return impls, refused


def test_every_app_has_a_small_size():
    assert set(SMALL) == set(NAMES)


@pytest.mark.parametrize("app", sorted(SMALL))
def test_app_buffers_small(app):
    impls, refused = _map_and_check(app, SMALL[app])
    assert not refused, refused
    assert (sum(i.mems for i in impls.values()) >= 1) == (app not in NO_MEM)


def test_mobilenet_weights_in_registers():
    """Thesis §5.4: the fully partitioned weights are one word per bank, i.e. registers."""
    impls, refused = _map_and_check("mobilenet", SMALL["mobilenet"])
    assert not refused, refused
    for name in ("w_dw_mem", "w_pw_mem"):
        impl = impls[name]
        assert impl.level == "REG" and impl.mems == 0
        assert impl.register_files and all(r.words == 1 for r in impl.register_files)


@pytest.mark.regress
@pytest.mark.parametrize("app", NAMES)
def test_app_buffers_full_size(app):
    _impls, refused = _map_and_check(app, {})
    assert not refused, refused


# rows of more than 20 cycles at U = 4 (so line buffers stay memories), few rows (fast checks)
UNROLLED = {"gaussian": dict(width=96, height=8), "harris": dict(width=96, height=12),
            "unsharp": dict(width=96, height=10)}
# the buffer each app line-buffers from its first stage (unsharp's RGB copy feeds only the
# grayscale conversion at the same pixel; its window reads the grayscale image)
LINE_BUFFER = {"gaussian": "hw_input", "harris": "hw_input", "unsharp": "gray"}


@pytest.mark.parametrize("app", sorted(UNROLLED))
@pytest.mark.parametrize("unroll", [2, 4])
def test_unrolled_app_buffers_small(app, unroll):
    """The unrolled stencils (``unroll=U``, thesis Fig. 7.5) schedule, verify with isl, and map
    every buffer (U writer lanes, U x taps readers) onto memories and shift registers; the model
    check passes."""
    impls, refused = _map_and_check(app, dict(UNROLLED[app], unroll=unroll))
    assert not refused, refused
    line = impls[LINE_BUFFER[app]]
    assert len(line.inputs) == unroll
    assert line.mems >= 1
