"""A non-editable install works outside the checkout (README "Run it", docs/design.md §1).

The project is installed with ``pip install --no-deps --no-build-isolation`` (offline: the
build backend, setuptools, comes from the running environment) into a fresh virtual environment,
and the installed ``ubc`` and ``ubgen`` run from a temporary directory: they must find the apps
(``apps`` package) and the constraints files (``ubgen/constraints/``, package data) in the new
environment's site-packages, never in the checkout.

How the fresh environment sees the dependencies: ``python -m venv --system-site-packages`` does
not help, since it exposes the *base* interpreter's site-packages, not those of the ``.venv``
the tests run in (amaranth and islpy live only there). So the environment is created without
pip and gets a ``.pth`` file naming the running environment's site-packages directories. A
``.pth`` path line only appends the directory to ``sys.path``; the ``.pth`` files inside it are
not processed, so the checkout's editable install (a meta-path finder installed by a ``.pth``
of ``.venv``) stays invisible, and the new site-packages comes first on ``sys.path``. pip itself
is the running environment's, run by the new interpreter (so it installs into the new
environment; ``--ignore-installed`` keeps it from looking at the editable ``ubgen``).

The checkout is copied to a temporary directory first (without ``.venv``, ``build``, ``.git``),
because setuptools builds in the source tree (``build/``, ``*.egg-info``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(".venv", "build", ".git", "__pycache__", "*.egg-info",
                                ".pytest_cache", ".hypothesis", "rtl")

pytestmark = pytest.mark.install


def _run(cmd: list, cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, f"{cmd} exited {res.returncode}:\n{res.stdout}\n{res.stderr}"
    return res


def make_env(where: Path) -> tuple[Path, Path]:
    """A virtual environment at ``where`` that sees the running environment's packages after its
    own; returns its python and its site-packages."""
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "_running_env_deps.pth").write_text("".join(f"{d}\n" for d in deps))
    return python, site


def module_file(python: Path, module: str, cwd: Path, env: dict) -> Path:
    """The file ``module`` is imported from by ``python`` started in ``cwd``."""
    out = _run([python, "-c", f"import {module}; print({module}.__file__)"], cwd, env)
    return Path(out.stdout.strip()).resolve()


def check_installed(path: Path, site: Path) -> None:
    """``path`` must lie in the new environment's site-packages and not in the checkout."""
    if not path.is_relative_to(site.resolve()) or path.is_relative_to(ROOT):
        raise AssertionError(f"{path} was not imported from the installed package in {site}")


def _clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "XDG_CACHE_HOME")
           and not k.startswith("PIP_")}
    return dict(env, HOME=str(home), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                PIP_NO_INPUT="1")


def test_check_installed_refuses_the_checkout(tmp_path):
    """Negative control of the check, on paths: the checkout's ``compiler`` is refused, as is a
    file outside the environment; a file inside its site-packages passes."""
    site = tmp_path / "lib" / "site-packages"
    (site / "compiler").mkdir(parents=True)
    with pytest.raises(AssertionError, match="not imported from the installed package"):
        check_installed(ROOT / "compiler" / "__init__.py", site)
    with pytest.raises(AssertionError):
        check_installed(tmp_path / "compiler" / "__init__.py", site)
    check_installed(site / "compiler" / "__init__.py", site)


def test_installed_package_runs_outside_the_checkout(tmp_path, capsys):
    src, work = tmp_path / "src", tmp_path / "work"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    work.mkdir()
    env = _clean_env(tmp_path)
    python, site = make_env(tmp_path / "venv")
    deps = [module_file(python, m, work, env) for m in ("amaranth", "islpy", "setuptools")]
    assert all(not p.is_relative_to(site.resolve()) for p in deps)    # the running .venv's

    _run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
          "--ignore-installed", "--quiet", src], work, env)
    bin_ = python.parent
    assert (bin_ / "ubc").is_file() and (bin_ / "ubgen").is_file()
    constraints = site / "ubgen" / "constraints"
    assert sorted(p.name for p in (constraints / "arch").glob("*.toml")) == sorted(
        p.name for p in (ROOT / "ubgen" / "constraints" / "arch").glob("*.toml"))
    assert sorted(p.name for p in (constraints / "fpga").iterdir()) == sorted(
        p.name for p in (ROOT / "ubgen" / "constraints" / "fpga").iterdir())

    # the packages resolve to the new site-packages, from a directory outside the checkout...
    for module in ("compiler", "apps", "ubgen", "sim"):
        check_installed(module_file(python, module, work, env), site)
    # ...and the check sees it when they do not: started in the checkout, the interpreter
    # imports the checkout's compiler (the script directory is first on sys.path)
    with pytest.raises(AssertionError, match="not imported from the installed package"):
        check_installed(module_file(python, "compiler", ROOT, env), site)

    # ubc schedule: an app by name, the arch file from package data; the same figures as here
    res = _run([bin_ / "ubc", "schedule", "gaussian", "--json"], work, env)
    installed = json.loads(res.stdout)
    from compiler.cli import main as ubc_main
    assert ubc_main(["schedule", "gaussian", "--json"]) == 0
    here = json.loads(capsys.readouterr().out)
    for key in ("compile_seconds",):
        installed.pop(key), here.pop(key)
    assert installed == here
    assert installed["cycles_optimized"] > 64 * 64      # streams the 64x64 input at least once

    res = _run([bin_ / "ubc", "map", "gaussian"], work, env)
    assert ubc_main(["map", "gaussian"]) == 0
    assert res.stdout == capsys.readouterr().out and "backend pub" in res.stdout

    res = _run([bin_ / "ubgen", "regmap", "--block", "pub"], work, env)
    regmap = json.loads(res.stdout)
    from ubgen.cli import main as ubgen_main
    assert ubgen_main(["regmap", "--block", "pub"]) == 0
    assert regmap == json.loads(capsys.readouterr().out) and regmap["registers"]

    out = tmp_path / "rtl"
    res = _run([bin_ / "ubgen", "verilog", "--arch", "cgra_4x4", "--out", out], work, env)
    top = out / "cgra_top_cgra_4x4.v"
    assert top.is_file() and "module cgra_top_cgra_4x4(" in top.read_text()
    assert json.loads((out / "cgra_4x4_regmap.json").read_text())
    assert sorted(p.name for p in work.iterdir()) == []      # nothing written into the cwd
    assert list((tmp_path / ".cache" / "ubgen" / "verilog").iterdir())   # the Verilog cache
