"""The isolation guard: in replay, nothing reaches a live provider, through any client.

    guard = Guard(Policy(providers=True, allow=("api.example.com",)))
    arm(guard)      # every thread, every client: httpx, httpx2, requests, urllib3, urllib,
    ...             # aiohttp, grpc, raw sockets
    disarm(guard)   # every patched function restored

The pytest plugin arms one for the whole session under ``CI`` or ``--cassette-mode=replay``
(and for ``--cassette-block-network``). ``_egress`` holds it all: the decision (what a
provider host is, which requests are provider calls, whether one may leave), the guard, its
client seams, the seam registry and the patch-on-import hook.
"""

from __future__ import annotations

from cassettes_core.isolation._egress import (
    LOOPBACK,
    Guard,
    PatchOnImport,
    Policy,
    Route,
    arm,
    armed,
    canonical_host,
    cassette_live,
    catalog_provider,
    check,
    deferred,
    deferred_refusal,
    disarm,
    endpoint_hosts,
    forget_recorded_hosts,
    grpc_target,
    half_imported,
    handled_outside,
    handling,
    is_endpoint_variable,
    linger,
    match_route,
    provider_reason,
    recorded_hosts,
    register_seam,
    remember_host,
    request_hint,
    stored_endpoint,
    threads_now,
    unwatch,
    url_host_port,
    watch,
)

__all__ = [
    "LOOPBACK",
    "Guard",
    "PatchOnImport",
    "Policy",
    "Route",
    "arm",
    "armed",
    "canonical_host",
    "cassette_live",
    "catalog_provider",
    "check",
    "deferred",
    "deferred_refusal",
    "disarm",
    "endpoint_hosts",
    "forget_recorded_hosts",
    "grpc_target",
    "half_imported",
    "handled_outside",
    "handling",
    "is_endpoint_variable",
    "linger",
    "match_route",
    "provider_reason",
    "recorded_hosts",
    "register_seam",
    "remember_host",
    "request_hint",
    "stored_endpoint",
    "threads_now",
    "unwatch",
    "url_host_port",
    "watch",
]
