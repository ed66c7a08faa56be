"""The on-disk cache of sweep points, keyed by a hash of everything a point's result depends on.

The key of a point is the SHA-256 of a JSON document with

* ``tool``: the installed ``ubgen`` distribution's version;
* ``code``: :func:`code_digest`, a digest of every ``.py`` file under ``compiler/``, ``apps/``
  and ``ubgen/`` -- so any change of the compiler, an application or the generator's exported
  parameters invalidates every cached point (a stale figure is worse than a recompile);
* ``app``: the application's source (``apps/<app>.py``, or the Program JSON file's bytes);
* ``arch``: the bytes of the constraints file the ``arch`` parameter names;
* ``params`` (sorted) and ``stages``.

Entries are JSON files ``<dir>/<key[:2]>/<key>.json`` (default ``build/sweep/cache/`` of the
checkout, or of the current directory for an installed package: ``ubgen.paths.build_dir``),
written atomically by the process that runs the sweep (never by a worker), so a cluster's
workers need no shared file system. ``rm -rf build/sweep/cache`` clears it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ubgen.paths import build_dir

ROOT = Path(__file__).resolve().parents[2]      # the directory holding compiler/, apps/, ubgen/
DEFAULT_DIR = build_dir("sweep", "cache")
CODE_PACKAGES = ("compiler", "apps", "ubgen")
KEY_VERSION = 1


@lru_cache(maxsize=1)
def tool_version() -> str:
    try:
        return metadata.version("ubgen")
    except metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=None)
def package_digest(*packages: str) -> str:
    """SHA-256 over the path and bytes of every ``.py`` file of ``packages``."""
    h = hashlib.sha256()
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            h.update(str(path.relative_to(ROOT)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def code_digest() -> str:
    """SHA-256 over the path and bytes of every ``.py`` file of :data:`CODE_PACKAGES`."""
    return package_digest(*CODE_PACKAGES)


# Taken when the sweep code is imported, i.e. close to when the compiler was loaded: a worker
# compares the code it imported, not whatever the checkout holds when its first point starts.
code_digest()


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return f"missing:{path}"


def app_digest(app: str) -> str:
    """Digest of the application's source: ``apps/<app>.py`` or the file ``app`` names."""
    if app.endswith((".json", ".py")):
        return _file_digest(Path(app))
    return _file_digest(ROOT / "apps" / f"{app}.py")


def point_key(app: str, params: dict, stages: tuple[str, ...] | list[str]) -> str:
    from ubgen.arch import arch_file
    from ..pipeline import shipped_arrays
    archs = [params["arch"]] if "arch" in params else shipped_arrays()   # the default rule
    doc = {"v": KEY_VERSION, "tool": tool_version(), "code": code_digest(),
           "app": [app, app_digest(app)],
           "arch": [_file_digest(arch_file(str(a))) for a in archs],
           "params": sorted((k, repr(v)) for k, v in params.items()), "stages": list(stages)}
    if "sim" in stages:              # the simulator's code decides that stage's figures
        doc["sim"] = package_digest("sim")
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class Cache:
    """Point results on disk; ``Cache(None)`` caches nothing."""

    def __init__(self, directory: str | Path | None = DEFAULT_DIR):
        self.dir = Path(directory) if directory is not None else None
        self.hits = 0
        self.stores = 0

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        if self.dir is None:
            return None
        try:
            result = json.loads(self._path(key).read_text())
        except (OSError, json.JSONDecodeError):
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: dict) -> None:
        if self.dir is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(result, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.stores += 1
