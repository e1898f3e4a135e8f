"""``ClientSession`` gets the cassette dispatcher (``_dispatcher``) when it is made.

One class attribute is patched, ``ClientSession.__init__``, so every session is covered
however the class was imported; the original runs first and unchanged, then its dispatcher
is wrapped. Outside a cassette the wrapper hands every call straight through.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from cassettes_core.mcp._dispatcher import CassetteDispatcher

_MARK = "__cassettes_wrapped__"


def patch_session(module: ModuleType) -> None:
    """Wrap the dispatcher of every ``module.ClientSession`` made from now on (idempotent)."""
    session = getattr(module, "ClientSession", None)
    original = getattr(session, "__init__", None) if session is not None else None
    if original is None or getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807 - it is __init__
        original(self, *args, **kwargs)
        inner = getattr(self, "_dispatcher", None)
        if inner is not None and not isinstance(inner, CassetteDispatcher):
            self._dispatcher = CassetteDispatcher(inner)

    setattr(__init__, _MARK, True)
    session.__init__ = __init__  # type: ignore[misc]
