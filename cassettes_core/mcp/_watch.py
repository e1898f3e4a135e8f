"""Patch a module of the ``mcp`` SDK whenever it is executed, never import it ourselves.

The core never needs ``mcp``: :func:`watch` patches the modules already imported and leaves a
finder on ``sys.meta_path`` that patches the others right after their own loader runs them,
before ``import`` returns to anyone, so ``from mcp.client.stdio import stdio_client`` at the
top of a test module sees the patched module too. It stays for the life of the process (a
module imported again, as pytester's runs do, is patched again); each patch is idempotent.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, patches: Mapping[str, Patch]) -> None:
        self.patches = dict(patches)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        patch = self.patches.get(fullname)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader, patch)
                return spec
        return None


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, patch: Patch) -> None:
        self.loader = loader
        self.patch = patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader  # nothing else can tell it was wrapped
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


_finder: _Finder | None = None


def watch(patches: Mapping[str, Patch]) -> None:
    """Apply ``patches[name]`` to module ``name`` now if it is imported, and on every import."""
    global _finder  # noqa: PLW0603 - one finder per process, installed once
    for name, patch in patches.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)
    if _finder is None:
        _finder = _Finder(patches)
        sys.meta_path.insert(0, _finder)
