"""Which MCP tools may run again: from their annotations, unless the user says otherwise.

``readOnlyHint: true`` (and not destructive) → ``safe``; ``destructiveHint: true``, no
annotations, or anything unclear → ``never``. :func:`replay_policies` overrides by tool name
(``"delete_file"``) or by server and tool (``"files/delete_file"``, the server's name as its
``initialize`` answer gives it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from cassettes_core.tools import ReplayPolicy, parse_policy

_lock = threading.Lock()
_overrides: tuple[dict[str, ReplayPolicy], ...] = ()


@contextmanager
def replay_policies(policies: Mapping[str, str]) -> Iterator[None]:
    """Override MCP tools' replay policies while the block runs (innermost wins)::

    with replay_policies({"search": "never", "files/read_file": "safe"}):
        ...
    """
    global _overrides  # noqa: PLW0603 - process-wide, like the interception it serves
    checked = {
        str(name): parse_policy(value, where=f"replay_policies({name!r})")
        for name, value in policies.items()
    }
    with _lock:
        _overrides = (*_overrides, checked)
    try:
        yield
    finally:
        with _lock:
            _overrides = tuple(o for o in _overrides if o is not checked)


def policy_of(tool: str, server: str | None, annotations: Mapping[str, Any] | None) -> ReplayPolicy:
    """The replay policy of MCP tool ``tool`` of ``server``."""
    for table in reversed(_overrides):
        if server is not None and f"{server}/{tool}" in table:
            return table[f"{server}/{tool}"]
        if tool in table:
            return table[tool]
    return from_annotations(annotations)


def from_annotations(annotations: Mapping[str, Any] | None) -> ReplayPolicy:
    if not isinstance(annotations, Mapping):
        return "never"
    if annotations.get("destructiveHint") is True:
        return "never"
    if annotations.get("readOnlyHint") is True:
        return "safe"
    return "never"
