"""The Verilog cache (``ubgen.vcache``, docs/top.md "The Verilog cache"): a hit does not run the
generator; an edited generator (any byte of its source), another arch or another tool version
is a new key and is generated again; ``ubgen verilog`` and the top's ``write_verilog`` read
the same entries."""
from __future__ import annotations

import shutil
from dataclasses import replace

from ubgen import vcache
from ubgen.arch import load_arch

ARCH = load_arch("cgra_4x4")


def copy_of_generator(tmp_path):
    """A copy of the generator's source (the ``.py`` files of ubgen) to edit."""
    src = tmp_path / "ubgen"
    shutil.copytree(vcache.PACKAGE_DIR, src, ignore=shutil.ignore_patterns(
        "__pycache__", "constraints"))
    return src


def test_hit_does_not_generate_and_edited_generator_rebuilds(tmp_path):
    src = copy_of_generator(tmp_path)
    calls = []

    def make():
        calls.append(1)
        return {"top.v": f"module top; // {len(calls)}\nendmodule\n"}

    cache = tmp_path / "cache"
    first = vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src)
    again = vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src)
    assert not first.hit and again.hit and again.seconds == 0 and len(calls) == 1
    assert again.dir == first.dir and again.texts() == {"top.v": "module top; // 1\nendmodule\n"}
    # an edit anywhere in the generator's source: a new key, generated again
    (src / "pe" / "ops.py").write_text((src / "pe" / "ops.py").read_text() + "\n# edited\n")
    edited = vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src)
    assert not edited.hit and edited.key != first.key and len(calls) == 2
    assert edited.texts() == {"top.v": "module top; // 2\nendmodule\n"}
    # a new file counts too
    before = vcache.source_digest(src)
    (src / "extra.py").write_text("X = 1\n")
    assert vcache.source_digest(src) != before
    assert not vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src).hit


def test_key_covers_arch_what_and_tools(monkeypatch):
    key = vcache.cache_key("cgra_top", ARCH)[0]
    other = replace(ARCH, glb=replace(ARCH.glb, bank_words=2048))
    assert vcache.cache_key("cgra_top", other)[0] != key
    assert vcache.cache_key("fpga-top", ARCH)[0] != key
    assert vcache.cache_key("cgra_top", ARCH, extra={"flag": 1})[0] != key
    monkeypatch.setattr(vcache, "toolchain", lambda: {"amaranth": "0.0-other"})
    assert vcache.cache_key("cgra_top", ARCH)[0] != key
    monkeypatch.undo()
    assert vcache.cache_key("cgra_top", ARCH)[0] == key


def test_negative_control_a_cache_that_ignored_the_source_would_be_caught(tmp_path):
    """The check above has teeth: with the digest pinned (as a cache keyed only on the arch
    would be), the edited generator is wrongly served from the cache."""
    src = copy_of_generator(tmp_path)
    calls = []
    make = lambda: calls.append(1) or {"top.v": "x"}
    pinned = vcache.source_digest(src)
    cache = tmp_path / "cache"
    vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src)
    (src / "arch.py").write_text((src / "arch.py").read_text() + "\n# edited\n")
    real = vcache.source_digest
    try:
        vcache.source_digest = lambda package_dir=None: pinned
        assert vcache.cached_texts("top", ARCH, make, cache_dir=cache, package_dir=src).hit
    finally:
        vcache.source_digest = real
    assert len(calls) == 1


def test_top_write_verilog_reads_the_cache(tmp_path, monkeypatch):
    """``ubgen.top.write_verilog`` (``make verilog``, the simulator) takes the files from the
    cache: with the entry present, the generator is not called."""
    import ubgen.top as top
    monkeypatch.setattr(vcache, "CACHE_DIR", tmp_path / "cache")
    calls = []
    monkeypatch.setattr(top, "verilog_texts",
                        lambda arch: calls.append(arch.name) or {"cgra_top_cgra_4x4.v": "// t\n",
                                                                 "cgra_top_cgra_4x4.json": "{}"})
    top.write_verilog(ARCH, tmp_path / "a")
    top.write_verilog(ARCH, tmp_path / "b")
    assert calls == ["cgra_4x4"]
    assert (tmp_path / "b" / "cgra_top_cgra_4x4.v").read_text() == "// t\n"


def test_fpga_flow_shares_the_cache(tmp_path, monkeypatch):
    """The FPGA flow's Verilog (``ubgen fpga``) comes from the same cache: the second
    elaboration of a design reads the entry (the converter is not called)."""
    from amaranth.back import verilog
    from ubgen.fpga import flow
    monkeypatch.setattr(vcache, "CACHE_DIR", tmp_path / "cache")
    _tgt, spec, arch, _dev, _router = flow.resolve("ice40", "pe")
    arch = load_arch(arch)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    flow._elaborate(spec, arch, "pe", tmp_path / "a")

    def refuse(*a, **k):
        raise AssertionError("elaborated again despite the cache")
    monkeypatch.setattr(verilog, "convert", refuse)
    flow._elaborate(spec, arch, "pe", tmp_path / "b")
    assert (tmp_path / "b" / "top.v").read_text() == (tmp_path / "a" / "top.v").read_text()
    assert [p.name.split("-")[:2] for p in (tmp_path / "cache").iterdir()] == [["fpga", "pe"]]
