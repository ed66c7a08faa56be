"""Where an application comes from: an apps/ module name or a Program JSON file
(docs/apps.md). The command line, the pipeline driver and the sweep engine all load apps here."""
from __future__ import annotations

import json
from pathlib import Path

from .ir.program import Program


def load_program(app: str, sizes: dict[str, int]) -> Program:
    """``app`` is an application name (``apps.get_app``) or a Program JSON file."""
    if app.endswith(".json"):
        try:
            return Program.from_dict(json.loads(Path(app).read_text()))
        except FileNotFoundError:
            raise ValueError(f"program file {app} not found") from None
        except (json.JSONDecodeError, TypeError) as e:
            raise ValueError(f"program file {app} is not a valid Program JSON: {e}") from None
    from apps import get_app
    module = get_app(app)
    try:
        return module.build(**sizes)
    except TypeError as e:
        raise ValueError(f"{app}: bad size argument: {e}") from None


def parse_sizes(items: list[str]) -> dict[str, int]:
    """``NAME=INTEGER`` items (``--size``) as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise ValueError(f"--size expects NAME=INTEGER, got '{item}'")
        out[key] = int(value)
    return out
