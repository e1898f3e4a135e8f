"""What secrets and LLM payloads look like: placeholders and credential shapes, the masked
preview (:func:`mask`), auth positions and the opaque values LLM APIs return (ids, signatures,
embeddings: told apart by field name, id prefix and length), key formats (each a literal anchor
plus a pattern at a token boundary, the anchors found in all the strings of an interaction in
one pass: :class:`Batch`), and the environment's own credentials.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal
from urllib.parse import quote

# ---------------- what values look like: placeholders, credentials, masks
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=:-]+")
_HEX = re.compile(r"[0-9a-fA-F]+")

# Placeholder shapes, each matched against the whole value (a real password may well hold a
# "$", a "{" or the word "here": only a value that *is* a template, a mask or a description of a
# key is a stand-in).
_TEMPLATE = re.compile(
    r"[A-Za-z0-9_.-]{0,16}"  # a prefix may stay literal: sk-<your key>, sk-proj-${KEY}
    r"(?:\$\{[^{}]*\}"  # ${VAR}, ${VAR:-default}
    r"|\$\([^()]*\)"  # $(command)
    r"|\{\{[^{}]*\}\}"  # {{ var }}, {{ secrets.KEY }}
    r"|\{[A-Za-z_][A-Za-z0-9_.\[\]'\"]*\}"  # {var}, {config.key} (format strings)
    r"|<[^<>]{1,80}>"  # <YOUR_API_KEY>, <redacted>
    r"|\[[A-Za-z][A-Za-z _-]{0,79}\])"  # [YOUR_KEY], [REDACTED]
    r"[A-Za-z0-9_.-]{0,16}"
)
_VARIABLE = re.compile(
    r"\$[A-Z_][A-Z0-9_]*"  # $API_KEY
    r"|\$[a-z_][a-z_]*"  # $token (a name without digits)
    r"|%[A-Za-z_][A-Za-z0-9_]*%"  # %API_KEY%
    r"|(?:process\.env|import\.meta\.env|os\.environ|env)[.\[][^\s]*"
)
# An elided value: sk-..., sk-proj-abc...xyz, sk-p…lxJ4 (our own previews).
_ELIDED = re.compile(r"[A-Za-z0-9_-]*(?:\.{3,}|…)[A-Za-z0-9_-]*")
# A masked value: xxxx, sk-xxxxxxxx, ****1234, AKIAXXXXXXXXXXXXXXXX, XXXX-XXXX-XXXX.
_MASKED = re.compile(
    r"(?:[A-Za-z0-9]{1,12}[-_.:])*(?:AKIA|ASIA)?[xX*•#]{3,}(?:[-_.][xX*•#]{3,})*[A-Za-z0-9]{0,4}"
)
# "your_api_key_here", "insert-token", "paste your key here": a description of a key.
_DESCRIBED = re.compile(
    r"(?:your|my|insert|enter|paste|replace|put|add|fill)(?:[-_ ]+[A-Za-z]+)+"
    r"|[A-Za-z]+(?:[-_ ]+[A-Za-z]+)*[-_ ]+(?:here|goes[-_ ]here)",
    re.IGNORECASE,
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORD_SPLIT = re.compile(r"[-_ .:/]+")
# Values made only of these words name or describe a credential; they do not hold one.
_VOCABULARY = """
    your my the a an here goes insert enter put paste replace change me changeme placeholder
    redacted removed hidden masked omitted scrubbed dummy fake sample example examples test
    testing demo todo tbd fixme not real notreal none null nil undefined empty unset unknown na
    string str text value values foo bar baz secret secrets password passwd pass pwd passphrase
    key keys api apikey token tokens access auth bearer basic client id private public
    credential credentials app user username admin db database service account new old default
    sk pk live prod dev staging openai anthropic mistral cohere google gemini azure aws github
    hf huggingface groq stripe slack
"""
_PLACEHOLDER_VOCABULARY = frozenset(_VOCABULARY.split())


def words(text: str) -> frozenset[str]:
    """The words of ``text``: the lists of names below are written as text."""
    return frozenset(text.split())


_EXAMPLE_PASSWORDS = words(
    """
    password pass passwd pwd secret changeme test testing example guest admin root user postgres
    mysql redis mongo rabbitmq minio minioadmin sa default demo dev local 123456 12345678 qwerty
    letmein
    """
)


def is_placeholder(value: str) -> bool:
    """True for stand-ins that documentation and code use instead of a real secret."""
    text = value.strip()
    if not text or len(set(text.lower())) <= 2:
        return True
    if any(
        shape.fullmatch(text) is not None
        for shape in (_ENV_NAME, _TEMPLATE, _VARIABLE, _ELIDED, _MASKED, _DESCRIBED)
    ):
        return True
    words = _WORD_SPLIT.split(text.lower().strip("'\"`()[]{}<>"))
    return all(word in _PLACEHOLDER_VOCABULARY for word in words if word)


def is_prose(value: str) -> bool:
    """Whether ``value`` is words of prose ("Set in dashboard", "see vault"), not a token."""
    words = value.split()
    return len(words) >= 2 and all(word.strip(_PUNCTUATION).isalpha() for word in words)


_PUNCTUATION = ".,;:!?'\"()"


def is_example_password(password: str, *, user: str = "") -> bool:
    """True for the passwords of examples: ``postgres:postgres@``, ``user:password@``, ``:***@``."""
    low = password.lower()
    return low == user.lower() or low in _EXAMPLE_PASSWORDS or is_placeholder(password)


_SCHEME = re.compile(r"(?:bearer|basic|token)\s+", re.IGNORECASE)


def strip_scheme(value: str) -> str:
    """``value`` without surrounding space and an auth scheme (``Bearer abc`` → ``abc``)."""
    text = value.strip()
    match = _SCHEME.match(text)
    return text[match.end() :].strip() if match else text


def looks_like_credential(value: str, *, password: bool = False, strict: bool = False) -> bool:
    """Whether a value in an auth position (``api_key``, ``?key=``) has the shape of a secret:
    a password of six characters or more, a token of 16 or more mixing letters and digits (or
    of random case), or 32+ hex digits; ``strict`` (for names such as ``key``) asks for 20
    mixing upper case, lower case and digits, or the long hex string."""
    text = strip_scheme(value)
    if is_placeholder(text):
        return False
    if password:
        return len(text) >= 6
    if len(text) < 16 or _TOKEN_CHARS.fullmatch(text) is None:
        return False
    if len(text) >= 32 and _HEX.fullmatch(text):
        return True
    # A random key has no digit one time in a few hundred (a 32-character Mistral key: 0.4 %);
    # letters that are about half upper case are random too, where camelCase words are not.
    has_digit = any(c.isdigit() for c in text) or randomly_cased(text)
    if strict:
        return (
            len(text) >= 20
            and has_digit
            and any(c.islower() for c in text)
            and any(c.isupper() for c in text)
        )
    return has_digit and any(c.isalpha() for c in text)


def randomly_cased(text: str) -> bool:
    """Twenty-four letters or more, about half of them upper case: random, where camelCase
    words are not."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 24:
        return False
    upper = sum(c.isupper() for c in letters) / len(letters)
    return 0.3 <= upper <= 0.7


def mask(value: str) -> str:
    """A preview that identifies a value to its owner without disclosing it: at most four
    characters of each end, never more than a third of the value (``sk-p…9xQz``)."""
    text = " ".join(value.split())  # no line breaks or tabs in a one-line report
    n = len(text)
    keep = 4 if n >= 24 else 2 if n >= 12 else 1 if n >= 6 else 0
    if keep == 0:
        return f"…({n} chars)"
    return f"{text[:keep]}…{text[-keep:]}"


# The example keys of AWS's documentation (AKIAIOSFODNN7EXAMPLE and its secret): public values.
_DOCUMENTED_EXAMPLE = re.compile(
    r"(?:AKIA|ASIA)[A-Z0-9]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY|[A-Za-z0-9/+]{33}EXAMPLE"
)


def is_documented_example(value: str) -> bool:
    """Whether ``value`` is a key that vendors publish in their documentation as an example."""
    return _DOCUMENTED_EXAMPLE.fullmatch(value) is not None


def is_alphabet(value: str) -> bool:
    """Whether ``value`` is an alphabet written out (``ABCDEFGHIJKLMNOPQRSTUVWXYZ234567``, the
    base32 and base64 alphabets of code): mostly runs of consecutive characters."""
    steps = sum(1 for a, b in itertools.pairwise(value) if ord(b) == ord(a) + 1)
    return len(value) > 1 and steps >= 0.8 * (len(value) - 1)


_NUCLEOTIDES = frozenset("ACGTUN")
# The one-letter amino-acid codes: a key id's base32 body (A-Z, 2-7) is all of them, without a
# digit, one time in two thousand.
_AMINO_ACIDS = frozenset("ACDEFGHIKLMNPQRSTVWY")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]++")


def is_sequence_fragment(value: str, line: str = "") -> bool:
    """Whether an AWS-key-id-shaped value is a piece of a DNA, RNA or protein sequence."""
    if set(value) <= _NUCLEOTIDES or set(value[4:]) <= _AMINO_ACIDS:
        return True
    if not line:
        return False
    return all(
        len(run.group(0)) > len(value) for run in _ALNUM_RUN.finditer(line) if value in run.group(0)
    )


# ---------------- LLM payloads: auth positions and opaque values
FieldKind = Literal["password", "token", "generic"]

# Also between an acronym and the word after it: azureOpenAIKey → azure_open_ai_key.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=4096)
def snake(name: str) -> str:
    """A field name in snake case: ``thoughtSignature`` → ``thought_signature``."""
    return _CAMEL.sub("_", name).replace("-", "_").replace(" ", "_").lower()


# Field and parameter names (snake case) whose value is a credential when it has the shape of one.
_PASSWORD_FIELDS = frozenset({"password", "passwd", "pwd", "passphrase", "db_password"})
_TOKEN_FIELDS = words(
    """
    api_key apikey x_api_key api_token access_token refresh_token id_token auth_token
    bearer_token session_token security_token x_amz_security_token secret secret_key
    secret_access_key aws_secret_access_key client_secret private_token x_auth_token
    subscription_key ocp_apim_subscription_key x_goog_api_key authorization proxy_authorization
    bearer credential credentials
    """
)
# Generic names ("key" is the Gemini query parameter, but also a cache key): the value must look
# random (mixed case and digits) or be a long hex string before it counts.
_GENERIC_FIELDS = frozenset({"key", "token", "auth"})


# Compound names that end like a credential field: MISTRAL_API_KEY, stripe_webhook_secret.
_TOKEN_SUFFIXES = tuple(
    words(
        """
    _api_key _apikey _api_token _access_token _refresh_token _auth_token _bearer_token
    _session_token _secret_key _secret_access_key _client_secret _secret
    """
    )
)
_PASSWORD_SUFFIXES = ("_password", "_passwd", "_pwd", "_passphrase")
# Pagination and cache tokens: opaque by design, and not credentials (a page cursor opens
# nothing). Only named here, never as a suffix, so that access_token & co. stay auth positions.
_NOT_CREDENTIALS = words(
    """
    page_token next_page_token prev_page_token previous_page_token next_token continuation_token
    request_token sync_token cursor next_cursor prev_cursor start_cursor end_cursor page_cursor
    cache_key prompt_cache_key idempotency_key
    """
)


@lru_cache(maxsize=4096)
def field_kind(name: str) -> FieldKind | None:
    """Whether a (snake-case) field or parameter name is an auth position, and of which kind."""
    if name in _NOT_CREDENTIALS:
        return None
    if name in _PASSWORD_FIELDS or name.endswith(_PASSWORD_SUFFIXES):
        return "password"
    if name in _TOKEN_FIELDS or name.endswith(_TOKEN_SUFFIXES):
        return "token"
    if name in _GENERIC_FIELDS:
        return "generic"
    return None


def credential_in_field(kind: FieldKind, value: str) -> bool:
    """Whether ``value``, found in a field of this kind, is a credential."""
    if kind == "password":
        return looks_like_credential(value, password=True) and not is_example_password(value)
    return looks_like_credential(value, strict=kind == "generic")


# Fields whose values are opaque by design (snake case, exact or as a suffix): reasoning
# signatures and ciphertext, Bedrock's redacted reasoning, stream padding (``obfuscation``),
# hashes and trace ids, signed URLs' per-object signatures (they open one object, not an
# account), Google's resumable-upload id, base64 media (``base64_data`` is how the walk names a
# payload beside a media type; ``bytes`` is Bedrock's stream chunk when it is not JSON; images in
# model-native bodies).
_OPAQUE_FIELDS = words(
    """
    signature thought_signature encrypted_content encrypted_reasoning redacted_content b64_json
    partial_image_b64 embedding embeddings obfuscation system_fingerprint fingerprint etag
    digest hash checksum nonce cf_ray traceparent tracestate sig x_amz_signature
    x_goog_signature x_guploader_uploadid base64_data bytes image images
    """
)
_OPAQUE_SUFFIXES = tuple(
    words(
        """
    _signature _hash _digest _checksum _fingerprint _b64 _base64 _nonce _sha256 _image _images
    """
    )
)


@lru_cache(maxsize=4096)
def is_opaque_field(name: str) -> bool:
    """Whether a (snake-case) field holds opaque data by design: signatures, hashes, blobs,
    page cursors."""
    return (
        name in _OPAQUE_FIELDS
        or name.endswith(_OPAQUE_SUFFIXES)
        or name.startswith("encrypted_")
        or name in _NOT_CREDENTIALS
    )


# Ids that LLM APIs mint, by prefix: OpenAI (chatcmpl-, resp_, msg_, call_, fc_, rs_, file-, …),
# Anthropic (msg_, toolu_, srvtoolu_, req_, msgbatch_), fingerprints (fp_) and users (user_).
_KNOWN_ID = re.compile(
    r"(?:chatcmpl|cmpl|msg|msgbatch|resp|req|call|toolu|srvtoolu|rs|fc|ws|ci|ig|mcp|mcpr|lc|cu|"
    r"ctc|fp|run|step|thread|asst|file|batch|ftjob|ft|ftckpt|vs|vsfb|org|proj|user|modr|embd|img|"
    r"evt|conv|sess|item|gen|job|span|trace|chat|compl|cntl|wf|exec|conversation|response)"
    r"[_-][A-Za-z0-9_-]{4,}"
)
_BLOB = re.compile(r"[A-Za-z0-9+/_=-]+")
BLOB_MIN = 256


def is_known_id(value: str) -> bool:
    """Whether ``value`` is an id with a prefix that LLM APIs use (``chatcmpl-…``, ``toolu_…``)."""
    return _KNOWN_ID.fullmatch(value) is not None


_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[^;,]*)*;base64,[A-Za-z0-9+/=\s]*")


def is_opaque_blob(value: str) -> bool:
    """Whether ``value`` is one long base64/hex token (embedding, image, signature, ciphertext), or
    a base64 ``data:`` URL of any length (an inline image, audio or file)."""
    if value.startswith("data:"):
        return _DATA_URL.fullmatch(value) is not None
    return len(value) > BLOB_MIN and _BLOB.fullmatch(value) is not None


_LINE_BREAKS = str.maketrans("", "", "\r\n\t")


def base64_bytes(body: str) -> bytes | None:
    """``body`` decoded as base64 of either alphabet, padding optional (None if it is not)."""
    padded = body.rstrip("=")
    padded += "=" * (-len(padded) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None


def is_text(data: bytes) -> bool:
    """Whether ``data`` is printable ASCII, over lines (a PEM key file is text too)."""
    return data.isascii() and data.decode("ascii").translate(_LINE_BREAKS).isprintable()


# ---------------- one search over many strings
# An interaction holds hundreds of short strings: they are joined (one per line) and searched
# as one text, each needle once per scan.
Span = tuple[int, int]
# A run of token characters (the base64 and URL-safe alphabets, dots, backslashes): every
# prefix-less secret a plugin finds, and every key in base64, is one of 16 characters or more.
_RUN = re.compile(r"[A-Za-z0-9+/=_.\\-]{16,}")


def lower_in_place(text: str) -> str:
    """``text`` in lower case, offset for offset ("İ" alone lower-cases to two characters)."""
    return text.replace("\u0130", "i").lower()


class Batch:
    """The strings to scan, joined by line breaks, with their start offsets."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values = list(values)
        self.starts: list[int] = []
        position = 0
        for value in self.values:
            self.starts.append(position)
            position += len(value) + 1
        self.text = "\n".join(self.values)
        self._found: dict[tuple[str, bool], list[int]] = {}

    @cached_property
    def lower(self) -> str:
        """The text in lower case, offset for offset."""
        return lower_in_place(self.text)

    @cached_property
    def runs(self) -> list[Span]:
        """The runs of 16 token characters or more (shared by the plugins' gates and the
        base64 decoder)."""
        return [match.span() for match in _RUN.finditer(self.text)]

    def locate(self, position: int) -> tuple[int, int]:
        """``(index of the string, offset in it)`` for an offset in the joined text."""
        index = bisect_right(self.starts, position) - 1
        return index, position - self.starts[index]

    def find_all(self, needle: str, *, ignorecase: bool = False) -> list[int]:
        """Every offset of ``needle`` in the text (in the lower-cased text if ``ignorecase``)."""
        found = self._found.get((needle, ignorecase))
        if found is None:
            haystack = self.lower if ignorecase else self.text
            found = self._found[needle, ignorecase] = []
            position = haystack.find(needle)
            while position != -1:
                found.append(position)
                position = haystack.find(needle, position + 1)
        return found

    def holders(self, needles: Sequence[str], *, ignorecase: bool = False) -> set[int]:
        """Indices of the strings that contain any of ``needles``."""
        found: set[int] = set()
        for needle in needles:
            starts = self.find_all(needle, ignorecase=ignorecase)
            if starts:
                found.update(bisect_right(self.starts, start) - 1 for start in starts)
        return found


# ---------------- key formats
# A key never starts right after one of these: the prefix would sit inside a longer token
# (a base64 blob, ``task-runner``). Checked in code so that every pattern starts with a literal,
# which the regular-expression engine finds with a fast substring search.
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
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


# ---------------- the sk- family

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


# ---------------- checks for some formats


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


# AWS credentials beyond the access key id (what botocore signs Bedrock calls with): a secret
# key beside its key id, STS session tokens, SigV4 signatures, Bedrock API keys.
_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
# base64 characters, exactly 40, not inside a longer run of them
_FORTY_BASE64 = r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"


def _secret_key(match: re.Match[str]) -> str | None:
    """A 40-character secret: random-looking (upper, lower and digits or / +), next to an id."""
    value = match.group(0)
    if _KEY_ID.search(match.string) is None or "EXAMPLE" in value:
        return None
    kinds = (any(c.isupper() for c in value), any(c.islower() for c in value))
    other = any(c.isdigit() or c in "/+" for c in value)
    return value if all(kinds) and other else None


def _group(match: re.Match[str]) -> str | None:
    return match.group(1)


def _session_token(match: re.Match[str]) -> str | None:
    value = match.group(0)
    return value if len(set(value)) > 20 else None


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
    # AWS beyond the key id: session tokens (IQoJb3JpZ2lu: "origin", FwoGZXIvYXdz: "aws", the
    # old AQoD), SigV4 signatures, Bedrock API keys (ABSK…, bedrock-api-key-…: bearer tokens),
    # and a 40-character secret key in the same text as its key id (a pasted key pair).
    _d(
        "AWS session token",
        ("IQoJb3JpZ2lu", "FwoGZXIvYXdz", "FQoGZXIvYXdz", "AQoD"),
        r"(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz|AQoD)[A-Za-z0-9/+_%-]{80,}={0,2}",
        accept=_session_token,
    ),
    _d(
        "AWS SigV4 signature",
        "AWS4-HMAC-SHA256",
        r"AWS4-HMAC-SHA256\s+Credential=[^,\s]*,.*?Signature=([0-9a-f]{64})(?![0-9a-f])",
        accept=_group,
        bounded=False,
    ),
    _d(
        "Amazon Bedrock API key",
        ("ABSK", "bedrock-api-key-"),
        r"(?:ABSK|bedrock-api-key-)[A-Za-z0-9+/]{40,}={0,2}",
    ),
    _d(
        "AWS secret access key (with its key id)",
        ("AKIA", "ASIA"),
        _FORTY_BASE64,
        accept=_secret_key,
        bounded=False,
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
    return start == 0 or text[start - 1] not in NAME_CHARS


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
    sk_kinds = {kind for _, kind in _SK_KINDS} | {"OpenAI API key", "API key (sk-…)"}
    yield from sorted(sk_kinds | {detector.kind for detector in _DETECTORS if detector.kind})


# ---------------- the environment's own credentials
MIN_ENV_SECRET = 12
_WORDS = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|_PWD"
)
# Names that hold the credential words but never a secret.
_NOT_SECRET_NAMES = re.compile(
    r"PUBLIC|GPG|_KEY_ID$|KEYBOARD|KEYMAP|_FILE$|_PATH$|_DIR$|_URL$|SOCK"
)
_IDENTIFIER = re.compile(r"[a-z]+(?:[-_.][a-z]+)*")
# A password may be words (correct-horse-battery-staple): under these names an identifier counts.
_PASSWORD_NAMES = re.compile(r"PASSWORD|PASSWD|PASSPHRASE|_PWD")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})

_PATH_START = re.compile(r"(?:[/~]|\.\.?/|[A-Za-z]:[\\/])")
_PATH_TEXT = re.compile(r"[\w.~:@%+=,\-/\\]+")
_SEGMENTS = re.compile(r"[/\\]+")


def is_credential_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    upper = name.upper()
    return _WORDS.search(upper) is not None and _NOT_SECRET_NAMES.search(upper) is None


def _could_be_secret(value: str, *, words_count: bool = False) -> bool:
    text = value.strip()
    if len(text) < MIN_ENV_SECRET or any(c.isspace() for c in text):
        return False
    if _looks_like_path(text):
        return False
    if "://" in text and "@" not in text:
        return False  # a URL without a password in it
    if text.lower() in _BOOLEANS or _NUMBER.fullmatch(text):
        return False
    identifier = _IDENTIFIER.fullmatch(text) is not None
    return (words_count or not identifier) and not is_placeholder(text)


def _looks_like_path(text: str) -> bool:
    """A file path, not a key that happens to start with ``/`` (base64 bodies often do):
    a path's names are words, while a key's runs mix upper case, lower case and digits."""
    if _PATH_START.match(text) is None or _PATH_TEXT.fullmatch(text) is None:
        return False
    return not any(
        len(segment) >= 16
        and any(c.isupper() for c in segment)
        and any(c.islower() for c in segment)
        and any(c.isdigit() for c in segment)
        for segment in _SEGMENTS.split(text)
    )


_MIN_PIECE = 24


def _long_pieces(value: str) -> list[str]:
    return [
        piece
        for piece in re.split(r"[\s\"',:{}\[\]]+", value)
        if len(piece) >= _MIN_PIECE and _could_be_secret(piece) and not piece.startswith("-----")
    ]


def credential_environment() -> dict[str, str]:
    """``{value: variable name}`` for each credential-like variable of ``os.environ`` now,
    with each value's percent-encoded form (as a URL query carries it) too."""
    found: dict[str, str] = {}
    for name, value in os.environ.items():
        if not is_credential_name(name):
            continue
        # A value with whitespace in it (a PEM key, a JSON service-account file) is searched
        # for by its long pieces: each line of a key's body is as secret as the whole.
        words_count = _PASSWORD_NAMES.search(name.upper()) is not None
        whole = _could_be_secret(value, words_count=words_count)
        pieces = [value.strip()] if whole else _long_pieces(value)
        for piece in pieces:
            found.setdefault(piece, name)
            found.setdefault(quote(piece, safe=""), name)
    return found


def find_environment_values(batch: Batch, environment: dict[str, str]) -> dict[int, list[Hit]]:
    """Where each credential of ``environment`` appears in the strings of ``batch``, in any case (a
    tool that upper-cases a hex token, a lower-case ``%2b``): the hit names the value as the
    environment holds it."""
    found: dict[int, list[Hit]] = {}
    for value, name in environment.items():
        for position in batch.find_all(lower_in_place(value), ignorecase=True):
            index, offset = batch.locate(position)
            found.setdefault(index, []).append(Hit(environment_kind(name), value, offset))
    return found


def environment_kind(name: str) -> str:
    """The kind of a finding that is the value of the variable ``name``."""
    return f"value of the environment variable {name}"
