"""The import rules of docs/design.md §2, checked on the source and in fresh interpreters:

* ubgen never imports compiler, sim or apps;
* the compiler never imports sim at module level, and inside a function only in the tools on
  top (the CLI and the sweep: ``ubc sim``, the sweep's ``sim`` stage);
* no compiler stage imports a later stage (the order of docs/design.md §3);
* importing the compiler (driver, IR, passes, backend, cycle models) and compiling an app to its
  netlist does not import Amaranth; nor do ubgen's exports (arch, op encoding, register maps,
  controller encoding, array layout and routing graph).

Each check has a negative control showing it can see a violation.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# compiler stages in pipeline order (docs/design.md §3); a module may import its own stage and
# earlier ones. Modules not listed (ir, source, interp, model, pipeline, cli, sweep, plot) are
# outside the ordering: the IR and shared helpers below every stage, the driver and the tools
# above them.
STAGES = ["frontend", "passes", "poly", "schedule", "mapping", "backend", "fpga"]


def _imports(path: Path, package: str) -> set[str]:
    """Absolute names of every module ``path`` imports (top level and inside functions)."""
    tree = ast.parse(path.read_text(), str(path))
    parts = package.split(".")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[:len(parts) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _modules(top: str):
    """``(path, module name, package)`` of every module under ``top``."""
    for path in sorted((ROOT / top).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            yield path, ".".join(parts), ".".join(parts)
        else:
            yield path, ".".join(parts), ".".join(parts[:-1])


def ubgen_violations(files) -> list[str]:
    bad = []
    for path, name, pkg in files:
        for mod in _imports(path, pkg):
            if mod.split(".")[0] in ("compiler", "sim", "apps"):
                bad.append(f"{name} imports {mod}")
    return bad


def _stage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "compiler":
        return None
    return parts[1] if parts[1] in STAGES else None


def stage_violations(files) -> list[str]:
    bad = []
    for path, name, pkg in files:
        own = _stage(name)
        if own is None:
            continue
        for mod in _imports(path, pkg):
            other = _stage(mod)
            if other is not None and STAGES.index(other) > STAGES.index(own):
                bad.append(f"{name} ({own}) imports {mod} ({other})")
    return sorted(set(bad))


# the driver and the tools above it: no stage (nor the helpers below the stages) imports them
DRIVER = ("compiler.pipeline", "compiler.cli", "compiler.sweep", "compiler.__main__")


def driver_violations(files) -> list[str]:
    """Modules of the compiler's stages and helpers that import the driver or the tools on top
    of it (docs/design.md §2: the driver calls the stages, never the other way round)."""
    bad = []
    for path, name, pkg in files:
        if name.startswith(DRIVER):
            continue
        for mod in _imports(path, pkg):
            if mod.startswith(DRIVER):
                bad.append(f"{name} imports {mod}")
    return sorted(set(bad))


def _top_level_imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports at module level (not in functions)."""
    tree = ast.parse(path.read_text(), str(path))
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out.add(node.module or "")
    return out


def sim_violations(files) -> list[str]:
    """Compiler modules importing the simulator: at module level anywhere, inside functions
    outside the tools on top (docs/design.md §2)."""
    bad = []
    for path, name, pkg in files:
        top = {m for m in _top_level_imports(path) if m.split(".")[0] == "sim"}
        bad += [f"{name} imports {m} at module level" for m in sorted(top)]
        if not name.startswith(("compiler.cli", "compiler.sweep")):
            bad += [f"{name} imports {m}" for m in sorted(_imports(path, pkg))
                    if m.split(".")[0] == "sim"]
    return sorted(set(bad))


def test_compiler_imports_sim_only_lazily_in_the_tools_on_top():
    assert sim_violations(_modules("compiler")) == []


def test_sim_check_sees_violations(tmp_path):
    """Negative controls: the sweep importing the simulator at module level, and a backend
    module importing it inside a function, are reported."""
    src = tmp_path / "x.py"
    src.write_text("from sim.array_run import run_bundle\n")
    assert sim_violations([(src, "compiler.sweep.x", "compiler.sweep")]) == [
        "compiler.sweep.x imports sim.array_run at module level"]
    src.write_text("def f():\n    from sim.array_run import run_bundle\n")
    assert sim_violations([(src, "compiler.sweep.x", "compiler.sweep")]) == []
    assert "compiler.backend.x imports sim.array_run" in sim_violations(
        [(src, "compiler.backend.x", "compiler.backend")])


def test_no_stage_imports_the_driver():
    assert driver_violations(_modules("compiler")) == []


def test_driver_check_sees_a_stage_importing_the_driver(tmp_path):
    """Negative control: a backend module importing the driver inside a function is seen."""
    src = tmp_path / "x.py"
    src.write_text("def f():\n    from ..pipeline import compile_app\n")
    bad = driver_violations([(src, "compiler.backend.x", "compiler.backend")])
    assert bad == ["compiler.backend.x imports compiler.pipeline",
                   "compiler.backend.x imports compiler.pipeline.compile_app"]


def test_ubgen_never_imports_compiler_sim_or_apps():
    assert ubgen_violations(_modules("ubgen")) == []


def test_no_compiler_stage_imports_a_later_stage():
    assert stage_violations(_modules("compiler")) == []


def test_layering_checks_see_violations(tmp_path):
    """Negative controls: a ubgen module importing the compiler, and an extraction module
    importing the scheduler (relatively, as compiler/poly/ would), are reported."""
    src = tmp_path / "x.py"
    src.write_text("from compiler.pipeline import compile_app\n")
    assert "ubgen.x imports compiler.pipeline" in ubgen_violations([(src, "ubgen.x", "ubgen")])
    src.write_text("def f():\n    from ..schedule.params import SchedParams\n")
    bad = stage_violations([(src, "compiler.poly.x", "compiler.poly")])
    assert bad and all("(poly) imports compiler.schedule.params" in b for b in bad)
    # an earlier stage is allowed
    src.write_text("from ..frontend.halide import Func\n")
    assert stage_violations([(src, "compiler.poly.x", "compiler.poly")]) == []


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter at the repository root, then print whether Amaranth
    was imported."""
    full = code + "\nimport sys\nprint('amaranth' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", full], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


AMARANTH_FREE = [
    "import compiler.pipeline, compiler.mapping.pub_model, compiler.interp, compiler.schedule.verify",
    "import compiler.ir, compiler.passes.tree_height, compiler.poly.extract",
    "import compiler.schedule.report, compiler.mapping.map_buffer",
    "import compiler.backend.build, compiler.backend.netlist_model, compiler.backend.kernel_map, "
    "compiler.backend.netlist, compiler.backend.glb, compiler.backend.bundle",
    "import compiler.backend.pnr, compiler.backend.place, compiler.backend.route, "
    "compiler.backend.bitstream, compiler.backend.check, compiler.backend.pad, compiler.cli, "
    "compiler.sweep.point, ubgen.top, ubgen.top.spec",
    "import compiler.fpga.build, compiler.fpga.design, compiler.fpga.host, compiler.cli.fpga",
    "import ubgen.arch, ubgen.regmap, ubgen.controller, ubgen.pe, ubgen.pe.ops, ubgen.pub, "
    "ubgen.mem.spec, ubgen.io.spec, ubgen.glb.spec, ubgen.interconnect, ubgen.array, "
    "ubgen.array.layout\nfrom ubgen.array.graph import routing_graph, full_regmap\n"
    "routing_graph('cgra_4x4'); full_regmap('cgra_4x4')",
    "import ubgen.mem.dp_spec, ubgen.buffet, ubgen.buffet.spec, compiler.mapping.dp_model, "
    "compiler.mapping.buffet, compiler.backend.pe_controllers, compiler.backend.dp_build\n"
    "from ubgen.array.graph import full_regmap\nfull_regmap('cgra_dppe_4x8')",
]


@pytest.mark.parametrize("code", AMARANTH_FREE)
def test_imports_do_not_import_amaranth(code):
    assert _fresh(code) == "False"


def test_compile_to_netlist_does_not_import_amaranth():
    code = ("from compiler.pipeline import compile_app\n"
            "r = compile_app('gaussian', arch='cgra_8x8')\n"
            "assert r.netlist is not None and r.netlist.count('pe') > 0\n")
    assert _fresh(code) == "False"


def test_dual_port_backends_compile_without_amaranth():
    code = ("from compiler.pipeline import compile_app, backend_figures\n"
            "for app, arch, w, h in (('gaussian', 'cgra_dp_4x8', 32, 12),\n"
            "                        ('upsample', 'cgra_dppe_4x8', 16, 8)):\n"
            "    r = compile_app(app, arch, dict(width=w, height=h), until='pnr')\n"
            "    assert r.pnr.check.ok and r.netlist.count('mem') >= 1\n"
            "assert backend_figures(r.impls, 'rv')['buffets'] == 1\n")
    assert _fresh(code) == "False"


def test_place_route_and_bundle_do_not_import_amaranth():
    code = ("from compiler.pipeline import compile_app\n"
            "r = compile_app('gaussian', arch='cgra_8x8', sizes=dict(width=16, height=12),\n"
            "                until='bundle')\n"
            "assert r.pnr.check.ok and r.bundle['bitstream']\n")
    assert _fresh(code) == "False"


def test_fpga_design_does_not_import_amaranth():
    """The FPGA backend describes the app's design as data; building it is ubgen's."""
    code = ("from compiler.pipeline import compile_app\n"
            "r = compile_app('gaussian', sizes=dict(width=32, height=8), until='map')\n"
            "d, v = r.fpga_design()\n"
            "assert d.count('ram') == 1 and v['output_writes'] > 0\n")
    assert _fresh(code) == "False"


def test_amaranth_check_sees_amaranth():
    """Negative control: building the PE (an Amaranth component) is seen."""
    assert _fresh("import ubgen.pe.pe") == "True"
    assert _fresh("from ubgen.pe import PE") == "True"


# --- no import circles (docs/design.md §2), imports inside functions included

PACKAGES = ("ubgen", "compiler", "sim", "apps")


def import_graph(files) -> "nx.DiGraph":
    """The module import graph of ``files`` (``(path, module name, package)``): an edge for
    every ``import`` statement at any depth (inside functions too), to the module named or, for
    ``from M import name``, to ``M.name`` when that is a module of ``files``."""
    import networkx as nx
    files = list(files)
    known = {name for _p, name, _pkg in files}
    g = nx.DiGraph()
    g.add_nodes_from(known)
    for path, name, pkg in files:
        for mod in _imports(path, pkg):
            if mod in known and mod != name:
                g.add_edge(name, mod)
    return g


def import_circles(files) -> list[list[str]]:
    import networkx as nx
    return sorted(sorted(c) for c in nx.simple_cycles(import_graph(files)))


def test_no_import_circles():
    files = [f for top in PACKAGES for f in _modules(top)]
    assert import_circles(files) == []


def test_circle_check_sees_a_planted_circle(tmp_path):
    """Negative control: two modules importing each other, one of them inside a function."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from . import b\n")
    b.write_text("def f():\n    from .a import g\n")
    circles = import_circles([(a, "compiler.x.a", "compiler.x"), (b, "compiler.x.b", "compiler.x")])
    assert circles == [["compiler.x.a", "compiler.x.b"]]
