"""Our own detectors: key formats of the LLM era that detect-secrets 1.5 does not know.

Each detector is a literal anchor plus a full pattern. Anchors are searched for in all the
strings of an interaction at once (:mod:`cassettes_core.secrets._batch`), so the strings without
any anchor (almost all of an LLM payload) cost nothing more; only strings that hold an anchor
meet the regular expressions. Patterns start at a token boundary, so a prefix that happens to
occur inside a base64 blob (``…Xsk-…``) is not a key.

Some formats are checked beyond the pattern: a JWT's header must decode to JSON, the token
after ``Bearer`` must look random, the password in ``postgres://user:pass@`` must not be an
example one (:mod:`cassettes_core.secrets._shapes`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cassettes_core.secrets._aws import DETECTORS as AWS_DETECTORS
from cassettes_core.secrets._batch import Batch, searched_always
from cassettes_core.secrets._shapes import (
    is_example_password,
    is_sequence_fragment,
    looks_like_credential,
    randomly_cased,
)

# A key never starts right after one of these: the prefix would sit inside a longer token
# (a base64 blob, ``task-runner``). Checked in code so that every pattern starts with a literal,
# which the regular-expression engine finds with a fast substring search.
_TOKEN_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_E = r"(?![A-Za-z0-9_-])"  # fixed-length formats never run on into more token characters


@dataclass(frozen=True, slots=True)
class Hit:
    """One secret-looking value found in a string: what kind, the value and where it starts."""

    kind: str
    value: str
    start: int


def _whole(match: re.Match[str]) -> str | None:
    return match.group(0)


@dataclass(frozen=True, slots=True)
class _Detector:
    kind: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    # Picks the reported value out of a match and checks it (None: not a secret after all).
    accept: Callable[[re.Match[str]], str | None] = _whole
    lower: bool = False  # the anchors are tested against the lower-cased text
    bounded: bool = True  # the match must start at a token boundary


def _d(
    kind: str,
    anchors: str | tuple[str, ...],
    pattern: str,
    *,
    accept: Callable[[re.Match[str]], str | None] = _whole,
    ignorecase: bool = False,
    bounded: bool = True,
) -> _Detector:
    return _Detector(
        kind,
        (anchors,) if isinstance(anchors, str) else anchors,
        re.compile(pattern, re.IGNORECASE | re.DOTALL if ignorecase else re.DOTALL),
        accept,
        lower=ignorecase,
        bounded=bounded,
    )


# ---------------------------------------------------------------- the sk- family

_SK_KINDS = (
    # Most specific first: the first prefix that matches names the kind.
    ("sk-ant-api", "Anthropic API key"),
    ("sk-ant-admin", "Anthropic admin key"),
    ("sk-ant-oat", "Anthropic OAuth token"),
    ("sk-ant-ort", "Anthropic OAuth refresh token"),
    ("sk-ant-", "Anthropic key"),
    ("sk-proj-", "OpenAI project API key"),
    ("sk-svcacct-", "OpenAI service-account key"),
    ("sk-admin-", "OpenAI admin key"),
    ("sk-None-", "OpenAI API key"),
    ("sk-or-", "OpenRouter API key"),
)
# A real key has a long random stretch with letters and digits; ``sk-learn-compatible-api`` not.
_RANDOM_STRETCH = re.compile(r"[A-Za-z0-9_]{16,}")


def _sk_kind(value: str) -> str | None:
    # None for an sk- word that is not a key: no random stretch, of letters and digits or of
    # letters in random case (a 30-letter random key has no digit one time in a few hundred).
    if not any(
        (any(c.isdigit() for c in part) and any(c.isalpha() for c in part)) or randomly_cased(part)
        for part in _RANDOM_STRETCH.findall(value, 3)
    ):
        return None
    for prefix, kind in _SK_KINDS:
        if value.startswith(prefix):
            return kind
    return "OpenAI API key" if "T3BlbkFJ" in value else "API key (sk-…)"


# ---------------------------------------------------------------- checks for some formats


def _jwt(match: re.Match[str]) -> str | None:
    head = match.group(0).split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error):
        return None
    ok = isinstance(header, dict) and ("alg" in header or "typ" in header)
    return match.group(0) if ok else None


def _basic_header(match: re.Match[str]) -> str | None:
    token = match.group(1)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode()
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    if not sep or not decoded.isprintable() or is_example_password(password, user=user):
        return None
    return token


def _url_password(match: re.Match[str]) -> str | None:
    user, password = match.group(1), match.group(2)
    return None if is_example_password(password, user=user) else password


def _aws_key_id(match: re.Match[str]) -> str | None:
    return None if is_sequence_fragment(match.group(0)) else match.group(0)


def _bearer(match: re.Match[str]) -> str | None:
    token = match.group(1)
    return token if looks_like_credential(token) else None


# A line of a key's body: forty base64 characters or more, not cut short by an ellipsis.
_PEM_LINE = r"[A-Za-z0-9+/=]{40,}+(?!\.\.\.|…)"
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_BODY = re.compile(r"Private-Lines: \d++(?:\s|\\[nr])++" + _PEM_LINE)
_PEM_SPAN = 10_000  # characters: the farthest an END marker is looked for
_PUTTY_SPAN = 4_000


def _pem(match: re.Match[str]) -> str | None:
    # The key runs on to its END marker when there is one nearby, so that a redaction masks the
    # whole key. Found with a bounded substring search, not a lazy ".*?" the engine would run
    # again from every BEGIN: a text of many BEGINs costs one pass, not one pass per BEGIN.
    text = match.string
    end = text.find("-----END", match.end(), match.end() + _PEM_SPAN)
    closing = _PEM_END.match(text, end) if end != -1 else None
    return text[match.start() : closing.end()] if closing is not None else match.group(0)


def _putty(match: re.Match[str]) -> str | None:
    # A PuTTY key file: its Private-Lines body within a few KB of the header line.
    text = match.string
    at = text.find("Private-Lines: ", match.end(), match.end() + _PUTTY_SPAN)
    body = _PUTTY_BODY.match(text, at) if at != -1 else None
    return text[match.start() : body.end()] if body is not None else None


_DETECTORS: tuple[_Detector, ...] = (
    # The sk- family: the kind comes from the prefix (_sk_kind), hence no kind here.
    _d("", "sk-", r"sk-[A-Za-z0-9_-]{20,}"),
    _d("Google API key", "AIza", r"AIza[0-9A-Za-z_-]{35}" + _E),
    _d("Google OAuth access token", "ya29.", r"ya29\.[0-9A-Za-z_-]{30,}"),
    _d("Hugging Face token", "hf_", r"hf_[A-Za-z0-9]{30,}" + _E),
    _d("Hugging Face organization token", "api_org_", r"api_org_[A-Za-z0-9]{30,}" + _E),
    _d("Groq API key", "gsk_", r"gsk_[A-Za-z0-9]{40,}" + _E),
    _d("xAI API key", "xai-", r"xai-[A-Za-z0-9]{40,}" + _E),
    _d("Replicate API token", "r8_", r"r8_[A-Za-z0-9]{30,}" + _E),
    _d("Perplexity API key", "pplx-", r"pplx-[A-Za-z0-9]{40,}" + _E),
    _d("Fireworks API key", "fw_", r"fw_[A-Za-z0-9]{20,}" + _E),
    _d("Cerebras API key", "csk-", r"csk-[a-z0-9]{40,}" + _E),
    _d("NVIDIA API key", "nvapi-", r"nvapi-[A-Za-z0-9_-]{60,}" + _E),
    _d("Voyage AI API key", "pa-", r"pa-[A-Za-z0-9_-]{40,}" + _E),
    _d("Tavily API key", "tvly-", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}" + _E),
    _d("LangSmith API key", "lsv2_", r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}" + _E),
    _d("Pinecone API key", "pcsk_", r"pcsk_[A-Za-z0-9]{4,}_[A-Za-z0-9]{40,}" + _E),
    _d("ElevenLabs API key", "sk_", r"sk_[0-9a-f]{48}" + _E),
    _d("Stripe key", ("k_live_", "k_test_"), r"[rs]k_(?:live|test)_[A-Za-z0-9]{20,}" + _E),
    _d("Stripe webhook secret", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _d(
        "GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{36,}" + _E
    ),
    _d("GitHub fine-grained token", "github_pat_", r"github_pat_[A-Za-z0-9_]{60,}" + _E),
    _d(
        "GitLab token",
        ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glptt-", "gloas-"),
        r"gl(?:pat|dt|ft|soat|rt|cbt|ptt|oas)-[A-Za-z0-9_-]{20,}" + _E,
    ),
    _d(
        "AWS access key ID",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E,
        accept=_aws_key_id,
    ),
    # Session tokens, SigV4 signatures, secret keys beside their ids, Bedrock API keys.
    *(
        _d(kind, anchors, pattern, accept=accept, ignorecase=nocase, bounded=bounded)
        for kind, anchors, pattern, accept, nocase, bounded in AWS_DETECTORS
    ),
    _d("Slack token", "xox", r"xox[abposr]-[A-Za-z0-9-]{10,}", ignorecase=True),
    _d("Slack app token", "xapp-", r"xapp-\d-[A-Za-z0-9-]{20,}"),
    _d(
        "Slack webhook URL",
        "hooks.slack.com/",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
        bounded=False,
    ),
    _d("npm token", "npm_", r"npm_[A-Za-z0-9]{36}" + _E),
    _d("PyPI token", "pypi-", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _d("SendGrid API key", "SG.", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
    _d("DigitalOcean token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[opr]_v1_[0-9a-f]{64}" + _E),
    _d("Databricks token", "dapi", r"dapi[0-9a-f]{32}(?:-\d)?" + _E),
    _d(
        "Shopify token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _E,
    ),
    _d("Linear API key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}" + _E),
    _d("Postman API key", "PMAK-", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}" + _E),
    _d(
        "JSON Web Token",
        "eyJ",
        # At a token boundary, checked right after the literal: "eyJeyJeyJ…" fails at once at
        # each "eyJ" instead of running to the end of the word from each.
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]*+",
        accept=_jwt,
    ),
    _d(
        "private key (PEM)",
        "PRIVATE KEY",
        # A key has a body: a header named in prose or code ("starts with -----BEGIN …") is
        # not one, and neither is an example cut short ("MIIEvQIBADANBgkqhkiG9w0…"). Every
        # quantifier is possessive: each has one way to match, so nothing is tried twice.
        r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\s|\\[nr])*+(?:[A-Za-z][A-Za-z-]*+: [^\n\\]*+(?:\s|\\[nr])++)*+"  # Proc-Type: …
        + _PEM_LINE,
        accept=_pem,
        bounded=False,
    ),
    _d(
        "private key (PuTTY)",
        "PuTTY-User-Key-File",
        r"PuTTY-User-Key-File-\d: [^\n\\]*+",
        accept=_putty,
        bounded=False,
    ),
    _d(
        "password in URL",
        "://",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://"
        r"([^\s:/?#@'\"<>]{1,128}):([^\s/?#@'\"<>]{1,256})@",
        accept=_url_password,
        bounded=False,
    ),
    # Last: a bearer token that is also a known format is reported as that format.
    _d(
        "bearer token",
        "bearer",
        r"\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        accept=_bearer,
        ignorecase=True,
        bounded=False,
    ),
    _d(
        "HTTP Basic credentials",
        "basic",
        r"\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        accept=_basic_header,
        ignorecase=True,
        bounded=False,
    ),
)
for _detector in _DETECTORS:
    searched_always(_detector.anchors, ignorecase=_detector.lower)


def find_formats(text: str) -> list[Hit]:
    """Every known key format in ``text``, one hit per span (the most specific kind)."""
    return find_formats_batch(Batch([text])).get(0, [])


def find_formats_batch(batch: Batch) -> dict[int, list[Hit]]:
    """:func:`find_formats` for each string of ``batch`` that has a hit (by index)."""
    found: dict[int, list[tuple[int, Hit]]] = {}
    for order, detector in enumerate(_DETECTORS):
        for index in batch.holders(detector.anchors, ignorecase=detector.lower):
            text = batch.values[index]
            for match in detector.pattern.finditer(text):
                if detector.bounded and not _at_boundary(text, match.start()):
                    continue
                value = detector.accept(match)
                if not value:
                    continue
                kind = detector.kind or _sk_kind(value)
                if kind is None:
                    continue
                # The value may be a group (the token after "Bearer"): report where it starts.
                start = match.start() + max(match.group(0).find(value), 0)
                found.setdefault(index, []).append((order, Hit(kind, value, start)))
    return {
        index: _without_overlaps([hit for _, hit in sorted(items, key=lambda item: item[0])])
        for index, items in found.items()
    }


def _at_boundary(text: str, start: int) -> bool:
    return start == 0 or text[start - 1] not in _TOKEN_SET


def _without_overlaps(hits: list[Hit]) -> list[Hit]:
    # Earlier detectors are more specific ("Bearer sk-…" is an OpenAI key, not a bearer token):
    # keep a hit only if its span does not overlap one already kept.
    # The kept spans never overlap, so sorted by start only the neighbours of a new span can
    # overlap it: a text holding thousands of keys costs n log n, not n².
    kept: list[Hit] = []
    starts: list[int] = []
    ends: list[int] = []
    for hit in hits:
        end = hit.start + len(hit.value)
        at = bisect_left(starts, hit.start)
        if at > 0 and ends[at - 1] > hit.start:
            continue  # the span before it reaches into it
        if at < len(starts) and starts[at] < end:
            continue  # it reaches into the span after it
        starts.insert(at, hit.start)
        ends.insert(at, end)
        kept.append(hit)
    return kept


def iter_kinds() -> Iterator[str]:
    """Every kind name our own detectors report (for documentation and tests)."""
    seen: set[str] = set()
    for _, kind in _SK_KINDS:
        seen.add(kind)
    seen.update(("OpenAI API key", "API key (sk-…)"))
    seen.update(detector.kind for detector in _DETECTORS if detector.kind)
    yield from sorted(seen)
