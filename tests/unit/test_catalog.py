"""The provider catalog: self-consistent, immutable by default, the one table the rest reads."""

from __future__ import annotations

import dataclasses
import re

import httpx2
import pytest

from cassettes_core import ConfigError, LLMRequest, catalog
from cassettes_core.catalog import DEFAULT_CATALOG, Catalog, Drift, Endpoint, TokenFields, suffix
from cassettes_core.isolation import canonical_host, catalog_provider
from cassettes_core.providers.http import HTTPProvider
from cassettes_core.testing.emulator import Emulator
from cassettes_core.transport import match_route

ENDPOINTS = [pytest.param(endpoint, id=endpoint.name) for endpoint in DEFAULT_CATALOG]


def gemini_like() -> Endpoint:
    """An endpoint whose model travels in the path (as Gemini's does; not the built-in one)."""
    return acme(
        name="acme.generate",
        family="google",
        send_path="/v1beta/models/{model}:acmeGenerate",
        path=suffix(r"/(?:v1|v1beta)/models/(?P<model>[^/:]+):acmeGenerate"),
        route="/v1beta/models/gemini-2.0-flash:acmeGenerate",
        key_header="x-goog-api-key",
        key_prefix="",
        key_headers=("x-goog-api-key",),
        key_query=("key",),
        semantic_fields=frozenset({"model", "contents", "systemInstruction", "tools"}),
        headers={},
    )


def acme(**changes: object) -> Endpoint:
    """A made-up endpoint, written as a user following the docstring would."""
    fields: dict[str, object] = {
        "name": "acme.chat",
        "family": "acme",
        "base_url": "https://api.acme.example/v2",
        "send_path": "/chat",
        "path": r"/v2/chat",
        "route": "/v2/chat",
        "base_env": "ACME_BASE_URL",
        "key_env": "ACME_API_KEY",
        "semantic_fields": frozenset({"model", "messages"}),
        "usage": TokenFields(input=("prompt_tokens",)),
        "headers": {"acme-version": "1"},
    }
    fields.update(changes)
    return Endpoint(**fields)  # type: ignore[arg-type]


def test_the_built_in_endpoints_include_the_four_the_library_began_with() -> None:
    """The default catalog holds OpenAI chat, embeddings, responses and Anthropic messages
    (the other providers' entries are pinned by their own tests)."""
    assert set(DEFAULT_CATALOG.names()) >= {
        "openai.chat",
        "openai.embeddings",
        "openai.responses",
        "anthropic.messages",
        "bedrock.converse",
        "bedrock.converse_stream",
        "bedrock.invoke_model",
        "bedrock.invoke_model_with_response_stream",
        "gemini.generate",
        "gemini.stream",
        "gemini.embed",
    }
    assert catalog.current() is DEFAULT_CATALOG


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_every_endpoint_is_consistent_with_the_rest_of_the_library(endpoint: Endpoint) -> None:
    """Each endpoint names what its answer depends on (the model first of all) and counts
    tokens; its route, behind any prefix, matches it and no other entry (a bound one's when
    the request claims it: its host or SDK; unclaimed, never it); the isolation guard refuses
    its hosts, the base URL's among them; what HTTPProvider sends the transport routes back
    to it."""
    assert "model" in endpoint.semantic_fields
    assert catalog.DEFAULT_SEMANTIC_FIELDS[endpoint.name] == endpoint.semantic_fields
    assert endpoint.usage.input, "an endpoint without token fields counts nothing"

    def claims(entry: Endpoint) -> bool:
        return entry is endpoint

    for path in (endpoint.route, "/proxy/openai" + endpoint.route, endpoint.route + "/"):
        found = DEFAULT_CATALOG.match(endpoint.method, path, claims=claims)
        assert found is not None
        assert found.endpoint is endpoint
        others = DEFAULT_CATALOG.without(endpoint.name)
        if endpoint.bound:
            unclaimed = DEFAULT_CATALOG.match(endpoint.method, path)
            assert unclaimed is None or not unclaimed.endpoint.bound
        else:
            assert others.match(endpoint.method, path, claims=claims) is None
    assert DEFAULT_CATALOG.match("GET", endpoint.route, claims=claims) is None
    count_tokens = endpoint.route + "/count_tokens"
    assert DEFAULT_CATALOG.match(endpoint.method, count_tokens, claims=claims) is None

    assert endpoint.api_hosts()
    for host in endpoint.api_hosts():
        assert catalog_provider(canonical_host(host)) is not None
    base_host = httpx2.URL(endpoint.base_url).host
    # A local server's base (Ollama's localhost:11434) is claimed by host and port instead.
    assert base_host in endpoint.api_hosts() or canonical_host(base_host) == "loopback"

    model = endpoint.model_in(endpoint.route)  # a model the path carries (Gemini's)
    url = HTTPProvider(endpoint.name).url(LLMRequest(endpoint.name, {"model": model or "m"}))
    route = match_route(endpoint.method, url)
    assert route is not None
    assert route.provider == endpoint.name
    assert route.endpoint.split("?", 1)[0] == endpoint.route  # Gemini streams add ?alt=sse
    assert route.model == model
    assert url.startswith(endpoint.base_url)


def test_every_endpoint_route_is_served_by_the_emulator() -> None:
    """The emulator answers every endpoint's route (a 400 for an empty body, never a 404)."""
    with Emulator() as emulator, httpx2.Client() as client:
        for endpoint in DEFAULT_CATALOG:
            answer = client.request(
                endpoint.method,
                emulator.url + endpoint.route,
                json={},
                headers={endpoint.key_header: endpoint.key_prefix + emulator.api_key},
            )
            assert answer.status_code == 400, (endpoint.name, answer.text)
        assert set(emulator.hits_by_path) == {e.route for e in DEFAULT_CATALOG}


def test_a_model_carried_in_the_path_is_part_of_the_match() -> None:
    """A pattern's ``model`` group names the model, so path-model APIs fit one entry."""
    extended = DEFAULT_CATALOG.with_endpoints(gemini_like())
    found = extended.match("POST", "/v1/models/gemini-1.5-pro:acmeGenerate")
    assert found is not None
    assert found.endpoint.name == "acme.generate"
    assert found.model == "gemini-1.5-pro"
    assert extended.match("POST", "/v1/models/gemini-1.5-pro:countTokens") is None
    assert DEFAULT_CATALOG.match("POST", "/v1/models/gemini-1.5-pro:acmeGenerate") is None


def test_register_adds_for_the_process_and_unregister_takes_it_back() -> None:
    """The default catalog never changes; a registered endpoint is read everywhere, then gone."""
    catalog.register(gemini_like())
    try:
        assert catalog.current() is not DEFAULT_CATALOG
        assert "acme.generate" not in DEFAULT_CATALOG
        route = match_route("POST", "https://x.test/v1beta/models/g-2:acmeGenerate?key=AIza1&a=b")
        assert route is not None
        assert (route.provider, route.model) == ("acme.generate", "g-2")
        assert route.endpoint == "/v1beta/models/g-2:acmeGenerate?a=b"  # the key is not kept
        request = LLMRequest.from_body("acme.generate", {"contents": [], "temperature": 1})
        assert dict(request.params) == {"temperature": 1}
    finally:
        catalog.unregister("acme.generate")
    assert catalog.current().names() == DEFAULT_CATALOG.names()
    assert match_route("POST", "https://x.test/v1beta/models/g-2:acmeGenerate") is None


def test_register_refuses_a_taken_name_or_a_route_two_endpoints_would_match() -> None:
    """Two entries may never claim one request: the second is refused, the catalog unchanged."""
    chat = DEFAULT_CATALOG.get("openai.chat")
    assert chat is not None
    catalog.register(chat)  # the same entry again (a conftest imported twice): nothing to add
    assert catalog.current() is DEFAULT_CATALOG
    other = dataclasses.replace(chat, semantic_fields=frozenset({"model"}))
    with pytest.raises(ConfigError, match=r"already has a different endpoint 'openai\.chat'"):
        catalog.register(other)
    route = "/v9/chat/completions"  # its own, but openai.chat's pattern matches it too
    clash = dataclasses.replace(gemini_like(), name="shadow.chat", path=suffix(route), route=route)
    with pytest.raises(ConfigError, match=r"'shadow\.chat' and 'openai\.chat' would both match"):
        catalog.register(clash)
    greedy = dataclasses.replace(
        gemini_like(), name="greedy", path=suffix("/v1/[a-z]+"), route="/v1/acme"
    )
    with pytest.raises(ConfigError, match="would both match"):
        catalog.register(greedy)  # its own route is free, but it would claim /v1/messages
    assert catalog.current() is DEFAULT_CATALOG


def test_an_endpoint_whose_route_its_own_pattern_misses_is_refused() -> None:
    """The route stands for the endpoint (emulator, refresh): it must be one of its calls."""
    with pytest.raises(ConfigError, match="does not match its own path pattern"):
        dataclasses.replace(gemini_like(), route="/v1beta/models/g:countTokens")


def test_a_catalog_is_built_from_entries_and_refuses_duplicates() -> None:
    """Catalog() takes any entries; a duplicate name is a ConfigError, not a silent override."""
    one = gemini_like()
    assert Catalog([one]).names() == ("acme.generate",)
    with pytest.raises(ConfigError):
        Catalog([one, one])


def test_the_built_in_provider_refuses_a_stream_framing_it_cannot_read() -> None:
    """An AWS event-stream endpoint's stream is refused up front by HTTPProvider, not misparsed
    as SSE."""
    ndjson = dataclasses.replace(gemini_like(), name="lines.chat", stream="aws-eventstream")
    catalog.register(ndjson)
    try:
        provider = HTTPProvider("lines.chat", base_url="http://127.0.0.1:9", api_key="k" * 12)
        with pytest.raises(ConfigError, match="streams aws-eventstream"):
            list(provider.stream(LLMRequest("lines.chat", {"model": "m", "contents": []})))
    finally:
        catalog.unregister("lines.chat")


@pytest.mark.parametrize(
    ("path", "also"),
    [
        (r"/v2/chat", "/proxy/v2/chat"),
        (re.compile("/v2/chat"), "/proxy/v2/chat"),
        ("(?i)/v2/chat", "/x/V2/Chat"),
        (re.compile("(?i)/v2/chat"), "/x/V2/Chat"),
        (re.compile("/V2/CHAT", re.I), "/x/V2/Chat"),
    ],
)
def test_a_path_given_as_a_string_or_a_pattern_is_matched_at_the_end(
    path: object, also: str
) -> None:
    """``path="/v2/chat"`` works, a pattern's flags are kept when it is anchored, and no form
    matches the route in the middle of a path."""
    endpoint = acme(path=path, method="post")
    assert endpoint.method == "POST"
    extended = DEFAULT_CATALOG.with_endpoints(endpoint)
    found = extended.match("POST", also)
    assert found is not None
    assert found.endpoint is endpoint
    assert extended.match("POST", "/v2/chat/history") is None
    assert extended.match("POST", "/v2/chatter") is None


def test_a_path_that_is_no_pattern_is_a_config_error_saying_what_to_write() -> None:
    with pytest.raises(ConfigError, match=r"catalog\.suffix"):
        acme(path=42)
    with pytest.raises(ConfigError, match="not a regular expression"):
        acme(path="/v2/(chat")
    with pytest.raises(ConfigError, match="not a regular expression"):
        acme(path="/v2/(chat\\Z")
    with pytest.raises(ConfigError, match="give an HTTP method"):
        acme(method="")
    with pytest.raises(ConfigError, match=r"give a tuple of them, e\.g\. hosts=\('a\.test',\)"):
        acme(hosts="a.test")


def test_an_endpoint_is_hashable_and_its_mappings_are_read_only() -> None:
    """Equal entries are equal and hash alike; headers and known values cannot be changed."""
    known = {"status": {"ok"}}  # a set where a frozenset is asked for: frozen all the same
    endpoint = acme(drift=Drift(known_values=known))  # type: ignore[arg-type]
    again = acme(drift=Drift(known_values={"status": frozenset({"ok"})}))
    assert endpoint == again
    assert hash(endpoint) == hash(again)
    assert {endpoint, again, *DEFAULT_CATALOG} == {endpoint, *DEFAULT_CATALOG}
    listed = acme(
        drift=Drift(known_values=known),  # type: ignore[arg-type]
        usage=TokenFields(input=["prompt_tokens"]),  # type: ignore[arg-type]
        semantic_fields={"model", "messages"},
        key_headers=["authorization"],
    )
    assert listed == endpoint  # lists and sets, frozen
    assert hash(listed) == hash(endpoint)
    with pytest.raises(TypeError):
        endpoint.headers["acme-version"] = "2"  # type: ignore[index]
    with pytest.raises(TypeError):
        endpoint.drift.known_values["status"] = frozenset()  # type: ignore[index]
    with pytest.raises(TypeError):
        catalog.DEFAULT_SEMANTIC_FIELDS["openai.chat"] = frozenset()  # type: ignore[index]


def test_declared_samples_find_an_overlap_the_routes_alone_do_not() -> None:
    """``/a/(?:x|y)`` and ``/(?:b|a)/y`` share ``/a/y``: a sample naming it gets it refused,
    whichever of the two declares it and whichever comes first."""
    first = acme(name="one", path="/a/(?:x|y)", route="/a/x", samples=("/a/y",))
    second = acme(name="two", path="/(?:b|a)/y", route="/b/y")
    for one, two in ((first, second), (second, first)):
        catalog.register(one)
        try:
            with pytest.raises(ConfigError, match=r"would both match one request \(POST /a/y\)"):
                catalog.register(two)
        finally:
            catalog.unregister(one.name)
    with pytest.raises(ConfigError, match="its sample path /c/y does not match"):
        acme(path="/a/(?:x|y)", route="/a/x", samples=("/c/y",))
    assert catalog.current() is DEFAULT_CATALOG


def test_a_registered_endpoints_key_header_is_sensitive() -> None:
    """Every header an endpoint's key travels in is never stored, registered ones included."""
    from cassettes_core.secrets import is_sensitive_header

    endpoint = acme(name="pass.chat", key_header="x-pass-word", key_headers=("x-pass-word",))
    assert not is_sensitive_header("X-Pass-Word")
    catalog.register(endpoint)
    try:
        assert is_sensitive_header("X-Pass-Word")
    finally:
        catalog.unregister(endpoint.name)
    assert not is_sensitive_header("X-Pass-Word")
