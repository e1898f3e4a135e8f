"""Bringing other tools' cassettes in: vcrpy, pytest-recording and cassetter files into ours.

    from cassettes_core.importers import import_file, plan_import

    kind, interactions, skipped = plan_import(Path("tests/cassettes/test_chat.yaml"))

Provider calls are recognised through the catalog, bodies decoded (gzip, ``!!binary``, kept
parsed under ``parsed_body``), streams split into events, digests computed; what cannot be
converted (calls to other hosts, bodies that are not JSON, undecodable answers) comes back as
:class:`Skipped`, never dropped. Writing goes through the store, behind the secret guard.
"""

from __future__ import annotations

from cassettes_core.importers._convert import convert
from cassettes_core.importers._formats import Body, Exchange, Format, Skipped, exchanges
from cassettes_core.importers._importing import Imported, foreign_files, import_file, plan_import
from cassettes_core.importers._load import read_foreign

__all__ = [
    "Body",
    "Exchange",
    "Format",
    "Imported",
    "Skipped",
    "convert",
    "exchanges",
    "foreign_files",
    "import_file",
    "plan_import",
    "read_foreign",
]
