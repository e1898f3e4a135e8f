"""AWS credentials beyond the access key id: what botocore signs Bedrock calls with.

- **Key pairs**: a 40-character secret access key in the same text as an access key id
  (``AKIA…``/``ASIA…``), the way keys are pasted (``AKIA… / wJalr…``, a CSV of credentials);
  a secret alone is a random-looking word no detector can tell from an id, and named fields
  (``SecretAccessKey``, ``aws_secret_access_key``) are found by their names already.
- **Session tokens**: STS tokens, long base64 that starts with ``IQoJb3JpZ2lu`` (``origin``,
  today's) or ``FwoGZXIvYXdz`` / ``FQoGZXIvYXdz`` (``aws``, older), and the very old ``AQoD``.
- **SigV4 material**: an ``Authorization`` value ``AWS4-HMAC-SHA256 Credential=…,
  Signature=<64 hex>``. In a presigned URL the key id (``X-Amz-Credential=AKIA…``) and the
  session token (``X-Amz-Security-Token=``, a credential field) are found where the guard
  reads URL queries; its ``X-Amz-Signature`` opens one object until it expires, and is left
  alone as every signed link in an answer is (``_llm``'s opaque fields).
- **Bedrock API keys**: ``ABSK…`` (long-term) and ``bedrock-api-key-…`` (short-term, a
  presigned URL in base64), sent as bearer tokens.

Each entry is ``(kind, anchors, pattern, accept, ignorecase, bounded)`` for
``_detectors``, which registers them beside the other formats. Nothing an ordinary Bedrock
answer holds matches: request ids are UUIDs, model ARNs have no 40-character random word next
to a key id, stream chunks are stored decoded.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Accept = Callable[[re.Match[str]], str | None]

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


DETECTORS: tuple[tuple[str, tuple[str, ...], str, Accept, bool, bool], ...] = (
    (
        "AWS session token",
        ("IQoJb3JpZ2lu", "FwoGZXIvYXdz", "FQoGZXIvYXdz", "AQoD"),
        r"(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz|AQoD)[A-Za-z0-9/+_%-]{80,}={0,2}",
        _session_token,
        False,
        True,
    ),
    (
        "AWS SigV4 signature",
        ("AWS4-HMAC-SHA256",),
        r"AWS4-HMAC-SHA256\s+Credential=[^,\s]*,.*?Signature=([0-9a-f]{64})(?![0-9a-f])",
        _group,
        False,
        False,
    ),
    (
        "Amazon Bedrock API key",
        ("ABSK", "bedrock-api-key-"),
        r"(?:ABSK|bedrock-api-key-)[A-Za-z0-9+/]{40,}={0,2}",
        lambda match: match.group(0),
        False,
        True,
    ),
    (
        "AWS secret access key (with its key id)",
        ("AKIA", "ASIA"),
        _FORTY_BASE64,
        _secret_key,
        False,
        False,
    ),
)
