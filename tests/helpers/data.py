"""Test tables kept as data in tests/data/ (long input tables and expected results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parents[1] / "data"


def table(name: str) -> Any:
    """The YAML document ``tests/data/<name>.yaml``."""
    return yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
