"""``cassette-refresh check --catalog MODULE``: the project's own endpoints, loaded first.

Each ``MODULE`` is imported once, before any cassette is read: the
:func:`cassettes_core.catalog.register` calls it makes add its endpoints to the catalog in force,
so their calls are re-issued and their drift vocabulary read like the built-in endpoints'. A
dotted name is imported as ``python -m`` would (the current folder first on the path); a name
ending in ``.py`` is imported from that file. Every failure is a :class:`ConfigError` naming the
module and what to do.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cassettes_core import CassetteError, ConfigError

__all__ = ["load_catalogs"]


def load_catalogs(modules: Sequence[str]) -> None:
    """Import each ``--catalog`` module (its ``catalog.register`` calls add its endpoints)."""
    for name in modules:
        try:
            if name.endswith(".py"):
                _import_file(name)
            else:
                if os.getcwd() not in sys.path:
                    sys.path.insert(0, os.getcwd())  # as `python -m` would: your own modules
                importlib.import_module(name)
        except CassetteError:
            raise  # a ConfigError of catalog.register: it says what to do
        except ModuleNotFoundError as exc:
            if exc.name is None or not (name == exc.name or name.startswith(f"{exc.name}.")):
                raise _catalog_error(name, exc) from exc
            raise ConfigError(
                f"--catalog {name}: no module of that name can be imported from {os.getcwd()}\n"
                "TIP: pass the dotted name of the module that calls catalog.register, run from "
                "the folder it is importable from (or pass its file: --catalog path/to/file.py)."
            ) from None
        except Exception as exc:
            raise _catalog_error(name, exc) from exc


def _import_file(path: str) -> None:
    if not Path(path).is_file():
        raise ConfigError(
            f"--catalog {path}: no such file\n"
            "TIP: pass the .py file that calls catalog.register, or its dotted module name."
        )
    name = "_cassette_refresh_catalog_" + Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"--catalog {path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def _catalog_error(name: str, exc: BaseException) -> ConfigError:
    return ConfigError(
        f"--catalog {name}: importing it failed: {type(exc).__name__}: {exc}\n"
        "TIP: fix the module (run `python -c 'import MODULE'` to see the traceback), or leave "
        "--catalog out if the cassettes use only the built-in endpoints."
    )
