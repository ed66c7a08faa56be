"""Constraints files (ubgen/arch.py): the ``[mem]`` section of the MEM tile's register file,
validated like the other sections, with one-line errors."""
from __future__ import annotations

import tomllib

import pytest

from ubgen.arch import ARCH_DIR, WORD_WIDTH, ArchError, MemParams, load_arch


@pytest.mark.parametrize("path", sorted(ARCH_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_constraints_file_sets_rf_words(path):
    mem = tomllib.loads(path.read_text())["mem"]
    assert mem["rf_words"] == 32
    arch = load_arch(path)
    assert arch.mem == MemParams(32, mem.get("rf_contexts", 1), kind=mem.get("kind", "pub"))
    assert arch.mem.rf_addr_width == 5


def _arch_with(tmp_path, mem: str, top: str = ""):
    """pub.toml with its [mem] section replaced by ``mem`` and ``top`` before every table."""
    text = (ARCH_DIR / "pub.toml").read_text()
    start = text.index("[mem]")
    end = text.index("[area]")
    path = tmp_path / "a.toml"
    path.write_text(top + text[:start] + mem + "\n" + text[end:])
    return path


def test_mem_section_values(tmp_path):
    assert load_arch(_arch_with(tmp_path, "[mem]\nrf_words = 64\n")).mem.rf_addr_width == 6
    assert load_arch(_arch_with(tmp_path, "")).mem == MemParams()     # default when absent


@pytest.mark.parametrize("mem, message", [
    ("[mem]\nrf_words = 24", "mem.rf_words must be a power of two of at least 2, got 24"),
    ("[mem]\nrf_words = 1", "mem.rf_words must be a power of two of at least 2, got 1"),
    ("[mem]\nrf_words = 16384",
     "mem: agg2sram_0.sram has 13 bits, the register file's 16384 words need 14"),
    ("[mem]\nrf_words = 0", "[mem] rf_words must be positive, got 0"),
    ("[mem]\nrf_words = \"32\"", "[mem] rf_words must be a int, got '32'"),
    ("[mem]\nrf_words = 32\nwords = 3", "unknown key 'words' in [mem]"),
    ("", "[mem] must be a table"),
])
def test_bad_mem_section_is_one_line_error(tmp_path, mem, message):
    with pytest.raises(ArchError) as e:
        load_arch(_arch_with(tmp_path, mem, "" if mem else "mem = 3\n"))
    assert str(e.value).endswith(message) and "\n" not in str(e.value)


@pytest.mark.parametrize("edit", [
    lambda t: "[word]\nwidth = 16\n" + t, lambda t: "[word]\nwidth = 8\n" + t,
    lambda t: t.replace("[dpbuf]\n", "[dpbuf]\nword_width = 16\n")])
def test_word_width_is_not_an_arch_option(tmp_path, edit):
    """The data word is fixed (ubgen.arch.WORD_WIDTH): an arch file that sets it is refused in
    one line, even at the fixed value, rather than silently ignored."""
    path = tmp_path / "a.toml"
    path.write_text(edit((ARCH_DIR / "pub.toml").read_text()))
    with pytest.raises(ArchError) as e:
        load_arch(path)
    assert "word width is not configurable" in str(e.value) and "\n" not in str(e.value)


def test_word_width_is_one_constant():
    arch = load_arch("cgra_4x4")
    assert arch.pub.word_width == arch.dpbuf.word_width == WORD_WIDTH == 16
