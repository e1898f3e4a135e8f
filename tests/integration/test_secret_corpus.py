"""The secret guard against a corpus: every secret refused, no LLM payload flagged.

Every secret here is a format-valid fake made up at run time from random characters with the
right prefix and length (the templates are in tests/data/secret_corpus.yaml); no file holds a
literal key. Each kind is placed where real leaks happen: a response header that is not an auth
header, the URL query, nested JSON in the request and in the response, a stream event, and (for
our own formats) split across stream events. The realistic side is more than two hundred LLM
payload fragments in their natural places.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import json
import random
import re
import string
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from cassettes_core.secrets import SecretGuard
from cassettes_core.secrets._formats import Batch, find_formats, iter_kinds
from cassettes_core.secrets._plugins import gated_plugins, plugin_scanner
from tests.helpers.fake_secrets import (
    ALNUM,
    CORPUS,
    HEX,
    LOWER_DIGITS,
    URLSAFE,
    b64,
    b64url,
    expand,
    r,
)

Gen = Callable[[random.Random], str]


def _jwt(rng: random.Random) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": r(rng, 12), "exp": rng.randint(1, 2**31)}).encode())
    return f"{head}.{body}.{r(rng, 43, URLSAFE)}"


def _basic(rng: random.Random) -> str:
    return "Basic " + b64(f"svc-{r(rng, 6)}:{r(rng, 18)}".encode())


def _kinds(table: str) -> dict[str, Gen]:
    return {kind: functools.partial(expand, t) for kind, t in CORPUS[table].items()}


OWN_KINDS = _kinds("own_kinds") | {"jwt": _jwt, "basic-credentials": _basic}
PLUGIN_KINDS = _kinds("plugin_kinds")
TEXT_KINDS = _kinds("text_kinds")


def base_interaction() -> dict[str, Any]:
    """A chat interaction as the recorder writes it, with nothing secret in it."""
    call: dict[str, Any] = {"id": "call_" + "b" * 24, "type": "function"}
    call["function"] = {"name": "deploy", "arguments": "{}"}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    user = {"role": "user", "content": [{"type": "text", "text": "What changed?"}]}
    system = {"role": "system", "content": "You are a careful assistant."}
    request = {"model": "gpt-4o", "messages": [system, user], "params": {"temperature": 0.2}}
    headers = {"content-type": "application/json", "x-request-id": "req_" + "0" * 32}
    body: dict[str, Any] = {"id": "chatcmpl-" + "A" * 29, "object": "chat.completion"}
    body["choices"] = [{"index": 0, "message": message}]
    head = {"seq": 7, "digest": hashlib.sha256(b"request").hexdigest(), "provider": "openai.chat"}
    response = {"status": 200, "headers": headers, "body": body}
    interaction = {**head, "endpoint": "/v1/chat/completions", "request": request}
    return interaction | {"response": response, "duration_ms": 834}


def message(i: dict[str, Any]) -> Any:
    return i["response"]["body"]["choices"][0]["message"]


def function(i: dict[str, Any]) -> Any:
    return message(i)["tool_calls"][0]["function"]


ARGUMENTS = "response.body.choices[0].message.tool_calls[0].function.arguments(json)"


def chunk_event(text: str) -> dict[str, Any]:
    delta = {"index": 0, "delta": {"content": text}}
    data = {"id": "chatcmpl-" + "A" * 29, "object": "chat.completion.chunk", "choices": [delta]}
    return {"event": None, "data": data, "t_ms": 12}


def placed(edit: Callable[[dict[str, Any]], Any], path: str) -> tuple[dict[str, Any], str]:
    interaction = base_interaction()
    edit(interaction)
    return interaction, path


def streamed(events: list[dict[str, Any]]) -> Callable[[dict[str, Any]], None]:
    def edit(interaction: dict[str, Any]) -> None:
        del interaction["response"]
        interaction["stream"] = events

    return edit


def prose(value: str) -> str:
    return f"Deploy failed. Here is the value from my config: {value} - is it right?"


def quarters(value: str) -> list[str]:
    cut = [0, len(value) // 4, len(value) // 2, 3 * len(value) // 4, len(value)]
    return [value[a:b] for a, b in itertools.pairwise(cut)]


Place = Callable[[str], tuple[dict[str, Any], str]]
USER_TEXT = "request.messages[1].content[0].text"
PLACES: dict[str, Place] = {
    "header": lambda v: placed(
        lambda i: i["response"]["headers"].update({"x-debug-echo": v}),
        "response.headers.x-debug-echo",
    ),
    "url-query": lambda v: placed(
        lambda i: i.update(endpoint=f"/v1/chat/completions?trace={quote(v, safe='')}&stream=false"),
        "endpoint?trace",
    ),
    "request-json": lambda v: placed(
        lambda i: i["request"]["messages"][1]["content"][0].update(text=prose(v)), USER_TEXT
    ),
    "response-json": lambda v: placed(
        lambda i: function(i).update(
            arguments=json.dumps({"service": "billing", "settings": {"notes": [f"use {v}"]}})
        ),
        ARGUMENTS + ".settings.notes[0]",
    ),
    "stream-event": lambda v: placed(
        streamed([chunk_event(t) for t in ["Sure", ", the value is ", v, ". Keep it", " safe."]]),
        "stream[2].data.choices[0].delta.content",
    ),
    # The value with a zero-width space between its characters; in fullwidth characters.
    "zero-width": lambda v: PLACES["request-json"]("\u200b".join(v)),
    "look-alike": lambda v: PLACES["request-json"](
        "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v)
    ),
    # Under a JSON key that the same object names again: a parser keeps "ok".
    "repeated-json-key": lambda v: placed(
        lambda i: function(i).update(
            arguments=f'{{"note": {json.dumps(v)}, "note": "ok", "service": "billing"}}'
        ),
        ARGUMENTS + ".note",
    ),
}


def split_in_stream(value: str) -> tuple[dict[str, Any], str]:
    """The value over four deltas (the path names the events the value spans)."""
    events = [chunk_event(text) for text in ["Here: ", *quarters(value), " (done)"]]
    return placed(streamed(events), "stream[*].data.choices[0].delta.content")


def interleaved_in_stream(value: str) -> tuple[dict[str, Any], str]:
    """The value split over the deltas of choice 1, interleaved with those of choice 0."""
    third = len(value) // 3
    pieces = [value[:third], value[third : 2 * third], value[2 * third :]]
    order = [(0, "Sure"), (1, pieces[0]), (0, ", the"), (1, pieces[1]), (1, pieces[2])]
    events = [{"event": None, "data": {"choices": [{"index": n, "delta": {"content": t}}]}}
              for n, t in order]  # fmt: skip
    return placed(streamed(events), "stream[*].data.choices[index=1].delta.content")


def _refused(value: str, place: Place) -> None:
    interaction, expected = place(value)
    findings = SecretGuard().scan(interaction)
    paths = [finding.path for finding in findings]
    pattern = re.escape(expected).replace(re.escape("[*]"), r"\[[1-4]\.\.[1-4]\]")
    assert any(re.fullmatch(pattern, path) for path in paths), f"not at {expected}: {paths}"
    report = "\n".join(str(finding) for finding in findings)
    assert value not in report
    assert value[len(value) // 3 : 2 * len(value) // 3] not in report


ALL_KINDS = OWN_KINDS | TEXT_KINDS | PLUGIN_KINDS


def test_the_corpus_covers_every_kind_we_detect() -> None:
    """Each kind our own detectors can report has a generator in this corpus, and the corpus
    holds at least 15 secret kinds in at least 4 places each."""
    g = random.Random(0)
    found = {hit.kind for gen in OWN_KINDS.values() for hit in find_formats(gen(g))}
    assert found == set(iter_kinds())
    assert len(OWN_KINDS) + len(PLUGIN_KINDS) >= 15
    assert len(PLACES) >= 4
    assert len(ALL_KINDS) * len(PLACES) >= 60


@pytest.mark.parametrize("kind", sorted(ALL_KINDS))
def test_every_kind_is_refused_in_every_place(kind: str) -> None:
    """A format-valid fake of each kind is refused wherever it sits, with a masked preview (a
    fresh value in each place)."""
    for seed, place in enumerate(PLACES.values()):
        _refused(ALL_KINDS[kind](random.Random(seed)), place)


@pytest.mark.parametrize("kind", sorted(OWN_KINDS | TEXT_KINDS))
def test_a_key_split_across_stream_events_is_refused(kind: str) -> None:
    """A key that a stream spreads over several deltas, or over the interleaved deltas of n=2
    choices (joined per choice index), is found in the joined text."""
    gen = (OWN_KINDS | TEXT_KINDS)[kind]
    _refused(gen(random.Random(11)), split_in_stream)
    _refused(gen(random.Random(0)), interleaved_in_stream)


@pytest.mark.parametrize("kind", sorted(OWN_KINDS))
def test_each_own_kind_is_refused_base64_encoded(kind: str) -> None:
    """Written in base64 (either alphabet), a key is decoded and refused, the run masked."""
    for seed in range(2):
        raw = OWN_KINDS[kind](random.Random(seed)).encode()
        encode = base64.b64encode if seed % 2 else base64.urlsafe_b64encode
        _refused(encode(raw).decode(), PLACES["request-json"])


@pytest.mark.parametrize("place", sorted(PLACES))
def test_an_environment_credential_of_no_known_format_is_refused(
    place: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The literal value of a credential-like variable of the process, wherever it sits."""
    for seed in range(3):
        g = random.Random(seed)
        value = f"{r(g, 6, string.ascii_lowercase)}.{r(g, 18, LOWER_DIGITS)}"
        monkeypatch.setenv("CORPUS_SERVICE_SECRET", value)
        _refused(value, PLACES[place])


@pytest.mark.parametrize("kind", sorted(ALL_KINDS))
def test_fresh_values_of_each_kind_are_all_refused(kind: str) -> None:
    """Twelve fresh values of each kind in prose are all refused (no lucky shapes; with one
    more in each place above)."""
    for seed in range(100, 112):
        _refused(ALL_KINDS[kind](random.Random(seed)), PLACES["request-json"])


def test_a_huge_answer_with_secrets_at_its_ends_is_refused() -> None:
    """8 KB of near misses on each side (anchors, non-BMP and length-changing characters)
    between keys of every kind: each of our own kinds is still found."""
    g = random.Random(7)
    values = [make(g) for make in ALL_KINDS.values()]
    filler = "İ😀 word, the sk- pcsk_ xox token: key= " * 200
    interaction = base_interaction()
    text = values[0] + filler + "\n".join(values) + filler + values[-1]
    message(interaction)["content"] = text
    assert len(SecretGuard().scan(interaction)) >= len(OWN_KINDS)


# Keys without a prefix (Azure, Mistral, Cohere, Together) are found in auth positions.
def _auth_cases() -> list[Any]:
    g = random.Random(5)
    azure, mistral, cohere, together = r(g, 32, HEX), r(g, 32), r(g, 40), r(g, 64, HEX)

    def query(name: str, value: str) -> tuple[dict[str, Any], str]:
        endpoint = f"/openai/deployments/gpt-4o/chat/completions?{name}={value}"
        return placed(lambda i: i.update(endpoint=endpoint), f"endpoint?{name}")

    def tool_field(name: str, value: str) -> tuple[dict[str, Any], str]:
        arguments = json.dumps({"provider": "x", name: value})
        return placed(lambda i: function(i).update(arguments=arguments), f"{ARGUMENTS}.{name}")

    def error_echo(value: str) -> tuple[dict[str, Any], str]:
        interaction = base_interaction()
        del interaction["response"]
        interaction["error"] = {
            "kind": "http_status",
            "status": 401,
            "body": {"error": {"message": "bad key", "request_headers": {"Authorization": value}}},
        }
        return interaction, "error.body.error.request_headers.Authorization"

    queries = [("api-key", azure), ("key", mistral), ("api_key", together)]
    fields = [("api_key", mistral), ("token", cohere), ("client_secret", azure)]
    fields += [("password", pw) for pw in ("Tr0ub4dor&3x", "Sunsh1ne$2024!", "wherearemykeys42")]
    fields += [("db_password", "Yourmom1987!"), ("MISTRAL_API_KEY", mistral)]
    fields += [
        (name, cohere) for name in ("access_token", "refresh_token", "id_token", "api_token")
    ]
    return [
        *(pytest.param(*query(n, v), v, id=f"query-{n}") for n, v in queries),
        *(
            pytest.param(*tool_field(n, v), v, id=f"field-{n}-{k}")
            for k, (n, v) in enumerate(fields)
        ),
        pytest.param(*error_echo(f"Bearer {cohere}"), cohere, id="authorization-echoed-in-error"),
    ]


@pytest.mark.parametrize(("interaction", "path", "value"), _auth_cases())
def test_prefixless_keys_in_auth_positions_are_refused(
    interaction: dict[str, Any], path: str, value: str
) -> None:
    """A key without a known prefix is refused where a credential belongs."""
    findings = SecretGuard().scan(interaction)
    assert path in [finding.path for finding in findings]
    assert value not in "\n".join(map(str, findings))


def test_the_same_hex_outside_auth_positions_is_an_id() -> None:
    """A 32-hex value in an id-like header is a request id, not an Azure key."""
    interaction = base_interaction()
    interaction["response"]["headers"]["x-ms-request-id"] = r(random.Random(3), 32, HEX)
    assert SecretGuard().scan(interaction) == []


# ------------------------------------------------------------------ realistic payloads

PROSE: list[str] = CORPUS["prose"]
CODE: list[str] = CORPUS["code"]


def _fill(node: Any, g: random.Random, v: str) -> Any:
    """``node`` with ``{v}`` put in each string (keys too) and every template made."""
    if isinstance(node, str):
        return expand(node.replace("{v}", v), g)
    if isinstance(node, list):
        return [_fill(item, g, v) for item in node]
    if isinstance(node, dict):
        if list(node) == ["$json"]:
            return json.dumps(_fill(node["$json"], g, v))
        return {_fill(key, g, v): _fill(item, g, v) for key, item in node.items()}
    return node


def _fragments() -> list[Any]:
    g = random.Random(20261129)
    out: list[Any] = []

    def add(name: str, at: str, change: Callable[[Any, Any], None], value: Any) -> None:
        interaction = base_interaction()
        target: Any = interaction
        for key in filter(None, at.split(".")):
            target = target[int(key)] if key.isdigit() else target[key]
        change(target, value)
        out.append(pytest.param(interaction, id=f"{name}-{len(out)}"))

    for spec in CORPUS["fragments"]:
        made = [expand(spec.get("value", ""), g) for _ in range(spec.get("times", 1))]
        for item in spec.get("each", made):
            value = _fill(spec.get("add", spec.get("put", item)), g, str(item))
            add(spec["name"], spec["at"], list.append if "add" in spec else dict.update, value)
    message = "response.body.choices.0.message"
    for text in PROSE:
        add("prose", message, dict.update, {"content": text})
    for text in CODE:
        add("code", message, dict.update, {"content": f"```\n{text}\n```"})
        events = [chunk_event(part) for part in text.split(" ")]
        add("code-in-stream", "", dict.update, {"stream": events})
    return out


FRAGMENTS = _fragments()


def test_realistic_llm_payloads_are_not_flagged() -> None:
    """More than two hundred fragments (ids, signatures, embeddings, hashes, URLs, code and
    prose) pass the guard."""
    assert len(FRAGMENTS) >= 200
    guard = SecretGuard()
    flagged = {p.id: [str(f) for f in guard.scan(p.values[0])] for p in FRAGMENTS}
    assert {name: found for name, found in flagged.items() if found} == {}


# ------------------------------------------------------------------ the gates


def _probe_lines() -> list[tuple[str, str, tuple[int, int]]]:
    g = random.Random(77)
    values = [gen(g) for gen in (OWN_KINDS | TEXT_KINDS | PLUGIN_KINDS).values()]
    values += [*PROSE, *CODE]
    values += [
        f'aws_secret_access_key = "{r(g, 40, ALNUM + "/+")}"',
        f'cloudant_password = "{r(g, 64, HEX)}"',
        f"https://acct:{r(g, 24, string.ascii_lowercase)}@acct.cloudant.com",
        f'ibm_cloud_iam_key = "{r(g, 44, URLSAFE)}"',
        f'ibm_cos_hmac_secret_access_key = "{r(g, 48, HEX)}"',
        f'softlayer_api_key = "{r(g, 64, LOWER_DIGITS)}"',
        f'artifactory_key = "AKC{r(g, 12)}"',
        f"//registry.npmjs.org/:_authToken={r(g, 36, HEX)}",
        'db_password = "' + r(g, 14) + '"',
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "PuTTY-User-Key-File-2: ssh-rsa",
        f'if ("{r(g, 12)}" == user_password) {{',
        f"if secret != '{r(g, 12)}':",
        f'private_key "{r(g, 16)}";',
        f'my_password := "{r(g, 12)}"',
        f"apiKey => '{r(g, 20)}'",
        f"const pwd = '{r(g, 10)}'",
        f'["secret_key"] = "{r(g, 20)}"',
        f"contraseña: '{r(g, 12)}'",
        f'"{r(g, 40, ALNUM + "/+")}"',
        f"x = '{r(g, 30, URLSAFE)}' + '{r(g, 30, ALNUM + '+/')}'",
        f"{r(g, 64, HEX)}",
        f"https://api.softlayer.com/soap/v3/{r(g, 64, LOWER_DIGITS)}",
        f"token {r(g, 10, string.digits)}:{r(g, 35, URLSAFE)} for the bot",
    ]
    keys = ("content", "api_key", "x_debug", "cloudant_password", "ibm_cos_hmac_secret_access_key")
    probes = []
    for value in values:
        start = 0
        for line in value.split("\n"):  # the scanner reads a string line by line
            probes += [(key, value, (start, start + len(line))) for key in keys]
            start += len(line) + 1
    return probes


def test_every_detect_secrets_plugin_is_gated_or_left_out_on_purpose() -> None:
    """An upgrade of detect-secrets that adds a plugin fails here until it gets a gate."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    from cassettes_core.secrets._plugins import EXCLUDED_PLUGINS

    classes: dict[str, type] = get_mapping_from_secret_type_to_class()  # untyped library
    shipped = {cls.__name__ for cls in classes.values()}
    assert shipped <= set(gated_plugins()) | EXCLUDED_PLUGINS


def test_gates_never_hide_a_plugin_finding() -> None:
    """Whatever a plugin finds on a line, the scanner routes that line to that plugin."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import (
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        KeywordDetector,
    )

    scanner = plugin_scanner()
    checked = 0
    for key, value, span in _probe_lines():
        line = f'{key}: "{value[span[0] : span[1]]}"'
        routed = scanner.route(Batch([value]), [key]).get((0, span), [])
        for plugin in (plugin for _, members in scanner._groups for plugin in members):
            options: dict[str, Any] = {}
            if isinstance(plugin, KeywordDetector):
                options["denylist_regex_to_group"] = QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
            found = [m for m in plugin.analyze_string(line, **options) if m]
            if isinstance(plugin, HighEntropyStringsPlugin):  # a finding only above the limit
                limit = plugin.entropy_limit
                found = [m for m in found if plugin.calculate_shannon_entropy(m) > limit]
            if found:
                checked += 1
                name = type(plugin).__name__
                assert any(p is plugin for p in routed), f"{name} finds {found!r} unrouted"
    assert checked >= 30
