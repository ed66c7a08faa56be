"""No function outside the tests is longer than :data:`MAX_LINES` lines (its ``def`` line to its
last line, docstring and nested functions included): a longer one is split into named helpers.

Walks the syntax tree of every ``.py`` file of the repository except ``tests/``, the virtual
environment, build output and hidden folders. The negative controls plant a function one line
too long (in a source string and in a file) and see it reported.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80
SKIP = {"tests", "build", "__pycache__"}        # plus every hidden folder (.venv, .git, ...)


def source_files(root: Path = ROOT) -> list[Path]:
    """Every ``.py`` file under ``root`` outside the skipped folders."""
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts[:-1]
        if any(p in SKIP or p.startswith(".") or p.endswith(".egg-info") for p in parts):
            continue
        out.append(path)
    return out


def long_functions(source: str, name: str, limit: int = MAX_LINES) -> list[str]:
    """``name:line function (n lines)`` for every function of ``source`` over ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                out.append(f"{name}:{node.lineno} {node.name} ({n} lines)")
    return out


def _function(lines: int, name: str = "planted", indent: str = "") -> str:
    """A function of exactly ``lines`` lines."""
    body = [f"{indent}    x{k} = {k}" for k in range(lines - 2)]
    return "\n".join([f"{indent}def {name}():", *body, f"{indent}    return 0"]) + "\n"


def test_no_function_over_the_limit():
    files = source_files()
    assert len(files) > 100 and ROOT / "compiler" / "backend" / "place.py" in files
    assert not any("tests" in f.relative_to(ROOT).parts for f in files)
    bad = [hit for f in files
           for hit in long_functions(f.read_text(), str(f.relative_to(ROOT)))]
    assert bad == [], "split into named helpers: " + "; ".join(bad)


def test_negative_control_a_planted_long_function_is_caught(tmp_path):
    # 81 lines is one too many, 80 is fine; methods and nested functions count too
    assert long_functions(_function(MAX_LINES + 1), "s.py") == \
        [f"s.py:1 planted ({MAX_LINES + 1} lines)"]
    assert long_functions(_function(MAX_LINES), "s.py") == []
    method = "class C:\n" + _function(MAX_LINES + 1, "method", "    ")
    assert long_functions(method, "m.py") == [f"m.py:2 method ({MAX_LINES + 1} lines)"]
    nested = "async def outer():\n" + _function(MAX_LINES + 1, "inner", "    ")
    assert [h.split()[1] for h in long_functions(nested, "n.py")] == ["outer", "inner"]
    # as a file among the walked sources; one under tests/ or a hidden folder is not walked
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n\n\n" + _function(MAX_LINES + 1))
    for skipped in ("tests", ".venv"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "t.py").write_text(_function(MAX_LINES + 5))
    files = source_files(tmp_path)
    assert files == [tmp_path / "pkg" / "mod.py"]
    assert long_functions(files[0].read_text(), "pkg/mod.py") == \
        [f"pkg/mod.py:4 planted ({MAX_LINES + 1} lines)"]
