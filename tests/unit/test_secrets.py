"""The secret guard's API: headers, findings, previews, paths, allow-list and check."""

from __future__ import annotations

import copy
import functools
import pickle
import random
import string
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from cassettes_core import CassetteError, UnsafeCassetteError
from cassettes_core.secrets import (
    SENSITIVE_HEADERS,
    SecretFinding,
    SecretGuard,
    is_sensitive_header,
    looks_like_credential,
    mask,
    strip_sensitive_headers,
)
from tests.helpers.fake_secrets import (
    CORPUS,
    assert_masked,
    in_response,
    rand,
    reply,
    scan,
    text_in_response,
    tool_arguments,
)
from tests.helpers.fake_secrets import openai_key as random_openai_key

ALNUM = string.ascii_letters + string.digits


def fake(prefix: str, n: int, seed: int = 0) -> str:
    """A format-valid fake key made up at run time."""
    rng = random.Random(seed)
    return prefix + "".join(rng.choice(ALNUM) for _ in range(n))


def openai_key(seed: int = 0) -> str:
    return fake("sk-proj-", 120, seed)


def interaction(**parts: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "seq": 3,
        "digest": "9c1e" * 16,
        "provider": "openai.chat",
        "endpoint": "/v1/chat/completions",
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]},
        "response": {"status": 200, "headers": {}, "body": {"id": "chatcmpl-" + "x" * 29}},
        "duration_ms": 12,
    }
    base.update(parts)
    return base


# ------------------------------------------------------------------ headers


@pytest.mark.parametrize(
    ("name", "sensitive"),
    [(n, True) for n in CORPUS["sensitive_headers"]]
    + [(n, False) for n in CORPUS["ordinary_headers"]],
)
def test_credential_and_account_headers_are_sensitive(name: str, sensitive: bool) -> None:
    """Auth, cookie, key, token and account-id headers are never stored, in any case; request
    ids, rate limits and content types stay in the cassette."""
    assert is_sensitive_header(name) is sensitive


def test_strip_sensitive_headers_is_case_insensitive() -> None:
    """Stripping compares names case-insensitively and keeps the others as written; the
    published set holds lower-case names, the auth headers among them."""
    headers = {"Authorization": "Bearer x", "X-API-KEY": "k", "Content-Type": "application/json"}
    assert strip_sensitive_headers(headers) == {"Content-Type": "application/json"}
    assert all(name == name.lower() for name in SENSITIVE_HEADERS)
    assert {"authorization", "x-api-key", "cookie", "openai-organization"} <= SENSITIVE_HEADERS


def test_a_stored_sensitive_header_is_a_finding() -> None:
    """A cassette that still holds an auth header is refused, even with a harmless value."""
    item = interaction()
    item["response"]["headers"] = {"Authorization": "Bearer abc", "content-type": "text/plain"}
    [finding] = SecretGuard().scan(item)
    assert finding.path == "response.headers.Authorization"
    assert "sensitive header" in finding.kind


# ------------------------------------------------------------------ findings and previews


def test_findings_render_pickle_and_compare() -> None:
    """A finding prints as 'seq N path: kind (preview)'; findings are frozen records: hashable,
    comparable, picklable (xdist, logs)."""
    finding = SecretFinding(3, "request.messages[0].content", "OpenAI API key", "sk-p…9xQz")
    assert str(finding) == "seq 3 request.messages[0].content: OpenAI API key (sk-p…9xQz)"
    assert str(SecretFinding(None, "endpoint", "x", "…")) == "endpoint: x (…)"
    finding = SecretFinding(1, "endpoint", "kind", "ab…yz")
    assert pickle.loads(pickle.dumps(finding)) == finding
    assert len({finding, SecretFinding(1, "endpoint", "kind", "ab…yz")}) == 1


@pytest.mark.parametrize("length", [1, 5, 6, 11, 12, 23, 24, 40, 164])
def test_preview_never_shows_the_value(length: int) -> None:
    """At most four characters of each end, at most a third of the value, never all of it."""
    value = "".join(random.Random(length).choice(ALNUM) for _ in range(length))
    preview = mask(value)
    shown = preview.replace("…", "").split("(")[0]
    assert value not in preview
    assert len(shown) <= min(8, length // 3)
    assert "\n" not in mask("-----BEGIN\nabcdef\nghijkl\n-----END")  # (a PEM block) one line


# ------------------------------------------------------------------ where the guard looks


def test_paths_point_at_each_place() -> None:
    """Findings name the endpoint query, headers, nested bodies and stream events."""
    key = openai_key()
    item = interaction(
        endpoint=f"/v1/chat/completions?debug={key}",
        stream=[
            {"event": None, "data": {"delta": {"text": "a"}}, "t_ms": 1},
            {"event": None, "data": {"delta": {"text": key}}, "t_ms": 2},
        ],
    )
    item["request"]["messages"][0]["content"] = [{"type": "text", "text": f"key: {key}"}]
    item["response"]["headers"]["x-debug"] = key
    item["response"]["body"]["choices"] = [{"message": {"content": f"you said {key}"}}]
    paths = [finding.path for finding in SecretGuard().scan(item)]
    assert paths == [
        "endpoint?debug",
        "request.messages[0].content[0].text",
        "response.headers.x-debug",
        "response.body.choices[0].message.content",
        "stream[1].data.delta.text",
    ]


def test_a_secret_used_as_a_key_is_masked_in_the_path() -> None:
    """A mapping key that is itself a secret is reported without printing it."""
    key = openai_key()
    item = interaction()
    item["response"]["body"]["cache"] = {key: 1}
    findings = SecretGuard().scan(item)
    assert findings
    assert all(key not in finding.path for finding in findings)
    assert findings[0].path.startswith("response.body.cache[sk-p…")


def test_scalars_none_and_bytes_are_handled() -> None:
    """Numbers, booleans and None are skipped; bytes are scanned as text; plain words never
    trip the entropy plugins (as detect-secrets' eager mode would)."""
    item = interaction()
    item["request"]["messages"][0]["content"] = "hello world"
    item["response"]["body"]["note"] = "correct horse battery staple"
    assert SecretGuard().scan(item) == []
    item["response"]["body"].update(n=1, f=0.5, b=True, z=None, raw=openai_key().encode())
    [finding] = SecretGuard().scan(item)
    assert finding.path == "response.body.raw"


def test_a_cycle_and_deep_nesting_terminate() -> None:
    """Self-referencing data (YAML aliases) and 50 000 levels of nesting are walked safely."""
    loop: list[Any] = []
    loop.append(loop)
    deep: Any = openai_key()
    for _ in range(50_000):
        deep = {"d": [deep]}
    item = interaction()
    item["response"]["body"].update(loop=loop, deep=deep)
    [finding] = SecretGuard().scan(item)
    assert finding.path.startswith("response.body.deep.d[0].d[0]")


def test_seq_comes_from_the_interaction_unless_given() -> None:
    """Findings carry the interaction's seq, or the one passed in."""
    item = interaction()
    item["response"]["headers"]["x-debug"] = openai_key()
    assert SecretGuard().scan(item)[0].seq == 3
    assert SecretGuard().scan(item, seq=9)[0].seq == 9
    del item["seq"]
    assert SecretGuard().scan(item)[0].seq is None


def test_detect_secrets_global_settings_are_left_alone() -> None:
    """Scanning neither reads nor changes detect-secrets' process-wide settings."""
    from detect_secrets.settings import get_settings

    before = (dict(get_settings().plugins), dict(get_settings().filters))
    item = interaction()
    item["request"]["messages"][0]["content"] = 'db_password = "' + fake("", 14) + '"'
    assert SecretGuard().scan(item)
    assert (dict(get_settings().plugins), dict(get_settings().filters)) == before


def test_scans_in_threads_agree() -> None:
    """The guard is safe to use from several threads at once."""
    item = interaction()
    item["response"]["headers"]["x-debug"] = openai_key()
    expected = SecretGuard().scan(item)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: SecretGuard().scan(item), range(80)))
    assert results == [expected] * 80


@pytest.mark.parametrize(
    ("value", "strict", "expected"),
    CORPUS["credential_shapes"].values(),
    ids=list(CORPUS["credential_shapes"]),
)
def test_credential_shape(value: str, strict: bool, expected: bool) -> None:
    """Values in auth positions count when they look random, not when they are placeholders."""
    assert looks_like_credential(value, strict=strict) is expected


def _tool_arguments(arguments: str) -> dict[str, Any]:
    item = interaction()
    item["request"]["messages"].append(
        {"role": "assistant", "tool_calls": [{"function": {"arguments": arguments}}]}
    )
    return item


def _pem_query() -> dict[str, Any]:
    body = fake("MIIEvQ", 58).replace("+", "/")
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    return interaction(endpoint=f"/v1/x?note={pem.replace(' ', '%20').replace(chr(10), '%0A')}")


def _contained(container: type[Any]) -> dict[str, Any]:
    return in_response({"x": container([openai_key()])})


ONE_FINDING: dict[str, tuple[Callable[[], dict[str, Any]], str, str]] = {
    # Tool-call arguments (a JSON string) are scanned field by field.
    "json-in-a-string": (
        lambda: _tool_arguments('{"target": {"api_key": "' + fake("", 40) + '"}}'),
        "request.messages[1].tool_calls[0].function.arguments(json).target.api_key",
        "credential in field 'api_key'",
    ),
    # A key in the query is found through its URL encoding.
    "percent-encoded-query": (_pem_query, "endpoint?note", "private key (PEM)"),
    # A key inside a set, a frozenset or a tuple (with a stable index in the path).
    **{
        f"in-a-{container.__name__}": (
            functools.partial(_contained, container),
            "response.body.x[0]",
            "OpenAI project API key",
        )
        for container in (set, frozenset, tuple, list)
    },
}


@pytest.mark.parametrize(("make", "path", "kind"), ONE_FINDING.values(), ids=list(ONE_FINDING))
def test_one_finding_names_its_place_and_kind(
    make: Callable[[], dict[str, Any]], path: str, kind: str
) -> None:
    """JSON strings, URL queries and every kind of container are read where they sit."""
    [finding] = SecretGuard().scan(make())
    assert (finding.path, finding.kind) == (path, kind)


# ------------------------------------------------------------------ allow, check, filter


def test_allow_skips_exactly_the_values_listed() -> None:
    """An allowed value is not reported; a different value in the same place still is."""
    safe, unsafe = openai_key(1), openai_key(2)
    item = interaction()
    item["response"]["headers"]["x-a"] = safe
    item["response"]["headers"]["x-b"] = unsafe
    findings = SecretGuard(allow=[safe]).scan(item)
    assert [finding.path for finding in findings] == ["response.headers.x-b"]


def test_check_raises_with_every_finding_of_every_interaction(tmp_path: Any) -> None:
    """check() lists all findings of all interactions, masked, with a next step."""
    first, second = interaction(seq=1), interaction(seq=2)
    first["response"]["headers"]["x-debug"] = openai_key(1)
    second["request"]["messages"][0]["content"] = "mine: " + fake("AIza", 35)
    path = tmp_path / "c.yaml"
    with pytest.raises(UnsafeCassetteError) as caught:
        SecretGuard().check([first, interaction(seq=5), second], path=path)
    error = caught.value
    assert isinstance(error, CassetteError)
    assert error.path == path
    assert [(f.seq, f.path) for f in error.findings] == [
        (1, "response.headers.x-debug"),
        (2, "request.messages[0].content"),
    ]
    message = str(error)
    assert message.splitlines()[0] == f"refused to write {path}: 2 possible secrets found"
    assert "  seq 1 response.headers.x-debug: OpenAI project API key (sk-p…" in message
    assert message.splitlines()[-1].startswith("TIP: ")
    assert openai_key(1) not in message
    SecretGuard().check([interaction(), interaction(seq=4)], path=None)  # clean: quiet


def test_the_interaction_is_never_changed_by_a_scan() -> None:
    """Scanning reads; the stored bytes (raw JSON, zero-width characters) stay as they were."""
    interaction = tool_arguments('{"a": "' + "\u200b".join(random_openai_key()) + '", "a": 1}')
    before = copy.deepcopy(interaction)
    assert scan(interaction)
    assert interaction == before


def test_a_name_that_is_a_key_is_masked_in_the_finding() -> None:
    """A crafted assignment whose name is itself a key does not print it in the kind."""
    key = f"sk-proj-{rand(30)}_key"
    findings = scan(text_in_response(f"{key}={rand(32)}"))
    assert findings
    assert_masked(findings, key)


def test_a_text_of_many_keys_is_refused_with_a_bounded_report() -> None:
    """Thousands of distinct keys in one string: refused, the report capped per string, each
    value masked (and no comparison of every finding with every other)."""
    keys = [random_openai_key() for _ in range(300)]
    findings = scan(reply(" ".join(keys)))
    assert 1 <= len(findings) <= 64
    assert {f.kind for f in findings} == {"OpenAI project API key"}
    assert_masked(findings, *keys)
