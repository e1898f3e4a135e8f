"""The httpx/httpx2 adapter: existing SDK code gets cassettes with a transport or a switch.

Two ways in, both over one implementation for ``httpx2`` (what the official SDKs run on) and
``httpx`` (legacy code); neither library is imported until it is used:

- hand a client a transport: ``cassettes_core.transport.httpx2.CassetteTransport`` /
  ``AsyncCassetteTransport`` (and the same names in ``cassettes_core.transport.httpx``);
- or switch on :func:`intercept`, which routes every client's requests through the cassette,
  for frameworks that build their own clients.

Provider calls (OpenAI chat completions, responses, embeddings; Anthropic messages) are
recognised by method and path (see ``_routes``); everything else passes through untouched,
except, in replay, requests to a provider host that are not provider calls (see
``_tracking``). Live streams left open are settled, not left to the garbage collector (see
``_settle``).
"""

from __future__ import annotations

from cassettes_core.transport._intercept import Interception, intercept
from cassettes_core.transport._routes import Route, match_route
from cassettes_core.transport._settle import AbandonedStreamWarning, settle

__all__ = ["AbandonedStreamWarning", "Interception", "Route", "intercept", "match_route", "settle"]
