"""The provider catalog: every fact about every provider endpoint, in one table."""

from __future__ import annotations

from cassettes_core._request import DEFAULT_SEMANTIC_FIELDS, GENERIC_SEMANTIC_FIELDS

__all__ = ["DEFAULT_SEMANTIC_FIELDS", "GENERIC_SEMANTIC_FIELDS"]
