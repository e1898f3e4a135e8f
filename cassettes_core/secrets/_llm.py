"""What LLM payloads look like, for the secret guard.

Two kinds of knowledge. Fields that hold credentials (``api_key``, ``?key=``), where a value of
the right shape is a secret even without a known prefix (Mistral, Cohere and Azure keys have
none). And the opaque values that LLM APIs return by the megabyte and that generic entropy
detectors mistake for keys: ids with a known prefix (``chatcmpl-…``, ``toolu_…``), thinking
signatures, ``encrypted_content``, base64 embeddings and images, hashes. These blobs have a
*higher* entropy than keys, so no threshold separates them; the field name, the id prefix and
the length do.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from cassettes_core.secrets._shapes import is_example_password, looks_like_credential

FieldKind = Literal["password", "token", "generic"]

# Also between an acronym and the word after it: azureOpenAIKey → azure_open_ai_key.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=4096)
def snake(name: str) -> str:
    """A field name in snake case: ``thoughtSignature`` → ``thought_signature``."""
    return _CAMEL.sub("_", name).replace("-", "_").replace(" ", "_").lower()


# Field and parameter names (snake case) whose value is a credential when it has the shape of one.
_PASSWORD_FIELDS = frozenset({"password", "passwd", "pwd", "passphrase", "db_password"})
_TOKEN_FIELDS = frozenset(
    {
        "api_key",
        "apikey",
        "x_api_key",
        "api_token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "bearer_token",
        "session_token",
        "security_token",
        "x_amz_security_token",
        "secret",
        "secret_key",
        "secret_access_key",
        "aws_secret_access_key",
        "client_secret",
        "private_token",
        "x_auth_token",
        "subscription_key",
        "ocp_apim_subscription_key",
        "x_goog_api_key",
        "authorization",
        "proxy_authorization",
        "bearer",
        "credential",
        "credentials",
    }
)
# Generic names ("key" is the Gemini query parameter, but also a cache key): the value must look
# random (mixed case and digits) or be a long hex string before it counts.
_GENERIC_FIELDS = frozenset({"key", "token", "auth"})


# Compound names that end like a credential field: MISTRAL_API_KEY, stripe_webhook_secret.
_TOKEN_SUFFIXES = (
    "_api_key",
    "_apikey",
    "_api_token",
    "_access_token",
    "_refresh_token",
    "_auth_token",
    "_bearer_token",
    "_session_token",
    "_secret_key",
    "_secret_access_key",
    "_client_secret",
    "_secret",
)
_PASSWORD_SUFFIXES = ("_password", "_passwd", "_pwd", "_passphrase")
# Pagination and cache tokens: opaque by design, and not credentials (a page cursor opens
# nothing). Only named here, never as a suffix, so that access_token & co. stay auth positions.
_NOT_CREDENTIALS = frozenset(
    {
        "page_token",
        "next_page_token",
        "prev_page_token",
        "previous_page_token",
        "next_token",
        "continuation_token",
        "request_token",
        "sync_token",
        "cursor",
        "next_cursor",
        "prev_cursor",
        "start_cursor",
        "end_cursor",
        "page_cursor",
        "cache_key",
        "prompt_cache_key",
        "idempotency_key",
    }
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


# Fields whose values are opaque by design (snake case, exact or as a suffix).
_OPAQUE_FIELDS = frozenset(
    {
        "signature",
        "thought_signature",
        "encrypted_content",
        "encrypted_reasoning",
        # Bedrock Converse's redacted reasoning (Claude's redacted thinking): opaque base64,
        # sent back as is in the next turn.
        "redacted_content",
        "b64_json",
        "partial_image_b64",
        "embedding",
        "embeddings",
        "obfuscation",  # OpenAI stream padding: random characters by design
        "system_fingerprint",
        "fingerprint",
        "etag",
        "digest",
        "hash",
        "checksum",
        "nonce",
        "cf_ray",
        "traceparent",
        "tracestate",
        # Signed URLs (image and file links in responses) carry a per-object signature that
        # expires; it opens one object, not an account.
        "sig",
        "x_amz_signature",
        "x_goog_signature",
        # Google's resumable-upload id header: an opaque handle, not an account credential.
        "x_guploader_uploadid",
        # Base64 payloads beside a media type (Anthropic's source.data, Gemini's inline_data);
        # the walk names them so.
        "base64_data",
        # Bedrock's invoke_model stream chunk, kept as base64 only when it is not JSON.
        "bytes",
        # Images in model-native bodies (Llama vision's and image models' `images`, Titan's
        # `inputImage`, in-painting's `image` and `maskImage`): base64 media, not keys.
        "image",
        "images",
    }
)
_OPAQUE_SUFFIXES = (
    "_signature",
    "_hash",
    "_digest",
    "_checksum",
    "_fingerprint",
    "_b64",
    "_base64",
    "_nonce",
    "_sha256",
    "_image",
    "_images",
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
_BLOB_MIN = 256


def is_known_id(value: str) -> bool:
    """Whether ``value`` is an id with a prefix that LLM APIs use (``chatcmpl-…``, ``toolu_…``)."""
    return _KNOWN_ID.fullmatch(value) is not None


_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[^;,]*)*;base64,[A-Za-z0-9+/=\s]*")


def is_opaque_blob(value: str) -> bool:
    """Whether ``value`` is one long base64/hex token (embedding, image, signature, ciphertext),
    or a base64 ``data:`` URL of any length (an inline image, audio or file).

    Longer than any key format we know without a prefix, so only our format detectors (which
    need a prefix at a token boundary) look inside it.
    """
    if value.startswith("data:"):
        return _DATA_URL.fullmatch(value) is not None
    return len(value) > _BLOB_MIN and _BLOB.fullmatch(value) is not None


def is_long_token(value: str) -> bool:
    """Whether a single token found by an entropy detector is too long to be a prefix-less key."""
    return len(value) > _BLOB_MIN
