"""The isolation guard: in replay, nothing reaches a live provider, through any client.

    guard = Guard(Policy(providers=True, allow=("api.example.com",)))
    arm(guard)      # every thread, every client: httpx, httpx2, requests, urllib3, urllib,
    ...             # aiohttp, grpc, raw sockets
    disarm(guard)   # every patched function restored

The pytest plugin arms one for the whole session under ``CI`` or ``--cassette-mode=replay``
(and for ``--cassette-block-network``); see ``_hosts`` for what a provider host is, ``_seams``
for where each client is checked, ``_guard`` for the decision, ``_arming`` for putting a guard
in force.
"""

from __future__ import annotations

from cassettes_core.isolation._arming import arm, disarm
from cassettes_core.isolation._guard import (
    Guard,
    Policy,
    armed,
    check,
    deferred,
    deferred_refusal,
    provider_reason,
)
from cassettes_core.isolation._hosts import (
    LOOPBACK,
    canonical_host,
    catalog_provider,
    endpoint_hosts,
    is_endpoint_variable,
    url_host_port,
)
from cassettes_core.isolation._linger import linger, threads_now
from cassettes_core.isolation._on_import import unwatch, watch
from cassettes_core.isolation._seams import grpc_target, register_seam

__all__ = [
    "LOOPBACK",
    "Guard",
    "Policy",
    "arm",
    "armed",
    "canonical_host",
    "catalog_provider",
    "check",
    "deferred",
    "deferred_refusal",
    "disarm",
    "endpoint_hosts",
    "grpc_target",
    "is_endpoint_variable",
    "linger",
    "provider_reason",
    "register_seam",
    "threads_now",
    "unwatch",
    "url_host_port",
    "watch",
]
