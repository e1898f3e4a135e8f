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

from typing import Any

from cassettes_core import catalog
from cassettes_core._errors import ConfigError
from cassettes_core._recorder import Recorder
from cassettes_core.events import CallEvent
from cassettes_core.isolation import (
    Route,
    canonical_host,
    match_route,
    provider_reason,
    remember_host,
    request_hint,
    url_host_port,
)
from cassettes_core.modes import Mode
from cassettes_core.transport._visible import sent_by_anthropic, visible_type

_DEFAULT_PORTS = {"https": 443, "http": 80}


def route_request(recorder: Recorder, request: Any, block_unmatched: bool | None) -> Route | None:
    """The provider call ``request`` is, or ``None`` to pass it on; raises when it is blocked."""
    url = request.url
    route = match_route(request.method, str(url), request.headers)
    log = recorder.log
    if route is not None:
        port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
        log.saw_host(f"{(url.host or '').lower()}:{port}")
        remember_host(url.host, port)
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
    """Why ``request`` goes to a provider host (the one egress decision, with this cassette's
    own hosts), or ``None`` when it does not."""
    url = request.url
    seen = {url_host_port(f"http://{known}") for known in recorder.log.hosts()}
    return provider_reason(
        canonical_host(url.host or ""),
        url.port or _DEFAULT_PORTS.get(url.scheme, 0),
        seen={key for key in seen if key is not None},
        shown=(url.host or "").lower(),
        hint=request_hint(request.method, str(url), request.headers),
    )


def _port(url: Any) -> str:
    return f":{url.port}" if url.port else ""
