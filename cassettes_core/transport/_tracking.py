"""What a recorder's transports see besides the provider calls they replay or record.

**Requests that are not provider calls.** A cassette holds the calls of the provider
catalog's endpoints (see ``_routes``); anything else passes through. But a request to a
*provider host* that is not one of those calls (``models.list()``, moderations, legacy
completions, ``messages.count_tokens``) would reach the live provider with the user's key, and
it has no recording to replay. A host is a provider host when the catalog names it (see
``cassettes_core.isolation``), when it is the host and port of an endpoint variable
(``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL`` …), or the host and port of a provider call this
recorder has seen. The rule, ``block_unmatched``:

- ``None`` (the default): in ``replay``, requests to a provider host that are not provider calls
  raise :class:`ConfigError`; everything else (a test's own local services) passes through;
- ``True``: every request that is not a provider call raises, in every mode;
- ``False``: nothing is blocked.

In every mode, such requests to a provider host that do go live are ``went_live`` events of
the recorder's log (blocked ones ``blocked`` events), so the pytest summary can name them.
What this module knows of a recorder's calls lives on the recorder (``recorder.log``); the
only state of its own is the set of provider hosts seen in this session, which outlives the
recorders.
"""

from __future__ import annotations

import threading
from typing import Any

from cassettes_core import catalog
from cassettes_core._errors import ConfigError
from cassettes_core._recorder import Recorder
from cassettes_core.events import CallEvent
from cassettes_core.isolation import canonical_host, catalog_provider, endpoint_hosts, url_host_port
from cassettes_core.modes import Mode
from cassettes_core.transport._guarded import request_hint
from cassettes_core.transport._routes import Route, match_route
from cassettes_core.transport._visible import sent_by_anthropic, visible_type

_DEFAULT_PORTS = {"https": 443, "http": 80}


_HOSTS_LOCK = threading.Lock()
# Every "scheme://host:port" a cassette saw a provider call to, kept after its recorder is gone:
# a later test's plain request there is still one to a provider (the session guard reads it).
_PROVIDER_HOSTS: set[str] = set()


def provider_hosts_seen() -> set[str]:
    """The ``scheme://host:port`` of every provider call a cassette has seen since
    :func:`forget_provider_hosts`."""
    with _HOSTS_LOCK:
        return set(_PROVIDER_HOSTS)


def forget_provider_hosts() -> None:
    """Start a new session's record (an in-process pytest run must not inherit another's)."""
    with _HOSTS_LOCK:
        _PROVIDER_HOSTS.clear()


def route_request(recorder: Recorder, request: Any, block_unmatched: bool | None) -> Route | None:
    """The provider call ``request`` is, or ``None`` to pass it on; raises when it is blocked."""
    url = request.url
    route = match_route(request.method, str(url), request.headers)
    log = recorder.log
    if route is not None:
        key = _host_key(url.scheme, url.host, url.port)
        log.saw_host(key)
        if key not in _PROVIDER_HOSTS:  # a set lookup: no lock on the replay path
            with _HOSTS_LOCK:
                _PROVIDER_HOSTS.add(key)
        return route
    why = _provider_host(recorder, request)
    what = f"{request.method} {url.path}"
    if block_unmatched or (
        block_unmatched is None and why is not None and recorder.mode is Mode.REPLAY
    ):
        # Built in the class it is raised in: the plugin knows the logged one by identity.
        shown = visible_type(ConfigError, anthropic_caller=sent_by_anthropic(None, request.headers))
        error = blocked(request, why, error_type=shown)
        log.add(CallEvent("blocked", what=what, error=error))
        raise error
    if why is not None:
        log.add(CallEvent("went_live", what=what))
    return None


def blocked(
    request: Any, why: str | None, *, error_type: type[ConfigError] = ConfigError
) -> ConfigError:
    """The error for a request that is not a provider call and may not go out."""
    url = request.url
    where = f"{request.method} {url.scheme}://{url.host}{_port(url)}{url.path}"  # no query
    if why is None:  # block_unmatched=True: every request that is not a provider call
        return error_type(
            f"blocked {where}: not a provider call, and block_unmatched is on.\n"
            "TIP: let it through with block_unmatched=False, or serve it from your own "
            "transport."
        )
    return error_type(
        f"blocked {where} in replay: {why}, but this is not a kind of call a cassette "
        f"records ({', '.join(catalog.current().names())}), so there is no recording to "
        "replay and it would reach the live provider with your key.\n"
        "TIP: stub this call in the test, or let it go live explicitly with "
        "block_unmatched=False (@pytest.mark.cassette(block_unmatched=False), "
        "intercept(recorder, block_unmatched=False) or the transport's argument), or run the "
        "test in passthrough mode."
    )


def _provider_host(recorder: Recorder, request: Any) -> str | None:
    """Why ``request`` goes to a provider host, or ``None`` when it does not."""
    url = request.url
    raw = (url.host or "").lower()
    port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
    host = canonical_host(raw)
    provider = catalog_provider(host)
    if provider is not None:
        return f"{host} is a provider host ({provider})"
    key = _host_key(url.scheme, raw, url.port)
    variable = endpoint_hosts().get((host, port))
    if variable is not None:
        return f"{key} is the provider's {variable}"
    seen = {url_host_port(f"http://{known}") for known in recorder.log.hosts()}
    if (host, port) in seen:
        return f"{key} is where this cassette's provider calls go"
    return request_hint(request.method, str(url), request.headers)


def _host_key(scheme: str, host: str | None, port: int | None) -> str:
    return f"{(host or '').lower()}:{port or _DEFAULT_PORTS.get(scheme, 0)}"


def _port(url: Any) -> str:
    return f":{url.port}" if url.port else ""
