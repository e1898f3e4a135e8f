"""What several subcommands share: how a path is shown, and the JSON a report prints."""

from __future__ import annotations

import json
import re
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


# What JSON leaves raw with ensure_ascii off and a terminal would act on: C1 controls, DEL,
# bidi and zero-width characters, line separators. They only occur inside strings, where the
# \uXXXX escape means the same character to any JSON reader.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def print_json(console: Console, report: Any) -> None:
    text = json.dumps(report, ensure_ascii=False, indent=2)
    console.print(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
