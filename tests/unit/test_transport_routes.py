"""Which requests are provider calls, and what the cassette keeps of their URL."""

from __future__ import annotations

import pytest

from cassettes_core.transport import Route, match_route
from tests.helpers.data import table


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param(url, Route(provider, endpoint), id=name)
        for name, (url, provider, endpoint) in table("routes").items()
    ],
)
def test_provider_calls_are_recognised(url: str, expected: Route) -> None:
    """POSTs to the four endpoints match under any base URL; secret query values are dropped."""
    assert match_route("POST", url) == expected


@pytest.mark.parametrize(
    ("method", "url"),
    [
        pytest.param("GET", "https://api.openai.com/v1/chat/completions", id="get"),
        pytest.param("POST", "https://api.anthropic.com/v1/messages/count_tokens", id="count"),
        pytest.param("POST", "https://api.anthropic.com/v1/messages/batches", id="batches"),
        pytest.param("POST", "https://api.openai.com/v1/responses/resp_1/cancel", id="cancel"),
        pytest.param("POST", "https://api.openai.com/v1/files", id="files"),
    ],
)
def test_other_requests_are_not_provider_calls(method: str, url: str) -> None:
    """Sub-resources and other methods pass through as non-provider requests."""
    assert match_route(method, url) is None


@pytest.mark.parametrize(
    "query", ["key=abc", "sig=abc", "access_token=abc", "api_key=abc", "X-Amz-Signature=abc"]
)
def test_secret_looking_query_parameters_are_never_stored(query: str) -> None:
    """Query parameters named like credentials leave no trace in the stored endpoint."""
    route = match_route("POST", f"https://h/v1/chat/completions?{query}&api-version=1")
    assert route is not None
    assert route.endpoint == "/v1/chat/completions?api-version=1"


# The route of a method + URL + user agent is cached (issue 14): these show what must still be
# read anew or thrown away — the catalog in force and the endpoint variables.


def test_the_same_url_is_rerouted_when_the_catalog_changes() -> None:
    """A cached answer never outlives the catalog it was computed from."""
    import dataclasses

    from cassettes_core import catalog
    from cassettes_core.catalog import suffix

    url = "https://api.acme-speed.test/v7/acme/complete?key=fake-not-a-key&v=2"
    assert match_route("POST", url) is None  # asked (and cached) before the entry exists
    chat = catalog.DEFAULT_CATALOG.get("openai.chat")
    assert chat is not None
    acme = dataclasses.replace(
        chat,
        name="acme.complete",
        family="acme",
        path=suffix(r"/v7/acme/complete"),
        route="/v7/acme/complete",
        samples=(),
        key_query=("v",),
        bound=False,
    )
    catalog.register(acme)
    try:
        assert match_route("POST", url) == Route("acme.complete", "/v7/acme/complete")
    finally:
        catalog.unregister("acme.complete")
    assert match_route("POST", url) is None


def test_an_endpoint_variable_is_read_on_every_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OLLAMA_HOST`` set, changed or removed between two identical requests takes effect."""
    url = "http://127.0.0.1:5555/v1/chat/completions"
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert match_route("POST", url, {}) == Route("openai.chat", "/v1/chat/completions")
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:5555")
    assert match_route("POST", url, {}) == Route("ollama.openai_chat", "/v1/chat/completions")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:5556")
    assert match_route("POST", url, {}) == Route("openai.chat", "/v1/chat/completions")
    monkeypatch.delenv("OLLAMA_HOST")
    assert match_route("POST", url, {}) == Route("openai.chat", "/v1/chat/completions")


def test_the_user_agent_is_part_of_the_cached_answer() -> None:
    """One URL sent by two SDKs is routed for each by its own agent, in either order."""
    url = "http://127.0.0.1:5557/v1/chat/completions"
    plain = match_route("POST", url, {"user-agent": "curl/8"})
    groq = match_route("POST", url, {"user-agent": "Groq/Python 0.9"})
    assert plain is not None
    assert plain.provider == "openai.chat"
    assert groq is not None
    assert groq.provider == "groq.chat"
    assert match_route("POST", url, {"user-agent": "curl/8"}) == plain
