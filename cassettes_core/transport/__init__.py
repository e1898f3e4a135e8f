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

from cassettes_core.transport._guarded import request_hint
from cassettes_core.transport._headers import kept_headers
from cassettes_core.transport._intercept import (
    Interception,
    hold_clients,
    intercept,
    live_allowed,
    release_clients,
)
from cassettes_core.transport._routes import Route, match_route
from cassettes_core.transport._settle import AbandonedStreamWarning, settle
from cassettes_core.transport._sse import SSEParser
from cassettes_core.transport._tracking import forget_provider_hosts, provider_hosts_seen

__all__ = [
    "AbandonedStreamWarning",
    "Interception",
    "Route",
    "SSEParser",
    "forget_provider_hosts",
    "hold_clients",
    "intercept",
    "kept_headers",
    "live_allowed",
    "match_route",
    "provider_hosts_seen",
    "release_clients",
    "request_hint",
    "settle",
]
