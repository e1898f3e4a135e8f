"""Where a test's cassette lives: pure functions from a test's node id to a file path.

Default: ``<cassette dir>/<test module path, relative to rootdir, without .py>/<test>.yaml``,
where ``<test>`` is the function name, ``Class.func`` inside a class, with the parametrisation
id kept in brackets. Names are made filesystem-safe (letters, digits and ``_ . , + = @ [ ] -``);
a name that had to be changed, or is longer than :data:`MAX_NAME`, gets a short hash of the
original so that two different tests never share a file by accident.

A marker name is the caller's choice and is not rewritten:

- ``cassette("shared")`` is module-relative: ``<dir>/<module path>/shared.yaml``;
- a name with a ``/`` or ending in ``.yaml``/``.yml`` is relative to the cassette dir:
  ``cassette("common/hello")`` is ``<dir>/common/hello.yaml``;
- an absolute path is used as it is.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

MAX_NAME = 100
HASH_LEN = 8
SUFFIX = ".yaml"
_SUFFIXES = (".yaml", ".yml")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.,+=@\[\]-]+")


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LEN]


def safe_name(name: str) -> str:
    """``name`` as a file-name stem any filesystem accepts, unique to ``name``."""
    cleaned = _UNSAFE.sub("_", name).lstrip(".") or "_"
    changed = cleaned != name
    if not changed and len(cleaned) <= MAX_NAME:
        return cleaned
    keep = MAX_NAME - HASH_LEN - 1
    return f"{cleaned[:keep]}-{short_hash(name)}"


def node_name(nodeid: str) -> str:
    """The test part of a node id: ``test_f``, ``Class.test_f``, ``test_f[id]``."""
    base, bracket, params = nodeid.partition("[")  # an id may itself contain "::"
    parts = base.split("::")[1:]
    return (".".join(parts) if parts else base) + bracket + params


def module_dir(test_file: Path, rootdir: Path) -> PurePosixPath:
    """The test module's path relative to ``rootdir``, without its ``.py`` suffix."""
    try:
        relative = test_file.resolve().relative_to(rootdir.resolve())
    except ValueError:  # a test file outside the rootdir: keep only its own name
        relative = Path(test_file.name)
    stem = relative.with_suffix("") if relative.suffix == ".py" else relative
    return PurePosixPath(*(safe_name(part) for part in stem.parts))


def marker_name(marks: Iterable[Any]) -> Any:
    """The name given by the closest ``cassette`` marker that gives one (unchecked), or None."""
    for mark in marks:
        name = mark.args[0] if mark.args else mark.kwargs.get("name")
        if name is not None:
            return name
    return None


def cassette_path(
    *,
    cassette_dir: Path,
    rootdir: Path,
    test_file: Path,
    nodeid: str,
    name: str | None = None,
) -> Path:
    """The cassette file of one test (see the module docstring for the rules)."""
    if name is not None:
        chosen = Path(name)
        if chosen.is_absolute():
            return chosen
        if "/" in name or name.endswith(_SUFFIXES):
            return cassette_dir / (name if name.endswith(_SUFFIXES) else name + SUFFIX)
        return cassette_dir / module_dir(test_file, rootdir) / (name + SUFFIX)
    stem = safe_name(node_name(nodeid))
    return cassette_dir / module_dir(test_file, rootdir) / (stem + SUFFIX)
