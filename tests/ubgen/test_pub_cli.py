"""``ubgen`` CLI: verilog/regmap/fpga subcommands, one-line errors, the committed regmap doc."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ubgen import cli
from ubgen.arch import load_arch

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "ubgen", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_verilog_writes_rtl_and_regmaps(tmp_path):
    out = tmp_path / "rtl"
    assert cli.main(["verilog", "--arch", "pub_small", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == \
        ["dpbuf.v", "dpbuf_regmap.json", "pub.v", "pub_regmap.json"]
    assert "module pub(" in (out / "pub.v").read_text()
    assert "module dpbuf(" in (out / "dpbuf.v").read_text()
    regmap = json.loads((out / "pub_regmap.json").read_text())
    assert regmap["block"] == "pub" and regmap["windows"][0]["size"] == 32


def test_verilog_of_an_array_arch_writes_the_accelerator(tmp_path, capsys):
    out = tmp_path / "rtl"
    assert cli.main(["verilog", "--arch", "cgra_4x4", "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"cgra_top_cgra_4x4.v", "cgra_top_cgra_4x4.json", "cgra_array.v", "cgra_pe_tile.v",
            "cgra_mem_tile.v", "cgra_io_tile.v", "cgra_4x4_graph.json", "cgra_4x4_regmap.json",
            "pub.v", "dpbuf.v"} <= names
    assert not [n for n in names if n.endswith(".tmp")]
    assert "module cgra_top_cgra_4x4(" in (out / "cgra_top_cgra_4x4.v").read_text()
    # the exports are the ones `ubgen graph` / `ubgen array-regmap` print
    from ubgen.array.graph import full_regmap
    regs = json.loads((out / "cgra_4x4_regmap.json").read_text())
    assert regs == full_regmap(load_arch("cgra_4x4"))
    graph = json.loads((out / "cgra_4x4_graph.json").read_text())
    assert graph["nodes"] and graph["edges"]
    listed = capsys.readouterr().out
    assert all(n in listed for n in ("cgra_top_cgra_4x4.v", "cgra_array.v", "cgra_4x4_graph.json"))


def test_missing_arch_is_one_line_exit_2_and_no_output(tmp_path):
    out = tmp_path / "rtl"
    res = run("verilog", "--arch", "no_such_arch", "--out", str(out))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "unknown arch 'no_such_arch'; shipped archs: " in res.stderr
    assert "Traceback" not in res.stderr and not out.exists()


def test_regmap_json_and_block_choice():
    res = run("regmap", "--arch", "pub", "--block", "dpbuf")
    assert res.returncode == 0
    data = json.loads(res.stdout)
    assert data["block"] == "dpbuf" and data["registers"][0]["name"] == "chain_en"
    res = run("regmap", "--block", "nope")
    assert res.returncode == 2 and "invalid choice" in res.stderr


@pytest.mark.parametrize("sub", [[], ["verilog"], ["regmap"], ["fpga"]])
def test_help_everywhere(sub):
    res = run(*sub, "--help")
    assert res.returncode == 0 and "usage: ubgen" in res.stdout


def test_committed_regmap_doc_is_generated():
    """docs/regmap.md must equal `python -m ubgen regmap --arch pub --markdown`."""
    assert (ROOT / "docs" / "regmap.md").read_text() == cli.regmap_markdown(load_arch("pub"))


def test_fpga_bad_target_is_one_line_error(capsys):
    assert cli.main(["fpga", "--target", "virtex", "--design", "pub"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "virtex" in err


def test_fpga_calls_run_fpga_flow(monkeypatch):
    import ubgen.fpga.cli
    calls = []
    monkeypatch.setattr(ubgen.fpga.cli, "run_fpga_flow", lambda target, design, arch, out, **kw:
                        calls.append((target, design, arch, out)) or {"luts": 1})
    assert cli.main(["fpga", "--target", "ecp5", "--design", "dpbuf", "--arch", "pub"]) == 0
    assert calls == [("ecp5", "dpbuf", "pub", None)]
