"""Patch a client library when it is imported, not before: a guarded session that never uses
aiohttp or grpc never pays for importing them.

:class:`PatchOnImport` sits first on ``sys.meta_path`` while the guard is armed. For the few
module names it watches, it lets the other finders find the module, runs the module's own loader,
and then applies the patch, before ``import`` returns to anyone. The module's spec and
``__loader__`` are handed back their own loader afterwards, so nothing else can tell.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


class PatchOnImport(importlib.abc.MetaPathFinder):
    """Applies ``patches[name]`` to module ``name`` right after it is first executed."""

    def __init__(self, patches: dict[str, Patch]) -> None:
        self.patches = dict(patches)
        self._lock = threading.Lock()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        with self._lock:
            patch = self.patches.pop(fullname, None)  # once: a re-import is not patched twice
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
            module.__spec__.loader = self.loader
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


def watch(patches: dict[str, Patch]) -> PatchOnImport | None:
    """Patch what is imported already, watch for the rest; the finder to :func:`unwatch`."""
    pending: dict[str, Patch] = {}
    for name, patch in patches.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)
        else:
            pending[name] = patch
    if not pending:
        return None
    finder = PatchOnImport(pending)
    sys.meta_path.insert(0, finder)
    return finder


def unwatch(finder: PatchOnImport | None) -> None:
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
