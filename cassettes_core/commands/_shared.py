"""What several subcommands share: how a path is shown, and the JSON a report prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassettes_core.console import Console


def shown(path: Path) -> str:
    """``path`` relative to the current directory when it is under it, else as given."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:  # not under the current directory
        return str(path)


def print_json(console: Console, report: Any) -> None:
    console.print(json.dumps(report, ensure_ascii=False, indent=2))
