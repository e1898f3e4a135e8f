"""Base64 wrapped over many lines: one long token, not a column of keys.

``base64 logo.png``, a MIME attachment and a PEM certificate write their bytes 64 or 76
characters a line. Each line alone looks like a high-entropy secret; together they are one
token far longer than any key, which the entropy plugins pass when it stands on one line. A
block of such lines is passed the same way when it is public or binary data: the body of a
public PEM block (``CERTIFICATE``, ``PUBLIC KEY`` …), or bytes that decode to neither text
nor key material. Key material stays flagged: a private PEM label before it, DER (an ASN.1
sequence, as every PKCS key starts), an OpenSSH key, or text (a base64-encoded config file).
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["harmless_blocks"]

# A line of base64 alone (indentation and a carriage return allowed), and a PEM header.
_LINE = re.compile(r"^[ \t]*+[A-Za-z0-9+/=_-]{4,4096}+[ \t]*+\r?$", re.MULTILINE)
_MIN_WIDTH = 40  # every line but the last is this long at least (the last may be short)
_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,40}+)-----[ \t]*+\r?$")
_PUBLIC_LABELS = frozenset(
    {
        "CERTIFICATE",
        "TRUSTED CERTIFICATE",
        "X509 CERTIFICATE",
        "CERTIFICATE REQUEST",
        "NEW CERTIFICATE REQUEST",
        "X509 CRL",
        "PUBLIC KEY",
        "RSA PUBLIC KEY",
        "SSH2 PUBLIC KEY",
        "PGP PUBLIC KEY BLOCK",
        "PGP SIGNATURE",
        "PKCS7",
        "CMS",
        "DH PARAMETERS",
        "EC PARAMETERS",
    }
)
_MIN_LINES = 2
# Longer than any key, as a token on one line must be for the entropy plugins to pass it (an
# HMAC secret wrapped over two lines is still a secret).
_BLOB_MIN = 256
_MAX_DECODED = 1 << 20
_KEY_MAGIC = (b"0", b"openssh-key-v1")  # DER starts with 0x30 ("0"): PKCS#1, PKCS#8, SEC1


def harmless_blocks(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are wrapped base64 of public or binary data."""
    blocks: list[tuple[int, int]] = []
    lines = list(_LINE.finditer(text))
    first = 0
    while first < len(lines):
        last = first
        width = len(lines[first].group().strip())
        if width < _MIN_WIDTH:
            first += 1
            continue
        while (
            last + 1 < len(lines)
            and lines[last + 1].start() == lines[last].end() + 1
            and len(lines[last].group().strip()) == width
            and len(lines[last + 1].group().strip()) <= width
        ):
            last += 1
        start, end = lines[first].start(), lines[last].end()
        long_enough = last - first + 1 >= _MIN_LINES and end - start > _BLOB_MIN
        if long_enough and _harmless(text, start, end):
            blocks.append((start, end))
        first = last + 1
    return blocks


def _harmless(text: str, start: int, end: int) -> bool:
    before = text.rfind("\n", 0, max(start - 1, 0))
    header = _BEGIN.search(text, before + 1, max(start - 1, 0)) if start else None
    if header is not None:
        return header.group(1) in _PUBLIC_LABELS
    data = _decoded("".join(text[start:end].split()))
    if data is None:
        return False
    if data.startswith(_KEY_MAGIC):
        return False
    return not (data.isascii() and data.decode("ascii").translate(_LINE_BREAKS).isprintable())


_LINE_BREAKS = str.maketrans("", "", "\r\n\t")


def _decoded(body: str) -> bytes | None:
    if len(body) > _MAX_DECODED * 4 // 3:
        return None
    padded = body.rstrip("=")
    padded += "=" * (-len(padded) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None
